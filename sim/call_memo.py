"""Answers of pure functions of a world state, remembered for the length of one call.

The bridge asks the same questions about one world several times while it checks a step:
the push's goal point in its preconditions and again in its effect, the row of cubes a
push moves in its preconditions and again in the success predictor's features. Inside
:func:`scope` (``bridge.validate`` opens one per call) such an answer is computed once per
world object and arguments. Worlds are not changed in place (a step's effect is a new
world), and the scope holds every world it keyed on, so an id cannot be reused while the
scope lasts; outside a scope nothing is remembered. Arguments are keyed by their exact
bits (``key``), so 0.0 and -0.0 or two NaNs are never taken for one another.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

T = TypeVar("T")

_MEMO: ContextVar[dict[tuple[Any, ...], tuple[object, Any]] | None] = ContextVar(
    "skills_call_memo", default=None
)


@contextmanager
def scope() -> Iterator[None]:
    """Remember answers until the block ends (a nested scope shares the outer one)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


_NUMBER = (float, int)


def key(*values: Any) -> tuple[Any, ...]:
    """A hashable key of strings, None and numbers (floats by their bits; arrays and
    sequences of numbers as their float64 bits)."""
    out: list[Any] = []
    for v in values:
        if v is None or isinstance(v, str):
            out.append(v)
        elif isinstance(v, _NUMBER):
            out.append(array("d", (v,)).tobytes())
        else:
            try:  # each item converted as float() converts it
                bits = array("d", v).tobytes()
            except TypeError:  # (an item that is no number: as float() has it say)
                bits = array("d", [float(x) for x in v]).tobytes()
            out.append((len(v), bits))
    return tuple(out)


def remembered(kind: str, world: object, args: tuple[Any, ...], compute: Callable[[], T]) -> T:
    """``compute()``, or its earlier answer for the same ``kind``, world object and ``args``
    within the current scope."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    k = (kind, id(world), args)
    hit = memo.get(k)
    if hit is None:
        hit = memo[k] = (world, compute())  # (the world held: its id stays its own)
    return cast(T, hit[1])
