"""Scenes by name, in the order they were registered (the first is the default)."""

from __future__ import annotations

from sim.scenes.base import SceneSpec

SCENES: dict[str, SceneSpec] = {}


def register_scene(spec: SceneSpec) -> SceneSpec:
    """Make ``spec`` selectable by its name; ValueError where another scene has it."""
    have = SCENES.get(spec.name)
    if have is not None and have != spec:
        raise ValueError(f"a scene called {spec.name!r} is registered already")
    SCENES[spec.name] = spec
    return spec


def get(name: str) -> SceneSpec:
    """The scene called ``name``; ValueError naming the known ones."""
    s = SCENES.get(name)
    if s is None:
        raise ValueError(f"unknown scene {name!r}; known: {list(SCENES)}")
    return s
