"""The one error type the CLI turns into a one-line message and a non-zero exit, and the
helpers that make untrusted text safe to print.

Text from users, models and received files reaches the terminal through rich: rich reads
``[...]`` as markup (``[/x]`` crashes it, ``[x, y]`` silently vanishes) and a terminal obeys
escape sequences (``\\x1b]0;...`` retitles the window, ``\\x1b[2J`` clears it). :func:`safe`
makes any such text inert before it is interpolated into a rich format string.
"""

from __future__ import annotations

import re

# C0/C1 controls, DEL, and the bidirectional overrides that can reorder what is displayed
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class UserError(Exception):
    """Bad input from the user: printed as one line, exit code ``code``, never a traceback."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def plain(text: object) -> str:
    """``text`` with every control character written repr-style (``\\x1b``, ``\\n``), so it
    prints as one inert line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def safe(text: object) -> str:
    """``text`` made inert for a rich format string: control characters escaped and markup
    brackets escaped (so ``[x, y]`` prints as itself)."""
    from rich.markup import escape

    return escape(plain(text))


def silence(stream=None) -> None:
    """Point the file descriptor of ``stream`` (stdout by default) at /dev/null.

    Called when the reader of a pipe went away (``skillbridge run ... | head -1``): the run
    must go on to finish and complete its episode, with nothing more to print there, and
    Python must not complain about a broken pipe when it flushes at exit."""
    import os
    import sys

    stream = stream if stream is not None else sys.stdout
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (tests capture output): nothing to redirect


def console(**kw):
    """A rich Console that survives a closed pipe: rich's default answer to EPIPE is
    ``SystemExit(1)``, which aborted ``run ... | head -1`` at step 0."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            silence(self.file)

    return _Console(**kw)


def echo(text: str) -> None:
    """``typer.echo`` to stdout, ignoring a reader that went away (see :func:`silence`)."""
    import typer

    try:
        typer.echo(text)
    except BrokenPipeError:
        silence()
