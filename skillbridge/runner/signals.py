"""SIGTERM during a run: the same clean shutdown as Ctrl-C (the episode is closed as
incomplete), installed only where a signal handler can be (the main thread)."""

from __future__ import annotations

import signal
import threading
from typing import Any


class Interrupted(KeyboardInterrupt):
    """SIGTERM, turned into the same clean shutdown as Ctrl-C."""


def install_sigterm() -> Any:
    """Raise :class:`Interrupted` on SIGTERM; returns the handler to restore (None: none
    was installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: object) -> None:
        raise Interrupted()

    try:
        return signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):
        return None


def restore_sigterm(old: Any) -> None:
    if old is None or threading.current_thread() is not threading.main_thread():
        return
    try:
        signal.signal(signal.SIGTERM, old)
    except (ValueError, OSError):
        pass
