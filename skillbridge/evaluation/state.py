"""What ``eval --resume`` continues from: the eval's tasks and settings
(``eval-state.json``, written before the first episode) and the finished episodes
(``results.jsonl``, one line each as it finishes)."""

from __future__ import annotations

import json
from pathlib import Path

from sim import util
from skillbridge.evaluation.config import EvalConfig
from skillbridge.evaluation.record import EvalRecord
from skillbridge.evaluation.suite import Suite, Task

STATE_FILE = "eval-state.json"
RESULTS_FILE = "results.jsonl"
STATE_FORMAT = "skillbridge.eval-state"


class ResumeError(ValueError):
    """An output folder that holds no eval to continue (the message says why)."""


def job_key(task_id: str, seed: int) -> str:
    return f"{task_id}#{seed}"


def write_state(suite: Suite, cfg: EvalConfig, out: Path) -> None:
    """What ``eval --resume`` needs to run the same jobs again: the tasks themselves (not
    their file, which may have changed since) and the settings."""
    state = {
        "format": STATE_FORMAT,
        "version": 1,
        "suite": {"name": suite.name, "files": [str(f) for f in suite.files]},
        "tasks": [t.model_dump(mode="json") for t in suite.tasks],
        "config": {
            "suite_path": cfg.suite_path,
            "llm": cfg.llm,
            "planner": cfg.planner,
            "seeds": cfg.seeds,
            "seed_base": cfg.seed_base,
            "workers": cfg.workers,
            "policy_source": cfg.policy_source,
            "max_replans": cfg.max_replans,
            "base_url": cfg.base_url,
            "command": cfg.command,
            "faults": cfg.faults,
            "route": cfg.route,
            "perception": cfg.perception,
        },
    }
    util.atomic_write_text(out / STATE_FILE, json.dumps(state, indent=2))


def read_state(out: Path) -> tuple[Suite, EvalConfig]:
    """The suite and settings of the eval begun in ``out``; ResumeError (one line) if there
    is none, or it is damaged, or already complete."""
    rj = out / "report.json"
    try:
        state = json.loads((out / STATE_FILE).read_text(encoding="utf-8"))
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError("not an eval state file")
        tasks = [Task.model_validate(t) for t in state["tasks"]]
        c = state["config"]
        cfg = EvalConfig(
            suite_path=str(c["suite_path"]),
            llm=c.get("llm"),
            planner=str(c.get("planner") or "rules"),
            seeds=int(c["seeds"]),
            seed_base=int(c["seed_base"]),
            workers=int(c["workers"]),
            out=out,
            policy_source=str(c["policy_source"]),
            max_replans=int(c["max_replans"]),
            base_url=c.get("base_url"),
            command=str(c.get("command") or ""),
            faults=bool(c.get("faults")),
            route=str(c.get("route") or "hybrid"),
            perception=str(c.get("perception") or "state"),
        )
        name = str(state["suite"]["name"])
        files = [Path(f) for f in state["suite"]["files"]]
    except FileNotFoundError:
        raise ResumeError(f"{out} holds no eval to resume (no {STATE_FILE})") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ResumeError(f"{out / STATE_FILE} is damaged: {why[:200]}") from None
    if cfg.seeds < 1 or cfg.seed_base < 0 or not tasks:
        raise ResumeError(f"{out / STATE_FILE} is damaged: bad seeds or no tasks")
    try:
        complete = json.loads(rj.read_text(encoding="utf-8")).get("complete", True)
    except (OSError, ValueError, AttributeError):
        complete = False  # no report yet (the eval was killed): resume from the results file
    if complete:
        raise ResumeError(f"{out} holds a complete report; nothing to resume")
    return Suite(name=name, tasks=tasks, files=files, origin={}), cfg


def read_results(out: Path, keys: set[str]) -> dict[str, EvalRecord]:
    """The finished episodes recorded in ``out``, by job key. A line cut short by a kill
    is skipped (its episode runs again)."""
    found: dict[str, EvalRecord] = {}
    try:
        lines = (out / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return found
    for line in lines:
        try:
            rec = json.loads(line)
            key = job_key(rec["task"], int(rec["seed"]))
        except (ValueError, KeyError, TypeError):
            continue
        if key in keys:
            found[key] = rec
    return found
