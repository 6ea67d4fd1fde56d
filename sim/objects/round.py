"""What the round kinds share: a circular footprint, the same from every yaw."""

from __future__ import annotations

import math

#: Corners of the polygon that stands for a round footprint. The polygon is drawn around
#: the circle (its edges touch it), so a check that the footprint is clear of a wall is
#: never more lenient than the true outline.
ROUND_SIDES = 16


def circle_footprint(x: float, y: float, radius: float) -> list[tuple[float, float]]:
    """A regular polygon of ``ROUND_SIDES`` corners circumscribing the circle."""
    r = radius / math.cos(math.pi / ROUND_SIDES)
    step = 2.0 * math.pi / ROUND_SIDES
    return [(x + r * math.cos(k * step), y + r * math.sin(k * step)) for k in range(ROUND_SIDES)]
