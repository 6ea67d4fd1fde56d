"""The closed loop judges success by the goal: unmet predicates are replanned, bounded."""

from __future__ import annotations

import json

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

import skills
from bridge.models import SUBGOAL_ADAPTER
from planner.hybrid import HybridPlanner
from planner.llm import LLMProposer
from planner.loop import run_closed_loop
from tests.planner.planner_worlds import make_world


class KnockingExecutor:
    """Symbolic effects; after the ``nth`` successful place, the placed cube is knocked
    back onto the table (what a bounce out of a bin looks like to the world state)."""

    def __init__(
        self,
        world,
        knock=(),
    ):
        self.world = world
        self.knock = list(knock)  # place counts after which to knock
        self.places = 0
        self.calls = []

    def __call__(self, step):
        self.calls.append(step)
        held = self.world.held_object
        sub = SUBGOAL_ADAPTER.validate_python(step)
        self.world = skills.get(step["skill"]).effect(self.world, sub)
        if step["skill"] == "place":
            self.places += 1
            if self.places in self.knock:
                objs = [
                    o.model_copy(
                        update={
                            "in_bin": None,
                            "on": None,
                            "on_table": True,
                            # clear of its neighbours: a cube landing against one
                            # (yellow is at (0.12, -0.16)) is not graspable
                            "pos": (0.15, -0.25, 0.02),
                        }
                    )
                    if o.name == held
                    else o
                    for o in self.world.objects
                ]
                self.world = self.world.model_copy(update={"objects": objs})
        return True, self.world


def test_unmet_goal_is_replanned_and_then_met():
    w = make_world()
    ex = KnockingExecutor(w, knock=[1])
    events = []
    r = run_closed_loop(
        "put the red block in the green bin", w, ex, on_event=lambda k, d: events.append((k, d))
    )
    assert r.status == "success" and r.replans == 1 and r.goal_replans == 1
    assert r.goal == ["in(red_block, green_bin)"] and r.goal_source == "plan"
    assert r.goal_met is True
    assert [c["skill"] for c in ex.calls] == ["pick", "place", "pick", "place"]
    unmet = [d for k, d in events if k == "goal_unmet"]
    assert unmet == [{"unmet": ["in(red_block, green_bin)"]}]
    check = next(h for h in r.executed if h["step"] == {"check": "goal"})
    assert "in(red_block, green_bin)" in check["detail"] and check["success"] is False


def test_goal_still_unmet_when_replans_run_out_is_a_failure_with_a_safe_stop():
    w = make_world()
    ex = KnockingExecutor(w, knock=[1, 2, 3])
    r = run_closed_loop("put the red block in the green bin", w, ex, max_replans=2)
    assert r.status == "failed" and not r.ok
    assert "goal unmet" in r.message and "in(red_block, green_bin)" in r.message
    assert r.goal_met is False
    assert r.executed[-1]["safe_stop"] is True


def test_only_the_unmet_part_is_replanned():
    w = make_world()
    ex = KnockingExecutor(w, knock=[1])  # red is knocked out, blue's place is fine
    r = run_closed_loop(
        "put the red block in the red bin, then put the blue block in the blue bin", w, ex
    )
    assert r.status == "success"
    assert ex.calls[4:] == [
        {"skill": "pick", "object": "red_block"},
        {"skill": "place", "target": "red_bin"},
    ]


def test_verifier_decides_success():
    """The runner's verify (settle, then evaluate in physics) is what the loop believes."""
    w = make_world()
    seen = []

    def verify(goal):
        seen.append(list(goal))
        return w, [{"predicate": g, "met": False} for g in goal]

    ex = KnockingExecutor(w)
    r = run_closed_loop("put the red block in the green bin", w, ex, verify=verify, max_replans=0)
    assert seen == [["in(red_block, green_bin)"]]
    assert r.status == "failed" and r.goal_met is False


def test_nothing_to_do_is_success_only_when_the_goal_holds():
    w = make_world(("red_block",), in_bin={"red_block": "red_bin"})
    r = run_closed_loop("put the red block in the red bin", w, KnockingExecutor(w))
    assert r.status == "success" and r.goal == ["in(red_block, red_bin)"] and r.goal_met


def test_model_plan_without_goal_is_judged_by_its_effects():
    plan = {
        "steps": [
            {"skill": "pick", "object": "red_block"},
            {"skill": "place", "target": "green_bin"},
        ]
    }

    replies = iter([AIMessage(content=json.dumps(plan))] * 3)
    llm = LLMProposer(GenericFakeChatModel(messages=replies), name="fake", sleep=lambda s: None)
    w = make_world()
    ex = KnockingExecutor(w, knock=[1])
    r = run_closed_loop(
        "wiggle the red block, then put it in the green bin", w, ex, planner=HybridPlanner(llm)
    )
    assert r.goal == ["in(red_block, green_bin)"] and r.goal_source == "effects"
    assert r.status == "success" and r.goal_replans == 1


# ----------------------------------------------------------------------------- scripted models
class Recording(GenericFakeChatModel):
    seen: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kw):
        self.seen.append(messages)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kw)


def test_model_plan_that_misses_its_own_goal_is_rejected_with_the_unmet_predicates():
    wrong = {
        "steps": [
            {"skill": "pick", "object": "red_block"},
            {"skill": "place", "target": "blue_bin"},
        ],
        "goal": ["in(red_block, green_bin)"],
    }
    model = Recording(messages=iter([AIMessage(content=json.dumps(wrong))] * 3), seen=[])
    llm = LLMProposer(model, name="fake", mode="text", sleep=lambda s: None)
    planner = HybridPlanner(llm, route="model", rules_fallback=False, max_regenerations=2)
    out = planner.plan("put the red block in the green bin", make_world())
    assert out.decision == "safe_stop"
    assert [a.decision for a in out.attempts] == ["rejected"] * 3
    assert all(a.reasons[0].code == "goal_not_achieved" for a in out.attempts)
    feedback = model.seen[1][-1].content
    assert "goal_not_achieved" in feedback and "in(red_block, green_bin)" in feedback


def test_model_plan_with_a_goal_it_achieves_is_accepted_and_carries_it():
    good = {
        "steps": [
            {"skill": "pick", "object": "red_block"},
            {"skill": "place", "target": "green_bin"},
        ],
        "goal": ["in(red_block, green_bin)"],
    }
    model = Recording(messages=iter([AIMessage(content=json.dumps(good))]), seen=[])
    llm = LLMProposer(model, name="fake", mode="text", sleep=lambda s: None)
    out = HybridPlanner(llm, route="model").plan("put the red block in the green bin", make_world())
    assert out.decision == "accepted"
    assert out.plan.goal == ["in(red_block, green_bin)"] and out.plan.goal_source == "plan"
    system = model.seen[0][0].content
    assert '"goal"' in system and "at(cube, region)" in system
