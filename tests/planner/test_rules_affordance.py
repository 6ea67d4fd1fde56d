"""The rules planner repairs a pick the fingers cannot make: it inserts the push that frees
the cube (the bridge's ``not_graspable`` hint), and leaves an unrepairable one for the bridge
to refuse with its reason."""

from __future__ import annotations

import pytest

from bridge import reasons as R
from bridge import validate
from planner.rules import parse

#: red touching blue along y and green along x: neither grasp axis is free; yellow free
TOUCHING = {
    "red_block": [0.0, -0.08],
    "blue_block": [0.0, -0.0395],
    "green_block": [0.0405, -0.08],
    "yellow_block": [-0.12, -0.12],
}
BLOCK = {
    "red_block": [0.0, -0.08],
    "green_block": [0.0405, -0.08],
    "blue_block": [0.0, -0.0395],
    "yellow_block": [0.0405, -0.0395],
}


def _world(env, cubes):
    env.reset(seed=0, options={"cubes": cubes})
    return env.world_state()


def test_push_is_inserted_before_an_ungraspable_pick(env):
    w = _world(env, TOUCHING)
    r = parse("put the red block in the green bin", w)
    assert [s["skill"] for s in r.steps] == ["push", "pick", "place"]
    assert r.steps[0]["object"] in ("red_block", "blue_block")
    assert any("cannot be picked where it is" in n for n in r.notes)
    res = validate(r.to_json(), w)
    assert res.accepted, res.reasons
    assert res.goal == ["in(red_block, green_bin)"]


def test_no_push_for_a_free_cube(env):
    w = _world(env, TOUCHING)
    r = parse("put the yellow block in the green bin", w)
    assert [s["skill"] for s in r.steps] == ["pick", "place"]


def test_a_neighbour_moved_by_the_plan_needs_no_push(env):
    """Blue is free along x, and once it is in its bin red is free along y: no push."""
    w = _world(env, TOUCHING)
    r = parse("put the blue block in the blue bin, then put the red block in the red bin", w)
    assert [s["skill"] for s in r.steps] == ["pick", "place", "pick", "place"]
    assert validate(r.to_json(), w).accepted


def test_block_is_repaired_by_pushing_a_row_out(env):
    w = _world(env, BLOCK)
    r = parse("put the red block in the green bin", w)
    assert [s["skill"] for s in r.steps] == ["push", "pick", "place"]
    assert validate(r.to_json(), w).accepted


def test_cube_against_a_bin_wall_is_picked_along_x(env):
    w = _world(env, {"red_block": [0.0, 0.1605], "blue_block": [-0.1, -0.1]})
    r = parse("put the red block in the green bin", w)
    assert [s["skill"] for s in r.steps] == ["pick", "place"]
    assert validate(r.to_json(), w).accepted


def test_unrepairable_cube_is_refused_by_the_bridge(env):
    """Against a bin wall with a neighbour touching it along the wall: the pusher cannot
    come down between cube and wall, nor in the neighbour's place."""
    w = _world(env, {"red_block": [0.0, 0.1605], "green_block": [0.0405, 0.1605]})
    r = parse("put the red block in the green bin", w)
    assert [s["skill"] for s in r.steps] == ["pick", "place"]
    res = validate(r.to_json(), w)
    assert not res.accepted and res.codes == [R.NOT_GRASPABLE]


@pytest.mark.slow
def test_crowded_scene_runs_end_to_end(tmp_path):
    from skillbridge.runner.runner import run_task

    res = run_task(
        "put the red block in the green bin",
        seed=0,
        llm="rules",
        cubes=TOUCHING,
        out_dir=tmp_path,
        route="rules",
    )
    assert res.success, res.message
    assert [s["skill"] for s in res.accepted_plan][:2] == ["push", "pick"]
