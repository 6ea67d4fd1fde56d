"""A Ray cluster for ``eval --ray [ADDRESS]`` and ``train --seeds ... --ray [ADDRESS]``:
Ray present, the address reachable, a local cluster started when no ADDRESS is given.

With no ADDRESS a local cluster is started (``--workers`` CPUs) and stopped at the end; with
an ADDRESS (``ray://host:10001``, ``host:6379`` or ``auto``) the command connects to that
cluster, whose nodes need skillbridge installed (``pip install 'skillbridge[ray]'``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from skillbridge.errors import UserError

LOCAL = "local"
#: Object store of a local cluster: records are small, 100 MB is plenty (Ray's default takes
#: 30 % of the machine's memory).
LOCAL_OBJECT_STORE = 100 * 1024 * 1024


def ray_module():
    try:
        import ray
    except ImportError:
        raise UserError("eval --ray needs Ray: pip install 'skillbridge[ray]'", 2) from None
    return ray


def rewrite_args(args: list[str]) -> list[str]:
    """``--ray`` given without an ADDRESS (last, or followed by an option) means a local
    cluster: ``--ray=local``. (click cannot take an option whose value is optional.)"""
    out = list(args)
    for i, a in enumerate(out):
        if a == "--":
            break
        if a == "--ray" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = f"--ray={LOCAL}"
    return out


def check(address: str) -> None:
    """``eval --ray [ADDRESS]`` before any work: Ray installed, an ADDRESS reachable (a
    cluster that is not there is one line now, not minutes of Ray's retries later)."""
    ray_module()
    if not address or address.startswith("-"):
        raise UserError(f"--ray {address!r}: give a cluster address or nothing", 2)
    if address in (LOCAL, "auto"):
        return
    import socket

    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--ray {address}: give HOST:PORT or ray://HOST:PORT", 2)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise UserError(
            f"cannot reach the Ray cluster at {address}: {e.strerror or e}", 2
        ) from None


def command_class():
    """A typer command class whose parser accepts a bare ``--ray``."""
    from typer.core import TyperCommand

    class RayOptionalCommand(TyperCommand):
        def parse_args(self, ctx, args):
            return super().parse_args(ctx, rewrite_args(args))

    return RayOptionalCommand


@contextlib.contextmanager
def _python_sigterm() -> Iterator[None]:
    """Keep the SIGTERM handler Python had before ``ray.init``. Ray's core worker installs
    its own crash handler for SIGTERM in the driver, which prints a stack dump and aborts
    (exit 134): the eval's handler, which writes the partial report and exits 130, would
    never run. Python still holds its handler, so setting it again restores it."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


#: Words in Ray's errors that say the cluster refused our credentials.
AUTH_MARKERS = ("invalidauthtoken", "unauthenticated", "authentication token")
AUTH_HINT = "give the cluster's token in RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH"


@contextlib.contextmanager
def _client_details() -> Iterator[list[str]]:
    """What the Ray client heard from a ``ray://`` server while connecting. It retries
    until "ray client connection timeout" and keeps the server's answer (an invalid token,
    say) in a debug log line only; this catches those lines for the error message."""
    import logging

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            msg = record.getMessage()
            if msg.startswith("Received when checking init:"):
                seen.append(msg.split(":", 1)[1].strip())

    log = logging.getLogger("ray.util.client.worker")
    handler, level, propagate = Keep(logging.DEBUG), log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False  # the retries' debug lines stay off the terminal
    try:
        yield seen
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def failure_cause(e: BaseException, heard: list[str]) -> str:
    """One line saying why connecting failed: a refused token first (named as such, with
    what to do), else the innermost error's last line (Ray wraps the real cause in a
    generic "Failed to connect to Ray cluster"), else the outer message."""
    texts: list[str] = []
    c: BaseException | None = e
    while c is not None and len(texts) < 10:
        texts.append(str(c))
        c = c.__cause__ or c.__context__
    for text in texts + heard:
        for line in text.splitlines():
            low = line.lower()
            if any(m in low for m in AUTH_MARKERS):
                found = line.strip()
                at = min(low.strip().find(m) for m in AUTH_MARKERS if m in low)
                if found.startswith("[") or len(found) > 160:  # a log line: its message
                    found = found[at:]
                why = found.split(". ")[0][:160].rstrip(").")
                return f"the cluster refused the token ({why}); {AUTH_HINT}"
    outer = (texts[0].strip().splitlines() or [type(e).__name__])[0]
    inner = [t for t in texts[1:] if t.strip()]
    if inner:
        cause = f"{outer}: {inner[-1].strip().splitlines()[-1].strip()}"
    elif heard:
        cause = f"{outer}: {heard[-1]}"
    else:
        cause = outer
    return cause[:300]


def start(address: str, workers: int) -> bool:
    """Connect to the cluster at ``address`` or start a local one; True if it was started
    here (and is to be stopped at the end)."""
    ray = ray_module()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        return False
    common: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": "warning",
    }
    heard: list[str] = []
    try:
        with _python_sigterm(), _client_details() as heard, _stderr_into(heard):
            if address == LOCAL:  # our own cluster: Ray's notes about its setup are noise
                common["logging_level"] = "error"
                ray.init(  # "local": a new cluster, never one `ray start` left running
                    address="local",
                    num_cpus=workers,
                    object_store_memory=LOCAL_OBJECT_STORE,
                    **common,
                )
                return True
            ray.init(address=address, **common)
    except Exception as e:  # noqa: BLE001 - Ray's errors are long; the user gets one line
        local = address == LOCAL
        what = "start a local Ray cluster" if local else f"connect to the Ray cluster at {address}"
        raise UserError(f"cannot {what}: {failure_cause(e, heard)}", 2) from None
    return False


@contextlib.contextmanager
def _stderr_into(lines: list[str]) -> Iterator[None]:
    """The process's stderr (file descriptor 2) caught while Ray connects: its C++ client
    logs each failed attempt there (a refused token: a line a second, for as long as it
    retries). The lines are kept for :func:`failure_cause`; the user gets one of ours."""
    import sys
    import tempfile

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real stderr to catch
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read(1 << 20).decode("utf-8", "replace")
            lines[:0] = [x for x in text.splitlines() if x.strip()][-50:]
