"""negotiate() with scripted proposers: regeneration count, feedback, fallback order,
refusal, safe stop, and the records."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage

from bridge import reasons as R
from bridge.policy import (
    AttemptRecord,
    Negotiation,
    PlanRequest,
    Proposal,
    Proposer,
    negotiate,
)

GOOD = json.dumps(
    {"steps": [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]}
)
BAD = json.dumps([{"skill": "pick", "object": "purple_block"}])
REFUSE = json.dumps({"steps": [], "refuse": "there is no purple block"})


class Scripted:
    """Answers from a script; an Exception in the script is raised instead."""

    def __init__(self, name, outputs, tokens=(10, 5)):
        self.name = name
        self.outputs = list(outputs)
        self.requests: list[PlanRequest] = []
        self.tokens = tokens

    def propose(self, request: PlanRequest) -> Proposal:
        self.requests.append(request)
        out = self.outputs.pop(0)
        if isinstance(out, Exception):
            raise out
        return Proposal(
            raw=out,
            tokens_in=self.tokens[0],
            tokens_out=self.tokens[1],
            latency_s=0.01,
            meta={"model": "scripted"},
        )


def test_protocol_is_structural():
    assert isinstance(Scripted("a", []), Proposer)


def test_first_try_accepted(world):
    p = Scripted("llm", [GOOD])
    n = negotiate("put red in green", world, [p], trace_id="t1")
    assert n.decision == "accepted" and n.source == "llm" and n.trace_id == "t1"
    assert n.plan.accepted and n.plan.plan_json()[0] == {"skill": "pick", "object": "red_block"}
    assert [a.decision for a in n.attempts] == ["accepted"]
    assert p.requests[0].attempt == 0 and p.requests[0].feedback == []


def test_regenerates_with_previous_reasons(world):
    p = Scripted("llm", [BAD, "nonsense", GOOD])
    n = negotiate("t", world, [p], max_regenerations=2)
    assert n.decision == "accepted"
    assert [r.attempt for r in p.requests] == [0, 1, 2]
    assert [r.code for r in p.requests[1].feedback] == [R.HALLUCINATED_OBJECT]
    assert "did you mean" in p.requests[1].feedback[0].hint
    assert [r.code for r in p.requests[2].feedback] == [R.PARSE_ERROR]
    assert [a.decision for a in n.attempts] == ["rejected", "rejected", "accepted"]


def test_fallback_chain_in_order(world):
    llm = Scripted("llm", [BAD, BAD, BAD])
    rules = Scripted("rules", [GOOD])
    n = negotiate("t", world, [llm, rules], max_regenerations=2)
    assert n.decision == "fallback_accepted" and n.source == "rules"
    assert [(a.proposer, a.attempt) for a in n.attempts] == [
        ("llm", 0),
        ("llm", 1),
        ("llm", 2),
        ("rules", 0),
    ]
    assert rules.requests[0].feedback == [] and rules.requests[0].attempt == 0


def test_max_regenerations_zero(world):
    llm, rules = Scripted("llm", [BAD]), Scripted("rules", [BAD])
    n = negotiate("t", world, [llm, rules], max_regenerations=0)
    assert len(n.attempts) == 2 and n.decision == "safe_stop"


def test_safe_stop_when_all_fail(world):
    n = negotiate("t", world, [Scripted("llm", [BAD] * 3), Scripted("rules", [""] * 3)])
    assert n.decision == "safe_stop" and n.source == "safe_stop"
    assert n.plan.accepted and n.plan.plan_json() == [{"skill": "home"}]
    assert len(n.attempts) == 6
    assert n.attempts[-1].reasons[0].code == R.EMPTY_OUTPUT


def test_failed_without_safe_stop(world):
    n = negotiate("t", world, [Scripted("llm", [BAD] * 3)], safe_stop=False)
    assert n.decision == "failed" and n.plan is None and n.source is None
    assert not n.executable


def test_no_proposers_is_a_safe_stop(world):
    n = negotiate("t", world, [])
    assert n.decision == "safe_stop" and n.attempts == []


def test_raising_proposer_is_a_failed_attempt(world):
    llm = Scripted("llm", [TimeoutError("model timed out"), RuntimeError("boom"), GOOD])
    n = negotiate("t", world, [llm])
    assert n.decision == "accepted"
    assert [a.decision for a in n.attempts] == ["error", "error", "accepted"]
    assert n.attempts[0].reasons[0].code == R.PLANNER_ERROR
    assert "timed out" in n.attempts[0].reasons[0].message
    assert llm.requests[1].feedback[0].code == R.PLANNER_ERROR


def test_refusal_ends_negotiation(world):
    llm, rules = Scripted("llm", [REFUSE]), Scripted("rules", [GOOD])
    n = negotiate("put the purple block away", world, [llm, rules])
    assert n.decision == "refused" and n.source == "llm"
    assert n.plan.refusal == "there is no purple block" and not n.executable
    assert rules.requests == [] and len(n.attempts) == 1


def test_refusal_can_fall_back(world):
    llm, rules = Scripted("llm", [REFUSE]), Scripted("rules", [GOOD])
    n = negotiate("t", world, [llm, rules], fallback_on_refusal=True)
    assert n.decision == "fallback_accepted" and n.source == "rules"


def test_records_and_serialisation(world):
    llm = Scripted("llm", [BAD, AIMessage(content=GOOD)])
    n = negotiate("t", world, [llm], history=[{"step": 0}])
    assert isinstance(n, Negotiation)
    assert all(isinstance(a, AttemptRecord) and a.trace_id == n.trace_id for a in n.attempts)
    assert llm.requests[0].history == [{"step": 0}] and llm.requests[0].trace_id == n.trace_id
    a0 = n.attempts[0]
    assert a0.raw == BAD and a0.latency_s == pytest.approx(0.01) and a0.validate_s > 0
    assert n.tokens_in == 20 and n.tokens_out == 10
    d = json.loads(json.dumps(n.to_dict()))
    assert d["decision"] == "accepted" and d["attempts"][0]["reasons"][0]["code"] == (
        R.HALLUCINATED_OBJECT
    )
    assert d["attempts"][0]["meta"] == {"model": "scripted"}


def test_plain_string_answer_is_accepted_as_proposal(world):
    class Bare:
        name = "bare"

        def propose(self, request):
            return GOOD

    assert negotiate("t", world, [Bare()]).decision == "accepted"
