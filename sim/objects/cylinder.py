"""An upright cylinder: round in plan (it does not turn with yaw), flat on top, so it stands
and carries another object; it rolls only once knocked over, which counts as fallen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sim.objects.base import ObjectSpec
from sim.objects.registry import register_kind
from sim.objects.round import circle_footprint


@register_kind
@dataclass(frozen=True)
class Cylinder(ObjectSpec):
    radius: float = 0.02
    #: Half its height (m).
    half_length: float = 0.03

    kind: ClassVar[str] = "cylinder"
    kind_words: ClassVar[tuple[str, ...]] = ("cylinder", "can", "tube")
    geom_type: ClassVar[str] = "cylinder"

    @property
    def geom_size(self) -> tuple[float, ...]:
        return (self.radius, self.half_length)

    @property
    def half_height(self) -> float:
        return self.half_length

    @property
    def horizontal_radius(self) -> float:
        return self.radius

    def footprint(self, x: float, y: float, yaw: float) -> list[tuple[float, float]]:
        return circle_footprint(x, y, self.radius)

    def width_across(self, yaw: float) -> float:
        return 2.0 * self.radius
