"""scripts/bench_bridge.py reports the broken-reply families on their own, and 0 unsafe."""

from __future__ import annotations

from tests.scripts import load_script


def _bench():
    return load_script("bench_bridge")


def test_bench_reports_broken_families_with_no_unsafe_accept():
    out = _bench().run(600, seed=3)
    assert out["crashes"] == 0 and out["unsafe_accepts"] == 0, out["examples"]
    fams = out["broken_families"]
    assert set(fams) == {"truncated", "prefix", "lost_refusal", "correction"}
    assert all(f["cases"] > 0 and f["unsafe_accepts"] == 0 for f in fams.values()), fams
    assert set(out["unsafe_by_kind"]) == {"invalid", "prefix", "refusal_lost", "not_intended"}
