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
episode is lost or counted twice. A cluster that lost its node, or where no episode ends
for :data:`STALL_S`, is given up on with one line; the finished episodes stay.

The cluster itself (local, or at an ADDRESS) is :mod:`skillbridge.ray_cluster`'s. Episode
folders are written by the node that ran them: give the cluster a shared
``--out`` folder to keep them together.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillbridge.errors import UserError
from skillbridge.evaluation.pool import JobsAbandoned
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


#: Seconds without a finished episode after which the eval gives up on the cluster (the
#: longest episode, a language model loading on a busy CPU, takes a few minutes).
STALL_S = float(os.environ.get("SKILLBRIDGE_RAY_STALL_S", "900"))
#: Seconds between checks that the cluster still has a live node: when a Ray system process
#: dies (the raylet, or the runtime-env agent, which takes the raylet with it) the node is
#: marked dead and the workers' restarts wait forever for a node to run on.
NODE_CHECK_S = 2.0
NO_NODE = (
    "the Ray cluster has no live node left (a Ray system process died: the raylet, or its "
    "runtime-env agent, which takes the raylet with it)"
)


class _Scheduler:
    """Keeps every actor busy with one job; replaces an actor that died and requeues its job.

    Not Ray's own ``max_restarts``/``max_task_retries``: with task retries Ray reruns the
    dying job itself, and the report could no longer count the reruns nor a job its own
    attempts; without them, the requeued job sent to the restarting actor fails at once and
    burns its attempts. ``ActorPool`` cannot say which job failed."""

    def __init__(self, ray, jobs, n_actors, policy_source, job_fn, stats) -> None:
        from skillbridge.evaluation.pool import MAX_ATTEMPTS

        self.ray, self.jobs, self.stats = ray, jobs, stats if stats is not None else {}
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

    def take(self, ref, finish) -> None:
        from ray.exceptions import RayActorError, RayTaskError, WorkerCrashedError

        i, actor = self.inflight.pop(ref)
        try:
            rec = self.ray.get(ref)
        except (RayActorError, WorkerCrashedError) as e:  # the process, not the robot
            if getattr(e, "actor_init_failed", False):  # e.g. a node without skillbridge
                last = (str(e).strip().splitlines() or ["?"])[-1].strip()[:200]
                raise UserError(f"a Ray worker cannot start: {last}", 2) from None
            if not self._node_alive():  # no node to restart it on: not this job's fault
                self.queue.appendleft(i)
                raise JobsAbandoned(NO_NODE) from None
            self.attempts[i] += 1
            self.stats["jobs_rerun"] = self.stats.get("jobs_rerun", 0) + 1
            self.stats["pool_restarts"] = self.stats.get("pool_restarts", 0) + 1
            if self.attempts[i] >= self.max_attempts:
                self.lost[i] = f"worker lost {self.attempts[i]} times: {type(e).__name__}"
            else:
                self.queue.appendleft(i)
            actor = self.replace(actor)
        except RayTaskError as e:  # run_job never raises: the worker cannot run skillbridge
            first = (str(e).strip().splitlines() or ["?"])[-1][:200]
            raise UserError(f"a Ray worker cannot run the episode: {first}", 2) from None
        else:
            finish(i, rec)
        self.feed(actor)

    def replace(self, actor):
        try:
            self.ray.kill(actor)
        except Exception:  # noqa: BLE001 - it is gone already
            pass
        new = self.cls.remote(*self.args)
        self.actors[self.actors.index(actor)] = new
        return new

    def _node_alive(self) -> bool:
        try:
            return any(n.get("Alive") for n in self.ray.nodes())
        except Exception:  # noqa: BLE001 - no answer is no verdict: the stall bound decides
            return True

    def run(self, finish) -> None:
        for a in self.actors:
            self.feed(a)
        last = check = time.monotonic()
        while self.inflight:
            ready, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=0.5)
            for ref in ready:
                self.take(ref, finish)
                last = time.monotonic()
            now = time.monotonic()
            if now - check >= NODE_CHECK_S:
                check = now
                if not self._node_alive():
                    raise JobsAbandoned(NO_NODE)
            if self.inflight and now - last > STALL_S:
                raise JobsAbandoned(f"no Ray worker finished an episode in {STALL_S:g} s")

    def close(self) -> None:
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:  # noqa: BLE001
                pass


def ray_runner(address: str, policy_source: str, job_fn: str = JOB_FN, events: Path | None = None):
    """A drop-in for :func:`skillbridge.evaluation.pool.run_jobs` that runs the jobs on Ray.
    ``events``: a file for the cluster's own messages (else they go to stderr)."""

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
        # Ray's driver prints cluster events (a worker died, a 40-line raylet dump...) on
        # stdout, which belongs to --json: they go to the events file (or stderr)
        with contextlib.ExitStack() as stack:
            sink_file = (
                stack.enter_context(events.open("a", encoding="utf-8")) if events else sys.stderr
            )
            stack.enter_context(contextlib.redirect_stdout(sink_file))
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
