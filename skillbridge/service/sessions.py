"""A session: one user's conversation with one robot, its event log and its world.

Why a session and not a request: a task runs for seconds to minutes, asks questions and
takes corrections, and the next task should start from the world the last one left. A
session owns what belongs to its user only: its scene options, the physics state it
continues from, its episodes, and an append-only log of events that any number of event
streams read (each from its own position, so a reconnecting page misses nothing that is
still kept). Frames are kept apart and only the last few: a stream joins live, and the
log stays bounded however long the session runs.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

#: Events (not frames) a session keeps; frames it keeps.
MAX_EVENTS = 4000
MAX_FRAMES_KEPT = 3
#: Episodes a session remembers (its own list; all stay on disk in the runs folder).
MAX_EPISODES = 200

IDLE, QUEUED, RUNNING, CLOSED = "idle", "queued", "running", "closed"
#: The event that ends a job of each kind: a task's result, a replay's end, a look's world.
END_EVENT = {"task": "done", "replay": "replay_end", "look": "scene"}


@dataclass
class Session:
    """A session's state; every method is safe to call from any thread."""

    id: str
    seed: int = 0
    cubes: Any = None
    fps: float = 5.0
    format: str = "jpeg"
    created: float = field(default_factory=time.time)
    state: str = IDLE
    job: Any = None
    job_kind: str | None = None
    #: the physics state the next task starts from (None: the seed's reset)
    start_state: list[float] | None = None
    episodes: list[str] = field(default_factory=list)
    tasks: int = 0
    last_active: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self._cv = threading.Condition()
        self._events: deque[dict] = deque(maxlen=MAX_EVENTS)
        self._frames: deque[dict] = deque(maxlen=MAX_FRAMES_KEPT)
        self._seq = 0

    # -------------------------------------------------------------- the log
    def emit(self, kind: str, data: dict | None = None) -> dict:
        with self._cv:
            self._seq += 1
            ev = {
                "seq": self._seq,
                "session": self.id,
                "kind": kind,
                "t": round(time.time(), 4),
                "data": data or {},
            }
            (self._frames if kind == "frame" else self._events).append(ev)
            self.last_active = time.monotonic()
            self._cv.notify_all()
        return ev

    def after(self, seq: int) -> list[dict]:
        """Events later than ``seq``, oldest first (frames among them)."""
        with self._cv:
            out = [e for e in self._events if e["seq"] > seq]
            out += [f for f in self._frames if f["seq"] > seq]
        out.sort(key=lambda e: e["seq"])
        return out

    def wait(self, seq: int, timeout: float) -> bool:
        """Block until an event later than ``seq`` exists (or the session closed)."""
        with self._cv:
            return self._cv.wait_for(
                lambda: self._seq > seq or self.state == CLOSED, timeout=timeout
            )

    @property
    def seq(self) -> int:
        with self._cv:
            return self._seq

    # -------------------------------------------------------------- a job's events
    def on_job(self, kind: str, data: dict) -> None:
        """An event of this session's job (called from a dispatcher thread)."""
        if kind == "done":
            result = data.get("result")
            with self._cv:
                if result is not None:
                    if data.get("final_state") is not None:
                        self.start_state = data["final_state"]
                    if result.get("episode"):
                        self.episodes = (self.episodes + [result["episode"]])[-MAX_EPISODES:]
                if self.state != CLOSED:
                    self.state = IDLE
                self.job = None
            data = {k: v for k, v in data.items() if k != "final_state"}
            self.emit(END_EVENT.get(self.job_kind or "task", "done"), data)
            return
        if kind == "failed":
            with self._cv:
                if self.state != CLOSED:
                    self.state = IDLE
                self.job = None
            self.emit("error", data)
            return
        if kind == "running":
            with self._cv:
                if self.state != CLOSED:
                    self.state = RUNNING
        self.emit(kind, data)

    def info(self) -> dict:
        with self._cv:
            return {
                "id": self.id,
                "state": self.state,
                "job": self.job_kind if self.job is not None else None,
                "seed": self.seed,
                "cubes": self.cubes,
                "fps": self.fps,
                "format": self.format,
                "tasks": self.tasks,
                "episodes": list(self.episodes),
                "events": self._seq,
                "created": self.created,
                "continues": self.start_state is not None,
            }


class Sessions:
    """All open sessions, bounded in number; idle ones are closed after ``idle_s``."""

    def __init__(self, limit: int = 64, idle_s: float = 1800.0) -> None:
        self.limit = limit
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._all: dict[str, Session] = {}

    def create(self, **options: Any) -> Session | None:
        """A new session, or None when ``limit`` are open."""
        self.reap()
        with self._lock:
            if len(self._all) >= self.limit:
                return None
            s = Session(id=secrets.token_urlsafe(9), **options)
            self._all[s.id] = s
        s.emit("session", {"id": s.id, "seed": s.seed, "cubes": s.cubes})
        return s

    def get(self, sid: str) -> Session | None:
        with self._lock:
            return self._all.get(sid)

    def remove(self, sid: str) -> Session | None:
        with self._lock:
            return self._all.pop(sid, None)

    def all(self) -> list[Session]:
        with self._lock:
            return list(self._all.values())

    def reap(self) -> list[Session]:
        now = time.monotonic()
        with self._lock:
            old = [
                s
                for s in self._all.values()
                if s.state == IDLE and now - s.last_active > self.idle_s
            ]
            for s in old:
                self._all.pop(s.id, None)
        for s in old:
            s.state = CLOSED
            s.emit("closed", {"why": "idle"})
        return old
