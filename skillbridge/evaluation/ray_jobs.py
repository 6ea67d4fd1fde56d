"""``skillbridge eval --ray [ADDRESS]``: the suite's episodes as tasks on a Ray cluster.

Each Ray worker is an actor (:class:`EpisodeWorker`) that loads the skill policies once (and
the planner model on its first episode, cached for the rest, as in a ``--workers`` process)
and then runs :func:`skillbridge.evaluation.jobs.run_job` on the jobs the driver hands it, one at
a time. The job dicts are the ones ``--workers N`` runs, so each per-episode record is the
same record, written by the driver into the same ``results.jsonl`` and report.

A worker that dies mid-episode (``kill -9``, the OOM killer, a lost node) is the cluster
failing, not the robot: its job goes back to the queue and runs on a fresh actor, at most
:data:`skillbridge.evaluation.pool.MAX_ATTEMPTS` times, and is reported as missing after that,
never as a failed episode. A result is taken once, from the task that returned it, so no
episode is lost or counted twice.

The cluster itself (local, or at an ADDRESS) is :mod:`skillbridge.ray_cluster`'s. Episode
folders are written by the node that ran them: give the cluster a shared
``--out`` folder to keep them together.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

from skillbridge.errors import UserError
from skillbridge.ray_cluster import ray_module, start

JOB_FN = "skillbridge.evaluation.jobs:run_job"


def _load(path: str) -> Callable[[dict], dict]:
    mod, _, name = path.partition(":")
    return getattr(importlib.import_module(mod), name)


class EpisodeWorker:
    """One Ray worker: policies loaded once, then one episode at a time."""

    def __init__(self, policy_source: str, job_fn: str = JOB_FN):
        import torch

        from skillbridge.evaluation.jobs import executor

        torch.set_num_threads(1)
        executor(policy_source)  # the skill policies, once per worker
        self._run = _load(job_fn)

    def pid(self) -> int:
        return os.getpid()

    def run(self, job: dict) -> dict:
        return self._run(job)


class _Scheduler:
    """Keeps every actor busy with one job; replaces an actor that died and requeues its job."""

    def __init__(self, ray, jobs, n_actors, policy_source, job_fn, stats) -> None:
        from skillbridge.evaluation.pool import MAX_ATTEMPTS

        self.ray, self.jobs, self.stats = ray, jobs, stats
        self.max_attempts = MAX_ATTEMPTS
        self.cls = ray.remote(num_cpus=1, max_restarts=0)(EpisodeWorker)
        self.args = (policy_source, job_fn)
        self.queue: deque[int] = deque(range(len(jobs)))
        self.attempts = [0] * len(jobs)
        self.lost: dict[int, str] = {}
        self.inflight: dict[Any, tuple[int, Any]] = {}
        self.actors = [self.cls.remote(*self.args) for _ in range(max(1, n_actors))]

    def feed(self, actor) -> None:
        if self.queue:
            i = self.queue.popleft()
            self.inflight[actor.run.remote(self.jobs[i])] = (i, actor)

    def replace(self, actor):
        try:
            self.ray.kill(actor)
        except Exception:  # noqa: BLE001 - it is gone already
            pass
        new = self.cls.remote(*self.args)
        self.actors[self.actors.index(actor)] = new
        if self.stats is not None:
            self.stats["pool_restarts"] = self.stats.get("pool_restarts", 0) + 1
        return new

    def lose(self, i: int, why: str) -> None:
        self.attempts[i] += 1
        if self.stats is not None:
            self.stats["jobs_rerun"] = self.stats.get("jobs_rerun", 0) + 1
        if self.attempts[i] >= self.max_attempts:
            self.lost[i] = f"worker lost {self.attempts[i]} times: {why}"
        else:
            self.queue.appendleft(i)

    def take(self, ref, finish) -> None:
        from ray.exceptions import RayActorError, RayTaskError, WorkerCrashedError

        i, actor = self.inflight.pop(ref)
        try:
            rec = self.ray.get(ref)
        except (RayActorError, WorkerCrashedError) as e:  # the process, not the robot
            if getattr(e, "actor_init_failed", False):  # e.g. a node without skillbridge
                last = (str(e).strip().splitlines() or ["?"])[-1].strip()[:200]
                raise UserError(f"a Ray worker cannot start: {last}", 2) from None
            self.lose(i, type(e).__name__)
            actor = self.replace(actor)
        except RayTaskError as e:  # run_job never raises: the worker cannot run skillbridge
            first = (str(e).strip().splitlines() or ["?"])[-1][:200]
            raise UserError(f"a Ray worker cannot run the episode: {first}", 2) from None
        else:
            finish(i, rec)
        self.feed(actor)

    def run(self, finish) -> None:
        for a in self.actors:
            self.feed(a)
        while self.inflight:
            ready, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=0.5)
            for ref in ready:
                self.take(ref, finish)

    def close(self) -> None:
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:  # noqa: BLE001
                pass


def ray_runner(address: str, policy_source: str, job_fn: str = JOB_FN):
    """A drop-in for :func:`skillbridge.evaluation.pool.run_jobs` that runs the jobs on Ray."""

    def run_jobs_ray(
        jobs: list[dict],
        workers: int,
        progress=None,
        sink=None,
        done_before: int = 0,
        total: int | None = None,
        stats: dict | None = None,
    ):
        from skillbridge.evaluation.pool import Collector

        ray = ray_module()
        collect = Collector(len(jobs), progress, sink, done_before, total)
        results, finish = collect.results, collect.finish

        if not jobs:
            return results, {}
        # Ray's driver prints cluster events (a worker died...) on stdout, which belongs to
        # --json: they go to stderr with the progress
        with contextlib.redirect_stdout(sys.stderr):
            return _run(ray, jobs, workers, finish, results, stats)

    def _run(ray, jobs, workers, finish, results, stats):
        started = start(address, workers)
        sched = None
        try:
            sched = _Scheduler(ray, jobs, workers, policy_source, job_fn, stats)
            sched.run(finish)
            return results, dict(sched.lost)
        finally:
            if sched is not None:
                sched.close()
            if started:
                ray.shutdown()

    return run_jobs_ray
