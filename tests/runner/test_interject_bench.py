"""scripts/bench_interject.py: the scenarios are seeded and of every kind, and a short run
judges its scenarios from the runs' worlds and episodes (the figures come from the script)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.scripts import load_script


def test_scenarios_are_seeded_and_cover_every_kind():
    b = load_script("bench_interject")
    one = [b.scenario(i, np.random.default_rng(3)) for i in range(10)]
    two = [b.scenario(i, np.random.default_rng(3)) for i in range(10)]
    assert one == two
    assert {s["kind"] for s in one} == set(b.KINDS)
    for s in one:
        assert s["expect"] or s["kind"] == "stop"


@pytest.mark.slow
def test_a_short_run_judges_every_scenario(capsys):
    b = load_script("bench_interject")
    assert b.main(["--n", "5", "--policy-source", "scripted", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    s = d["summary"]
    assert s["scenarios"] == 5 and s["taken"]["k"] == 5
    assert s["no_superseded_motion"]["k"] == 5 and s["goal_met"]["k"] >= 4
    assert 0.0 <= s["goal_met"]["ci95"][0] <= s["goal_met"]["rate"] <= s["goal_met"]["ci95"][1]
    moved = [r for r in d["scenarios"] if r["delay_steps"] is not None]
    assert moved and all(0 <= r["delay_steps"] <= 12 for r in moved)
    assert s["planner"] == "rules"
