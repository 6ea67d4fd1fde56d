"""scripts/bench_bridge.py reports the broken-reply families on their own, and 0 unsafe."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_bridge", ROOT / "scripts/bench_bridge.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_reports_broken_families_with_no_unsafe_accept():
    out = _bench().run(600, seed=3)
    assert out["crashes"] == 0 and out["unsafe_accepts"] == 0, out["examples"]
    fams = out["broken_families"]
    assert set(fams) == {"truncated", "prefix", "lost_refusal", "correction"}
    assert all(f["cases"] > 0 and f["unsafe_accepts"] == 0 for f in fams.values()), fams
    assert set(out["unsafe_by_kind"]) == {"invalid", "prefix", "refusal_lost", "not_intended"}
