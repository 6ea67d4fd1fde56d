"""Closed-loop planning: plan, execute the next subgoal, observe, continue or replan.

The runner supplies ``execute(step) -> (success, new_world)``: it runs one accepted subgoal
(a plain dict such as ``{"skill": "pick", "object": "red_block"}``) with its skill policy and
returns the skill's success test and the world state computed from physics afterwards. This
module never touches physics.

After each success the rest of the plan is re-validated by the bridge against the new world
(cheap, no model call); if it no longer holds, or a step fails, the planner is asked again
with the executed steps and their outcomes in the history (bounded replans). A task the
scene cannot support ends with the planner's refusal, not a guess; a task that keeps failing
ends with the bridge's safe stop.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Callable

from planner.hybrid import HybridPlanner, PlanOutcome
from planner.llm import Usage
from planner.rules import NOTHING_TO_DO

Executor = Callable[[dict], "tuple[bool, object]"]

SUCCESS, REFUSED, FAILED, SAFE_STOP = "success", "refused", "failed", "safe_stop"


@dataclass
class LoopResult:
    status: str
    trace_id: str
    executed: list[dict] = field(default_factory=list)
    plans: list[PlanOutcome] = field(default_factory=list)
    replans: int = 0
    refusal: str | None = None
    usage: Usage = field(default_factory=Usage)
    world: object = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == SUCCESS

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "trace_id": self.trace_id,
            "message": self.message,
            "refusal": self.refusal,
            "replans": self.replans,
            "executed": self.executed,
            "plans": [p.to_dict() for p in self.plans],
            "usage": self.usage.to_dict(),
        }


def _merge(total: Usage, part: Usage) -> None:
    total.calls += part.calls
    total.tokens_in += part.tokens_in
    total.tokens_out += part.tokens_out
    total.latency_s += part.latency_s
    total.retries += part.retries
    for k, v in part.by_source.items():
        s = total.by_source.setdefault(
            k, {"calls": 0, "tokens_in": 0, "tokens_out": 0, "latency_s": 0.0}
        )
        for key in s:
            s[key] += v[key]


def _is_safe_stop(outcome: PlanOutcome) -> bool:
    return outcome.decision == "safe_stop"


def _still_valid(steps: list[dict], world, max_steps: int) -> bool:
    import bridge

    if not steps:
        return True
    res = bridge.validate(json.dumps({"steps": steps}), world, max_steps=max_steps)
    return bool(res.accepted)


def run_closed_loop(
    task: str,
    world,
    execute: Executor,
    *,
    planner: HybridPlanner | None = None,
    max_replans: int = 3,
    max_executed: int = 40,
    trace_id: str | None = None,
    on_event: Callable[[str, dict], None] | None = None,
) -> LoopResult:
    """Run ``task`` to completion, refusal, or the replan bound."""
    planner = planner or HybridPlanner()
    trace_id = trace_id or uuid.uuid4().hex[:12]
    result = LoopResult(status=FAILED, trace_id=trace_id, world=world)
    history: list[dict] = []
    emit = on_event or (lambda kind, data: None)

    def finish(status: str, message: str = "", refusal: str | None = None) -> LoopResult:
        result.status, result.message, result.refusal = status, message, refusal
        result.executed = history
        result.world = world
        emit("end", {"status": status, "message": message})
        return result

    while True:
        outcome = planner.plan(task, world, history=list(history), trace_id=trace_id)
        result.plans.append(outcome)
        _merge(result.usage, outcome.usage)
        steps = outcome.steps()
        emit("plan", {"steps": steps, "decision": outcome.decision, "source": outcome.source})
        refusal = outcome.refusal
        if refusal:
            if refusal.startswith(NOTHING_TO_DO):
                return finish(SUCCESS, refusal)
            if getattr(world, "held_object", None):
                # never leave a cube dangling on a refusal after a partial execution
                _safe_stop(execute, history)
            return finish(REFUSED, refusal, refusal)
        if outcome.plan is None:
            return finish(FAILED, f"no plan ({outcome.decision})")
        safe = _is_safe_stop(outcome)
        if not steps:
            return finish(SUCCESS if not safe else SAFE_STOP, "nothing left to do")
        failed = False
        for i, step in enumerate(steps):
            if len(history) >= max_executed:
                return finish(FAILED, f"gave up after {max_executed} executed subgoals")
            ok, world = execute(dict(step))
            rec = {"step": dict(step), "success": bool(ok), "plan": len(result.plans) - 1}
            if not ok:
                rec["detail"] = "its success test failed; the world below is the state after"
            history.append(rec)
            emit("step", rec)
            if not ok:
                failed = True
                break
            rest = steps[i + 1:]
            if rest and not safe and not _still_valid(rest, world, planner.max_steps):
                emit("stale", {"remaining": rest})
                failed = True  # the rest no longer fits the world: replan, nothing failed
                break
        if safe:
            return finish(SAFE_STOP, "the planner could not produce a valid plan; safe stop")
        if not failed:
            return finish(SUCCESS, "all subgoals succeeded")
        if result.replans >= max_replans:
            stop = _safe_stop(execute, history)
            return finish(FAILED, f"still failing after {max_replans} replans" + stop)
        result.replans += 1
        emit("replan", {"replans": result.replans})


def _safe_stop(execute: Executor, history: list[dict]) -> str:
    step = {"skill": "home"}
    try:
        ok, _ = execute(dict(step))
    except Exception as e:  # the runner's problem, but do not hide the original failure
        return f"; safe stop raised {type(e).__name__}"
    history.append({"step": step, "success": bool(ok), "safe_stop": True})
    return "; safe stop executed"
