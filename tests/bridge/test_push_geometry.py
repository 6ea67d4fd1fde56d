"""The push skill's and the success predictor's fast geometry answers exactly as the plain
versions it replaced (issue 25, bridge latency): the landing spots as one array, the
footprint-against-wall search by boxes, ``np.allclose`` per row, the row of pushed cubes
with its distance shortcut, and the nearest-obstacle distances in one pass. The plain
versions below are the code before that work, kept here as the reference; the worlds are
random crowds of cubes around the bins, at and against their walls and the workspace's
edges, where the answers change."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from sim import scene, scripted
from sim.world import (
    BIN_WALL_THICKNESS,
    WorldState,
    bin_walls,
    polygons_overlap,
    square_footprint,
)
from skills import push as P
from skills import success_model as S
from skills.base import cube_of
from skills.push import push_chain
from tests.bridge.bridge_worlds import cube, make_world


def _plain_landing_wall(world: WorldState, name: str, goal: np.ndarray) -> str | None:
    """``skills.push.landing_wall`` as it was: spot by spot, footprint by footprint."""
    chain = push_chain(world, name, (goal[0], goal[1]))
    rear = np.asarray(cube_of(world, chain[-1]).pos[:2])
    c = cube_of(world, name).pos
    d = np.asarray(goal[:2], dtype=np.float64) - np.asarray(c[:2])
    dist = float(np.linalg.norm(d))
    if dist < 1e-6:
        return None
    u = d / dist
    perp = np.array([-u[1], u[0]])
    walls = [(b.name, w) for b in world.bins for w in bin_walls(b)]
    h = scripted.FINGERS_HALF
    others = [
        np.asarray(o.pos)
        for o in world.objects
        if o.name not in chain and o.pos[2] < P.OBSTACLE_MAX_Z
    ]
    chosen = scripted.push_landing(rear, u, others)
    snug = square_footprint(float(c[0]), float(c[1]), scene.CUBE_HALF + P.EDGE_MARGIN, 0.0)
    against_wall = any(polygons_overlap(snug, w) for _, w in walls)
    hit = None
    for start, side, inside in scripted.landing_spots(rear, u):
        if chosen is not None and not np.allclose(start, chosen):
            continue
        if not inside or (against_wall and P._near_edge(start)):
            hit = hit or "workspace's edge"
            continue
        end = rear - u * (scene.CUBE_HALF + h) + perp * side
        blocking = None
        for f in np.linspace(0.0, 1.0, 8):
            x, y = start + f * (end - start)
            spot = square_footprint(float(x), float(y), h, 0.0)
            blocking = next((n for n, w in walls if polygons_overlap(spot, w)), None)
            if blocking is not None:
                break
        if blocking is None:
            return None
        hit = hit or blocking
    return hit


def _plain_push_chain(world: WorldState, obj: str, target) -> list[str]:
    """``skills.push.push_chain`` as it was: the dot products for every cube."""
    o = cube_of(world, obj)
    goal = np.asarray(target, dtype=np.float64)
    d = goal - np.asarray(o.pos[:2])
    u = d / max(float(np.linalg.norm(d)), 1e-9)
    perp = np.array([-u[1], u[0]])
    chain, rear = [obj], np.asarray(o.pos[:2])
    for _ in range(len(world.objects)):
        best = None
        for c in world.objects:
            if c.name in chain or c.held or c.fallen:
                continue
            if not 0.0 < c.pos[2] < P.CHAIN_MAX_Z or c.pos[1] > P.CHAIN_MAX_Y:
                continue
            rel = np.asarray(c.pos[:2]) - rear
            along, lateral = float(rel @ u), abs(float(rel @ perp))
            if P.CHAIN_BACK[0] < -along < P.CHAIN_BACK[1] and lateral < P.CHAIN_LATERAL:
                if best is None or -along < best[0]:
                    best = (-along, c.name)
        if best is None:
            break
        chain.append(best[1])
        rear = np.asarray(cube_of(world, best[1]).pos[:2])
    return chain


def _plain_nearest(pts: np.ndarray, xy) -> float:
    if not len(pts):
        return S.CAP * 2
    d = pts - np.asarray(xy, dtype=np.float64)
    return min(S.CAP * 2, float(np.sqrt(np.min(np.einsum("ij,ij->i", d, d)))))


def _crowd(rng: random.Random) -> WorldState:
    """Cubes at random, some against a bin's wall, in a row or at the workspace's edge."""
    w = make_world()
    b = rng.choice(w.bins)
    out = []
    for i, n in enumerate(scene.CUBE_NAMES):
        k = rng.randrange(5)
        if k == 0:  # against a wall of a bin, outside it
            side = rng.choice([-1, 1])
            off = b.inner_half + BIN_WALL_THICKNESS + scene.CUBE_HALF + rng.uniform(0, 0.01)
            xy = (b.pos[0] + side * off, b.pos[1] + rng.uniform(-0.05, 0.05))
            if rng.random() < 0.5:
                xy = (b.pos[0] + rng.uniform(-0.05, 0.05), b.pos[1] + side * off)
        elif k == 1 and out:  # touching the previous cube (a row)
            px, py = out[-1].pos[0], out[-1].pos[1]
            a = rng.uniform(-math.pi, math.pi)
            r = 2 * scene.CUBE_HALF + rng.uniform(0.0, 0.02)
            xy = (px + r * math.cos(a), py + r * math.sin(a))
        elif k == 2:  # near the workspace's edge
            lo, hi = scene.WORKSPACE_LOW, scene.WORKSPACE_HIGH
            xy = (rng.choice([lo[0], hi[0]]) + rng.uniform(-0.02, 0.02), rng.uniform(lo[1], hi[1]))
        else:
            xy = (rng.uniform(-0.25, 0.25), rng.uniform(-0.3, 0.3))
        out.append(cube(n, xy, yaw=rng.choice([0.0, rng.uniform(-0.8, 0.8)])))
        del i
    return w.model_copy(update={"objects": out})


def _goals(rng: random.Random, w: WorldState, name: str):
    o = cube_of(w, name)
    for _ in range(6):
        a, r = rng.uniform(-math.pi, math.pi), rng.choice([0.03, 0.08, 0.15, 0.3])
        yield np.array([o.pos[0] + r * math.cos(a), o.pos[1] + r * math.sin(a)])
    for reg in w.regions:
        yield np.asarray(reg.pos, dtype=np.float64)


def _cases(n_worlds: int = 80):
    rng = random.Random(25)
    for _ in range(n_worlds):
        w = _crowd(rng)
        for name in scene.CUBE_NAMES:
            for goal in _goals(rng, w, name):
                yield w, name, goal


def test_landing_spots_are_the_generators_bit_for_bit():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        cube_xy = rng.uniform(-0.4, 0.4, size=2)
        u = rng.normal(size=2)
        u = u / np.linalg.norm(u) if rng.random() < 0.95 else u * 1e-12
        want = list(scripted.landing_spots(cube_xy, u))
        got = P._landing_spots(*cube_xy.tolist(), *u.tolist())
        assert len(got) == len(want)
        assert np.array([(x, y) for x, y, _ in got]).tobytes() == (
            np.array([xy for xy, _, _ in want]).tobytes()
        )
        assert [side for _, _, side in got] == [side for _, side, _ in want]


def test_close_is_allclose():
    rng = np.random.default_rng(1)
    specials = [0.0, -0.0, 1e-9, math.inf, -math.inf, math.nan]
    for _ in range(3000):
        p = rng.uniform(-0.3, 0.3, size=2)
        rows = np.repeat(p[None], 6, axis=0) + rng.choice([0.0, 1e-9, 1e-6, 1e-3], size=(6, 2))
        if rng.random() < 0.2:
            p[rng.integers(2)] = rng.choice(specials)
        if rng.random() < 0.2:
            rows[rng.integers(6), rng.integers(2)] = rng.choice(specials)
        for r in rows:
            assert P._close((*r.tolist(), 0.0), tuple(p.tolist())) == bool(np.allclose(r, p))


def test_landing_wall_answers_as_the_plain_search():
    seen = set()
    for w, name, goal in _cases():
        want = _plain_landing_wall(w, name, goal)
        assert P.landing_wall(w, name, goal) == want, (name, goal.tolist())
        seen.add(want if want is None or want == "workspace's edge" else "bin")
    assert seen == {None, "workspace's edge", "bin"}  # every kind of answer was asked


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_first_wall_tests_non_finite_centres_in_full(bad: float):
    w = make_world()
    walls = P._walls_of(w)
    plain = [(b.name, wall) for b in w.bins for wall in bin_walls(b)]
    for centre in [(bad, 0.0), (0.0, bad), (-bad, bad)]:
        spot = square_footprint(centre[0], centre[1], 0.012, 0.0)
        want = next((n for n, wall in plain if polygons_overlap(spot, wall)), None)
        assert P._first_wall([centre], 0.012, walls) == want


def test_push_chain_answers_as_the_plain_one():
    lengths = set()
    for w, name, goal in _cases(80):
        for target in (goal, goal + 1e-12, cube_of(w, name).pos[:2]):  # incl. a zero push
            want = _plain_push_chain(w, name, target)
            assert push_chain(w, name, target) == want
            lengths.add(len(want))
    assert max(lengths) >= 2  # rows of more than one cube were among them


def test_nearest_in_one_pass_is_einsums_distance():
    rng = np.random.default_rng(2)
    for _ in range(1500):
        n = int(rng.integers(0, 900))
        pts = rng.uniform(-0.4, 0.4, size=(n, 2)) * rng.choice([1.0, 0.1])
        if n and rng.random() < 0.05:
            pts[rng.integers(n), rng.integers(2)] = rng.choice([math.nan, math.inf])
        q = [tuple(rng.uniform(-0.4, 0.4, size=2).tolist()) for _ in range(int(rng.integers(1, 5)))]
        assert S._nearest_many(pts, q) == [_plain_nearest(pts, p) for p in q]


def test_push_features_are_the_same_numbers():
    """The push predictor's features on the crowds (the batched distances and the shared
    obstacle set), against ``nearest`` computed one point at a time as before."""
    from skills.push import PushParams

    for w, name, goal in _cases(40):
        p = PushParams(object=name, target=(float(goal[0]), float(goal[1])))
        got = P.predictor_features(w, p)
        o = cube_of(w, name)
        x, y = o.pos[0], o.pos[1]
        gx, gy = float(goal[0]), float(goal[1])
        d = math.hypot(gx - x, gy - y)
        u = ((gx - x) / max(d, 1e-9), (gy - y) / max(d, 1e-9))
        chain = _plain_push_chain(w, name, (gx, gy)) if d > 1e-6 else [name]
        rear = cube_of(w, chain[-1]).pos
        behind = (rear[0] - 0.05 * u[0], rear[1] - 0.05 * u[1])
        around = S._obstacles(w, chain, 0.0)
        path = min(_plain_nearest(around, (x + f * (gx - x), y + f * (gy - y))) for f in (0.5, 1.0))
        names = P.PREDICTOR_FEATURES
        assert got[names.index("behind_clear")] == _plain_nearest(around, behind)
        assert got[names.index("path_clear")] == path
        assert got[names.index("nearest")] == _plain_nearest(S._obstacles(w, name, 0.0), (x, y))
        assert got[names.index("pushed_along")] == float(len(chain) - 1)


def test_nearest_over_blocks_passes_over_only_what_cannot_matter():
    """Blocks far from every point are left out; the answers are those over all points,
    near the CAP * 2 boundary, with NaN and infinite points, and with nothing near."""
    rng = np.random.default_rng(3)
    for _ in range(1500):
        blocks, arrays = [], []
        for _ in range(int(rng.integers(0, 6))):
            c = rng.uniform(-0.5, 0.5, size=2)
            pts = c + rng.uniform(-0.05, 0.05, size=(int(rng.integers(1, 60)), 2))
            if rng.random() < 0.05:
                pts[0, rng.integers(2)] = rng.choice([math.nan, math.inf, -math.inf])
            arrays.append(pts)
            blocks.append(S._block(pts))
        q = [tuple(rng.uniform(-0.5, 0.5, size=2).tolist()) for _ in range(int(rng.integers(1, 5)))]
        if arrays and rng.random() < 0.3:  # a point just about CAP * 2 from a block's point
            p = arrays[0][0]
            a = rng.uniform(-math.pi, math.pi)
            r = S.CAP * 2 + rng.choice([-1e-9, 0.0, 1e-9])
            q[0] = (float(p[0] + r * math.cos(a)), float(p[1] + r * math.sin(a)))
        if rng.random() < 0.05:
            q[-1] = (math.nan, 0.0)
        pts = np.concatenate(arrays) if arrays else np.zeros((0, 2))
        with np.errstate(invalid="ignore"):  # inf - inf, as it always was
            assert S.nearest_blocks(blocks, q) == [_plain_nearest(pts, p) for p in q]


def test_push_landing_on_the_table_is_the_experts_choice():
    """Where the fingers come down, from the spots on floats, is the spot the expert's
    own search picks (the same bits), cubes crowding the spots or not."""
    picked = set()
    for w, name, goal in _cases(60):
        o = cube_of(w, name)
        d = goal - np.asarray(o.pos[:2])
        if float(np.linalg.norm(d)) < 1e-6:
            continue
        u = d / float(np.linalg.norm(d))
        rear = np.asarray(o.pos[:2])
        others = [q.pos for q in w.objects if q.name != name]
        want = scripted.push_landing(rear, u, [np.asarray(p) for p in others])
        spots = P._landing_spots(*rear.tolist(), *u.tolist())
        got = P._push_landing(spots, [p[:2] for p in others])
        assert (got is None) == (want is None)
        if want is not None:
            assert got is not None and np.array(got).tobytes() == want.tobytes()
            picked.add(got == spots[0][:2])
        else:
            picked.add(None)
    assert picked == {True, False, None}  # the usual spot, another one, and none at all


def _plain_first_wall(centres, half: float, w: WorldState) -> str | None:
    """``skills.push._first_wall`` as ``polygons_overlap`` answers it, footprint by footprint."""
    plain = [(b.name, wall) for b in w.bins for wall in bin_walls(b)]
    for x, y in centres:
        spot = square_footprint(x, y, half, 0.0)
        hit = next((n for n, wall in plain if polygons_overlap(spot, wall)), None)
        if hit is not None:
            return hit
    return None


def test_first_wall_of_a_slide_is_the_plain_search():
    """The fingers' slide (eight footprints along a segment) against the bins' walls, the
    segment's box tested first: near the bins, far from them, through them, and with
    centres not finite or so large that their sums overflow."""
    rng = random.Random(7)
    w = make_world()
    walls = P._walls_of(w)
    answers = set()
    for _ in range(4000):
        b = rng.choice(w.bins)
        spread = rng.choice([0.02, 0.08, 0.2, 0.5])
        a = (b.pos[0] + rng.uniform(-spread, spread), b.pos[1] + rng.uniform(-spread, spread))
        e = (a[0] + rng.uniform(-0.06, 0.06), a[1] + rng.uniform(-0.06, 0.06))
        centres = [(a[0] + f * (e[0] - a[0]), a[1] + f * (e[1] - a[1])) for f in P._SLIDE_F]
        if rng.random() < 0.05:
            k = rng.randrange(len(centres))
            bad = rng.choice([math.nan, math.inf, -math.inf, 1e300, -1e308, 1.7e308])
            centres[k] = (bad, centres[k][1]) if rng.random() < 0.5 else (centres[k][0], bad)
        half = rng.choice([scripted.FINGERS_HALF, scene.CUBE_HALF + P.EDGE_MARGIN])
        want = _plain_first_wall(centres, half, w)
        assert P._first_wall(centres, half, walls) == want, centres
        answers.add(want)
    assert None in answers and len(answers) >= 3  # clear slides and walls of several bins


def test_region_full_is_what_the_push_goal_found():
    """The push's preconditions ask whether the target region is full from the goal's own
    search (its ``toward`` only orders the candidates): the same answer as
    ``region_full``, on crowds with cubes packed into the regions."""
    from skills.place import region_full

    rng = random.Random(9)
    fulls = set()
    for _ in range(300):
        w = _crowd(rng)
        r = rng.choice(w.regions)
        objs = list(w.objects)
        for i in range(len(objs)):  # most cubes into the region, close together
            if rng.random() < 0.7:
                a, d = rng.uniform(-math.pi, math.pi), rng.uniform(0.0, r.radius + 0.05)
                xy = (r.pos[0] + d * math.cos(a), r.pos[1] + d * math.sin(a))
                objs[i] = cube(objs[i].name, xy)
        step = 2 * scene.CUBE_HALF + rng.choice([0.0, 0.005, 0.01, 0.02])
        for k in range(rng.randrange(0, 25)):  # and a packed grid of more cubes about it
            xy = (r.pos[0] + (k % 5 - 2) * step, r.pos[1] + (k // 5 - 2) * step)
            objs.append(objs[0].model_copy(update={"name": f"extra_{k}", "pos": (*xy, 0.02)}))
        w = w.model_copy(update={"objects": objs})
        for o in w.objects:
            full = P._aimed(w, r.name, o.name)[2]
            assert full == bool(region_full(w, r.name, o.name)), (r.name, o.name)
            fulls.add(full)
    assert fulls == {True, False}


def test_nearest_of_many_groups_is_each_groups_own():
    """The distances of a plan's steps in one pass (blocks shared between groups, NaN and
    infinite points, groups without blocks) are each group's ``nearest_blocks``."""
    rng = np.random.default_rng(4)
    for _ in range(600):
        pool = []
        for _ in range(int(rng.integers(1, 8))):
            c = rng.uniform(-0.4, 0.4, size=2)
            pts = c + rng.uniform(-0.05, 0.05, size=(int(rng.integers(1, 50)), 2))
            if rng.random() < 0.04:
                pts[0, rng.integers(2)] = rng.choice([math.nan, math.inf, -math.inf])
            pool.append(S._block(pts))
        groups = []
        for _ in range(int(rng.integers(1, 7))):
            k = int(rng.integers(0, len(pool) + 1))
            bs = [pool[int(i)] for i in rng.choice(len(pool), size=k, replace=False)]
            n_q = int(rng.integers(1, 5))
            qs = [tuple(rng.uniform(-0.45, 0.45, size=2).tolist()) for _ in range(n_q)]
            if rng.random() < 0.04:
                qs[0] = (math.nan, qs[0][1])
            groups.append((bs, qs))
        with np.errstate(invalid="ignore"):
            want = [S.nearest_blocks(bs, qs) for bs, qs in groups]
            assert S.nearest_blocks_many(groups) == want


def test_push_features_of_many_steps_are_each_steps_own():
    from skills.push import PushParams

    items = []
    for w, name, goal in _cases(20):
        items.append((w, PushParams(object=name, target=(float(goal[0]), float(goal[1])))))
        items.append((w, PushParams(object=name, target=w.regions[0].name)))
    for k in (2, 5, 9):
        for i in range(0, len(items) - k, 37):
            chunk = items[i : i + k]
            assert P.predictor_features_many(chunk) == [P.predictor_features(*it) for it in chunk]


def test_target_point_is_resolve_xy():
    from skills.base import resolve_xy

    for w, name, goal in _cases(5):
        targets = [*w.region_names, *w.bin_names, *w.object_names, "nowhere", (0.1, -0.2)]
        targets.append((float(goal[0]), float(goal[1])))
        for t in targets:
            want = resolve_xy(w, t)
            got = P._target_point(w, t)
            assert (got is None) == (want is None)
            if want is not None:
                assert np.array(got).tobytes() == want.tobytes()
        del name
