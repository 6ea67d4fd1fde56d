"""The jobs of an eval, one per (task, seed), and running one end to end.

A job is a plain dict (it crosses to worker processes and Ray actors as it is); running it
is one recorded run of the real runner, judged into an
:class:`~skillbridge.evaluation.record.EvalRecord`.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from planner.rules import NOTHING_TO_DO
from skillbridge.evaluation.config import EvalConfig
from skillbridge.evaluation.record import EvalRecord, cause, new_record, record_error, record_run
from skillbridge.evaluation.suite import Suite, Task

if TYPE_CHECKING:
    from bridge.models import SubgoalDict
    from sim.world import WorldState
    from skills.runtime import SkillExecutor


def make_jobs(suite: Suite, cfg: EvalConfig, episodes: Path) -> list[dict]:
    jobs = []
    for task in suite.tasks:
        for k in range(cfg.seeds):
            jobs.append(
                {
                    "task": task.model_dump(mode="json"),
                    "seed": cfg.seed_base + k,
                    "llm": cfg.llm,
                    "policy_source": cfg.policy_source,
                    "max_replans": cfg.max_replans,
                    "base_url": cfg.base_url,
                    "episodes": str(episodes),
                    "faults": cfg.faults,
                    "route": cfg.route,
                    "perception": cfg.perception,
                }
            )
    return jobs


# ----------------------------------------------------------------------------- symbolic
def simulate_plan(world: WorldState, steps: list[SubgoalDict]) -> WorldState | None:
    """The world after ``steps``, simulated as the bridge simulates a plan (one symbolic
    model of the skills); None if a step cannot run (the plan is then wrong here)."""
    from bridge.validate import simulate

    after, reasons = simulate(world, cast(list[dict], steps))
    return None if reasons else after


# ----------------------------------------------------------------------------- one job
_EXECUTORS: dict[str, SkillExecutor] = {}
#: set in pool workers (:mod:`skillbridge.evaluation.pool`), whose parent stops them with
#: SIGTERM
IN_WORKER = False


def executor(source: str) -> SkillExecutor:
    """One executor (policies loaded once) per worker process."""
    if source not in _EXECUTORS:
        from skillbridge.runner.executor import make_executor

        _EXECUTORS[source] = make_executor(source)
    return _EXECUTORS[source]


def _scene_cubes(task: Task) -> list[str] | dict[str, Any] | None:
    """The task's cubes for :class:`~skillbridge.runner.records.RunConfig`: names, or names with
    poses (the runner resets the scene with them and records them in ``meta.scene``)."""
    cubes = task.scene.cubes
    if cubes is None:
        return None
    if isinstance(cubes, dict):
        return {n: (list(p) if p is not None else None) for n, p in cubes.items()}
    return list(cubes)


def run_job(job: dict) -> EvalRecord:
    """Run one (task, seed) end to end; never raises (errors are part of the record)."""
    import torch

    torch.set_num_threads(1)
    from bridge.goals import unmet
    from bridge.policy import PLAN_DECISIONS
    from sim.world import WorldState
    from skillbridge.runner.records import RunConfig, RunEvent
    from skillbridge.runner.runner import Runner

    task = Task.model_validate(job["task"])
    seed = int(job["seed"])
    rec = new_record(task, seed)
    codes: Counter = Counter()

    def on_event(kind: str, data: dict) -> None:
        if kind == RunEvent.PLAN:
            for a in data.get("attempt_records", []):
                if a.get("decision") not in PLAN_DECISIONS:
                    codes.update(r.get("code", "?") for r in a.get("reasons", []))

    t0 = time.perf_counter()
    try:
        cfg = RunConfig(
            task=task.instruction,
            llm=job.get("llm"),
            seed=seed,
            cubes=_scene_cubes(task),
            max_replans=int(job.get("max_replans", 2)),
            out_dir=Path(job["episodes"]) / task.id,
            policy_source=job["policy_source"],
            base_url=job.get("base_url"),
            route=str(job.get("route") or "hybrid"),
            scene=task.scene.model,
            drawer=task.scene.drawer,
            light=task.scene.light,
        )
        Path(cfg.out_dir).mkdir(parents=True, exist_ok=True)
        fault = None
        if job.get("faults"):
            from skillbridge.runner.faults import seeded

            fault = seeded(seed)
        runner = Runner(
            cfg,
            executor=executor(job["policy_source"]),
            on_event=on_event,
            fault=fault,
            perception=str(job.get("perception") or "state"),
        )
        result = runner.run()
    except BaseException as e:  # noqa: BLE001 - one broken episode must not end the suite
        if isinstance(e, KeyboardInterrupt):
            if IN_WORKER:  # SIGTERM from the parent, after the runner closed the episode
                os._exit(143)
            raise
        record_error(rec, e, time.perf_counter() - t0, codes)
        return rec

    record_run(rec, result, codes)
    final = WorldState.model_validate(result.world)
    first = result.plans[0] if result.plans else {}
    executed = len(result.subgoals)
    if task.refuse:
        # a task that must not move: refused, or (expect:) answered, asked back or stopped
        from planner.loop import RunStatus

        want = {
            "answer": RunStatus.ANSWERED,
            "clarify": RunStatus.CLARIFY,
            "stop": RunStatus.STOPPED,
        }.get(task.expect or "")
        kind_ok = rec["refused"] if want is None else result.status == want
        rec["refusal_ok"] = bool(kind_ok) and executed == 0
        if not rec["refusal_ok"]:
            rec["cause"] = "not_refused" if executed else f"not_refused:{result.status}"
        return rec

    # the planner's first answer, for the world it saw first ("nothing to do" is not a no)
    first_refused = bool(first.get("refusal")) and not str(first.get("refusal")).startswith(
        NOTHING_TO_DO
    )
    rec["first_refused"] = first_refused
    initial = _initial_world(result.episode)
    predicted = simulate_plan(initial, rec["plan"]) if initial is not None else None
    rec["planning"] = bool(not first_refused and predicted is not None and task.achieved(predicted))
    rec["unmet_plan"] = (
        unmet(task.literals, predicted)
        if predicted is not None
        else ["(the plan fails its preconditions)"]
    )
    # a plan that states a goal other than the instruction's is a wrong plan, even if its
    # steps happen to do the task: the run would be judged against the wrong goal
    if first.get("goal_source") == "plan" and first.get("goal") is not None and initial:
        from bridge.goals import mismatch

        rec["goal_mismatch"] = mismatch(first["goal"], task.literals, initial)
        if rec["goal_mismatch"]:
            rec["planning"] = False
    rec["unmet_final"] = unmet(task.literals, final)
    rec["execution"] = bool(not rec["refused"] and not rec["unmet_final"])
    # the check the runner's success must never fail: it claimed success, the world disagrees
    rec["false_success"] = bool(rec["claimed_success"] and rec["unmet_final"])
    if rec["fault"] is not None:
        rec["recovered"] = bool(rec["execution"])
        rec["repaired_by_replan"] = bool(rec["execution"] and result.replans > 0)
    if not rec["execution"]:
        rec["cause"] = cause(rec)
    return rec


def _initial_world(episode: str | None) -> WorldState | None:
    from sim.world import WorldState

    if episode is None:
        return None
    try:
        meta = json.loads((Path(episode) / "meta.json").read_text(encoding="utf-8"))
        return WorldState.model_validate(meta["initial_world"])
    except (OSError, KeyError, ValueError):
        return None
