"""Scripted chat models: regenerate and fallback happen exactly as configured, and are recorded."""

from __future__ import annotations

import json
import time

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from planner.errors import BackendCallError
from planner.hybrid import HybridPlanner
from planner.llm import LLMProposer, is_transient
from tests.planner.planner_worlds import make_world

VALID = json.dumps(
    {"steps": [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]}
)
INVALID = json.dumps({"steps": [{"skill": "pick", "object": "purple_block"}]})
GARBAGE = "I think the robot should probably do something with the blocks!"
VAGUE = "wiggle the red block a bit and then put it in the green bin"  # rules are unsure


def msg(text, tin=50, tout=10):
    return AIMessage(
        content=text,
        usage_metadata={"input_tokens": tin, "output_tokens": tout, "total_tokens": tin + tout},
    )


class RecordingFake(GenericFakeChatModel):
    """GenericFakeChatModel that records the kwargs (structured-output switches) and the
    prompts of every call."""

    seen: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append({"kwargs": kwargs, "messages": messages})
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


class FailingFake(GenericFakeChatModel):
    """Raises the scripted exceptions (in order), then answers."""

    errors: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if self.errors:
            raise self.errors.pop(0)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


class SlowFake(GenericFakeChatModel):
    delay: float = 0.5

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        time.sleep(self.delay)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def fake(*replies, cls=RecordingFake, **kw):
    return (
        cls(messages=iter([msg(r) if isinstance(r, str) else r for r in replies]), seen=[], **kw)
        if cls is RecordingFake
        else cls(messages=iter([msg(r) for r in replies]), **kw)
    )


def planner_for(model, *, mode="text", regen=2, retries=0, **kw):
    llm = LLMProposer(
        model,
        name="fake",
        mode=mode,
        retries=retries,
        sleep=lambda s: None,
        timeout_s=kw.pop("timeout_s", 5.0),
    )
    return HybridPlanner(llm, max_regenerations=regen, **kw)


def decisions(outcome):
    return [(a.proposer, a.attempt, a.decision) for a in outcome.attempts]


def test_valid_first_try_accepted_with_tokens():
    p = planner_for(fake(VALID))
    o = p.plan(VAGUE, make_world())
    assert o.route == "model" and o.decision == "accepted" and o.source == "fake"
    assert o.steps() == json.loads(VALID)["steps"]
    assert decisions(o) == [("fake", 0, "accepted")]
    assert (o.usage.tokens_in, o.usage.tokens_out) == (50, 10)
    assert o.attempts[0].tokens_in == 50


@pytest.mark.parametrize("bad", [INVALID, GARBAGE, ""])
def test_regenerates_with_reasons_then_accepts(bad):
    model = fake(bad, VALID)
    o = planner_for(model).plan(VAGUE, make_world())
    assert decisions(o) == [("fake", 0, "rejected"), ("fake", 1, "accepted")]
    assert o.attempts[0].reasons  # recorded, with codes
    # the regeneration prompt carries the previous answer and the bridge's reasons
    second = model.seen[1]["messages"]
    text = second[-1].content
    assert "rejected" in text and o.attempts[0].reasons[0].code in text
    assert second[-2].type == "ai"
    assert o.usage.calls == 2 and o.usage.tokens_in == 100


def test_regeneration_budget_then_rules_fallback():
    # the rules planner understands this one only as a fallback because the route is forced
    model = fake(GARBAGE, INVALID, "", VALID)
    p = planner_for(model, regen=2, route="model")
    o = p.plan("put the red block in the green bin", make_world())
    assert decisions(o) == [
        ("fake", 0, "rejected"),
        ("fake", 1, "rejected"),
        ("fake", 2, "rejected"),
        ("rules", 0, "accepted"),
    ]
    assert o.decision == "fallback_accepted" and o.source == "rules"
    assert o.steps() == json.loads(VALID)["steps"]


@pytest.mark.parametrize("regen", [0, 1, 3])
def test_regeneration_count_is_as_configured(regen):
    model = fake(*([GARBAGE] * (regen + 1)))
    o = planner_for(model, regen=regen).plan(VAGUE, make_world())
    llm_attempts = [a for a in o.attempts if a.proposer == "fake"]
    assert len(llm_attempts) == regen + 1
    # rules cannot parse VAGUE: as fallback they return an empty plan, then the safe stop
    assert o.decision == "safe_stop" and o.steps() == [{"skill": "home"}]


def test_no_rules_fallback_when_disabled():
    model = fake(GARBAGE, GARBAGE)
    o = planner_for(model, regen=1, rules_fallback=False, route="model").plan(
        "put the red block in the green bin", make_world()
    )
    assert {a.proposer for a in o.attempts} == {"fake"}
    assert o.decision == "safe_stop"


def test_no_safe_stop_when_disabled():
    o = planner_for(
        fake(GARBAGE), regen=0, rules_fallback=False, safe_stop=False, route="model"
    ).plan(VAGUE, make_world())
    assert o.decision == "failed" and o.plan is None and o.steps() == []


def test_model_refusal_ends_negotiation():
    refusal = json.dumps({"steps": [], "refuse": "there is no purple block"})
    o = planner_for(fake(refusal)).plan("wiggle the purple thing", make_world())
    assert o.decision == "refused" and o.refusal == "there is no purple block"
    assert len(o.attempts) == 1


def test_hybrid_skips_model_when_rules_are_confident():
    model = fake(VALID)
    o = planner_for(model).plan("put the red block in the green bin", make_world())
    assert o.route == "rules" and o.source == "rules" and model.seen == []
    assert o.usage.tokens_in == 0


def test_hybrid_rules_refusal_is_final_and_free():
    model = fake(VALID)
    o = planner_for(model).plan("put the purple block in the green bin", make_world())
    assert o.decision == "refused" and "purple" in o.refusal and model.seen == []


def test_forced_model_route_calls_the_model_even_for_easy_tasks():
    model = fake(VALID)
    o = planner_for(model, route="model").plan("put the red block in the green bin", make_world())
    assert o.route == "model" and len(model.seen) == 1


def test_forced_rules_route_never_calls_the_model():
    model = fake(VALID)
    o = planner_for(model, route="rules").plan(VAGUE, make_world())
    assert model.seen == [] and o.decision == "refused" and "could not parse" in o.refusal


@pytest.mark.parametrize(
    "mode,key",
    [("json_schema", "response_format"), ("json_mode", "response_format"), ("text", None)],
)
def test_structured_output_switches(mode, key):
    model = fake(VALID)
    planner_for(model, mode=mode).plan(VAGUE, make_world())
    kwargs = model.seen[0]["kwargs"]
    system = model.seen[0]["messages"][0].content
    if mode == "json_schema":
        rf = kwargs["response_format"]
        assert rf["type"] == "json_schema"
        schema = rf["json_schema"]["schema"]
        assert "red_block" in json.dumps(schema)
        assert "JSON Schema" not in system  # given out of band: no schema tokens in the prompt
    elif mode == "json_mode":
        assert kwargs["response_format"] == {"type": "json_object"}
        assert "JSON Schema" in system
    else:
        assert "response_format" not in kwargs and "JSON Schema" in system


class ToolFake(RecordingFake):
    def bind_tools(self, tools, *, tool_choice=None, **kw):
        self.seen.append({"tools": tools, "tool_choice": tool_choice})
        return self.bind(tools=tools)


def test_tool_mode_reads_the_plan_from_the_tool_call():
    call = AIMessage(
        content="", tool_calls=[{"name": "submit_plan", "args": json.loads(VALID), "id": "1"}]
    )
    model = ToolFake(messages=iter([call]), seen=[])
    o = planner_for(model, mode="tool").plan(VAGUE, make_world())
    assert model.seen[0]["tool_choice"] == "submit_plan"
    assert o.decision == "accepted" and o.steps() == json.loads(VALID)["steps"]


class _Status(Exception):
    def __init__(self, status):
        super().__init__(f"HTTP {status}")
        self.status_code = status


def test_transient_errors_are_retried_not_regenerated():
    model = FailingFake(messages=iter([msg(VALID)]), errors=[_Status(503), TimeoutError("t")])
    sleeps = []
    llm = LLMProposer(model, name="fake", retries=2, sleep=sleeps.append, backoff_s=0.1)
    o = HybridPlanner(llm).plan(VAGUE, make_world())
    assert decisions(o) == [("fake", 0, "accepted")]
    assert len(sleeps) == 2 and sleeps[1] > sleeps[0]  # exponential backoff
    assert o.usage.retries == 2
    calls = o.attempts[0].meta["calls"]
    assert [c["ok"] for c in calls] == [False, False, True] and calls[0]["transient"]


def test_non_transient_error_is_not_retried_and_becomes_an_attempt():
    model = FailingFake(messages=iter([msg(VALID)]), errors=[_Status(401)])
    sleeps = []
    llm = LLMProposer(model, name="fake", retries=3, sleep=sleeps.append)
    o = HybridPlanner(llm, max_regenerations=1).plan(VAGUE, make_world())
    assert sleeps == []
    assert decisions(o) == [("fake", 0, "error"), ("fake", 1, "accepted")]
    assert o.attempts[0].reasons[0].code == "planner_error"


def test_retries_exhausted_raise_backend_call_error():
    model = FailingFake(messages=iter([]), errors=[_Status(429)] * 5)
    llm = LLMProposer(model, name="fake", retries=2, sleep=lambda s: None)
    from bridge.policy import PlanRequest

    with pytest.raises(BackendCallError) as ei:
        llm.propose(PlanRequest(VAGUE, make_world()))
    assert ei.value.transient and ei.value.attempts == 3


def test_watchdog_timeout_on_a_model_without_native_timeout():
    model = SlowFake(messages=iter([msg(VALID), msg(VALID)]), delay=1.6)
    llm = LLMProposer(model, name="fake", retries=0, timeout_s=0.2, sleep=lambda s: None)
    t0 = time.monotonic()
    o = HybridPlanner(llm, max_regenerations=0).plan(VAGUE, make_world())
    assert time.monotonic() - t0 < 1.5
    assert o.attempts[0].decision == "error" and "TimeoutError" in o.attempts[0].reasons[0].message


def test_structured_output_unsupported_degrades_mode():
    err = _Status(400)
    err.args = ("response_format json_schema is not supported by this model",)
    model = FailingFake(messages=iter([msg(VALID)]), errors=[err])
    llm = LLMProposer(model, name="fake", mode="json_schema", retries=0, sleep=lambda s: None)
    o = HybridPlanner(llm).plan(VAGUE, make_world())
    assert o.decision == "accepted" and o.attempts[0].meta["mode"] == "json_mode"


def test_is_transient_classification():
    assert is_transient(TimeoutError())
    assert is_transient(_Status(429)) and is_transient(_Status(500)) and is_transient(_Status(502))
    assert not is_transient(_Status(400)) and not is_transient(_Status(401))
    assert not is_transient(ValueError("x"))


def test_history_is_in_the_prompt_last_k_only():
    model = fake(VALID)
    llm = LLMProposer(model, name="fake", history_k=2, sleep=lambda s: None)
    hist = [
        {"step": {"skill": "pick", "object": f"{c}_block"}, "success": c != "blue"}
        for c in ("red", "green", "blue")
    ]
    HybridPlanner(llm).plan(VAGUE, make_world(), history=hist)
    user = model.seen[0]["messages"][1].content
    assert "1 earlier steps omitted" in user
    assert "green_block" in user and '"object":"blue_block"} FAILED' in user
    assert '"object":"red_block"}' not in user
    assert VAGUE in user and "yellow_block" in user  # task and world state
    system = model.seen[0]["messages"][0].content
    assert "pick(object)" in system and "push(object, target)" in system  # the catalogue
