"""The case table: at least one case per rejection code, and plans that must pass."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage

from bridge import CODES, validate
from bridge import reasons as R
from tests.bridge.bridge_worlds import AFFORDANCE_WORLDS
from tests.bridge.bridge_worlds import WORLDS as _BASE_WORLDS

P = json.dumps
WORLDS = {**_BASE_WORLDS, **AFFORDANCE_WORLDS}

ACCEPT = [
    (
        "fresh",
        P(
            {
                "steps": [
                    {"skill": "pick", "object": "red_block"},
                    {"skill": "place", "target": "green_bin"},
                    {"skill": "home"},
                ]
            }
        ),
    ),
    (
        "fresh",
        P([{"skill": "pick", "object": "blue_block"}, {"skill": "place", "target": "red_block"}]),
    ),
    ("fresh", P({"skill": "push", "object": "blue_block", "target": "table_center"})),
    ("fresh", P({"skill": "push", "object": "blue_block", "target": [0.1, -0.2]})),
    ("fresh", P({"skill": "push", "object": "blue_block", "target": [0, 0.2]})),
    (
        "fresh",
        "Here is the plan:\n```json\n"
        + P([{"skill": "pick", "object": "red_block"}])
        + "\n```\nLet me know!",
    ),
    ("fresh", "Plan: " + P({"steps": [{"skill": "pick", "object": "yellow_block"}]}) + " done."),
    ("red_held", P([{"skill": "place", "target": "table_left"}, {"skill": "home"}])),
    ("red_held", P([{"skill": "home"}])),
    (
        "stacked",
        P(
            [
                {"skill": "pick", "object": "blue_block"},
                {"skill": "place", "target": "table_back"},
                {"skill": "pick", "object": "red_block"},
                {"skill": "place", "target": "blue_block"},
            ]
        ),
    ),
    (
        "in_bin",
        P([{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "table_front"}]),
    ),
    (
        "far",
        P([{"skill": "pick", "object": "green_block"}, {"skill": "place", "target": "red_block"}]),
    ),
    (
        "fresh",
        P(
            {
                "steps": [
                    {"skill": "pick", "object": "red_block"},
                    {"skill": "place", "target": "green_bin"},
                    {"skill": "home"},
                ],
                "goal": ["in(red_block, green_bin)", "home", "not held(*)"],
            }
        ),
    ),
    (
        "fresh",
        P(
            {
                "steps": [{"skill": "push", "object": "blue_block", "target": "table_left"}],
                "goal": ["at(blue_block, table_left)"],
            }
        ),
    ),
]


@pytest.mark.parametrize("world_key,raw", ACCEPT)
def test_valid_plans_are_accepted(world_key, raw):
    res = validate(raw, WORLDS[world_key])
    assert res.accepted, res.reasons
    assert res.reasons == [] and res.plan and res.predicted is not None
    assert all(isinstance(s, dict) and "skill" in s for s in res.plan_json())


REJECT = [
    # (code, world, raw, expected path or None)
    (R.EMPTY_OUTPUT, "fresh", "   \n", ""),
    (R.INPUT_TOO_LARGE, "fresh", "x" * 70_000, ""),
    (R.PARSE_ERROR, "fresh", "I would pick the red block first.", ""),
    (R.PARSE_ERROR, "fresh", "{'steps': [{'skill': 'home'}]}", ""),
    (
        R.AMBIGUOUS_OUTPUT,
        "fresh",
        P({"skill": "pick", "object": "red_block"})
        + " or "
        + P({"skill": "pick", "object": "blue_block"}),
        "",
    ),
    (R.AMBIGUOUS_OUTPUT, "fresh", '{"skill": "pick", "object": "red_block", "object": "x"}', ""),
    (R.TRUNCATED_OUTPUT, "fresh", '{"steps": [{"skill": "pick", "object": "red_block"}, {"sk', ""),
    (R.TOO_MANY_VALUES, "fresh", "[0] " * 65 + P([{"skill": "home"}]), ""),
    (R.SCHEMA_VIOLATION, "fresh", "42", ""),
    (R.SCHEMA_VIOLATION, "fresh", P({"steps": "pick red"}), "/steps"),
    (R.SCHEMA_VIOLATION, "fresh", P({"steps": ["pick"]}), "/steps/0"),
    (
        R.HALLUCINATED_SKILL,
        "fresh",
        P([{"skill": "grasp", "object": "red_block"}]),
        "/steps/0/skill",
    ),
    (
        R.HALLUCINATED_OBJECT,
        "fresh",
        P([{"skill": "pick", "object": "purple_block"}]),
        "/steps/0/object",
    ),
    (
        R.HALLUCINATED_OBJECT,
        "three",
        P([{"skill": "pick", "object": "yellow_block"}]),
        "/steps/0/object",
    ),
    (
        R.HALLUCINATED_TARGET,
        "red_held",
        P([{"skill": "place", "target": "purple_bin"}]),
        "/steps/0/target",
    ),
    (
        R.HALLUCINATED_TARGET,
        "fresh",
        P([{"skill": "push", "object": "red_block", "target": "table_middle"}]),
        "/steps/0/target",
    ),
    (R.WRONG_ARGUMENTS, "fresh", P([{"skill": "pick"}]), "/steps/0/object"),
    (R.WRONG_ARGUMENTS, "fresh", P([{"skill": "pick", "object": "green_bin"}]), "/steps/0/object"),
    (R.WRONG_ARGUMENTS, "fresh", P([{"skill": "pick", "object": 3}]), "/steps/0/object"),
    (R.WRONG_ARGUMENTS, "fresh", P([{"object": "red_block"}]), "/steps/0/skill"),
    (
        R.WRONG_ARGUMENTS,
        "fresh",
        '[{"skill": "push", "object": "red_block", "target": [NaN, 0]}]',
        "/steps/0/target/0",
    ),
    (
        R.WRONG_ARGUMENTS,
        "fresh",
        P([{"skill": "push", "object": "red_block", "target": [0.1, 0.1, 0.1]}]),
        "/steps/0/target",
    ),
    (R.WRONG_ARGUMENTS, "fresh", P({"steps": [{"skill": "home"}], "refuse": "no"}), "/refuse"),
    (
        R.EXTRA_FIELD,
        "fresh",
        P([{"skill": "pick", "object": "red_block", "force": 5}]),
        "/steps/0/force",
    ),
    (R.EXTRA_FIELD, "fresh", P({"steps": [{"skill": "home"}], "comment": "hi"}), "/comment"),
    (R.EMPTY_PLAN, "fresh", P({"steps": []}), "/steps"),
    (R.PLAN_TOO_LONG, "fresh", P([{"skill": "home"}] * 13), "/steps"),
    (
        R.PRECONDITION_VIOLATED,
        "fresh",
        P([{"skill": "place", "target": "green_bin"}]),
        "/steps/0/target",
    ),
    (
        R.PRECONDITION_VIOLATED,
        "red_held",
        P([{"skill": "pick", "object": "blue_block"}]),
        "/steps/0/object",
    ),
    (
        R.PRECONDITION_VIOLATED,
        "red_held",
        P([{"skill": "place", "target": "red_block"}]),
        "/steps/0/target",
    ),
    (
        R.PRECONDITION_VIOLATED,
        "stacked",
        P([{"skill": "pick", "object": "red_block"}]),
        "/steps/0/object",
    ),
    (
        R.PRECONDITION_VIOLATED,
        "fresh",
        P([{"skill": "pick", "object": "red_block"}, {"skill": "pick", "object": "blue_block"}]),
        "/steps/1/object",
    ),
    (
        R.PRECONDITION_VIOLATED,
        "red_held",
        P([{"skill": "push", "object": "blue_block", "target": "table_back"}]),
        "/steps/0/object",
    ),
    (R.UNREACHABLE, "far", P([{"skill": "pick", "object": "yellow_block"}]), "/steps/0/object"),
    (
        R.UNREACHABLE,
        "held_far_target",
        P([{"skill": "place", "target": "yellow_block"}]),
        "/steps/0/target",
    ),
    (
        R.OUT_OF_WORKSPACE,
        "fresh",
        P([{"skill": "push", "object": "red_block", "target": [0.9, 0.0]}]),
        "/steps/0/target",
    ),
    (
        R.OUT_OF_WORKSPACE,
        "fresh",
        P([{"skill": "push", "object": "red_block", "target": [0.26, 0.34]}]),
        "/steps/0/target",
    ),
    (R.NO_EFFECT, "fresh", P([{"skill": "home"}]), "/steps/0"),
    (R.NOT_GRASPABLE, "touching", P([{"skill": "pick", "object": "red_block"}]), "/steps/0/object"),
    (R.NOT_GRASPABLE, "block", P([{"skill": "pick", "object": "red_block"}]), "/steps/0/object"),
    (
        R.LOW_AFFORDANCE,
        "low_push",
        P([{"skill": "push", "object": "red_block", "target": "table_left"}]),
        "/steps/0",
    ),
    (  # the fingers cannot come down behind it: past the workspace's edge
        R.PRECONDITION_VIOLATED,
        "far_edge",
        P([{"skill": "push", "object": "red_block", "target": "table_left"}]),
        "/steps/0/target",
    ),
    (
        R.NO_EFFECT,
        "fresh",
        P([{"skill": "push", "object": "blue_block", "target": [0.04, 0.0]}]),
        "/steps/0/target",
    ),
    (R.REFUSED, "fresh", P({"steps": [], "refuse": "there is no purple block"}), "/refuse"),
    (
        R.GOAL_SYNTAX,
        "fresh",
        P({"steps": [{"skill": "pick", "object": "red_block"}], "goal": "held(red_block)"}),
        "/goal",
    ),
    (
        R.GOAL_SYNTAX,
        "fresh",
        P({"steps": [{"skill": "pick", "object": "red_block"}], "goal": ["grasped(red_block)"]}),
        "/goal/0",
    ),
    (
        R.GOAL_UNKNOWN_OBJECT,
        "fresh",
        P({"steps": [{"skill": "pick", "object": "red_block"}], "goal": ["held(purple_block)"]}),
        "/goal/0",
    ),
    (
        R.GOAL_UNKNOWN_OBJECT,
        "three",
        P(
            {
                "steps": [{"skill": "pick", "object": "red_block"}],
                "goal": ["on(red_block, yellow_block)"],
            }
        ),
        "/goal/0",
    ),
    (
        R.GOAL_NOT_ACHIEVED,
        "fresh",
        P(
            {
                "steps": [
                    {"skill": "pick", "object": "red_block"},
                    {"skill": "place", "target": "blue_bin"},
                ],
                "goal": ["in(red_block, blue_bin)", "in(blue_block, green_bin)"],
            }
        ),
        "/goal/1",
    ),
    (R.PARSE_ERROR, "fresh", object(), ""),
]


@pytest.mark.parametrize("code,world_key,raw,path", REJECT)
def test_rejections_carry_the_code(code, world_key, raw, path):
    res = validate(raw, WORLDS[world_key])
    assert not res.accepted and res.plan == []
    assert res.reasons, "a rejection always has a reason"
    assert code in res.codes, res.reasons
    if path is not None:
        assert any(r.path == path for r in res.reasons if r.code == code), res.reasons
    assert all(r.code in CODES for r in res.reasons)


def test_table_covers_every_plan_code():
    # not_grounded and forbidden are decided in the negotiation, with the task text and its
    # constraints (test_grounding.py, tests/planner/test_understand.py)
    policy_only = {R.PLANNER_ERROR, R.INTERNAL_ERROR, R.NOT_GROUNDED, R.FORBIDDEN}
    assert set(CODES) - policy_only <= {c for c, *_ in REJECT}


def test_codes_are_documented():
    from pathlib import Path

    import bridge

    text = (Path(bridge.__file__).parent / "REASONS.md").read_text()
    documented = {c for c in CODES if f"`{c}`" in text}
    assert documented == set(CODES)


def test_hints_name_alternatives(world):
    r = validate(P([{"skill": "pick", "object": "red_blok"}]), world).reasons[0]
    assert "did you mean 'red_block'" in r.hint
    r = validate(P([{"skill": "grab", "object": "red_block"}]), world).reasons[0]
    assert "'pick'" in r.hint
    r = validate(P({"plan": [{"skill": "home"}]}), world)
    assert any("'steps'" in x.hint for x in r.reasons if x.code == R.EXTRA_FIELD)
    r = validate(P([{"skill": "place", "object": "red_block", "target": "green_bin"}]), world)
    extra = [x for x in r.reasons if x.code == R.EXTRA_FIELD][0]
    assert "pick" in extra.hint and "push" in extra.hint


def test_all_schema_errors_collected(world):
    raw = P(
        [
            {"skill": "pick", "object": "purple_block", "speed": 1},
            {"skill": "fly"},
            {"skill": "place"},
        ]
    )
    codes = validate(raw, world).codes
    want = {R.HALLUCINATED_OBJECT, R.EXTRA_FIELD, R.HALLUCINATED_SKILL, R.WRONG_ARGUMENTS}
    assert want <= set(codes)


def test_langchain_message_forms(world):
    plan = {"steps": [{"skill": "pick", "object": "red_block"}]}
    assert validate(AIMessage(content="```json\n" + P(plan) + "\n```"), world).accepted
    blocks = [{"type": "text", "text": "Plan: "}, {"type": "text", "text": P(plan)}]
    assert validate(AIMessage(content=blocks), world).accepted
    tool = AIMessage(content="", tool_calls=[{"name": "plan", "args": plan, "id": "1"}])
    assert validate(tool, world).accepted
    two = AIMessage(
        content="",
        tool_calls=[
            {"name": "plan", "args": plan, "id": "1"},
            {"name": "plan", "args": {"steps": [{"skill": "home"}]}, "id": "2"},
        ],
    )
    assert validate(two, world).codes == [R.AMBIGUOUS_OUTPUT]


def test_python_objects_and_bytes(world):
    from bridge import PickSubgoal, Plan

    assert validate([{"skill": "pick", "object": "red_block"}], world).accepted
    assert validate(Plan(steps=[PickSubgoal(skill="pick", object="red_block")]), world).accepted
    assert validate(P([{"skill": "pick", "object": "red_block"}]).encode(), world).accepted
    assert validate(b"\xff\xfe", world).codes == [R.PARSE_ERROR]
    assert validate(None, world).codes == [R.EMPTY_OUTPUT]
    assert (
        validate(
            [{"skill": "push", "object": "red_block", "target": [float("inf"), 0]}], world
        ).codes[0]
        == R.WRONG_ARGUMENTS
    )


def test_identical_duplicates_are_not_ambiguous(world):
    body = P([{"skill": "pick", "object": "red_block"}])
    assert validate(f"```json\n{body}\n```\nagain:\n```json\n{body}\n```", world).accepted


def test_hostile_structures_are_cheap_and_rejected(world):
    for raw in (
        "[" * 50_000,
        "{" * 50_000,
        '{"a":' * 3000 + "1" + "}" * 3000,
        P({"steps": [{"skill": "home"}] * 100_000}),
    ):
        res = validate(raw, world)
        assert not res.accepted and res.reasons
        assert res.latency_s < 0.5


def test_accepted_plan_predicts_the_world(world):
    res = validate(
        P([{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]),
        world,
    )
    assert res.predicted.in_("red_block", "green_bin") and res.predicted.held_object is None


def test_max_steps_is_configurable(world):
    raw = P([{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "red_bin"}])
    assert validate(raw, world, max_steps=1).codes == [R.PLAN_TOO_LONG]
    assert validate(raw, world, max_steps=2).accepted


def test_result_serialises(world):
    res = validate(P([{"skill": "push", "object": "red_block", "target": [0.1, 0.1]}]), world)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["accepted"] and d["plan"] == [
        {"skill": "push", "object": "red_block", "target": [0.1, 0.1]}
    ]


def test_not_graspable_hint_names_the_push_that_frees_the_cube():
    """The hint carries a push subgoal; inserted before the pick, the plan is accepted."""
    w = WORLDS["touching"]
    res = validate(P([{"skill": "pick", "object": "red_block"}]), w)
    (reason,) = res.reasons
    assert reason.code == R.NOT_GRASPABLE and "blue_block" in reason.message
    push = json.loads(reason.hint[reason.hint.index("{") : reason.hint.rindex("}") + 1])
    assert push["skill"] == "push" and push["object"] in ("red_block", "blue_block")
    fixed = validate(P([push, {"skill": "pick", "object": "red_block"}]), w)
    assert fixed.accepted, fixed.reasons
    assert fixed.predicted.graspable("red_block")


def test_not_graspable_without_a_repair_says_so():
    res = validate(P([{"skill": "pick", "object": "red_block"}]), WORLDS["walled"])
    assert res.codes == [R.NOT_GRASPABLE] and "green_bin wall" in res.reasons[0].message
    assert "no push frees red_block" in res.reasons[0].hint


def test_a_block_is_freed_by_pushing_a_row_out_of_it():
    """In a 2x2 block the push skill comes down behind the row it pushes: red and green go
    together, away from blue, and red can then be picked."""
    res = validate(P([{"skill": "pick", "object": "red_block"}]), WORLDS["block"])
    hint = res.reasons[0].hint
    push = json.loads(hint[hint.index("{") : hint.rindex("}") + 1])
    fixed = validate(P([push, {"skill": "pick", "object": "red_block"}]), WORLDS["block"])
    assert fixed.accepted, fixed.reasons


def test_a_pick_after_the_neighbour_leaves_is_accepted():
    """Graspability is judged in the simulated world before each step: red, blocked on both
    axes, is free along y once blue (itself free along x) is in its bin."""
    first_red = [{"skill": "pick", "object": "red_block"}]
    assert not validate(P(first_red), WORLDS["touching"]).accepted
    plan = [
        {"skill": "pick", "object": "blue_block"},
        {"skill": "place", "target": "blue_bin"},
        *first_red,
    ]
    res = validate(P(plan), WORLDS["touching"])
    assert res.accepted, res.reasons
