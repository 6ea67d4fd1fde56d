"""The record of one evaluated episode: what ``results.jsonl`` holds a line of and the report
is computed from.

Built by :func:`new_record` only, then completed by the job that ran it
(:func:`skillbridge.evaluation.jobs.run_job`): :func:`record_error` when the episode broke,
:func:`record_run` with the run's result otherwise. The keys keep their order (the JSON on
disk is the dict as built); the keys after ``error`` exist only once a run has a result, the
fault keys only under ``--faults``.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Required, TypedDict

if TYPE_CHECKING:
    from bridge.models import SubgoalDict
    from skillbridge.evaluation.suite import Task
    from skillbridge.runner.records import RunResult


class SubgoalOutcome(TypedDict):
    skill: str
    success: bool
    reason: str | None


class EvalRecord(TypedDict, total=False):
    task: Required[str]
    category: Required[str]
    seed: Required[int]
    refuse: Required[bool]
    instruction: Required[str]
    status: Required[str]
    message: Required[str]
    refused: Required[bool]
    #: None where the metric does not apply (a must-refuse task has no planning success)
    planning: Required[bool | None]
    execution: Required[bool | None]
    refusal_ok: Required[bool | None]
    #: the first thing that went wrong (see :func:`cause`), None for a success
    cause: Required[str | None]
    #: the planner's first plan, whatever the bridge decided
    plan: Required[list[SubgoalDict]]
    unmet_plan: Required[list[str]]
    unmet_final: Required[list[str]]
    subgoals: Required[list[SubgoalOutcome]]
    bridge_codes: Required[dict[str, int]]
    tokens: Required[dict[str, int]]
    wall_s: Required[float]
    episode: Required[str | None]
    replans: Required[int]
    error: Required[str | None]
    # with a run result
    claimed_success: bool
    run_goal: list[str] | None
    run_goal_met: bool | None
    goal_replans: int
    fault: dict[str, Any] | None
    # tasks not to be refused
    first_refused: bool
    goal_mismatch: list[str]
    false_success: bool
    # under --faults
    recovered: bool
    repaired_by_replan: bool


def new_record(task: Task, seed: int) -> EvalRecord:
    """The record of ``task`` on ``seed`` before anything ran: an error until a result says
    otherwise."""
    return {
        "task": task.id,
        "category": task.category,
        "seed": seed,
        "refuse": task.refuse,
        "instruction": task.instruction,
        "status": "error",
        "message": "",
        "refused": False,
        "planning": None,
        "execution": None,
        "refusal_ok": None,
        "cause": None,
        "plan": [],
        "unmet_plan": [],
        "unmet_final": [],
        "subgoals": [],
        "bridge_codes": {},
        "tokens": {"in": 0, "out": 0, "calls": 0},
        "wall_s": 0.0,
        "episode": None,
        "replans": 0,
        "error": None,
    }


def record_error(rec: EvalRecord, error: BaseException, wall_s: float, codes: Counter) -> None:
    """An episode that broke: an error (never a robot failure) and a failure of every metric
    that applies."""
    rec["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    rec["cause"] = "error"
    rec["wall_s"] = round(wall_s, 3)
    rec["bridge_codes"] = dict(codes)
    if not rec["refuse"]:
        rec["planning"] = rec["execution"] = False
    else:
        rec["refusal_ok"] = False


def record_run(rec: EvalRecord, result: RunResult, codes: Counter) -> None:
    """What the run itself reports: its status, cost and plans, and its own claim of success
    (judged against the task's goal by the job)."""
    from planner.loop import RunStatus

    # every key below exists already: assigning keeps the record's key order
    rec["status"] = result.status
    rec["message"] = result.message
    rec["refused"] = result.status == RunStatus.REFUSED
    rec["tokens"] = dict(result.tokens)
    rec["wall_s"] = round(result.wall_s, 3)
    rec["episode"] = result.episode
    rec["replans"] = result.replans
    rec["bridge_codes"] = dict(codes)
    rec["subgoals"] = [_outcome(s) for s in result.subgoals]
    first = result.plans[0] if result.plans else {}
    rec["plan"] = list(first.get("steps") or [])
    rec["claimed_success"] = result.status == RunStatus.SUCCESS
    rec["run_goal"], rec["run_goal_met"] = result.goal, result.goal_met
    rec["goal_replans"] = result.goal_replans
    rec["fault"] = (result.faults or [None])[0]


def _outcome(sub: dict) -> SubgoalOutcome:
    """One executed subgoal for the report. A ``home`` refused only because the arm is
    already at home with the gripper open (``no_effect``: a safe stop from the rest pose) is
    no failed skill: its success test holds in the world, so it is counted as done."""
    from skills.base import NO_EFFECT

    skill, ok, reason = sub["subgoal"].get("skill"), bool(sub.get("success")), sub.get("reason")
    codes = {v.get("code") for v in sub.get("violations") or []}
    if skill == "home" and not ok and codes == {NO_EFFECT}:
        ok, reason = True, "already at home (nothing to do)"
    return {"skill": skill, "success": ok, "reason": reason}


def cause(rec: EvalRecord) -> str:
    """The first thing that went wrong in a failed (not-to-be-refused) episode."""
    if rec.get("first_refused"):
        return "false_refusal"
    if not rec["plan"]:
        return f"no_plan:{rec['status']}"
    if rec.get("goal_mismatch"):
        return "wrong_goal"
    if not rec["planning"]:
        return "wrong_plan"
    failed = next((s for s in rec["subgoals"] if not s["success"]), None)
    if failed is not None:
        return f"skill_failed:{failed['skill']}"
    if rec["refused"]:
        return "refused_on_replan"
    return "goal_not_met"
