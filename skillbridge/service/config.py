"""What a service is started with, and the checks that make it safe by default.

Why: a server that moves a (simulated) arm and writes files must not be reachable by anyone
on the network by accident. It binds the loopback address unless told otherwise, and it
refuses to bind anywhere else without a bearer token; every request is bounded in size and
rate, and the number of sessions, workers and waiting tasks is bounded too.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from skillbridge.errors import UserError

#: Frame formats a session may ask for (the media type of the base64 data).
FRAME_FORMATS = {"jpeg": "image/jpeg", "png": "image/png"}
#: Frames per second of simulated time a session may ask for (0: no frames).
MAX_FPS = 25.0
#: A token shorter than this is a mistake, not a secret.
MIN_TOKEN = 16


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class ServiceConfig:
    """A server's settings; :meth:`check` raises a one-line :class:`UserError` for bad ones."""

    host: str = "127.0.0.1"
    port: int = 8000
    #: bearer token every request but the page's static files must carry (None: none)
    token: str | None = None
    #: the planner of every session (``--llm``: ``rules`` keeps a CPU server fast)
    llm: str | None = None
    runs: Path = Path("runs")
    #: worker processes (each runs one task at a time) and tasks waiting at most
    workers: int = 2
    queue: int = 16
    #: sessions open at most; a session idle longer than ``idle_s`` is closed
    max_sessions: int = 64
    idle_s: float = 1800.0
    #: wall seconds a task may run (then it is stopped, and its worker replaced)
    task_timeout_s: float = 300.0
    #: how long the robot waits for the answer to its question
    answer_wait_s: float = 120.0
    #: request body bytes at most, and requests per client per second (burst ``rate_burst``)
    max_body: int = 64 * 1024
    rate: float = 20.0
    rate_burst: int = 60
    policy_source: str = "pretrained"
    extra: dict = field(default_factory=dict)

    def check(self) -> ServiceConfig:
        if not 0 < self.port < 65536 and self.port != 0:
            raise UserError(f"--port must be between 1 and 65535, not {self.port}", 2)
        if self.token is not None and len(self.token) < MIN_TOKEN:
            raise UserError(f"--token must be at least {MIN_TOKEN} characters", 2)
        if not is_loopback(self.host) and not self.token:
            raise UserError(
                f"binding {self.host} (not loopback) needs --token: anyone who reaches the "
                "port could move the robot",
                2,
            )
        for name, lo, hi in (
            ("workers", 1, 64),
            ("queue", 0, 10_000),
            ("max_sessions", 1, 100_000),
        ):
            v = getattr(self, name)
            if not lo <= v <= hi:
                raise UserError(f"--{name.replace('_', '-')} must be in [{lo}, {hi}], not {v}", 2)
        if not self.task_timeout_s > 0:
            raise UserError("--task-timeout must be > 0", 2)
        if self.rate <= 0 or self.rate_burst < 1:
            raise UserError("--rate must be > 0", 2)
        return self
