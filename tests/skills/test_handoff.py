"""Hand-offs between skills, with the shipped policies: each skill's end state is a good
start state for every skill that may follow it, and a skill whose success has become
impossible stops at once with a reason."""

from __future__ import annotations

import numpy as np
import pytest

from sim import scene
from sim.env import TabletopEnv
from skills.push import RETREAT_Z
from skills.runtime import IMPOSSIBLE, SkillExecutor

LAYOUT = {
    "red_block": [-0.10, 0.0, 0.1],
    "blue_block": [0.0, -0.17, -0.2],  # 9 cm south of table_center: a pushed cube's neighbour
    "yellow_block": [0.12, 0.04, 0.0],
}
ARM_AWAY = [0.1, 0.1, 0.15]  # so that `home` is not a no-op

# (setup steps, A, B): every ordered pair where B may follow A
PICK_RED = {"skill": "pick", "object": "red_block"}
PAIRS = {
    "pick->place": ([], PICK_RED, {"skill": "place", "target": "green_bin"}),
    "place->pick": (
        [PICK_RED],
        {"skill": "place", "target": "green_bin"},
        {"skill": "pick", "object": "yellow_block"},
    ),
    "place->push": (
        [PICK_RED],
        {"skill": "place", "target": "table_left"},
        {"skill": "push", "object": "yellow_block", "target": "table_front"},
    ),
    "place->home": ([PICK_RED], {"skill": "place", "target": "yellow_block"}, {"skill": "home"}),
    "push->pick": (
        [],
        {"skill": "push", "object": "red_block", "target": "table_center"},
        PICK_RED,
    ),
    "push->push": (
        [],
        {"skill": "push", "object": "red_block", "target": "table_center"},
        {"skill": "push", "object": "red_block", "target": "table_back"},
    ),
    "push->home": (
        [],
        {"skill": "push", "object": "red_block", "target": "table_center"},
        {"skill": "home"},
    ),
    "home->pick": ([], {"skill": "home"}, PICK_RED),
    "home->push": (
        [],
        {"skill": "home"},
        {"skill": "push", "object": "yellow_block", "target": "table_front"},
    ),
}


@pytest.fixture(scope="module")
def executor():
    return SkillExecutor("pretrained")


def _positions(env) -> dict[str, np.ndarray]:
    return {o.name: np.asarray(o.pos) for o in env.world_state().objects}


def _clear_of_cubes(env) -> float:
    """Height of the grip site above the top of the nearest cube under it (m)."""
    w = env.world_state()
    g = np.asarray(w.grip_pos)
    tops = [
        g[2] - (o.pos[2] + scene.CUBE_HALF)
        for o in w.objects
        if not o.held and np.hypot(o.pos[0] - g[0], o.pos[1] - g[1]) < 0.06
    ]
    return min(tops, default=np.inf)


@pytest.mark.parametrize("pair", list(PAIRS))
def test_each_end_state_is_a_good_start_for_the_next_skill(executor, pair):
    setup, a, b = PAIRS[pair]
    env = TabletopEnv()
    env.reset(seed=3, options={"cubes": dict(LAYOUT), "arm": ARM_AWAY})
    for s in setup:
        assert executor.run(env, dict(s)).success, s
    out_a = executor.run(env, dict(a))
    assert out_a.success, (pair, out_a.reason)
    if a["skill"] != "pick":  # the gripper is empty and lifted clear of every cube
        assert out_a.after.held_object is None
        assert _clear_of_cubes(env) > 0.02, pair
    before_b = _positions(env)
    out_b = executor.run(env, dict(b))
    assert out_b.success, (pair, out_b.reason)
    moved = b.get("object") or out_a.after.held_object
    after_b = _positions(env)
    for name, p in before_b.items():
        if name != moved and name != out_b.before.held_object:
            drift = float(np.hypot(*(after_b[name][:2] - p[:2])))
            assert drift < 0.01, f"{pair}: {name} was dragged {drift:.3f} m"


def test_push_ends_with_the_gripper_lifted_off_the_cube(executor):
    env = TabletopEnv()
    env.reset(seed=1, options={"cubes": dict(LAYOUT), "arm": ARM_AWAY})
    out = executor.run(env, {"skill": "push", "object": "red_block", "target": "table_center"})
    assert out.success and out.after.in_region("red_block", "table_center")
    assert out.after.grip_pos[2] >= RETREAT_Z - 0.006
    assert _clear_of_cubes(env) > 0.03
    # the world the bridge predicts agrees on where the gripper went
    from skills.registry import get

    push = get("push")
    params = push.Params(object="red_block", target="table_center")
    predicted = push.effect(out.before, params)
    assert abs(predicted.grip_pos[2] - out.after.grip_pos[2]) < 0.01


@pytest.mark.parametrize("source", ["pretrained", "scripted"])
def test_place_whose_cube_is_knocked_out_stops_at_once(source):
    env = TabletopEnv()
    env.reset(seed=2, options={"cubes": dict(LAYOUT), "arm": ARM_AWAY})
    ex = SkillExecutor(source)
    assert ex.run(env, dict(PICK_RED)).success
    n = [0]

    def knock(action):
        n[0] += 1
        if n[0] == 5:  # the held cube is knocked onto the table, far from the bin
            env.put_cube("red_block", (0.15, -0.2, scene.CUBE_HALF), (1.0, 0.0, 0.0, 0.0))

    out = ex.run(env, {"skill": "place", "target": "green_bin"}, on_step=knock)
    assert not out.success
    assert out.reason.startswith(IMPOSSIBLE) and "red_block" in out.reason
    assert out.steps <= 10  # the budget is 100 steps


def test_push_that_drops_the_cube_off_the_table_stops_with_a_reason():
    env = TabletopEnv()
    env.reset(seed=2, options={"cubes": dict(LAYOUT), "arm": ARM_AWAY})
    n = [0]

    def off(action):
        n[0] += 1
        if n[0] == 4:
            env.put_cube("red_block", (0.0, 0.0, -0.3), (1.0, 0.0, 0.0, 0.0))

    out = SkillExecutor("scripted").run(
        env, {"skill": "push", "object": "red_block", "target": "table_center"}, on_step=off
    )
    assert not out.success and out.reason == f"{IMPOSSIBLE}red_block fell off the table"
    assert out.steps <= 30
