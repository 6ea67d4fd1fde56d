"""Running the jobs of an eval in worker processes, surviving the loss of a worker.

A lost worker (``kill -9``, the OOM killer) is the machine failing, not the robot: its jobs
run again in a fresh pool, a bounded number of times, and are then reported as lost, never as
failed episodes. :class:`Collector` is where finished episodes go for every job runner (this
pool and :mod:`skillbridge.evaluation.ray_jobs`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from skillbridge.evaluation import jobs as _jobs
from skillbridge.evaluation.jobs import run_job
from skillbridge.evaluation.record import EvalRecord

ProgressFn = Callable[[EvalRecord, int, int], None]

#: process rather than of the robot) before it is given up and reported as missing.
MAX_ATTEMPTS = 3
#: How often the worker pool, broken by a lost worker, may be rebuilt in one eval.
MAX_POOL_RESTARTS = 10
#: Seconds between a worker's checks that the eval that started it is still alive.
PARENT_POLL_S = 0.5

SinkFn = Callable[[int, EvalRecord], None]


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


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop every worker now (they ignore SIGINT): SIGTERM lets a running episode close as
    incomplete, SIGKILL follows for any that do not exit."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 5.0
    for p in procs:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(timeout=2.0)


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


def run_jobs(  # noqa: C901 - pool supervision: timeouts, crashes, restarts, resume
    jobs: list[dict],
    workers: int,
    progress: ProgressFn | None = None,
    sink: SinkFn | None = None,
    done_before: int = 0,
    total: int | None = None,
    stats: dict | None = None,
) -> tuple[list[EvalRecord | None], dict[int, str]]:
    """Results in job order (None where a job was lost) and the lost jobs with the reason.

    ``workers`` > 1: a spawn-context process pool. A worker that dies (``kill -9``, the OOM
    killer) is the infrastructure failing, not the robot: its jobs are run again in a fresh
    pool, at most :data:`MAX_ATTEMPTS` times each, and then reported as lost, never as
    failed episodes. ``sink(i, rec)`` sees each result as it arrives, so a caller keeps the
    finished episodes when a KeyboardInterrupt ends the run. ``stats`` (if given) counts
    the jobs rerun after a lost worker and the pools rebuilt, for the report."""
    collect = Collector(len(jobs), progress, sink, done_before, total)
    results, finish = collect.results, collect.finish

    if workers <= 1 or len(jobs) <= 1:
        for i, job in enumerate(jobs):
            finish(i, run_job(job))
        return results, {}
    import multiprocessing as mp

    attempts = [0] * len(jobs)
    lost: dict[int, str] = {}
    todo = list(range(len(jobs)))
    restarts = 0
    while todo:
        if restarts > MAX_POOL_RESTARTS:
            for i in todo:
                lost[i] = f"worker pool rebuilt {MAX_POOL_RESTARTS} times; giving up"
            break
        with _ignoring_sigint():
            pool = ProcessPoolExecutor(
                max_workers=min(workers, len(todo)),
                mp_context=mp.get_context("spawn"),
                initializer=_worker_init,
                initargs=(os.getpid(),),
            )
            pending: dict[Future, int] = {pool.submit(run_job, jobs[i]): i for i in sorted(todo)}
        todo = []
        running: set[int] = set()  # last seen running: the jobs a lost worker may have held
        try:
            while pending:
                finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                broken = []
                for fut in finished:
                    i = pending.pop(fut)
                    exc = fut.exception()  # run_job never raises: this is the process
                    if exc is None:
                        finish(i, fut.result())
                    else:
                        broken.append((i, exc))
                # only the jobs that were running pay an attempt (the queued ones lost
                # nothing), so one job that always kills its worker cannot use up the others
                charged = [i for i, _ in broken if i in running] or [i for i, _ in broken]
                if broken and stats is not None:
                    stats["jobs_rerun"] = stats.get("jobs_rerun", 0) + len(broken)
                for i, exc in broken:
                    attempts[i] += i in charged
                    if attempts[i] >= MAX_ATTEMPTS:
                        lost[i] = f"worker lost {attempts[i]} times: {type(exc).__name__}"
                    else:
                        todo.append(i)
                running = {i for f, i in pending.items() if f.running()}
        except BaseException:
            _stop_pool(pool)
            raise
        if todo:
            _stop_pool(pool)
            restarts += 1
            if stats is not None:
                stats["pool_restarts"] = restarts
        else:
            pool.shutdown(wait=True)
    return results, lost
