"""Towers and the drawer with the existing skills: place onto the top of a tower and into the
open drawer, pick from a tower's top and out of the open drawer. Preconditions and effects on
worlds built by hand; then physics: a tower of three built by the experts, read level by
level, and a cube put into the drawer and taken out again by the shipped policies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bridge.schema import Vocabulary, compile_schema
from bridge.validate import simulate
from sim import scene
from sim.env import TabletopEnv
from sim.world import DrawerState
from skills import place as place_mod
from skills.base import DOMAIN_PLACE_TARGET, PRECONDITION
from skills.pick import Pick, PickParams
from skills.place import DRAWER_CAPACITY, MAX_TOWER, Place, PlaceParams
from skills.runtime import SkillExecutor
from tests import worlds

PLACE, PICK = Place(), Pick()
Z1, Z2, Z3 = 0.02, 0.06, 0.10  # centres of the first three levels of a tower
#: The articulated scene's drawer pulled fully out (its inside's centre, as extracted).
DRAWER_XY = (0.093, -0.351)


def tower_world(held: str | None = "yellow_block"):
    """red on the table, green on red, blue on green (a tower of three); yellow held."""
    return worlds.world(
        [
            worlds.cube("red_block", (0.0, -0.1, Z1)),
            worlds.cube("green_block", (0.0, -0.1, Z2), on="red_block"),
            worlds.cube("blue_block", (0.0, -0.1, Z3), on="green_block"),
            worlds.cube("yellow_block", (0.1, -0.1, 0.12), held=True),
        ],
        held=held,
    )


def drawer_world(opening: float = 0.15, contents=(), held: str | None = "red_block"):
    """The articulated scene's state by hand: a drawer holding ``contents``, red held."""
    x, y = DRAWER_XY[0] + (0.15 - opening), DRAWER_XY[1]
    cubes = [worlds.cube("red_block", (0.0, -0.1, 0.12), held=True)]
    for i, n in enumerate(contents):
        dx = (-0.03, 0.03)[i]
        cubes.append(worlds.cube(n, (x + dx, y + 0.02, 0.036), on_table=False))
    w = worlds.world(cubes, held=held)
    w.drawer = DrawerState(
        opening=opening,
        is_open=opening >= scene.DRAWER_OPEN_MIN,
        is_closed=opening <= scene.DRAWER_CLOSED_MAX,
        pos=(x, y, 0.0),
        contents=list(contents),
    )
    return w


def messages(vs) -> list[str]:
    return [v.message for v in vs]


# ------------------------------------------------------------------------ preconditions
def test_place_onto_the_top_of_a_tower_is_allowed_and_onto_its_middle_is_not():
    w = tower_world()
    assert PLACE.preconditions(w, PlaceParams(target="blue_block")) == []
    (v,) = PLACE.preconditions(w, PlaceParams(target="green_block"))
    assert v.code == PRECONDITION and "blue_block is already on green_block" in v.message
    assert v.hint == "stack on blue_block?"


def test_a_tower_taller_than_the_limit_is_refused(monkeypatch):
    assert MAX_TOWER == 4  # every cube the scene has
    monkeypatch.setattr(place_mod, "MAX_TOWER", 3)
    (v,) = PLACE.preconditions(tower_world(), PlaceParams(target="blue_block"))
    assert v.code == PRECONDITION and "towers stop at 3 cubes" in v.message
    assert "lower tower" in v.hint


def test_no_tower_on_the_held_cube_nor_on_one_in_a_bin_or_the_drawer():
    (v,) = PLACE.preconditions(tower_world(), PlaceParams(target="yellow_block"))
    assert "cannot stack yellow_block on itself" in v.message
    w = worlds.world(
        [
            worlds.cube("red_block", (0.0, 0.25, 0.025), in_bin="green_bin"),
            worlds.cube("yellow_block", (0.1, -0.1, 0.12), held=True),
        ],
        held="yellow_block",
    )
    (v,) = PLACE.preconditions(w, PlaceParams(target="red_block"))
    assert "red_block is in green_bin; stacking needs a cube on the table" in v.message
    w = drawer_world(contents=("green_block",))
    (v,) = PLACE.preconditions(w, PlaceParams(target="green_block"))
    assert "green_block is in the drawer" in v.message


def test_place_into_a_closed_or_part_open_drawer_says_open_it_first():
    for opening in (0.0, 0.06):
        (v,) = PLACE.preconditions(drawer_world(opening), PlaceParams(target="drawer"))
        assert v.code == PRECONDITION and v.hint == "open the drawer first"
        assert "closed" in v.message or "only 0.06 m open" in v.message
    assert PLACE.preconditions(drawer_world(0.15), PlaceParams(target="drawer")) == []


def test_a_full_drawer_is_refused():
    assert DRAWER_CAPACITY == 2
    w = drawer_world(contents=("green_block", "blue_block"))
    (v,) = PLACE.preconditions(w, PlaceParams(target="drawer"))
    assert "the drawer is full (green_block, blue_block inside)" in v.message
    assert "pick a cube out of the drawer first" in v.hint
    # one cube in its front half leaves the back half free
    one = drawer_world(contents=("green_block",))
    assert PLACE.preconditions(one, PlaceParams(target="drawer")) == []


def test_pick_from_a_closed_drawer_says_open_it_first_and_from_the_open_one_turns_the_hand():
    w = drawer_world(0.0, contents=("green_block",), held=None)
    (v,) = PICK.preconditions(w, PickParams(object="green_block"))
    assert v.code == PRECONDITION and v.hint == "open the drawer first"
    # the cube in the middle of the open drawer: fingers along x only (the walls are along y)
    w = drawer_world(0.15, held=None)
    w.objects.append(worlds.cube("blue_block", (*_spot(w, 0), 0.036), on_table=False))
    w.drawer.contents.append("blue_block")
    assert PICK.preconditions(w, PickParams(object="blue_block")) == []
    assert w.grasp_axis("blue_block") == "x"


def _spot(w, i: int) -> tuple[float, float]:
    dx, dy = place_mod.DRAWER_SPOTS[i]
    return (w.drawer.pos[0] + dx, w.drawer.pos[1] + dy)


def test_default_scene_has_no_drawer_target():
    w = tower_world()
    assert "drawer" not in Vocabulary.of(w).domain(DOMAIN_PLACE_TARGET)
    schema = compile_schema(Vocabulary.of(w)).schema
    assert "drawer" not in json.dumps(schema["$defs"]["place"])
    (v,) = PLACE.preconditions(w, PlaceParams(target="drawer"))
    assert v.message == "this scene has no drawer"
    assert "drawer" in Vocabulary.of(drawer_world()).domain(DOMAIN_PLACE_TARGET)
    assert Vocabulary.of(drawer_world()).kind("drawer") == "drawer"


# ------------------------------------------------------------------------ effects
def test_effects_predict_a_tower_and_the_drawer_contents():
    w = PLACE.effect(tower_world(), PlaceParams(target="blue_block"))
    assert w.tower("red_block") == ["red_block", "green_block", "blue_block", "yellow_block"]
    assert w.object("yellow_block").pos[2] == pytest.approx(0.14)
    w = PICK.effect(w, PickParams(object="yellow_block"))
    assert w.held("yellow_block") and w.top_of_stack("red_block") == "blue_block"

    w = PLACE.effect(drawer_world(), PlaceParams(target="drawer"))
    assert w.in_("red_block", "drawer") and w.held_object is None
    assert w.object("red_block").pos[:2] == pytest.approx(_spot(w, 0))
    w = PICK.effect(w, PickParams(object="red_block"))
    assert w.held("red_block") and w.drawer.contents == []


def test_the_bridge_simulation_predicts_the_tower_and_refuses_a_closed_drawer(monkeypatch):
    monkeypatch.setenv("SKILLBRIDGE_AFFORDANCE", "0")  # the rules alone
    w = tower_world(held=None)
    w.objects[3] = worlds.cube("yellow_block", (0.1, -0.1, Z1))
    predicted, reasons = simulate(
        w, [{"skill": "pick", "object": "yellow_block"}, {"skill": "place", "target": "blue_block"}]
    )
    assert reasons == [] and predicted.on("yellow_block", "blue_block")
    _, reasons = simulate(drawer_world(0.0), [{"skill": "place", "target": "drawer"}])
    assert reasons and reasons[0].hint == "open the drawer first"


# ------------------------------------------------------------------------ physics
def _run(env, ex, step):
    out = ex.run(env, step)
    assert out.success, (step, out.reason, out.violations)
    return env.world_state()


def test_experts_build_a_tower_of_three_read_at_every_level():
    env = TabletopEnv()
    env.reset(
        seed=0,
        options={
            "cubes": {
                "red_block": [0.0, -0.1],
                "green_block": [0.12, -0.05],
                "blue_block": [-0.12, -0.05],
            }
        },
    )
    ex = SkillExecutor("scripted")
    _run(env, ex, {"skill": "pick", "object": "green_block"})
    w = _run(env, ex, {"skill": "place", "target": "red_block"})
    assert w.on("green_block", "red_block") and w.on_table("red_block")
    _run(env, ex, {"skill": "pick", "object": "blue_block"})
    w = _run(env, ex, {"skill": "place", "target": "green_block"})
    assert w.on("blue_block", "green_block") and w.on("green_block", "red_block")
    assert w.tower("red_block") == ["red_block", "green_block", "blue_block"]
    assert w.top_of_stack("red_block") == "blue_block"
    w = _run(env, ex, {"skill": "pick", "object": "blue_block"})
    assert w.held("blue_block") and w.top_of_stack("red_block") == "green_block"
    env.close()


def test_the_shipped_policies_put_a_cube_into_the_open_drawer_and_take_it_out():
    env = TabletopEnv(scene="articulated")
    env.reset(seed=0, options={"drawer": 0.15, "cubes": {"red_block": [-0.05, -0.15]}})
    ex = SkillExecutor("pretrained")
    _run(env, ex, {"skill": "pick", "object": "red_block"})
    w = _run(env, ex, {"skill": "place", "target": "drawer"})
    assert w.in_("red_block", "drawer") and w.drawer.contents == ["red_block"]
    w = _run(env, ex, {"skill": "pick", "object": "red_block"})
    assert w.held("red_block") and not w.in_("red_block", "drawer")
    assert np.isclose(env.grip_yaw, np.pi / 2)  # taken out with the hand turned a quarter
    env.close()
