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

Success is the goal, not the steps: after the last subgoal the runner's ``verify(goal)``
lets the physics settle and evaluates the goal (the accepted plan's stated goal, or its
effects) on the world state. An unmet predicate is fed back in the history and replanned
(bounded, like a failed step); the planner sees the world as it is, so the parts of the
goal that already hold get no steps. Without ``verify`` (symbolic tests) the goal is
checked on the world ``execute`` returned.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from bridge import goals as G
from bridge.policy import Decision
from planner import dialogue as D
from planner.conversation import ROBOT, USER, Conversation, Interrupted, Turn
from planner.hybrid import HybridPlanner, PlanOutcome
from planner.llm import Usage
from planner.rules import NOTHING_TO_DO

if TYPE_CHECKING:
    from planner.understand import Understanding
    from sim.world import WorldState

#: Utterances taken while the robot works, per run, at most (then it stops: a run that is
#: corrected without end is not converging).
MAX_INTERJECTIONS = 20
#: Clarifying questions per run at most (each answered one may uncover the next: "put the
#: block in the bin" asks for the block, then the bin).
MAX_QUESTIONS = 6

Executor = Callable[[dict], "tuple[bool, WorldState]"]
#: ``verify(goal) -> (world, [{"predicate": str, "met": bool}, ...])``
Verifier = Callable[[list[str]], "tuple[WorldState, list[dict]]"]


class RunStatus(StrEnum):
    """How a closed-loop run ended (recorded as its string value)."""

    SUCCESS = "success"
    REFUSED = "refused"
    FAILED = "failed"
    SAFE_STOP = "safe_stop"
    #: not a command (planner.understand): nothing moved, and none of these is a failure
    ANSWERED = "answered"
    CLARIFY = "clarify"
    STOPPED = "stopped"


class LoopEvent(StrEnum):
    """Kinds of the events ``run_closed_loop`` passes to ``on_event``."""

    PLAN = "plan"
    STEP = "step"
    STALE = "stale"
    GOAL_CHECK = "goal_check"
    GOAL_UNMET = "goal_unmet"
    REPLAN = "replan"
    #: the conversation (planner.conversation): a question asked, an answer read, an
    #: utterance taken while the robot worked
    QUESTION = "question"
    ANSWER = "answer"
    INTERJECTION = "interjection"
    END = "end"


SUCCESS, REFUSED, FAILED, SAFE_STOP = (
    RunStatus.SUCCESS,
    RunStatus.REFUSED,
    RunStatus.FAILED,
    RunStatus.SAFE_STOP,
)


@dataclass
class LoopResult:
    status: RunStatus
    trace_id: str
    executed: list[dict] = field(default_factory=list)
    plans: list[PlanOutcome] = field(default_factory=list)
    replans: int = 0
    refusal: str | None = None
    usage: Usage = field(default_factory=Usage)
    world: WorldState | None = None
    message: str = ""
    #: the goal the run was judged by, where it came from ("plan", "effects", "rules"),
    #: and its last evaluation on the world (None when never checked)
    goal: list[str] | None = None
    goal_source: str | None = None
    goal_eval: list[dict] | None = None
    #: replans caused by a goal found unmet after a plan's steps all succeeded
    goal_replans: int = 0
    #: what the task was read as (planner.understand.Understanding.to_dict()), and the
    #: robot's reply for a question (an answer) or an ambiguity (a question back)
    understanding: dict | None = None
    answer: str | None = None
    question: str | None = None
    #: the task as it ended up after the conversation (answers and corrections applied)
    task: str | None = None
    #: every turn of the conversation (planner.conversation.Turn.to_dict()), and each
    #: utterance taken while the robot worked with what it was read as
    turns: list[dict] = field(default_factory=list)
    interjections: list[dict] = field(default_factory=list)

    @property
    def goal_met(self) -> bool | None:
        if self.goal_eval is None:
            return None
        return all(e["met"] for e in self.goal_eval)

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
            "goal": self.goal,
            "goal_source": self.goal_source,
            "goal_eval": self.goal_eval,
            "goal_met": self.goal_met,
            "goal_replans": self.goal_replans,
            "understanding": self.understanding,
            "answer": self.answer,
            "question": self.question,
            "task": self.task,
            "turns": self.turns,
            "interjections": self.interjections,
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
    return outcome.decision == Decision.SAFE_STOP


def _still_valid(steps: list[dict], world: WorldState, max_steps: int) -> bool:
    import bridge

    if not steps:
        return True
    res = bridge.validate(json.dumps({"steps": steps}), world, max_steps=max_steps)
    return bool(res.accepted)


def run_closed_loop(  # noqa: C901 - one pass of the plan/validate/execute/replan cycle
    task: str,
    world: WorldState,
    execute: Executor,
    *,
    planner: HybridPlanner | None = None,
    max_replans: int = 3,
    max_executed: int = 40,
    trace_id: str | None = None,
    on_event: Callable[[str, dict], None] | None = None,
    verify: Verifier | None = None,
    conversation: Conversation | None = None,
    max_interjections: int = MAX_INTERJECTIONS,
) -> LoopResult:
    """Run ``task`` to completion, refusal, or the replan bound.

    With a ``conversation`` (:class:`planner.conversation.Conversation`) the loop talks: a
    clarifying question is asked there and the answer read against its candidates
    (:func:`planner.dialogue.resolve_answer`, asked again when it says nothing, bounded);
    an utterance posted while the robot works is taken before the next subgoal, or by
    ``execute`` raising :class:`~planner.conversation.Interrupted` at the next control
    step, and the loop replans from the world as it is with the task the utterance made
    (:func:`planner.dialogue.interpret`). Without one, a question ends the run (status
    ``clarify``), as it always did."""
    planner = planner or HybridPlanner()
    trace_id = trace_id or uuid.uuid4().hex[:12]
    result = LoopResult(status=FAILED, trace_id=trace_id, world=world, task=task)
    history: list[dict] = []
    emit = on_event or (lambda kind, data: None)
    conv = conversation
    if conv is not None:
        conv.record(USER, "task", task)

    def finish(status: RunStatus, message: str = "", refusal: str | None = None) -> LoopResult:
        result.status, result.message, result.refusal = status, message, refusal
        result.executed = history
        result.world = world
        if conv is not None:
            conv.set_context(None)
            result.turns = [t.to_dict() for t in conv.turns]
        emit(LoopEvent.END, {"status": status, "message": message})
        return result

    def adopt(goal: list[str] | None, source: str | None) -> None:
        """A stated goal replaces the run's goal; effects update it cube by cube (a replan
        of the rest must not forget what the first plan already did)."""
        if goal is None:
            return
        if source == "effects" and result.goal is not None:
            result.goal = G.merge(result.goal, goal)
            return
        result.goal, result.goal_source = list(goal), source

    def check() -> list[str]:
        """Evaluate the run's goal on the world now; the unmet predicates."""
        nonlocal world
        if result.goal is None:
            return []
        if verify is not None:
            world, result.goal_eval = verify(list(result.goal))
        else:
            result.goal_eval = G.evaluate(result.goal, world)
        missed = [e["predicate"] for e in result.goal_eval if not e["met"]]
        emit(
            LoopEvent.GOAL_CHECK,
            {
                "goal": list(result.goal),
                "source": result.goal_source,
                "evaluation": result.goal_eval,
                "met": not missed,
            },
        )
        return missed

    def read(text: str) -> Understanding | None:
        return planner.understand(text, world) if hasattr(planner, "understand") else None

    asked = [0]

    def settle(text: str, u: Understanding | None) -> tuple[str, Understanding | None] | LoopResult:
        """Ask the user while the task is ambiguous: (the task, its reading) to go on with,
        or the run's end (the user said stop)."""
        tries = 0
        while (
            conv is not None
            and u is not None
            and u.kind == "clarify"
            and u.candidates
            and asked[0] < MAX_QUESTIONS
        ):
            question = u.question or "Which one?"
            said = question if tries == 0 else D.reask(question)
            emit(LoopEvent.QUESTION, {"question": said, "candidates": list(u.candidates)})
            reply = conv.ask(said, list(u.candidates))
            if reply is None:
                break
            reading = D.resolve_answer(u, reply, world)
            emit(LoopEvent.ANSWER, reading.to_dict())
            if reading.kind == D.STOPPED:
                conv.record(ROBOT, "stopped", "Stopped; nothing more is done.")
                result.answer = "Stopped; nothing more is done"
                return finish(RunStatus.STOPPED, f"stopped by the user ({reply!r})")
            if reading.kind == D.UNCLEAR or reading.task is None:
                tries += 1
                if tries > D.MAX_REASKS:
                    break
                continue
            tries = 0
            asked[0] += 1
            text = reading.task
            result.task = text
            u = read(text)
            conv.record(ROBOT, "ack", f"OK: {text}")
        return text, u

    def confirm(outcome: PlanOutcome) -> tuple[str, Understanding | None] | LoopResult:
        """The planner is unsure of its plan ("Do you mean: ...?", no candidates): asked
        when someone can answer; yes plans the command it said, no asks what instead, a
        whole command is the new task. Without an answer the run ends with the question."""
        u = outcome.understanding
        question = (u.question if u is not None else None) or "Do you mean that?"
        tries = 0
        while conv is not None and asked[0] < MAX_QUESTIONS:
            said = question if tries == 0 else D.reask(question)
            emit(LoopEvent.QUESTION, {"question": said, "candidates": []})
            reply = conv.ask(said, None)
            if reply is None:
                break
            verdict, text = D.confirmation(reply, world)
            emit(LoopEvent.ANSWER, {"reading": verdict, "answer": reply, "task": text})
            if verdict == D.STOPPED:
                conv.record(ROBOT, "stopped", "Stopped; nothing more is done.")
                return finish(RunStatus.STOPPED, f"stopped by the user ({reply!r})")
            if verdict == D.UNCLEAR:
                tries += 1
                if tries > D.MAX_REASKS:
                    break
                continue
            asked[0] += 1
            if verdict == D.YES and u is not None:
                text = u.text
            elif verdict == D.NO:
                text = conv.ask("What should I do instead?", None)
                if not text:
                    break
            assert text is not None
            result.task = text
            conv.record(ROBOT, "ack", f"OK: {text}")
            return settle(text, read(text))
        result.question = question
        if u is not None:
            result.understanding = u.to_dict()
        return finish(RunStatus.CLARIFY, question)

    def not_a_plan(text: str, u: Understanding) -> LoopResult:
        outcome = planner.plan(text, world, trace_id=trace_id, understood=u)
        result.plans.append(outcome)
        emit(LoopEvent.PLAN, {"steps": [], "decision": outcome.decision, "source": "understand"})
        result.understanding = u.to_dict()
        result.answer, result.question = u.answer, u.question
        status = {
            "answer": RunStatus.ANSWERED,
            "clarify": RunStatus.CLARIFY,
            "stop": RunStatus.STOPPED,
        }.get(u.kind, REFUSED)
        why = u.answer or u.question or u.reason or ""
        if conv is not None and (u.answer or u.reason) and u.kind != "clarify":
            conv.record(ROBOT, "reply", u.answer or u.reason or "")
        return finish(status, why, u.reason if status == REFUSED else None)

    def redirect(
        inter: D.Interjection, turn: Turn, step: dict | None, stop: Interrupted | None
    ) -> tuple[str, Understanding | None] | LoopResult:
        """An utterance taken while the robot worked: record it, then the run's end (a
        stop) or the task from now on, read and clarified."""
        nonlocal world
        if stop is not None and stop.world is not None:
            world = stop.world
        if step is not None:
            rec = {
                "step": dict(step),
                "success": bool(stop.success) if stop is not None else False,
                "plan": len(result.plans) - 1,
                "interrupted": True,
                "finished": bool(stop.finished) if stop is not None else False,
                "detail": f"interrupted: the user said {turn.text!r}",
            }
            history.append(rec)
            emit(LoopEvent.STEP, rec)
        info = {
            "turn": turn.index,
            "utterance": turn.text,
            "kind": inter.kind,
            "task": inter.task,
            "posted_step": turn.step,
            "taken_step": turn.taken_step,
            "during": dict(step) if step is not None else None,
            "finished": bool(stop.finished) if stop is not None else False,
        }
        result.interjections.append(info)
        emit(LoopEvent.INTERJECTION, info)
        assert conv is not None
        if inter.kind == D.STOP:
            conv.record(ROBOT, "stopped", "Stopped.", to=turn.index)
            result.answer = "Stopped"
            return finish(RunStatus.STOPPED, f"stopped by the user ({turn.text!r})")
        if len(result.interjections) > max_interjections:
            return finish(FAILED, f"gave up after {max_interjections} corrections")
        text = D.put_down_first(inter.task or "", world)
        result.task = text
        conv.record(ROBOT, "ack", f"OK: {text}", to=turn.index)
        return settle(text, read(text))

    def go_on(
        taken: tuple[D.Interjection, Turn, dict | None, Interrupted | None],
    ) -> tuple[str, Understanding | None] | LoopResult:
        """After an interjection: the run's end, or the new task to plan (its reading
        recorded, the old goal dropped: the new task brings its own)."""
        got = redirect(*taken)
        if isinstance(got, LoopResult):
            return got
        text, u = got
        if conv is not None:  # what is said next is read against the new task
            conv.set_context(u.text if u is not None else text, world.held_object)
        if u is not None:
            result.understanding = u.to_dict()
            if u.kind != "plan":
                return not_a_plan(text, u)
        result.goal = result.goal_source = result.goal_eval = None
        return text, u

    understood = read(task)
    got = settle(task, understood)
    if isinstance(got, LoopResult):
        return got
    task, understood = got
    if understood is not None:
        result.understanding = understood.to_dict()
        if understood.kind != "plan":
            return not_a_plan(task, understood)
    seg_replans = 0
    while True:
        extra = {"understood": understood} if understood is not None else {}
        outcome = planner.plan(task, world, history=list(history), trace_id=trace_id, **extra)
        result.plans.append(outcome)
        _merge(result.usage, outcome.usage)
        steps = outcome.steps()
        emit(
            LoopEvent.PLAN, {"steps": steps, "decision": outcome.decision, "source": outcome.source}
        )
        if outcome.kind == "clarify":  # the planner is unsure of the plan it made
            got = confirm(outcome)
            if isinstance(got, LoopResult):
                return got
            task, understood = got
            if understood is not None:
                result.understanding = understood.to_dict()
                if understood.kind != "plan":
                    return not_a_plan(task, understood)
            continue
        refusal = outcome.refusal
        if refusal:
            if outcome.decision == Decision.NOTHING_TO_DO or refusal.startswith(NOTHING_TO_DO):
                adopt(getattr(outcome.rules, "goal", None), "rules")
                missed = check()
                if not missed:
                    return finish(SUCCESS, refusal)
                # the planner sees nothing to do, the world says otherwise: no plan can help
                return finish(FAILED, f"goal unmet but nothing left to plan: {', '.join(missed)}")
            if getattr(world, "held_object", None):
                # never leave a cube dangling on a refusal after a partial execution
                _safe_stop(execute, history)
            return finish(REFUSED, refusal, refusal)
        if outcome.plan is None:
            return finish(FAILED, f"no plan ({outcome.decision})")
        safe = _is_safe_stop(outcome)
        if not safe:
            adopt(getattr(outcome.plan, "goal", None), getattr(outcome.plan, "goal_source", None))
        if not steps:
            return finish(SUCCESS if not safe else SAFE_STOP, "nothing left to do")
        failed = False
        taken: tuple[D.Interjection, Turn, dict | None, Interrupted | None] | None = None
        context = understood.text if understood is not None else task
        for i, step in enumerate(steps):
            if len(history) >= max_executed:
                return finish(FAILED, f"gave up after {max_executed} executed subgoals")
            if conv is not None:
                waiting = conv.check(None, _now(world))  # said while it planned
                if waiting is not None:
                    taken = (*waiting, None, None)
                    break
                conv.set_context(context, step.get("object") or world.held_object)
            try:
                ok, world = execute(dict(step))
            except Interrupted as stop:
                taken = (stop.interjection, stop.turn, dict(step), stop)
                break
            rec = {"step": dict(step), "success": bool(ok), "plan": len(result.plans) - 1}
            if not ok:
                rec["detail"] = "its success test failed; the world below is the state after"
            history.append(rec)
            emit(LoopEvent.STEP, rec)
            if not ok:
                failed = True
                break
            rest = steps[i + 1 :]
            if rest and not safe and not _still_valid(rest, world, planner.max_steps):
                emit(LoopEvent.STALE, {"remaining": rest})
                failed = True  # the rest no longer fits the world: replan, nothing failed
                break
        if taken is not None:
            got = go_on(taken)
            if isinstance(got, LoopResult):
                return got
            task, understood = got
            seg_replans = 0  # a new task: its own goal (go_on) and its own replan budget
            continue
        if safe:
            if result.goal is not None:
                check()  # recorded; a safe stop is never a success
            why = outcome.reason or "no valid plan"
            return finish(
                SAFE_STOP, f"the planner could not produce a valid plan ({why}); safe stop"
            )
        goal_unmet: list[str] = []
        if not failed:
            goal_unmet = check()
            late = conv.check(None, _now(world)) if conv is not None else None
            if late is not None:  # said while the goal was checked: the task goes on
                got = go_on((*late, None, None))
                if isinstance(got, LoopResult):
                    return got
                task, understood = got
                seg_replans = 0
                continue
            if not goal_unmet:
                return finish(
                    SUCCESS,
                    "all subgoals succeeded; goal met"
                    if result.goal is not None
                    else "all subgoals succeeded",
                )
            rec = {
                "step": {"check": "goal"},
                "success": False,
                "unmet": goal_unmet,
                "plan": len(result.plans) - 1,
                "detail": "after the last subgoal the world does not satisfy: "
                + ", ".join(goal_unmet),
            }
            history.append(rec)
            emit(LoopEvent.GOAL_UNMET, {"unmet": goal_unmet})
        if seg_replans >= max_replans:
            stop_msg = _safe_stop(execute, history)
            if goal_unmet:
                return finish(
                    FAILED,
                    f"goal unmet after {max_replans} replans: {', '.join(goal_unmet)}" + stop_msg,
                )
            return finish(FAILED, f"still failing after {max_replans} replans" + stop_msg)
        if goal_unmet:
            result.goal_replans += 1
        result.replans += 1
        seg_replans += 1
        emit(LoopEvent.REPLAN, {"replans": result.replans})


def _now(world: WorldState) -> Callable[[], WorldState]:
    """The world as the loop has it, for reading an utterance against."""
    return lambda: world


def _safe_stop(execute: Executor, history: list[dict]) -> str:
    step = {"skill": "home"}
    try:
        ok, _ = execute(dict(step))
    except Exception as e:  # the runner's problem, but do not hide the original failure
        return f"; safe stop raised {type(e).__name__}"
    history.append({"step": step, "success": bool(ok), "safe_stop": True})
    return "; safe stop executed"
