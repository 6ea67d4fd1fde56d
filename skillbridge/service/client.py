"""A small client of ``skillbridge serve`` (httpx), and a way to start a real server.

Why in the package: other programs (the tests, ``scripts/bench_serve.py``, a lab's own
script) drive the robot through the same few calls; the server-sent events are read by
:func:`iter_sse`, a parser of the ``text/event-stream`` format (event, data, id fields;
blank line ends an event), so a caller gets each event as the JSON document it carries.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx


def iter_sse(lines: Iterator[str]) -> Iterator[tuple[str, dict]]:
    """``(event, data)`` of each event in ``lines`` (data parsed as JSON)."""
    event, data = "message", list[str]()
    for line in lines:
        if line == "":
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", list[str]()
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))


class Client:
    """The service at ``base`` (``http://127.0.0.1:8000``), with an optional bearer token."""

    def __init__(self, base: str, token: str | None = None, timeout: float = 60.0) -> None:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base, headers=headers, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def wait_ready(self, timeout: float = 600.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                h = self.http.get("/health").json()
                if h["ready"] == h["workers"]:
                    return h
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("the service did not get ready")
            time.sleep(0.5)

    def session(self, **options: Any) -> str:
        r = self.http.post("/sessions", json=options)
        r.raise_for_status()
        return str(r.json()["id"])

    def say(self, sid: str, kind: str, text: str = "") -> httpx.Response:
        return self.http.post(f"/sessions/{sid}/messages", json={"kind": kind, "text": text})

    def events(
        self, sid: str, *, after: int = 0, once: bool = True, frames: bool = True
    ) -> Iterator[tuple[str, dict]]:
        """The session's events from ``after`` on (until its job ends, with ``once``)."""
        params: dict[str, str | int] = {
            "after": after,
            "once": str(once).lower(),
            "frames": str(frames).lower(),
        }
        with self.http.stream("GET", f"/sessions/{sid}/events", params=params, timeout=None) as r:
            r.raise_for_status()
            yield from iter_sse(r.iter_lines())


@contextlib.contextmanager
def running_server(
    runs: Path, *args: str, log: Path | None = None, timeout: float = 600.0
) -> Iterator[str]:
    """A real ``skillbridge serve`` on a free 127.0.0.1 port (a subprocess); yields its base
    URL once its workers are ready, and stops it afterwards."""
    runs = Path(runs)
    runs.mkdir(parents=True, exist_ok=True)
    ready = runs / ".ready"
    ready.unlink(missing_ok=True)
    out = open(log, "wb") if log is not None else subprocess.DEVNULL
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    cmd = [sys.executable, "-m", "skillbridge.cli", "serve", "--port", "0", "--runs", str(runs)]
    proc = subprocess.Popen(
        [*cmd, "--ready-file", str(ready), *args], stdout=out, stderr=subprocess.STDOUT, env=env
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited with {proc.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError("serve did not start")
            time.sleep(0.1)
        host, port = ready.read_text().split()
        base = f"http://{host}:{port}"
        c = Client(base)
        try:
            c.wait_ready(max(1.0, deadline - time.monotonic()))
        finally:
            c.close()
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log is not None and hasattr(out, "close"):
            out.close()
