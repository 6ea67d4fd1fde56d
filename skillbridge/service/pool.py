"""A bounded pool of worker processes with a queue of jobs.

Why hand-made over ``concurrent.futures``: a job here is not a function call with one
result; it streams events while it runs and takes utterances from the user, and a worker
that dies must fail its own job only (a ``ProcessPoolExecutor`` breaks as a whole). Each
worker slot has a dispatcher thread: it takes the oldest waiting job, hands it to its
process, passes the process's events to the job, and watches the clock and the process:

- past the job's timeout the task is told "stop" (the runner brings the arm to rest and
  closes the episode); if it has not ended after a grace period the process is killed;
- a process that dies (killed, crashed) fails its job with an error and is replaced.

Waiting jobs are bounded: :meth:`Pool.submit` raises :class:`Full` (the service answers
429 with a Retry-After estimated from recent task times).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillbridge.service import worker as W

#: Seconds a new worker process may take to import and load its policies.
START_TIMEOUT_S = 600.0
#: Seconds a task told to stop (its timeout passed) has before its process is killed.
STOP_GRACE_S = 10.0


class Full(Exception):  # noqa: N818 - the name says what the caller sees
    """No worker free and the queue is full; ``retry_after`` is a guess in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the queue is full; retry after {retry_after} s")
        self.retry_after = retry_after


@dataclass
class Job:
    """One unit of work: ``payload`` goes to the worker as JSON; ``emit(kind, data)`` gets
    every event it sends (from a dispatcher thread), ending with ``done`` or ``failed``."""

    payload: dict
    emit: Callable[[str, dict], None]
    timeout_s: float = 300.0
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    state: str = "queued"
    pid: int | None = None
    submitted: float = field(default_factory=time.monotonic)


class _Slot:
    """One worker process, its two queues and its dispatcher thread."""

    def __init__(self, pool: Pool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.proc: Any = None
        self.commands: Any = None
        self.events: Any = None
        self.job: Job | None = None
        self.ready = threading.Event()
        self.restarts = 0

    # -------------------------------------------------------------- the process
    def spawn(self) -> None:
        ctx = self.pool.ctx
        self.commands, self.events = ctx.Queue(), ctx.Queue()
        self.ready.clear()
        self.proc = ctx.Process(
            target=W.main,
            args=(self.index, self.commands, self.events, self.pool.policy_source),
            name=f"skillbridge-worker-{self.index}",
            daemon=True,
        )
        self.proc.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and not self.pool.closed:
            try:
                _, kind, data = json.loads(self.events.get(timeout=0.5))
            except queue.Empty:
                if not self.proc.is_alive():
                    break
                continue
            if kind == W.READY:
                self.ready.set()
                return
        raise RuntimeError(f"worker {self.index} did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc is not None:
            self.proc.join(timeout=5)

    def respawn(self) -> None:
        self.kill()
        self.restarts += 1
        self.pool.restarts += 1
        self.spawn()

    def send(self, *msg: Any) -> None:
        self.commands.put(json.dumps(list(msg)))

    # -------------------------------------------------------------- dispatching
    def loop(self) -> None:
        try:
            self.spawn()
        except RuntimeError:
            if self.pool.closed:
                return
            raise
        while not self.pool.closed:
            job = self.pool._take()
            if job is None:
                continue
            try:
                self._run(job)
            except Exception as e:  # noqa: BLE001 - a dispatcher must survive its job
                self._end(job, W.FAILED, {"error": f"the server failed: {e}"[:300]})
            finally:
                self.job = None

    def _end(self, job: Job, kind: str, data: dict) -> None:
        if job.state in ("done", "failed"):
            return
        job.state = "done" if kind == W.DONE else "failed"
        self.pool._finished(job)
        job.emit(kind, data)

    def _run(self, job: Job) -> None:
        if self.proc is None or not self.proc.is_alive():
            self.respawn()
        self.job = job
        job.state, job.pid = "running", self.proc.pid
        job.emit("running", {"worker": self.index, "pid": self.proc.pid})
        self.send("job", {**job.payload, "id": job.id})
        deadline = time.monotonic() + job.timeout_s
        hard: float | None = None
        while True:
            try:
                raw = self.events.get(timeout=0.2)
            except queue.Empty:
                now = time.monotonic()
                if not self.proc.is_alive():
                    code = self.proc.exitcode
                    self._end(job, W.FAILED, {"error": f"the worker died (exit code {code})"})
                    self._replace()
                    return
                if hard is None and now > deadline:
                    hard = now + STOP_GRACE_S
                    self.send("post", job.id, "stop")
                    job.emit("timeout", {"after_s": job.timeout_s, "action": "told to stop"})
                elif hard is not None and now > hard:
                    self.kill()
                    self._end(job, W.FAILED, {"error": f"timed out after {job.timeout_s:g} s"})
                    self._replace()
                    return
                continue
            jid, kind, data = json.loads(raw)
            if jid != job.id:
                continue  # a late event of an earlier job
            if kind in (W.DONE, W.FAILED):
                if hard is not None and kind == W.DONE:
                    data = {**data, "timed_out": True}
                self._end(job, kind, data)
                return
            job.emit(kind, data)

    def _replace(self) -> None:
        if not self.pool.closed:
            try:
                self.respawn()
            except RuntimeError:
                pass  # tried again before the next job


class Pool:
    """``workers`` processes, at most ``queue`` jobs waiting."""

    def __init__(self, workers: int = 2, queue: int = 16, policy_source: str = "pretrained"):
        self.ctx = mp.get_context("spawn")  # no fork of a threaded server
        self.policy_source = policy_source
        self.max_waiting = int(queue)
        self._waiting: deque[Job] = deque()
        self._cv = threading.Condition()
        self._idle = 0
        self.closed = False
        self.restarts = 0
        self.recent: deque[float] = deque(maxlen=50)  # seconds per finished job
        self.slots = [_Slot(self, i) for i in range(int(workers))]
        self.threads = [
            threading.Thread(target=s.loop, name=f"dispatch-{s.index}", daemon=True)
            for s in self.slots
        ]
        for t in self.threads:
            t.start()

    # -------------------------------------------------------------- the callers' side
    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> bool:
        deadline = time.monotonic() + timeout
        for s in self.slots:
            if not s.ready.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def submit(self, job: Job) -> Job:
        with self._cv:
            if self.closed:
                raise Full(self.retry_after())
            if len(self._waiting) >= self.max_waiting + self._idle:
                raise Full(self.retry_after())
            self._waiting.append(job)
            self._cv.notify()
        return job

    def cancel(self, job: Job) -> bool:
        """Take a job that waits off the queue (False: it is running or done)."""
        with self._cv:
            try:
                self._waiting.remove(job)
            except ValueError:
                return False
        job.state = "failed"
        return True

    def post(self, job: Job, text: str) -> bool:
        """Say ``text`` to the task ``job`` runs (False: it is not running)."""
        for s in self.slots:
            if s.job is job and job.state == "running":
                s.send("post", job.id, text)
                return True
        return False

    def waiting(self) -> int:
        with self._cv:
            return len(self._waiting)

    def position(self, job: Job) -> int | None:
        with self._cv:
            for i, j in enumerate(self._waiting):
                if j is job:
                    return i
        return None

    def retry_after(self) -> int:
        """Seconds until a place is likely free: the mean recent job time per worker."""
        mean = sum(self.recent) / len(self.recent) if self.recent else 5.0
        return int(min(120, max(1, math.ceil(mean * (1 + len(self._waiting)) / len(self.slots)))))

    def stats(self) -> dict:
        return {
            "workers": len(self.slots),
            "ready": sum(1 for s in self.slots if s.ready.is_set()),
            "busy": sum(1 for s in self.slots if s.job is not None),
            "waiting": self.waiting(),
            "queue": self.max_waiting,
            "restarts": self.restarts,
            "pids": [s.proc.pid if s.proc is not None else None for s in self.slots],
        }

    def close(self) -> None:
        with self._cv:
            self.closed = True
            waiting = list(self._waiting)
            self._waiting.clear()
            self._cv.notify_all()
        for j in waiting:
            j.state = "failed"
            j.emit(W.FAILED, {"error": "the server is shutting down"})
        for s in self.slots:
            try:
                if s.commands is not None:
                    s.send("quit")
            except (OSError, ValueError):
                pass
        for s in self.slots:
            if s.proc is not None:
                s.proc.join(timeout=3)
            s.kill()

    # -------------------------------------------------------------- the dispatchers' side
    def _take(self) -> Job | None:
        with self._cv:
            self._idle += 1
            try:
                while not self._waiting and not self.closed:
                    self._cv.wait(timeout=1.0)
                return None if self.closed else self._waiting.popleft()
            finally:
                self._idle -= 1

    def _finished(self, job: Job) -> None:
        self.recent.append(time.monotonic() - job.submitted)
