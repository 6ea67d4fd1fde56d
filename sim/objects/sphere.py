"""A ball: round from every side. Nothing can stand on it, and it rolls: a push has to stop
it where it was asked to go, and let go off-centre it does not stay put."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sim.objects.base import ObjectSpec
from sim.objects.registry import register_kind
from sim.objects.round import circle_footprint


@register_kind
@dataclass(frozen=True)
class Sphere(ObjectSpec):
    radius: float = 0.022

    kind: ClassVar[str] = "sphere"
    kind_words: ClassVar[tuple[str, ...]] = ("sphere", "ball")
    geom_type: ClassVar[str] = "sphere"
    stackable: ClassVar[bool] = False
    rolls: ClassVar[bool] = True

    @property
    def geom_size(self) -> tuple[float, ...]:
        return (self.radius,)

    @property
    def half_height(self) -> float:
        return self.radius

    @property
    def horizontal_radius(self) -> float:
        return self.radius

    def footprint(self, x: float, y: float, yaw: float) -> list[tuple[float, float]]:
        return circle_footprint(x, y, self.radius)

    def width_across(self, yaw: float) -> float:
        return 2.0 * self.radius
