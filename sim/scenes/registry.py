"""Scenes by name, in the order they were registered (the first is the default)."""

from __future__ import annotations

from sim.scenes.base import SceneSpec

SCENES: dict[str, SceneSpec] = {}
#: Each object's row in the observation (its place in its scene's object list), by name.
_ROWS: dict[str, int] = {}


def register_scene(spec: SceneSpec) -> SceneSpec:
    """Make ``spec`` selectable by its name; ValueError where another scene has it, or where
    one of its objects sits at another row than in a scene registered before (a skill binds
    an object to its row from the world alone, whatever the scene)."""
    have = SCENES.get(spec.name)
    if have is not None and have != spec:
        raise ValueError(f"a scene called {spec.name!r} is registered already")
    for i, o in enumerate(spec.objects):
        if _ROWS.get(o.name, i) != i:
            raise ValueError(
                f"scene {spec.name}: {o.name} is object {i} here but {_ROWS[o.name]} in "
                "another scene; an object keeps its place in every scene"
            )
    SCENES[spec.name] = spec
    for i, o in enumerate(spec.objects):
        _ROWS.setdefault(o.name, i)
    return spec


def object_names() -> tuple[str, ...]:
    """Every registered scene's objects, each once, in the order their scenes brought them
    (the tabletop's four first)."""
    return tuple(_ROWS)


def row(name: str) -> int:
    """Object ``name``'s row in the observation's object arrays, in any scene that holds it;
    ValueError for a name no scene holds."""
    try:
        return _ROWS[name]
    except KeyError:
        raise ValueError(f"no scene holds an object {name!r}") from None


def get(name: str) -> SceneSpec:
    """The scene called ``name``; ValueError naming the known ones."""
    s = SCENES.get(name)
    if s is None:
        raise ValueError(f"unknown scene {name!r}; known: {list(SCENES)}")
    return s
