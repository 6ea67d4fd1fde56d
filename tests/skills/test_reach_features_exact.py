"""``reach_features`` on Python floats with its minima written out (issue 25, bridge speed)
gives the same bits as the plain form on the scene's numpy arrays and ``min()``: random
points, the workspace's bounds, zeros of both signs, infinities and NaN."""

from __future__ import annotations

import math
import random

import numpy as np

from sim import scene
from skills.success_model import _BASE, reach_features


def _plain(x: float, y: float) -> list[float]:
    r = math.hypot(x - _BASE[0], y - _BASE[1])
    lo, hi = scene.WORKSPACE_LOW, scene.WORKSPACE_HIGH
    box = min(x - lo[0], hi[0] - x, y - lo[1], hi[1] - y)
    return [r, min(box, 0.1), min(0.70 - r, 0.1)]


def test_reach_features_are_the_plain_ones_bit_for_bit():
    rng = random.Random(25)
    lo, hi = scene.WORKSPACE_LOW.tolist(), scene.WORKSPACE_HIGH.tolist()
    special = [math.nan, math.inf, -math.inf, 0.0, -0.0, lo[0], hi[0], lo[1], hi[1], 0.28]
    for _ in range(20000):
        x = rng.choice(special) if rng.random() < 0.15 else rng.uniform(-1.0, 1.0)
        y = rng.choice(special) if rng.random() < 0.15 else rng.uniform(-1.0, 1.0)
        got = np.asarray(reach_features(x, y), dtype=np.float64)
        want = np.asarray(_plain(x, y), dtype=np.float64)
        assert got.tobytes() == want.tobytes(), (x, y)
