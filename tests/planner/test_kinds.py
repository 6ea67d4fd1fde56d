"""Kind and size words in a scene of several kinds (planner.kinds): read as the colour
phrases the language layer knows, asked about where they fit several objects, and put back
as the scene's names; a scene of colour-named cubes is left exactly as it was."""

from __future__ import annotations

import json

import pytest

from planner import kinds
from planner.hybrid import HybridPlanner
from sim.env import TabletopEnv


def _world(scene: str, seed: int = 0):
    env = TabletopEnv(scene=scene)
    env.reset(seed=seed)
    w = env.world_state()
    env.close()
    return w


@pytest.fixture(scope="module")
def mixed():
    return _world("mixed")


@pytest.fixture(scope="module")
def tabletop():
    return _world("tabletop")


def _plan(text, world):
    out = HybridPlanner().plan(text, world)
    b = out.negotiation.plan
    steps = [s.model_dump(exclude_none=True) for s in b.plan] if b and b.accepted else None
    return out, steps


@pytest.mark.parametrize(
    "said, read",
    [
        ("put the ball in the red bin", "put the yellow block in the red bin"),
        ("stack the red block on the cylinder", "stack the red block on the blue block"),
        ("put the big cube in the blue bin", "put the green block in the blue bin"),
        ("put the small block on the big one", "put the red block on the green block"),
        ("Push The yellow Ball left", "Push The yellow block left"),
        ("pick up the tiny cube", "pick up the red block"),
    ],
)
def test_a_phrase_that_names_one_object_is_read_by_its_colour(mixed, said, read):
    assert kinds.spoken(said, mixed) == read


@pytest.mark.parametrize(
    "said", ["pick up the cube", "put the cube in the bin", "push the block to the left"]
)
def test_a_phrase_that_fits_two_objects_is_asked_about(mixed, said):
    q = kinds.ambiguous(said, mixed)
    assert q is not None and "red cube (4 cm)" in q and "green cube (5 cm)" in q
    assert kinds.spoken(said, mixed) == said  # not guessed


def test_a_scene_of_colour_named_cubes_is_left_alone(tabletop):
    assert not kinds.is_mixed(tabletop)
    assert kinds.colour_view(tabletop) is tabletop
    for text in ("put the ball in the red bin", "pick up the big cube", "pick up the cube"):
        assert kinds.spoken(text, tabletop) == text
        assert kinds.ambiguous(text, tabletop) is None
    raw = '{"steps":[{"skill":"pick","object":"yellow_block"}],"goal":["held(yellow_block)"]}'
    assert kinds.scene_names(raw, tabletop) == raw


def test_colour_names_are_put_back_as_the_scenes(mixed):
    raw = json.dumps(
        {
            "steps": [
                {"skill": "pick", "object": "yellow_block"},
                {"skill": "place", "target": "green_block"},
            ],
            "goal": ["on(yellow_block, green_block)", "on_table(red_block)"],
        }
    )
    got = json.loads(kinds.scene_names(raw, mixed))
    assert got["steps"][0]["object"] == "yellow_ball"
    assert got["steps"][1]["target"] == "green_big_block"
    assert got["goal"] == ["on(yellow_ball, green_big_block)", "on_table(red_block)"]
    assert "purple_block" in kinds.scene_names('"purple_block"', mixed)  # for the bridge


def test_the_colour_view_renames_what_rests_on_what(mixed):
    ball = next(o for o in mixed.objects if o.name == "yellow_ball")
    w = mixed.model_copy(
        update={
            "objects": [
                o.model_copy(update={"on": "green_big_block"}) if o is ball else o
                for o in mixed.objects
            ],
            "held_object": "blue_cylinder",
        }
    )
    v = kinds.colour_view(w)
    assert v.object_names == ["red_block", "green_block", "blue_block", "yellow_block"]
    assert v.object("yellow_block").on == "green_block" and v.held_object == "blue_block"
    assert mixed.object_names[1] == "green_big_block"  # the world itself is not changed


@pytest.mark.parametrize(
    "said, steps",
    [
        ("put the ball in the red bin", [("pick", "yellow_ball"), ("place", "red_bin")]),
        (
            "stack the small cube on the big cube",
            [("pick", "red_block"), ("place", "green_big_block")],
        ),
        # the ball rolls on: a push of it is carried instead (the push skill's repair)
        (
            "push the ball to the left side of the table",
            [("pick", "yellow_ball"), ("place", "table_left")],
        ),
        ("push the cylinder to the front of the table", [("push", "blue_cylinder")]),
        (
            "don't touch the ball, put the cylinder in the green bin",
            [("pick", "blue_cylinder"), ("place", "green_bin")],
        ),
    ],
)
def test_the_planner_plans_with_kind_and_size_words(mixed, said, steps):
    out, got = _plan(said, mixed)
    assert got is not None, out.decision
    assert [(s["skill"], s.get("object") or s.get("target")) for s in got] == steps


def test_the_planner_asks_which_cube(mixed):
    out, got = _plan("pick up the cube", mixed)
    assert got is None and out.understanding.kind == "clarify"
    assert "green cube (5 cm)" in out.understanding.question


def test_answers_use_the_objects_words(mixed, tabletop):
    out, _ = _plan("where is the ball?", mixed)
    assert out.understanding.answer.startswith("The yellow ball is")
    out, _ = _plan("where is the big cube?", mixed)
    assert out.understanding.answer.startswith("The big green cube is")
    out, got = _plan("put the ball in the red bin", tabletop)  # still no ball there
    assert got is None and "no ball" in (out.negotiation.plan.refusal or "")


def test_a_rules_parse_is_named_back(mixed):
    from planner.rules.result import RulesResult

    r = RulesResult(
        steps=[{"skill": "push", "object": "yellow_block", "target": "table_back"}],
        confident=True,
        confidence=1.0,
        goal=["at(yellow_block, table_back)"],
    )
    back = kinds.named_back(r, mixed)
    assert back.steps[0]["object"] == "yellow_ball"
    assert back.goal == ["at(yellow_ball, table_back)"]
    assert r.goal == ["at(yellow_block, table_back)"]  # the parse itself is not changed


def test_the_rules_refuse_a_stack_on_the_ball(mixed):
    out, got = _plan("put the red block on the ball", mixed)
    assert got is None and "nothing stays on top of the yellow ball" in out.negotiation.plan.refusal


def test_on_the_table_center_is_a_place_not_already_done(tabletop):
    out, got = _plan("put the yellow block on the table center", tabletop)
    assert got == [
        {"skill": "pick", "object": "yellow_block"},
        {"skill": "place", "target": "table_center"},
    ]
    out, got = _plan("put the yellow block on the table", tabletop)  # there already
    assert got is None and "already on the table" in out.understanding.answer


def test_the_rules_refuse_to_stack_the_ball(mixed):
    out, got = _plan("put the ball on the big cube", mixed)
    assert got is None and "would roll off" in out.negotiation.plan.refusal


def test_a_model_sees_the_colour_view_and_its_names_are_put_back(mixed, tabletop):
    """Any proposer but the rules one (a chat model) is asked about the colour-named view of
    a mixed world; its plan reaches the bridge in the scene's names."""
    from bridge.policy import PlanRequest, Proposal
    from planner.hybrid import _Counted
    from planner.llm import Usage

    seen = []

    class Model:
        name = "model"

        def propose(self, request):
            seen.append(request.world.object_names)
            raw = '{"steps": [{"skill": "pick", "object": "yellow_block"}]}'
            return Proposal(raw=raw)

    got = _Counted(Model(), Usage(), []).propose(PlanRequest(task="pick up the ball", world=mixed))
    assert seen[-1] == ["red_block", "green_block", "blue_block", "yellow_block"]
    assert json.loads(got.raw)["steps"][0]["object"] == "yellow_ball"
    same = _Counted(Model(), Usage(), []).propose(PlanRequest(task="x", world=tabletop))
    assert seen[-1] == tabletop.object_names and "yellow_block" in same.raw


def test_a_colour_that_fits_two_objects_is_asked_about(mixed):
    """A red ball beside the red cube: "the red one" is a question, "the red ball" is not."""
    from sim import objects
    from sim.objects import Sphere

    red_ball = Sphere(name="red_ball", color="red", rgba=(0.85, 0.12, 0.12, 1.0), radius=0.02)
    with objects.defined(red_ball):
        ball = next(o for o in mixed.objects if o.name == "yellow_ball")
        objs = [o for o in mixed.objects if o is not ball]
        objs.append(ball.model_copy(update={"name": "red_ball", "color": "red"}))
        w = mixed.model_copy(update={"objects": objs})
        q = kinds.ambiguous("put the red one in the green bin", w)
        assert q is not None and "red cube (4 cm)" in q and "red ball (4 cm)" in q
        assert kinds.ambiguous("put the red ball in the green bin", w) is None
        assert kinds.colour_view(w) is w  # colours no longer tell the objects apart
        out, got = _plan("put the red one in the green bin", w)
        assert got is None and out.understanding.kind == "clarify"
