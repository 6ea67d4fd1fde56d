"""The objects a scene holds, as data: kinds (cube, cylinder, sphere), their specs and the
object sets of the scenes.

Nothing outside this package should write down an object's size: ask its spec
(:func:`spec`) for its height, footprint or width across the fingers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sim.objects.base import ObjectSpec
from sim.objects.cube import Cube
from sim.objects.cylinder import Cylinder
from sim.objects.registry import KINDS, from_dict, register_kind, to_dict
from sim.objects.sphere import Sphere

__all__ = [
    "KINDS",
    "MIXED_OBJECTS",
    "TABLETOP_OBJECTS",
    "Cube",
    "Cylinder",
    "ObjectSpec",
    "Sphere",
    "defined",
    "from_dict",
    "register_kind",
    "register_object",
    "spec",
    "to_dict",
]

#: The tabletop's four 4 cm cubes, by colour (the articulated scene holds the same four).
TABLETOP_OBJECTS: tuple[ObjectSpec, ...] = (
    Cube(name="red_block", color="red", rgba=(0.85, 0.12, 0.12, 1.0)),
    Cube(name="green_block", color="green", rgba=(0.12, 0.7, 0.2, 1.0)),
    Cube(name="blue_block", color="blue", rgba=(0.12, 0.3, 0.9, 1.0)),
    Cube(name="yellow_block", color="yellow", rgba=(0.95, 0.82, 0.1, 1.0)),
)

#: The mixed scene's objects: a 4 cm cube, a 5 cm cube, an upright cylinder and a ball, one
#: of each colour. Each takes the row of the tabletop's object of its colour (the scene's
#: order; ``sim.scenes.row``), so the skills' observation keeps its shape and meaning.
MIXED_OBJECTS: tuple[ObjectSpec, ...] = (
    TABLETOP_OBJECTS[0],
    Cube(name="green_big_block", color="green", rgba=(0.12, 0.7, 0.2, 1.0), half=0.025, mass=0.08),
    Cylinder(
        name="blue_cylinder",
        color="blue",
        rgba=(0.12, 0.3, 0.9, 1.0),
        radius=0.02,
        half_length=0.02,
    ),
    Sphere(name="yellow_ball", color="yellow", rgba=(0.95, 0.82, 0.1, 1.0), radius=0.02),
)

_BY_NAME: dict[str, ObjectSpec] = {o.name: o for o in (*TABLETOP_OBJECTS, *MIXED_OBJECTS)}


def register_object(obj: ObjectSpec) -> ObjectSpec:
    """Make ``obj`` known by its name (to :func:`spec`); ValueError where another object has
    that name already."""
    have = _BY_NAME.get(obj.name)
    if have is not None and have != obj:
        raise ValueError(f"an object called {obj.name!r} is defined already: {have}")
    _BY_NAME[obj.name] = obj
    return obj


@contextmanager
def defined(*objs: ObjectSpec) -> Iterator[None]:
    """Objects known only inside the block (a test's, a tool's own scene)."""
    added = [o for o in objs if o.name not in _BY_NAME]
    for o in objs:
        register_object(o)
    try:
        yield
    finally:
        for o in added:
            _BY_NAME.pop(o.name, None)


def spec(name: str) -> ObjectSpec:
    """The spec of the object called ``name``; KeyError naming the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no object {name!r}; known: {', '.join(_BY_NAME)}") from None
