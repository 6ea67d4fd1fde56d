"""What every object in a scene is: a record of kind, size, colour, mass and friction, and
the geometry other code asks of it.

A scene's objects are data (:class:`ObjectSpec` records). Code that needs an object's
geometry (how high its centre rests above what it stands on, its footprint on the table,
how wide it is across the fingers, whether it can carry another object or rolls away) asks
the spec, so that a sampler, a precondition or a scripted expert does not assume one shape
or size. A kind is one subclass (:mod:`sim.objects.cube`, ``cylinder``, ``sphere``) and one
registration (:func:`sim.objects.register_kind`); its MJCF body is generated from the spec
(:meth:`ObjectSpec.body_xml`), so the model and the geometry the code reasons with cannot
drift apart (``tests/sim/test_objects.py`` compiles both and compares).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

#: Contact parameters every object shares (soft enough for stable stacking at 2 ms steps).
CONDIM = 4
SOLREF = (0.005, 1.0)
SOLIMP = (0.95, 0.99, 0.001)


def _num(v: float) -> str:
    """A number as MJCF writes it: the shortest text that reads back as the same double."""
    return repr(float(v)).removesuffix(".0") if float(v).is_integer() else repr(float(v))


@dataclass(frozen=True)
class ObjectSpec(ABC):
    """One object: its scene name (``red_block``), colour word, RGBA, mass (kg) and sliding,
    torsional and rolling friction. Subclasses add the size and the kind's geometry."""

    name: str
    color: str
    rgba: tuple[float, float, float, float]
    mass: float = 0.05
    friction: tuple[float, float, float] = (1.2, 0.02, 0.001)

    #: The kind's word (``"cube"``): what people call it and what specs name in data.
    kind: ClassVar[str]
    #: Words people use for the kind (the planner's lexicon reads them).
    kind_words: ClassVar[tuple[str, ...]] = ()
    #: The MJCF geom type that renders and collides this kind.
    geom_type: ClassVar[str]

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").isalnum():
            raise ValueError(f"object name {self.name!r}: letters, digits and _ only")
        if len(self.rgba) != 4 or not all(0.0 <= c <= 1.0 for c in self.rgba):
            raise ValueError(f"{self.name}: rgba must be four values in [0, 1]")
        if not (math.isfinite(self.mass) and self.mass > 0):
            raise ValueError(f"{self.name}: mass must be positive, got {self.mass}")
        if len(self.friction) != 3 or not all(math.isfinite(f) and f >= 0 for f in self.friction):
            raise ValueError(f"{self.name}: friction must be three values >= 0")
        for v in self.geom_size:
            if not (math.isfinite(v) and 0.005 <= v <= 0.1):
                raise ValueError(f"{self.name}: sizes must be 5 mm to 10 cm, got {v}")

    # ------------------------------------------------------------------ geometry
    @property
    @abstractmethod
    def geom_size(self) -> tuple[float, ...]:
        """The MJCF geom's ``size`` (half sizes or radii, m)."""

    @property
    @abstractmethod
    def half_height(self) -> float:
        """Centre to the bottom (and to the top: every kind here is symmetric), m: the
        centre's height above whatever the object rests on."""

    @property
    @abstractmethod
    def horizontal_radius(self) -> float:
        """The farthest any point of the footprint lies from the centre, whatever the yaw."""

    @abstractmethod
    def footprint(self, x: float, y: float, yaw: float) -> list[tuple[float, float]]:
        """The outline of the object on the table at (x, y) turned by ``yaw``, as a convex
        polygon (a round outline as a polygon around it)."""

    @abstractmethod
    def width_across(self, yaw: float) -> float:
        """How far apart the closed fingers end up holding it, when they close across it
        along an axis at ``yaw`` to the object's own (m)."""

    #: Whether another object can stand on it (nothing rests on a sphere).
    stackable: ClassVar[bool] = True
    #: Whether it rolls when pushed or let go off-centre (a push must stop it where asked).
    rolls: ClassVar[bool] = False

    @property
    def height(self) -> float:
        return 2.0 * self.half_height

    @property
    def half_width(self) -> float:
        """Half the gap the fingers keep holding it square (a cube's half side, a round
        object's radius)."""
        return self.width_across(0.0) / 2.0

    def top(self, z: float) -> float:
        """The height of its top with its centre at ``z``."""
        return z + self.half_height

    # ------------------------------------------------------------------ MJCF
    def body_xml(self, pos: tuple[float, float, float] | None = None) -> str:
        """The object's free body, as the scene file includes it: ``<name>`` body, a
        ``<name>_joint`` free joint and one ``<name>_geom`` geom."""
        x, y, z = pos if pos is not None else (0.0, 0.0, self.half_height)
        geom = {
            "name": f"{self.name}_geom",
            "type": self.geom_type,
            "size": " ".join(_num(v) for v in self.geom_size),
            "mass": _num(self.mass),
            "friction": " ".join(_num(v) for v in self.friction),
            "condim": str(CONDIM),
            "solref": " ".join(_num(v) for v in SOLREF),
            "solimp": " ".join(_num(v) for v in SOLIMP),
            "rgba": " ".join(_num(v) for v in self.rgba),
        }
        attrs = " ".join(f'{k}="{v}"' for k, v in geom.items())
        return (
            f'<body name="{self.name}" pos="{_num(x)} {_num(y)} {_num(z)}">'
            f'<freejoint name="{self.name}_joint"/><geom {attrs}/></body>'
        )
