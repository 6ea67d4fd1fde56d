"""``evaluate``: a suite's jobs run, recorded as they finish, and reported; Ctrl-C keeps
what finished and leaves an eval that ``--resume`` continues."""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path

from skillbridge.evaluation.config import EvalConfig
from skillbridge.evaluation.jobs import make_jobs
from skillbridge.evaluation.pages import write_report
from skillbridge.evaluation.pool import JobsAbandoned, ProgressFn, run_jobs
from skillbridge.evaluation.record import EvalRecord
from skillbridge.evaluation.report import summarise
from skillbridge.evaluation.state import (
    RESULTS_FILE,
    job_key,
    read_results,
    write_state,
)
from skillbridge.evaluation.suite import Suite


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during an eval, after the partial report was written."""

    def __init__(self, report: dict):
        super().__init__("interrupted")
        self.report = report


class EvalAbandoned(RuntimeError):
    """The job runner gave up (:class:`~skillbridge.evaluation.pool.JobsAbandoned`), after
    the partial report was written; ``--resume`` continues it."""

    def __init__(self, report: dict, why: str):
        super().__init__(why)
        self.report, self.why = report, why


#: Where the cluster's own messages (a worker died, a node is dead...) go under ``eval --ray``:
#: the terminal gets one line of ours, the details stay in the report folder.
RAY_EVENTS = "ray-events.log"


def _runner(cfg: EvalConfig):
    """:func:`run_jobs`, or its Ray counterpart for ``eval --ray`` (same jobs, same records)."""
    if not cfg.ray:
        return run_jobs
    from skillbridge.evaluation.ray_jobs import ray_runner

    return ray_runner(cfg.ray, cfg.policy_source, events=Path(cfg.out) / RAY_EVENTS)


def evaluate(
    suite: Suite, cfg: EvalConfig, progress: ProgressFn | None = None, resume: bool = False
) -> dict:
    """Run the suite and write the report; returns the report dict.

    Each finished episode is appended to ``results.jsonl`` at once, so neither Ctrl-C nor a
    killed eval loses it: Ctrl-C (or SIGTERM) writes a partial report marked
    ``"complete": false`` and raises :class:`EvalInterrupted`; ``resume`` runs only the
    episodes that are not in ``results.jsonl`` yet."""
    import signal
    import threading

    out = Path(cfg.out)
    episodes = out / "episodes"
    episodes.mkdir(parents=True, exist_ok=True)
    jobs = make_jobs(suite, cfg, episodes)
    keys = [job_key(j["task"]["id"], j["seed"]) for j in jobs]
    done: dict[str, EvalRecord] = read_results(out, set(keys)) if resume else {}
    if not resume:
        write_state(suite, cfg, out)
        (out / RESULTS_FILE).write_text("", encoding="utf-8")
    prior_wall = 0.0
    if resume:
        try:
            prior_wall = float(json.loads((out / "report.json").read_text())["wall_s"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    todo = [i for i, k in enumerate(keys) if k not in done]
    lost: dict[str, str] = {}
    log = (out / RESULTS_FILE).open("a", encoding="utf-8")

    def sink(i: int, rec: EvalRecord) -> None:
        done[keys[todo[i]]] = rec
        log.write(json.dumps(rec, default=str) + "\n")
        log.flush()

    main = threading.current_thread() is threading.main_thread()

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, on_term) if main else None
    infra: dict = {}
    t0 = time.perf_counter()
    interrupted = False
    abandoned: str | None = None
    try:
        _, lost_idx = _runner(cfg)(
            [jobs[i] for i in todo],
            cfg.workers,
            progress,
            sink,
            done_before=len(done),
            total=len(jobs),
            stats=infra,
        )
        lost = {keys[todo[i]]: why for i, why in lost_idx.items()}
    except KeyboardInterrupt:
        interrupted = True
    except JobsAbandoned as e:
        abandoned = str(e)
    finally:
        if main:  # the partial report is written once, whatever else arrives meanwhile
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
        log.close()
    try:
        results = [done[k] for k in keys if k in done]
        report = summarise(results, suite, cfg, prior_wall + time.perf_counter() - t0)
        missing = [
            {
                "task": j["task"]["id"],
                "seed": j["seed"],
                "reason": lost.get(k) or abandoned or "interrupted",
            }
            for j, k in zip(jobs, keys, strict=False)
            if k not in done
        ]
        report["complete"] = not missing
        report["missing"] = missing
        # lost workers are the machine's failures, not the robot's: counted apart
        report["infrastructure"] = {
            "jobs_rerun": infra.get("jobs_rerun", 0),
            "pool_restarts": infra.get("pool_restarts", 0),
        }
        files = write_report(report, out)
        report["files"] = {k: str(v) for k, v in files.items()}
    finally:
        if main:
            signal.signal(signal.SIGTERM, old_term if old_term is not None else signal.SIG_DFL)
            signal.signal(signal.SIGINT, old_int)
    if interrupted:
        raise EvalInterrupted(report)
    if abandoned is not None:
        raise EvalAbandoned(report, abandoned)
    return report


def default_out() -> Path:
    return Path("runs") / f"eval-{datetime.now():%Y%m%d-%H%M%S}"


def command_line() -> str:
    return " ".join(["skillbridge", *sys.argv[1:]]) if sys.argv else ""
