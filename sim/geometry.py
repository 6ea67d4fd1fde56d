"""Plane geometry the scene's objects and fixtures share (no MuJoCo, no world state)."""

from __future__ import annotations

import math


def square_footprint(cx: float, cy: float, half: float, yaw: float) -> list[tuple[float, float]]:
    """The corners of a square of half side ``half`` at (cx, cy) turned by ``yaw``."""
    if yaw == 0.0:  # the fingers' and the walls' case: cos and sin without the calls
        c, s = 1.0, math.copysign(0.0, yaw)  # (sin(-0.0) is -0.0)
    else:
        c, s = math.cos(yaw), math.sin(yaw)
    n = -half
    return [
        (cx + c * half - s * half, cy + s * half + c * half),
        (cx + c * n - s * half, cy + s * n + c * half),
        (cx + c * n - s * n, cy + s * n + c * n),
        (cx + c * half - s * n, cy + s * half + c * n),
    ]
