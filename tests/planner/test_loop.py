"""Closed loop: plan, execute, observe, continue or replan; refusals end the task."""

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


class SymbolicExecutor:
    """Runs subgoals with the skills' symbolic effects; scripted failures leave the world
    as it was (the skill's success test failed)."""

    def __init__(self, world, fail=()):
        self.world = world
        self.fail = list(fail)  # steps (dicts) that fail once, in order of occurrence
        self.calls = []

    def __call__(self, step):
        self.calls.append(step)
        if step in self.fail:
            self.fail.remove(step)
            return False, self.world
        sub = SUBGOAL_ADAPTER.validate_python(step)
        self.world = skills.get(step["skill"]).effect(self.world, sub)
        return True, self.world


def test_rules_task_runs_to_success():
    w = make_world()
    ex = SymbolicExecutor(w)
    r = run_closed_loop("sort each block into the bin of its colour", w, ex)
    assert r.status == "success" and r.replans == 0
    assert len(r.executed) == 6 and all(h["success"] for h in r.executed)
    assert r.world.in_("red_block", "red_bin") and r.world.in_("blue_block", "blue_bin")


def test_failure_is_fed_back_and_replanned():
    w = make_world()
    pick_red = {"skill": "pick", "object": "red_block"}
    ex = SymbolicExecutor(w, fail=[pick_red])
    events = []
    r = run_closed_loop(
        "put the red block in the green bin", w, ex, on_event=lambda k, d: events.append(k)
    )
    assert r.status == "success" and r.replans == 1
    assert [h["success"] for h in r.executed] == [False, True, True]
    assert "replan" in events and len(r.plans) == 2


def test_partial_progress_is_not_redone_after_a_failure():
    w = make_world()
    place_green = {"skill": "place", "target": "green_bin"}
    ex = SymbolicExecutor(w, fail=[place_green])
    r = run_closed_loop("sort each block into the bin of its colour", w, ex)
    assert r.status == "success"
    # red went in, green's place failed (still held), the replan places it without re-picking
    steps = [h["step"] for h in r.executed]
    assert steps.count({"skill": "pick", "object": "red_block"}) == 1
    assert steps.count({"skill": "pick", "object": "green_block"}) == 1
    assert steps.count(place_green) == 2


def test_bounded_replans_end_with_safe_stop():
    w = make_world()
    pick_red = {"skill": "pick", "object": "red_block"}
    ex = SymbolicExecutor(w, fail=[pick_red] * 10)
    r = run_closed_loop("put the red block in the green bin", w, ex, max_replans=2)
    assert r.status == "failed" and r.replans == 2
    assert r.executed[-1] == {"step": {"skill": "home"}, "success": True, "safe_stop": True}
    assert sum(1 for h in r.executed if h["step"] == pick_red) == 3


def test_impossible_task_is_refused_without_moving():
    w = make_world(("red_block", "blue_block"))
    ex = SymbolicExecutor(w)
    r = run_closed_loop("put the purple block in the red bin", w, ex)
    assert r.status == "refused" and "purple" in r.refusal and ex.calls == []


def test_already_done_is_success():
    w = make_world(("red_block",), in_bin={"red_block": "red_bin"})
    ex = SymbolicExecutor(w)
    r = run_closed_loop("sort the blocks by colour", w, ex)
    assert r.status == "success" and ex.calls == []


def test_model_replan_gets_the_failure_in_its_prompt():
    plan = {
        "steps": [
            {"skill": "pick", "object": "red_block"},
            {"skill": "place", "target": "green_bin"},
        ]
    }
    seen = []

    class Fake(GenericFakeChatModel):
        def _generate(self, messages, stop=None, run_manager=None, **kw):
            seen.append(messages)
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kw)

    replies = iter(
        [
            AIMessage(
                content=json.dumps(plan),
                usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
            )
        ]
        * 2
    )
    llm = LLMProposer(Fake(messages=replies), name="fake", sleep=lambda s: None)
    w = make_world()
    ex = SymbolicExecutor(w, fail=[plan["steps"][0]])
    r = run_closed_loop(
        "wiggle the red block, then put it in the green bin", w, ex, planner=HybridPlanner(llm)
    )
    assert r.status == "success" and r.replans == 1
    assert '{"skill":"pick","object":"red_block"} FAILED' in seen[1][1].content
    assert r.usage.tokens_in == 20 and r.usage.tokens_out == 10
    d = r.to_dict()
    json.dumps(d)
    assert d["usage"]["calls"] == 2 and len(d["plans"]) == 2


def test_refusal_after_partial_execution_releases_the_cube():
    w = make_world(("red_block", "blue_block"), held="red_block")
    ex = SymbolicExecutor(w)
    r = run_closed_loop("put the purple block in the red bin", w, ex)
    assert r.status == "refused" and ex.calls == [{"skill": "home"}]
