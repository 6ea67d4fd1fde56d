"""The rules planner's goal (from the instruction) agrees with the suite's YAML goal, and a
stated goal that differs from the task's is told apart: one grammar, one comparison."""

from __future__ import annotations

import pytest

from bridge.goals import mismatch
from sim.world import BinState, ObjectState, RegionState, WorldState


def test_rules_goals_agree_with_every_suite_goal_they_plan():
    import bridge
    from planner.rules import parse
    from sim.env import TabletopEnv
    from skillbridge.evaluation.suite import load_suite

    envs: dict[str, TabletopEnv] = {}
    checked, bad = 0, []
    for t in load_suite().tasks:
        if t.refuse:
            continue
        env = envs.setdefault(t.scene.model, TabletopEnv(scene=t.scene.model))
        env.reset(seed=0, options=t.scene.reset_options())
        w = env.world_state()
        r = parse(t.instruction, w)
        if not r.confident or r.refuse:
            continue
        checked += 1
        res = bridge.validate(r.to_json(), w)
        diff = mismatch(r.goal, t.literals, w) if r.goal is not None else ["no goal"]
        if diff or not res.accepted:
            bad.append((t.id, r.goal, diff, res.codes))
    for env in envs.values():
        env.close()
    assert checked >= 70 and not bad, bad


def _w() -> WorldState:
    objs = [
        ObjectState(name=n, color=n.split("_")[0], pos=(0.0, 0.0, 0.02), on_table=True)
        for n in ("red_block", "blue_block")
    ]
    return WorldState(
        objects=objs,
        bins=[BinState(name="green_bin", color="green", pos=(0.0, 0.25, 0.0))],
        regions=[RegionState(name="table_left", pos=(0.0, 0.09))],
    )


@pytest.mark.parametrize(
    "stated,task,diff",
    [
        (["in(red_block, green_bin)"], ["in(red_block, green_bin)", "not held(*)"], []),
        (["in(red_block, green_bin)", "in(blue_block, green_bin)"], ["in(all, green_bin)"], []),
        (["at(red_block, table_left)", "home"], ["in_region(red_block, table_left)"], []),
        (
            ["in(red_block, green_bin)"],
            ["in(all, green_bin)"],
            ["missing in(blue_block, green_bin)"],
        ),
        (["held(red_block)"], ["in(red_block, green_bin)"], ["missing in(red_block, green_bin)"]),
        (
            ["in(red_block, green_bin)", "in(blue_block, green_bin)"],
            ["in(red_block, green_bin)"],
            ["extra in(blue_block, green_bin)"],
        ),
    ],
)
def test_mismatch(stated, task, diff):
    assert mismatch(stated, task, _w()) == diff
