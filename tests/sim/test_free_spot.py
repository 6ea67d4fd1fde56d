"""``sim.cubes.free_spot`` answers as the heap search it replaced (issue 25, bridge
latency): the plain version below keys every candidate (its rounded distance, the point,
its place) and takes them off a heap until one is free; the fast one rounds only from the
first free candidate on. The layouts are random crowds in and around a region, with
candidates at equal distances (a ring about ``toward`` at the centre), packed regions
where only the spots beside a block are left, and none at all."""

from __future__ import annotations

import heapq
import math
import random

import pytest

from sim import cubes as C
from sim.world import reachable_xy


def _plain_free_spot(c, radius, rest, ref, band):
    """``sim.cubes._free_spot`` as it was: every candidate keyed, then a heap."""

    def free(p):
        for q in rest:
            if not math.dist(p, q) >= C.SPOT_CLEAR:
                return False
            if band is not None and not (
                abs(p[0] - q[0]) >= band[0] or abs(p[1] - q[1]) >= band[1]
            ):
                return False
        return reachable_xy(p[0], p[1])

    if free(c):
        return c
    inner = [
        (c[0] + dx, c[1] + dy)
        for r, ring in C._RING
        if r <= radius - C.SPOT_MARGIN
        for dx, dy in ring
    ]
    members = [q for q in rest if math.dist(q, c) <= radius]

    def key(p):
        return (round(math.dist(p, ref), 9), p)

    ordered = all(math.isfinite(v) for v in (*c, *ref, *(v for q in members for v in q)))
    for kind in ("inner", "beside"):
        group = inner if kind == "inner" else C._beside(members)
        if ordered:
            keyed = [(round(math.dist(p, ref), 9), p, i) for i, p in enumerate(group)]
            heapq.heapify(keyed)
            while keyed:
                p = heapq.heappop(keyed)[1]
                if free(p):
                    return p
            continue
        ok = [p for p in group if free(p)]
        if ok:
            return min(ok, key=key)
    return None


@pytest.mark.parametrize("seed", range(3))
def test_free_spot_is_the_heap_search(seed: int):
    rng = random.Random(seed)
    kinds = set()
    for _ in range(3000):
        c = (rng.uniform(-0.2, 0.2), rng.uniform(-0.3, 0.1))
        radius = rng.choice([0.03, 0.045, 0.06])
        n = rng.randrange(0, 9)
        spread = rng.choice([0.02, 0.05, 0.1])
        rest = [
            (c[0] + rng.uniform(-spread, spread), c[1] + rng.uniform(-spread, spread))
            for _ in range(n)
        ]
        if rng.random() < 0.2:  # a packed grid: only the spots beside blocks, or none
            step = 2 * 0.02 + rng.choice([0.0, 0.01, 0.02])
            rest += [(c[0] + (k % 5 - 2) * step, c[1] + (k // 5 - 2) * step) for k in range(25)]
        k = rng.randrange(4)
        if k == 0:
            ref = c  # every ring's candidates at one distance each: ties everywhere
        elif k == 1 and rest:
            ref = rest[0]
        else:
            ref = (c[0] + rng.uniform(-0.1, 0.1), c[1] + rng.uniform(-0.1, 0.1))
        if rng.random() < 0.03:
            ref = (math.nan, ref[1])  # not ordered: min() over the free ones
        band = rng.choice([None, C.RELEASE_BAND])
        want = _plain_free_spot(c, radius, rest, ref, band)
        assert C._free_spot(c, radius, rest, ref, band) == want
        kinds.add("none" if want is None else "centre" if want == c else "spot")
    assert kinds == {"none", "centre", "spot"}
