"""The shared goal grammar: `at`, `home`, unknown names, effect goals and merging."""

from __future__ import annotations

import pytest

from bridge import goals as G
from sim import scene
from sim.world import BinState, ObjectState, RegionState, WorldState


def _world(**kw) -> WorldState:
    objs = [
        ObjectState(name="red_block", color="red", pos=(0.0, -0.08, 0.02), on_table=True),
        ObjectState(name="blue_block", color="blue", pos=(0.0, 0.25, 0.024), in_bin="blue_bin"),
    ]
    base = dict(
        objects=objs,
        bins=[BinState(name="blue_bin", color="blue", pos=(0.0, 0.25, 0.0))],
        regions=[RegionState(name=k, pos=v) for k, v in scene.REGIONS.items()],
        grip_pos=tuple(float(v) for v in scene.HOME_POS),
    )
    base.update(kw)
    return WorldState(**base)


def test_suite_and_bridge_share_one_grammar():
    import skillbridge.evaluation.suite as S

    assert S.parse_literal is G.parse_literal and S.unmet is G.unmet
    assert S.GoalSyntaxError is G.GoalSyntaxError


@pytest.mark.parametrize(
    "text,expected",
    [
        ("at(red_block, table_center)", True),
        ("in_region(red_block, table_center)", True),
        ("at(red_block, table_left)", False),
        ("at(blue_block, table_center)", False),
        ("home", True),
        ("home()", True),
        ("not home", False),
    ],
)
def test_at_and_home(text, expected):
    assert G.parse_literal(text).holds(_world()) is expected


def test_home_needs_an_empty_gripper_at_the_rest_pose():
    away = _world(grip_pos=(0.1, 0.1, 0.1))
    assert not G.parse_literal("home").holds(away)
    w = _world()
    held = w.model_copy(update={"held_object": "red_block"})
    assert not G.parse_literal("home").holds(held)


@pytest.mark.parametrize(
    "text,cls",
    [
        ("in(purple_block, blue_bin)", G.GoalUnknownName),
        ("in(red_block, yellow_bin)", G.GoalUnknownName),
        ("at(red_block, table_top)", G.GoalUnknownName),
        ("inside(red_block, blue_bin)", G.GoalSyntaxError),
        ("in(red_block)", G.GoalSyntaxError),
        ("home(red_block)", G.GoalSyntaxError),
        ("in(red_block, blue_bin", G.GoalSyntaxError),
        ("x" * 200, G.GoalSyntaxError),
    ],
)
def test_errors_are_typed(text, cls):
    with pytest.raises(cls):
        G.parse_literal(text)
    if cls is G.GoalSyntaxError:
        with pytest.raises(G.GoalSyntaxError) as e:
            G.parse_literal(text)
        assert not isinstance(e.value, G.GoalUnknownName)


def test_absent_names_in_a_world_that_lacks_a_scene_name():
    lit = G.parse_literal("on(red_block, green_block)")
    assert G.absent_names(lit, _world()) == [("object", "green_block")]


def test_evaluate_lists_each_predicate():
    ev = G.evaluate(["at(red_block, table_center)", "in(red_block, blue_bin)"], _world())
    assert ev == [
        {"predicate": "at(red_block, table_center)", "met": True},
        {"predicate": "in(red_block, blue_bin)", "met": False},
    ]
    assert G.unmet(["in(red_block, blue_bin)", "home"], _world()) == ["in(red_block, blue_bin)"]


def test_effect_goal_names_where_the_plan_leaves_what_it_moves():
    from bridge.validate import simulate

    w = _world(grip_pos=(0.1, 0.1, 0.2))
    steps = [
        {"skill": "pick", "object": "red_block"},
        {"skill": "place", "target": "blue_bin"},
        {"skill": "home"},
    ]
    after, reasons = simulate(w, steps)
    assert not reasons
    assert G.effect_goal(w, after, steps) == ["in(red_block, blue_bin)", "home"]


def test_merge_later_literals_replace_those_about_the_same_cube():
    old = ["in(red_block, blue_bin)", "on(green_block, yellow_block)"]
    assert G.merge(old, ["at(red_block, table_left)", "home"]) == [
        "on(green_block, yellow_block)",
        "at(red_block, table_left)",
        "home",
    ]
    assert G.same_goal(
        ["in_region(red_block, table_left)", "home"], ["home", "at(red_block,  table_left)"]
    )


# ----------------------------------------------------------------------------- in the bridge
def _fresh():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from tests.bridge.bridge_worlds import WORLDS

    return WORLDS["fresh"]


def test_plan_goal_is_verified_and_unmet_predicates_are_in_the_hint():
    import json

    from bridge import validate

    steps = [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "blue_bin"}]
    res = validate(json.dumps({"steps": steps, "goal": ["in(red_block, green_bin)"]}), _fresh())
    assert not res.accepted and res.codes == ["goal_not_achieved"]
    assert "in(red_block, green_bin)" in res.reasons[0].hint
    ok = validate(json.dumps({"steps": steps, "goal": ["in(red_block, blue_bin)"]}), _fresh())
    assert ok.accepted and ok.goal == ["in(red_block, blue_bin)"] and ok.goal_source == "plan"


def test_plan_without_goal_is_accepted_with_its_effects_as_goal():
    import json

    from bridge import validate

    steps = [{"skill": "push", "object": "blue_block", "target": "table_left"}]
    res = validate(json.dumps({"steps": steps}), _fresh())
    assert res.accepted and res.goal_source == "effects"
    assert res.goal == ["at(blue_block, table_left)"]
    assert res.to_dict()["goal"] == res.goal


def test_schema_offers_goal_with_the_scene_names():
    from bridge.schema import Vocabulary, compile_schema

    cs = compile_schema(Vocabulary.of(_fresh()))
    g = cs.schema["properties"]["goal"]
    assert g["type"] == "array" and "red_block" in g["items"]["pattern"]
    plan = {"steps": [{"skill": "pick", "object": "red_block"}], "goal": ["held(red_block)"]}
    assert cs.full.is_valid(plan)
    assert not cs.full.is_valid({**plan, "goal": ["held(purple_block)"]})
