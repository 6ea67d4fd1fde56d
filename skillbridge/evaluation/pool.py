"""Running the jobs of an eval in worker processes, surviving the loss of a worker.

A lost worker (``kill -9``, the OOM killer) is the machine failing, not the robot: its job
runs again, a bounded number of times, and is then reported as lost, never as a failed
episode. The pool is pebble's: it replaces a dead worker by itself and fails exactly the
job that worker was running (``ProcessExpired``), so the queued jobs lose nothing.
:class:`Collector` is where finished episodes go for every job runner (this pool and
:mod:`skillbridge.evaluation.ray_jobs`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait

from skillbridge.evaluation import jobs as _jobs
from skillbridge.evaluation.jobs import run_job
from skillbridge.evaluation.record import EvalRecord

ProgressFn = Callable[[EvalRecord, int, int], None]

#: Tries of one job whose worker keeps dying (a failure of the machine or the worker
#: process rather than of the robot) before it is given up and reported as missing.
MAX_ATTEMPTS = 3
#: Seconds between a worker's checks that the eval that started it is still alive.
PARENT_POLL_S = 0.5

SinkFn = Callable[[int, EvalRecord], None]


class JobsAbandoned(RuntimeError):
    """The job runner cannot go on (a Ray cluster lost its node, no worker answers): the
    finished jobs stand, the rest are missing. The message is one line for the user."""


def _worker_init(parent_pid: int) -> None:
    """Workers leave Ctrl-C to the parent (which stops them once, with one message) and exit
    by themselves when the parent is gone (SIGKILL leaves it no chance to stop them)."""
    import signal
    import threading

    _jobs.IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent_pid:
                os._exit(3)

    threading.Thread(target=watch, name="eval-parent-watch", daemon=True).start()


def _ignoring_sigint():
    """SIGINT ignored while worker processes are spawned: a spawned process inherits
    SIG_IGN through exec, so a Ctrl-C that reaches it before its initializer has run is not
    a traceback on the terminal either."""
    import contextlib
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def cm():
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, old)

    return cm()


class Collector:
    """Where finished episodes go, in job order, for every job runner (the process pool
    here, Ray in :mod:`skillbridge.evaluation.ray_jobs`): the sink sees each at once, the progress
    callback counts them across a resumed eval."""

    def __init__(
        self,
        n: int,
        progress: ProgressFn | None,
        sink: SinkFn | None,
        done_before: int = 0,
        total: int | None = None,
    ):
        self.results: list[EvalRecord | None] = [None] * n
        self.total = n + done_before if total is None else total
        self.done = done_before
        self.progress, self.sink = progress, sink

    def finish(self, i: int, rec: EvalRecord) -> None:
        self.results[i] = rec
        self.done += 1
        if self.sink:
            self.sink(i, rec)
        if self.progress:
            self.progress(rec, self.done, self.total)


def run_jobs(
    jobs: list[dict],
    workers: int,
    progress: ProgressFn | None = None,
    sink: SinkFn | None = None,
    done_before: int = 0,
    total: int | None = None,
    stats: dict | None = None,
) -> tuple[list[EvalRecord | None], dict[int, str]]:
    """Results in job order (None where a job was lost) and the lost jobs with the reason.

    ``workers`` > 1: a spawn-context process pool. A job whose worker dies is run again,
    at most :data:`MAX_ATTEMPTS` times, then reported as lost. ``sink(i, rec)`` sees each
    result as it arrives, so a caller keeps the finished episodes when a KeyboardInterrupt
    ends the run (the workers are then stopped: SIGTERM lets a running episode close as
    incomplete, SIGKILL follows). ``stats`` (if given) counts the jobs rerun and the
    workers replaced, for the report."""
    collect = Collector(len(jobs), progress, sink, done_before, total)
    results, finish = collect.results, collect.finish

    if workers <= 1 or len(jobs) <= 1:
        for i, job in enumerate(jobs):
            finish(i, run_job(job))
        return results, {}
    import multiprocessing as mp

    from pebble import ProcessPool

    stats = stats if stats is not None else {}
    attempts = [0] * len(jobs)
    lost: dict[int, str] = {}
    with _ignoring_sigint():  # the first workers are spawned by the first schedule
        pool = ProcessPool(
            max_workers=min(workers, len(jobs)),
            initializer=_worker_init,
            initargs=(os.getpid(),),
            context=mp.get_context("spawn"),
        )
        pending: dict[Future, int] = {
            pool.schedule(run_job, (job,)): i for i, job in enumerate(jobs)
        }
    try:
        while pending:
            finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                i = pending.pop(fut)
                exc = fut.exception()  # run_job never raises: this is the process
                if exc is None:
                    finish(i, fut.result())
                    continue
                attempts[i] += 1
                stats["jobs_rerun"] = stats.get("jobs_rerun", 0) + 1
                stats["pool_restarts"] = stats.get("pool_restarts", 0) + 1
                if attempts[i] >= MAX_ATTEMPTS:
                    lost[i] = f"worker lost {attempts[i]} times: {type(exc).__name__}"
                else:
                    pending[pool.schedule(run_job, (jobs[i],))] = i
    except BaseException:
        pool.stop()
        pool.join()
        raise
    pool.close()
    pool.join()
    return results, lost
