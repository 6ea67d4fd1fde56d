"""A cube: a box with equal half sides; what every scene had before kinds existed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from sim.geometry import square_footprint
from sim.objects.base import ObjectSpec
from sim.objects.registry import register_kind


@register_kind
@dataclass(frozen=True)
class Cube(ObjectSpec):
    #: Half the edge (m): 0.02 is the 4 cm cube of the tabletop.
    half: float = 0.02

    kind: ClassVar[str] = "cube"
    kind_words: ClassVar[tuple[str, ...]] = ("cube", "block", "box")
    geom_type: ClassVar[str] = "box"

    @property
    def geom_size(self) -> tuple[float, ...]:
        return (self.half, self.half, self.half)

    @property
    def half_height(self) -> float:
        return self.half

    @property
    def horizontal_radius(self) -> float:
        return self.half * math.sqrt(2.0)

    def footprint(self, x: float, y: float, yaw: float) -> list[tuple[float, float]]:
        return square_footprint(x, y, self.half, yaw)

    def width_across(self, yaw: float) -> float:
        """Fingers closing across a square turned by ``yaw`` stop at its projected width:
        ``2 half (|cos| + |sin|)`` of the yaw folded into a quarter turn."""
        a = abs(yaw) % (math.pi / 2)
        phi = min(a, math.pi / 2 - a)
        return 2.0 * self.half * (math.cos(phi) + math.sin(phi))
