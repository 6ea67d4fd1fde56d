"""Every decision of the bridge on the bench's seeded fuzz set is the one the code made
before its speed work (issue 25): same cases, same plans, same reasons, same predictions.

The fixture was recorded by that older code (``tests/bridge/decisions.py``) and re-recorded
on 2026-12-04 after the second round of speed work, whose full decision record was compared
with the tree before it (2a672ae) and found identical; the older fixture had gone stale
before that tree (one case's first reason, precondition_violated -> no_effect). The default
suite checks the first 1,000 tabletop cases one by one and the first 500 articulated ones;
the slow test replays every recorded set in full.
"""

from __future__ import annotations

import json

import pytest

from tests.bridge import decisions as D


def _fixture() -> dict[str, dict]:
    return {s["scene"]: s for s in json.loads(D.FIXTURE.read_text())["sets"]}


def _first_mismatch(got: list[str], want: list[str]) -> int | None:
    return next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w), None)


@pytest.mark.parametrize(("scene", "n"), [("tabletop", 1000), ("articulated", 500)])
def test_first_cases_decide_as_before(scene: str, n: int):
    want = _fixture()[scene]
    got = D.record(n, want["seed"], scene)
    assert got["per_case"] == want["per_case"][:n], (
        f"case {_first_mismatch(got['per_case'], want['per_case'])} of {scene} decides differently"
    )
    if n % D.BLOCK == 0:
        assert got["blocks"] == want["blocks"][: n // D.BLOCK]


@pytest.mark.slow
@pytest.mark.parametrize("scene", [s for s, _, _ in D.SETS])
def test_every_recorded_case_decides_as_before(scene: str):
    want = _fixture()[scene]
    got = D.record(want["cases"], want["seed"], scene)
    assert got["inputs"] == want["inputs"], "the case stream itself changed"
    assert got["blocks"] == want["blocks"], (
        f"block {_first_mismatch(got['blocks'], want['blocks'])} decides differently"
    )
    assert got == want
