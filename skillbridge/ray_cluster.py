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
    try:
        with _python_sigterm():
            if address == LOCAL:  # our own cluster: Ray's notes about its setup are noise
                common["logging_level"] = "error"
                ray.init(num_cpus=workers, object_store_memory=LOCAL_OBJECT_STORE, **common)
                return True
            ray.init(address=address, **common)
    except Exception as e:  # noqa: BLE001 - Ray's errors are long; the user gets one line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        where = "a local Ray cluster" if address == LOCAL else f"the Ray cluster at {address}"
        raise UserError(f"cannot start {where}: {first}", 2) from None
    return False
