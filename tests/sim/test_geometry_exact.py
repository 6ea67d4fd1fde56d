"""The fast paths of the symbolic geometry answer exactly as the plain versions they
replaced (issue 25): ``polygons_overlap``'s bounding-box shortcut and ``free_spot``'s
nearest-first search, on random and on touching, NaN and crowded cases."""

from __future__ import annotations

import math
import random

import pytest

from sim import cubes
from sim.world import polygons_overlap, reachable_xy, square_footprint


def _overlap_reference(a, b) -> bool:
    """The separating-axis test alone, as it was."""
    for poly in (a, b):
        for i in range(len(poly)):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
            nx, ny = y0 - y1, x1 - x0
            pa = [nx * x + ny * y for x, y in a]
            pb = [nx * x + ny * y for x, y in b]
            eps = 1e-6 * math.hypot(nx, ny)
            if max(pa) <= min(pb) + eps or max(pb) <= min(pa) + eps:
                return False
    return True


def _polys(rng: random.Random):
    for _ in range(4000):
        a = square_footprint(
            rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), 0.02, rng.uniform(-3, 3)
        )
        k = rng.randrange(4)
        if k == 0:  # touching along x, axis-aligned: the tolerance decides
            b = square_footprint(0.04 + rng.choice([0.0, 1e-7, -1e-7, 1e-5]), 0.0, 0.02, 0.0)
            a = square_footprint(0.0, rng.uniform(-0.03, 0.03), 0.02, 0.0)
        elif k == 1:
            b = square_footprint(rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), 0.012, 0.0)
        elif k == 2:
            x, y = rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1)
            b = [(x, y), (x + 0.2, y), (x + 0.2, y + 0.005), (x, y + 0.005)]
        else:
            b = [(p[0] + rng.choice([0.0, 0.04]), p[1]) for p in a]
        yield a, b


def test_overlap_matches_the_plain_separating_axis_test():
    rng = random.Random(0)
    seen = set()
    for a, b in _polys(rng):
        want = _overlap_reference(a, b)
        assert polygons_overlap(a, b) is want and polygons_overlap(b, a) is want
        seen.add(want)
    assert seen == {True, False}


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_overlap_with_non_finite_corners_answers_as_before(bad: float):
    a = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (bad, 1.0)]
    for b in (
        [(5.0, 5.0), (6.0, 5.0), (6.0, 6.0), (5.0, 6.0)],
        [(0.2, 0.2), (0.4, 0.2), (0.4, 0.4)],
    ):
        assert polygons_overlap(a, b) is _overlap_reference(a, b)
        assert polygons_overlap(b, a) is _overlap_reference(b, a)


def _free_spot_reference(centre, radius, others, toward=None, band=None):
    """free_spot as it was: every candidate tested, then the nearest free one."""
    c = (float(centre[0]), float(centre[1]))
    rest = [(float(p[0]), float(p[1])) for p in others]

    def free(p):
        return reachable_xy(*p) and all(
            math.dist(p, q) >= cubes.SPOT_CLEAR
            and (band is None or abs(p[0] - q[0]) >= band[0] or abs(p[1] - q[1]) >= band[1])
            for q in rest
        )

    if free(c):
        return c
    inner = [
        (c[0] + r * math.cos(a), c[1] + r * math.sin(a))
        for r in cubes._RING_RADII
        if r <= radius - cubes.SPOT_MARGIN
        for a in cubes._ANGLES
    ]
    members = [q for q in rest if math.dist(q, c) <= radius]
    step = min(cubes.SPOT_CLEAR + 0.001, cubes.PUSH_BESIDE)
    beside = [
        (m[0] + step * math.cos(a), m[1] + step * math.sin(a))
        for m in members
        for a in cubes._ANGLES
    ]
    ref = c if toward is None else (float(toward[0]), float(toward[1]))
    for group in (inner, beside):
        ok = [p for p in group if free(p)]
        if ok:
            return min(ok, key=lambda p: (round(math.dist(p, ref), 9), p))
    return None


def test_free_spot_matches_the_exhaustive_search():
    rng = random.Random(1)
    kinds = set()
    for _ in range(3000):
        centre = (rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.15))
        radius = rng.choice([0.03, 0.045, 0.06])
        others = [
            (centre[0] + rng.uniform(-0.06, 0.06), centre[1] + rng.uniform(-0.06, 0.06))
            for _ in range(rng.randrange(6))
        ]
        toward = rng.choice([None, (rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3)), centre])
        band = rng.choice([None, cubes.RELEASE_BAND])
        want = _free_spot_reference(centre, radius, others, toward, band)
        assert cubes.free_spot(centre, radius, others, toward, band) == want
        kinds.add("none" if want is None else "centre" if want == centre else "moved")
    assert kinds == {"none", "centre", "moved"}


def test_free_spot_with_a_nan_cube_answers_as_before():
    others = [(0.0, 0.0), (float("nan"), 0.01)]
    for toward in (None, (0.05, 0.0), (float("nan"), 0.0)):
        got = cubes.free_spot((0.0, 0.0), 0.06, others, toward)
        want = _free_spot_reference((0.0, 0.0), 0.06, others, toward)
        assert got == want or (got is not None and want is not None and repr(got) == repr(want))


def _footprint_reference(cx, cy, half, yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return [
        (cx + c * dx - s * dy, cy + s * dx + c * dy)
        for dx, dy in ((half, half), (-half, half), (-half, -half), (half, -half))
    ]


def test_square_footprint_is_bit_for_bit_the_trigonometric_one():
    rng = random.Random(2)
    for _ in range(2000):
        args = (
            rng.choice([0.0, -0.0, rng.uniform(-0.3, 0.3)]),
            rng.choice([0.0, -0.0, rng.uniform(-0.3, 0.3)]),
            rng.choice([0.012, 0.02, 0.0]),
            rng.choice([0.0, -0.0, rng.uniform(-3.2, 3.2)]),
        )
        assert repr(square_footprint(*args)) == repr(_footprint_reference(*args))


def test_free_spot_remembers_by_exact_value():
    others = [(0.0, 0.0), (0.03, 0.0)]
    first = cubes.free_spot((0.0, 0.0), 0.06, others, (0.1, 0.0))
    again = cubes.free_spot((0.0, 0.0), 0.06, others, (0.1, 0.0))
    assert first == again == _free_spot_reference((0.0, 0.0), 0.06, others, (0.1, 0.0))
    # a free centre comes back as given, down to the sign of a zero
    assert repr(cubes.free_spot((-0.0, 0.1), 0.06, [])) == repr((-0.0, 0.1))
    assert repr(cubes.free_spot((0.0, 0.1), 0.06, [])) == repr((0.0, 0.1))
