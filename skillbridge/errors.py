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
