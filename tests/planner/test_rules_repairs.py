"""Steps that cannot run because of where a cube stands are repaired by the rules planner
with the step that lets them run: a cube in the drawer's path is pushed out of it first,
and a cube whose pusher cannot come down behind it (a bin wall there) is carried to its
table region instead. What nothing repairs is left for the bridge to refuse."""

from __future__ import annotations

import pytest

from bridge import reasons as R
from bridge import validate
from planner.rules import parse
from sim import scene
from sim.env import TabletopEnv
from skills.drawer import path_blockers


@pytest.fixture(scope="module")
def aenv():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


def _world(env, cubes, **opts):
    env.reset(seed=0, options={"cubes": cubes, **opts})
    return env.world_state()


def test_a_cube_in_the_drawers_path_is_pushed_out_first(aenv):
    w = _world(aenv, {"red_block": [0.08, -0.27], "blue_block": [-0.15, 0.0]})
    assert path_blockers(w, opening=True) == ["red_block"]
    r = parse("open the drawer", w)
    assert [s["skill"] for s in r.steps] == ["push", "open_drawer"]
    assert r.steps[0]["object"] == "red_block"
    assert any("in the drawer's path" in n for n in r.notes)
    res = validate(r.to_json(), w)
    assert res.accepted, res.reasons
    assert res.predicted is not None and path_blockers(res.predicted, opening=True) == []


def test_closing_pushes_a_cube_away_from_the_knob(aenv):
    knob_x = 0.0  # the open drawer's knob is near x = 0; the fingers come down in front
    w = _world(
        aenv,
        {"red_block": [knob_x - 0.06, -0.3], "blue_block": [-0.15, 0.05]},
        drawer=scene.DRAWER_TRAVEL,
    )
    assert path_blockers(w, opening=False) == ["red_block"]
    r = parse("close the drawer", w)
    assert [s["skill"] for s in r.steps] == ["push", "close_drawer"]
    assert validate(r.to_json(), w).accepted


def test_a_clear_path_needs_no_push(aenv):
    w = _world(aenv, {"red_block": [-0.1, 0.0]})
    assert [s["skill"] for s in parse("open the drawer", w).steps] == ["open_drawer"]


def test_a_cube_against_a_bin_wall_is_carried_to_its_region(env):
    """Red sits just in front of the green bin (+y side): pushing it to the centre needs the
    fingers behind it, where the bin's wall is."""
    w = _world(env, {"red_block": [0.0, 0.1605], "blue_block": [-0.15, -0.15]})
    r = parse("push the red block to the center of the table", w)
    assert [s["skill"] for s in r.steps] == ["pick", "place"]
    assert r.steps[1]["target"] == "table_center"
    res = validate(r.to_json(), w)
    assert res.accepted, res.reasons
    assert res.goal == ["at(red_block, table_center)"]


@pytest.mark.parametrize("where", ["bin", "stack"])
def test_a_cube_off_the_table_is_carried_to_its_region(env, where):
    """Pushing a cube that sits in a bin or on another cube: nothing can push it along the
    table, so it is carried there (the chains asked for this after a put into a bin, and
    stopped safely three times in 100)."""
    cubes = {"blue_block": [-0.15, -0.15]}
    if where == "bin":
        cubes["red_block"] = [0.0, 0.25, 0.025, 0.0]  # in the green bin
    else:
        cubes["red_block"] = [-0.15, -0.15, 0.061, 0.0]  # on blue
    w = _world(env, cubes)
    assert not w.object("red_block").on_table
    r = parse("push the red block to the center of the table", w)
    assert [s["skill"] for s in r.steps] == ["pick", "place"]
    res = validate(r.to_json(), w)
    assert res.accepted, res.reasons
    assert res.goal == ["at(red_block, table_center)"]


def test_a_free_push_is_left_alone(env):
    w = _world(env, {"red_block": [0.0, -0.1]})
    r = parse("push the red block to the left of the table", w)
    assert [s["skill"] for s in r.steps] == ["push"]


def test_a_wall_push_with_a_cube_in_the_hand_is_left_to_the_bridge(env):
    """Holding another cube, the carry is not possible: the push stays, and the bridge
    refuses it with its reason."""
    w = _world(env, {"red_block": [0.0, 0.1605], "blue_block": [-0.15, -0.15]})
    held = w.model_copy(update={"held_object": "blue_block"})
    res = validate(
        '{"steps": [{"skill": "push", "object": "red_block", "target": "table_center"}]}', held
    )
    assert not res.accepted and R.PRECONDITION_VIOLATED in res.codes
