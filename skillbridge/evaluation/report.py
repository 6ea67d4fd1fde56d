"""The numbers of an eval report: rates with their intervals, the claims check, and the
breakdowns by category, cause, skill, bridge code and task."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime

from sim import util
from sim.util import wilson
from skillbridge.evaluation.config import EvalConfig
from skillbridge.evaluation.record import EvalRecord
from skillbridge.evaluation.suite import CATEGORIES, Suite

REPORT_FORMAT = "skillbridge.eval-report"
REPORT_VERSION = 1
#: The issue's targets for the shipped suite with the rules planner.
TARGETS = {"planning": 0.95, "execution": 0.85, "refusal": 1.0}


def rate(successes: int, n: int) -> dict:
    lo, hi = wilson(successes, n)
    return {
        "successes": successes,
        "episodes": n,
        "rate": round(successes / n, 4) if n else None,
        "ci95": [round(lo, 4), round(hi, 4)],
    }


def _rates(recs: Sequence[EvalRecord]) -> dict:
    plan = [r for r in recs if not r["refuse"]]
    ref = [r for r in recs if r["refuse"]]
    return {
        "planning": rate(sum(bool(r["planning"]) for r in plan), len(plan)),
        "execution": rate(sum(bool(r["execution"]) for r in plan), len(plan)),
        "refusal": rate(sum(bool(r["refusal_ok"]) for r in ref), len(ref)),
        "false_refusals": rate(sum(bool(r["refused"]) for r in plan), len(plan)),
    }


def claims(recs: Sequence[EvalRecord]) -> dict:
    """Whether the runner's success can be trusted: runs that claimed success while the
    task's goal is unmet in the world (must be 0), and, under ``--faults``, how many runs
    with an injected fault still ended with the goal met, and how many of those a replan
    repaired."""
    goal_runs = [r for r in recs if not r["refuse"] and r.get("claimed_success") is not None]
    claimed = [r for r in goal_runs if r.get("claimed_success")]
    faulted = [r for r in goal_runs if r.get("fault")]
    false = [r for r in claimed if r.get("false_success")]
    return {
        "claimed_success": len(claimed),
        "false_success_claims": len(false),
        "false_success_rate": rate(len(false), len(claimed)),
        "false_success_episodes": [
            {
                "task": r["task"],
                "seed": r["seed"],
                "unmet": r.get("unmet_final"),
                "episode": r["episode"],
            }
            for r in false
        ],
        "faults_injected": len(faulted),
        "recovery": rate(sum(bool(r.get("recovered")) for r in faulted), len(faulted)),
        "repaired_by_replan": sum(bool(r.get("repaired_by_replan")) for r in faulted),
        "faults_by_kind": dict(Counter(f["fault"] for r in faulted if (f := r.get("fault")))),
        "wrong_goal": sum(bool(r.get("goal_mismatch")) for r in goal_runs),
    }


def summarise(results: Sequence[EvalRecord], suite: Suite, cfg: EvalConfig, wall_s: float) -> dict:
    overall = _rates(results)
    by_cat = {}
    present = {t.category for t in suite.tasks}
    for cat in [c for c in CATEGORIES if c in present]:
        by_cat[cat] = _rates([r for r in results if r["category"] == cat])
    causes = Counter(r["cause"] for r in results if r["cause"])
    skills: dict[str, dict] = defaultdict(lambda: {"runs": 0, "failures": 0})
    for r in results:
        for s in r["subgoals"]:
            skills[s["skill"]]["runs"] += 1
            skills[s["skill"]]["failures"] += int(not s["success"])
    by_skill = {
        k: {**v, "failure_rate": rate(v["failures"], v["runs"])} for k, v in sorted(skills.items())
    }
    codes: Counter = Counter()
    for r in results:
        codes.update(r["bridge_codes"])
    failures_by_cat = {
        cat: dict(Counter(r["cause"] for r in results if r["category"] == cat and r["cause"]))
        for cat in by_cat
    }
    tasks = []
    for t in suite.tasks:
        rs = [r for r in results if r["task"] == t.id]
        n = len(rs)
        entry = {
            "id": t.id,
            "category": t.category,
            "instruction": t.instruction,
            "refuse": t.refuse,
            "goal": list(t.goal),
            "episodes": n,
            "tokens_in": round(sum(r["tokens"]["in"] for r in rs) / max(n, 1), 1),
            "tokens_out": round(sum(r["tokens"]["out"] for r in rs) / max(n, 1), 1),
            "planner_calls": round(sum(r["tokens"]["calls"] for r in rs) / max(n, 1), 2),
            "wall_s": round(sum(r["wall_s"] for r in rs) / max(n, 1), 3),
            "failures": [
                {
                    k: r[k]
                    for k in (
                        "seed",
                        "status",
                        "cause",
                        "message",
                        "plan",
                        "unmet_plan",
                        "unmet_final",
                        "episode",
                        "error",
                    )
                }
                for r in rs
                if r["cause"]
            ],
        }
        if t.refuse:
            entry["refusal"] = f"{sum(bool(r['refusal_ok']) for r in rs)}/{n}"
        else:
            entry["planning"] = f"{sum(bool(r['planning']) for r in rs)}/{n}"
            entry["execution"] = f"{sum(bool(r['execution']) for r in rs)}/{n}"
        tasks.append(entry)
    targets = {}
    for k, thr in TARGETS.items():
        r = overall[k]["rate"]
        # met is None when the suite has no episode for the metric: nothing was missed
        targets[k] = {"target": thr, "measured": r, "met": None if r is None else r >= thr}
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "created": datetime.now().astimezone().isoformat(timespec="seconds"),
        "suite": {
            "name": suite.name,
            "path": str(cfg.suite_path),
            "files": [str(f) for f in suite.files],
            "tasks": len(suite.tasks),
            "by_category": {k: len(v) for k, v in suite.by_category().items()},
        },
        "config": {
            "llm": cfg.planner,
            "route": cfg.route,
            "seeds": cfg.seeds,
            "seed_base": cfg.seed_base,
            "workers": cfg.workers,
            "policy_source": cfg.policy_source,
            "max_replans": cfg.max_replans,
            "faults": cfg.faults,
            "ray": cfg.ray,
            "perception": cfg.perception,
            "command": cfg.command,
        },
        "machine": machine_info(),
        "episodes": len(results),
        "wall_s": round(wall_s, 2),
        "overall": overall,
        "claims": claims(results),
        "targets": targets,
        "by_category": by_cat,
        "failures": {
            "by_cause": dict(causes.most_common()),
            "by_category": failures_by_cat,
            "by_skill": by_skill,
            "by_bridge_code": dict(codes.most_common()),
        },
        "tokens": {
            "in": sum(r["tokens"]["in"] for r in results),
            "out": sum(r["tokens"]["out"] for r in results),
            "calls": sum(r["tokens"]["calls"] for r in results),
        },
        "tasks": tasks,
        "results": results,
    }


def machine_info() -> dict:
    try:
        versions = util.library_versions()
    except Exception:  # noqa: BLE001 - informational only
        versions = {}
    return {**util.machine_info(), "versions": versions}
