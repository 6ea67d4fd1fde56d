"""The skill registry: the single catalogue the bridge, the planner and the CLI read.

A skill is one module plus one registration: :func:`register` (``skills/__init__.py``
registers the built-in skills, in catalogue order; a plugin or a test registers its own).
This module imports no skill, so a skill may look another up here at run time (push's
repair carries a cube with pick and place) without an import circle.
"""

from __future__ import annotations

from typing import TypeVar

from skills.base import Skill

REGISTRY: dict[str, Skill] = {}

S = TypeVar("S", bound=type[Skill])


def register(cls: S) -> S:
    """Add the skill class ``cls`` (instantiated once) under its ``name``; usable as a
    class decorator. Registering a second skill under a name already taken is an error;
    the same class again is a no-op."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__name__} has no skill name")
    known = REGISTRY.get(name)
    if known is not None and type(known) is not cls:
        raise ValueError(f"skill {name!r} is already registered by {type(known).__name__}")
    if known is None:
        REGISTRY[name] = cls()
    return cls


def unregister(name: str) -> None:
    """Remove skill ``name`` (a test's or a plugin's own skill, when it is done)."""
    REGISTRY.pop(name, None)


def get(name: str) -> Skill:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown skill {name!r}; known: {', '.join(REGISTRY)}") from None


def names() -> list[str]:
    return list(REGISTRY)


def catalogue() -> list[dict]:
    """Declarations of every skill as plain data (for prompts, schema and the CLI)."""
    return [s.catalogue_entry() for s in REGISTRY.values()]
