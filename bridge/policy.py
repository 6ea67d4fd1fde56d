"""Regenerate-or-fallback: how the bridge negotiates a plan with a chain of proposers.

A proposer is anything with a ``name`` and ``propose(PlanRequest) -> Proposal`` (a chat
model, the rules planner, a scripted test double). ``negotiate`` gives the first proposer
``1 + max_regenerations`` attempts, each after the first carrying the previous attempt's
reasons as feedback; then each later proposer in the chain gets the same treatment; when
all fail the safe stop (open the gripper, return home) is returned. Every attempt is kept
as an ``AttemptRecord`` under one trace id, because a rejected output is exactly the
evidence one needs to debug a planner.

A refusal (``{"steps": [], "refuse": "..."}``) ends the negotiation with decision
``refused``: the planner says the task cannot be done here (e.g. "the purple block"), and
regenerating would only push it to invent something. ``fallback_on_refusal=True`` asks the
next proposer instead.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from bridge import reasons as R
from bridge.constraints import Constraints
from bridge.models import DEFAULT_MAX_STEPS, safe_stop_steps, subgoal_json
from bridge.reasons import Reason
from bridge.validate import BridgeResult, validate
from sim.world import WorldState

log = logging.getLogger("skillbridge.bridge")


class Decision(StrEnum):
    """Decision of a negotiation (recorded as its string value)."""

    ACCEPTED = "accepted"
    FALLBACK_ACCEPTED = "fallback_accepted"
    SAFE_STOP = "safe_stop"
    REFUSED = "refused"
    FAILED = "failed"
    #: the world already satisfies the instruction: no plan is needed (not a refusal)
    NOTHING_TO_DO = "nothing_to_do"
    #: the utterance was not a command (planner.understand): answered, asked back, stopped
    ANSWER = "answer"
    CLARIFY = "clarify"
    STOP = "stop"


class AttemptDecision(StrEnum):
    """Decision on one proposer attempt (recorded as its string value)."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    REFUSED = "refused"
    ERROR = "error"


#: A negotiation that produced a plan to execute.
PLAN_DECISIONS = (Decision.ACCEPTED, Decision.FALLBACK_ACCEPTED)

ACCEPTED = Decision.ACCEPTED
FALLBACK_ACCEPTED = Decision.FALLBACK_ACCEPTED
SAFE_STOP = Decision.SAFE_STOP
REFUSED = Decision.REFUSED
FAILED = Decision.FAILED
ATTEMPT_ACCEPTED = AttemptDecision.ACCEPTED
ATTEMPT_REJECTED = AttemptDecision.REJECTED
ATTEMPT_REFUSED = AttemptDecision.REFUSED
ATTEMPT_ERROR = AttemptDecision.ERROR

SAFE_STOP_SOURCE = "safe_stop"


@dataclass
class Proposal:
    """A proposer's answer: raw text (or a langchain message) plus accounting."""

    raw: Any
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    meta: dict = field(default_factory=dict)


@dataclass
class PlanRequest:
    """What a proposer is asked. ``attempt`` counts from 0 per proposer; ``feedback`` holds
    the reasons the bridge gave for that proposer's previous attempt (empty at attempt 0);
    ``history`` is the caller's record of what happened so far (e.g. executed subgoals)."""

    task: str
    world: WorldState
    attempt: int = 0
    feedback: list[Reason] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    trace_id: str = ""
    max_steps: int = DEFAULT_MAX_STEPS


@runtime_checkable
class Proposer(Protocol):
    name: str

    def propose(self, request: PlanRequest) -> Proposal: ...


@dataclass
class AttemptRecord:
    trace_id: str
    proposer: str
    attempt: int
    raw: str
    reasons: list[Reason]
    decision: AttemptDecision
    latency_s: float
    tokens_in: int = 0
    tokens_out: int = 0
    validate_s: float = 0.0
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["reasons"] = [r.to_dict() for r in self.reasons]
        d["meta"] = _jsonable(self.meta)
        return d


@dataclass
class Negotiation:
    trace_id: str
    plan: BridgeResult | None
    decision: Decision
    source: str | None
    attempts: list[AttemptRecord] = field(default_factory=list)

    @property
    def executable(self) -> bool:
        """Whether ``plan`` holds steps the runner may execute."""
        return self.plan is not None and self.plan.accepted

    @property
    def tokens_in(self) -> int:
        return sum(a.tokens_in for a in self.attempts)

    @property
    def tokens_out(self) -> int:
        return sum(a.tokens_out for a in self.attempts)

    def to_dict(self) -> dict:
        return {
            "trace_id": self.trace_id,
            "decision": self.decision,
            "source": self.source,
            "plan": self.plan.to_dict() if self.plan is not None else None,
            "attempts": [a.to_dict() for a in self.attempts],
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return repr(v)


def safe_stop_result() -> BridgeResult:
    """The safe stop as an accepted result; ``home`` has no precondition that can fail
    except "already at home", which makes the stop a harmless no-op, so it is not
    re-validated."""
    steps = safe_stop_steps()
    raw = json.dumps({"steps": [subgoal_json(s) for s in steps]})
    return BridgeResult(accepted=True, plan=steps, raw=raw)


def _text(raw: Any, fallback: str) -> str:
    return fallback if fallback else (raw if isinstance(raw, str) else repr(raw)[:2000])


def _from_model(prop: Proposal) -> bool:
    """Whether a proposal came from a model (rules plans are built from the words)."""
    return isinstance(prop.meta, dict) and prop.meta.get("source") == "model"


def _grounded(res: BridgeResult, task: str, world: WorldState) -> BridgeResult:
    """``res`` unchanged when its plan is grounded in ``task``, else a rejection."""
    from bridge.grounding import check

    reasons = check(task, res.plan_json(), world)
    if not reasons:
        return res
    return BridgeResult(accepted=False, raw=res.raw, reasons=reasons, latency_s=res.latency_s)


def negotiate(
    task: str,
    world: WorldState,
    proposers: Sequence[Proposer],
    *,
    max_regenerations: int = 2,
    trace_id: str | None = None,
    history: list[dict] | None = None,
    safe_stop: bool = True,
    max_steps: int = DEFAULT_MAX_STEPS,
    fallback_on_refusal: bool = False,
    constraints: Constraints | None = None,
) -> Negotiation:
    """Ask the chain for a plan the bridge accepts; see the module docstring.

    ``constraints`` (what the instruction forbids) are checked on every accepted plan,
    whichever proposer wrote it; a plan that breaks one is rejected (``forbidden``)."""
    trace_id = trace_id or uuid.uuid4().hex
    history = list(history or [])
    attempts: list[AttemptRecord] = []
    refusal: tuple[BridgeResult, str] | None = None
    for rank, proposer in enumerate(proposers):
        name = str(getattr(proposer, "name", type(proposer).__name__))
        feedback: list[Reason] = []
        for attempt in range(1 + max(0, max_regenerations)):
            req = PlanRequest(task, world, attempt, list(feedback), history, trace_id, max_steps)
            t0 = time.perf_counter()
            try:
                prop = proposer.propose(req)
                if not isinstance(prop, Proposal):
                    prop = Proposal(raw=prop)
            except Exception as e:  # a failing model is an expected event, not a crash
                wall = time.perf_counter() - t0
                reasons = [
                    Reason(
                        R.PLANNER_ERROR,
                        "",
                        R.bounded(f"{type(e).__name__}: {e}"),
                        "the proposer raised; retrying",
                    )
                ]
                attempts.append(
                    AttemptRecord(trace_id, name, attempt, "", reasons, ATTEMPT_ERROR, wall)
                )
                log.info("trace %s %s#%d: error %s", trace_id, name, attempt, e)
                feedback = reasons
                continue
            wall = time.perf_counter() - t0
            res = validate(prop.raw, world, max_steps=max_steps)
            if res.accepted and _from_model(prop):
                res = _grounded(res, task, world)
            if res.accepted and constraints:
                broken = constraints.check(res.plan_json())
                if broken:
                    res = BridgeResult(
                        accepted=False, raw=res.raw, reasons=broken, latency_s=res.latency_s
                    )
            decision = (
                ATTEMPT_ACCEPTED
                if res.accepted
                else ATTEMPT_REFUSED
                if res.refused
                else ATTEMPT_REJECTED
            )
            attempts.append(
                AttemptRecord(
                    trace_id,
                    name,
                    attempt,
                    _text(prop.raw, res.raw),
                    list(res.reasons),
                    decision,
                    prop.latency_s or wall,
                    int(prop.tokens_in or 0),
                    int(prop.tokens_out or 0),
                    res.latency_s,
                    dict(prop.meta or {}),
                )
            )
            log.info(
                "trace %s %s#%d: %s %s", trace_id, name, attempt, decision, ",".join(res.codes)
            )
            if res.accepted:
                return Negotiation(
                    trace_id, res, ACCEPTED if rank == 0 else FALLBACK_ACCEPTED, name, attempts
                )
            if res.refused:
                refusal = (res, name)
                break
            feedback = list(res.reasons)
        if refusal is not None and not fallback_on_refusal:
            return Negotiation(trace_id, refusal[0], REFUSED, refusal[1], attempts)
    if refusal is not None:
        return Negotiation(trace_id, refusal[0], REFUSED, refusal[1], attempts)
    if safe_stop:
        return Negotiation(trace_id, safe_stop_result(), SAFE_STOP, SAFE_STOP_SOURCE, attempts)
    return Negotiation(trace_id, None, FAILED, None, attempts)
