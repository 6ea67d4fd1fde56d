"""The kinds of object a scene can hold, by their word, and specs built from plain data.

A new kind is one module with an :class:`~sim.objects.base.ObjectSpec` subclass decorated
with :func:`register_kind`, imported by ``sim/objects/__init__.py``; object sets can then
name it in data (``{"kind": "sphere", "name": "red_ball", ...}``) as the built-in ones do.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from sim.objects.base import ObjectSpec

K = TypeVar("K", bound=type[ObjectSpec])

#: Kind word -> spec class.
KINDS: dict[str, type[ObjectSpec]] = {}


def register_kind(cls: K) -> K:
    """Make ``cls`` a kind that object sets can name (by ``cls.kind``)."""
    kind = getattr(cls, "kind", None)
    if not isinstance(kind, str) or not kind.isidentifier():
        raise ValueError(f"{cls.__name__}: a kind needs a word (kind = 'ball')")
    if kind in KINDS and KINDS[kind] is not cls:
        raise ValueError(f"kind {kind!r} is registered already (by {KINDS[kind].__name__})")
    KINDS[kind] = cls
    return cls


def from_dict(data: dict[str, Any]) -> ObjectSpec:
    """A spec from plain data (a YAML or JSON object set's entry): ``kind`` picks the class,
    the other keys are its fields. ValueError, one line, for an unknown kind or field."""
    if not isinstance(data, dict):
        raise ValueError(f"an object must be a mapping, got {type(data).__name__}")
    kind = data.get("kind")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown object kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    fields = {f.name for f in dataclasses.fields(cls)}
    extra = sorted(set(data) - fields - {"kind"})
    if extra:
        raise ValueError(f"{kind} {data.get('name')!r}: unknown field(s) {', '.join(extra)}")
    args: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "kind"
    }
    try:
        return cls(**args)
    except TypeError as e:  # a required field missing
        raise ValueError(f"{kind} {data.get('name')!r}: {e}") from None


def to_dict(spec: ObjectSpec) -> dict[str, Any]:
    """The plain data :func:`from_dict` reads back to an equal spec."""
    out: dict[str, Any] = {"kind": spec.kind}
    for f in dataclasses.fields(spec):
        v = getattr(spec, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out
