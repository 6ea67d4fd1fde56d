"""push(object, target): slide a cube along the table to a named region or a point."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field, field_validator

from sim import call_memo, scene, scenes, scripted
from sim.cubes import PUSH_BESIDE, region_spot
from sim.objects import spec as object_spec
from sim.world import WorldState, bin_walls, polygons_overlap, square_footprint
from skills import registry, success_model
from skills.base import (
    DOMAIN_OBJECT,
    DOMAIN_PUSH_TARGET,
    LOW_AFFORDANCE,
    NO_EFFECT,
    OUT_OF_WORKSPACE,
    PRECONDITION,
    Binding,
    Policy,
    Repair,
    Skill,
    SkillParams,
    Violation,
    bound_cube,
    check_object,
    cube_of,
    grip_of,
    hand_full,
    in_workspace,
    lost,
    moved,
    proprio_features,
    random_cubes,
    replace_object,
    resolve_xy,
    sample_arm_start,
)
from skills.place import region_full
from skills.success_model import (
    fold_yaw,
    nearest_blocks,
    nearest_blocks_many,
    obstacle_blocks,
    reach_features,
)

if TYPE_CHECKING:
    from sim.env import TabletopEnv

#: After a push, the grip site is lifted to this height: the fingertips clear the cube.
RETREAT_Z = 0.09
#: Within this distance of a round object (grip site to its centre across the table, m) the
#: push moves at ``ROUND_NEAR_SPEED`` of the policy's speed (see :meth:`Push.act`).
NEAR = 0.07
ROUND_NEAR_SPEED = 0.5
#: A push succeeds when the cube ends within this distance of a point target (m).
POINT_TOLERANCE = scene.REGION_RADIUS


#: A cube counts as touching the pushed one from behind when its centre lies this far back
#: along the push line (m) and within CHAIN_LATERAL of it; such cubes are pushed along.
CHAIN_BACK = (0.01, 0.055)
CHAIN_LATERAL = 0.035
#: Only cubes resting on the table join the chain (not those in a bin behind a wall).
CHAIN_MAX_Z = scene.CUBE_HALF + 0.0025
CHAIN_MAX_Y = scene.SPAWN_HIGH[1] + 0.08


def push_chain(world: WorldState, obj: str, target: tuple[float, float] | np.ndarray) -> list[str]:
    """The cubes a push of ``obj`` towards ``target`` moves: ``obj`` and the row of cubes
    touching it from behind along the push line (the push skill comes down behind the
    rear one and pushes them all; see ``skills.push.chain_rear``), front to rear.

    Asked by the push's preconditions and again by its predictor's features, about the
    same world: remembered within a :func:`sim.call_memo.scope` (a fresh list each)."""
    args = call_memo.key(obj, target)
    return list(call_memo.remembered("push_chain", world, args, lambda: _chain(world, obj, target)))


def _chain(world: WorldState, obj: str, target: tuple[float, float] | np.ndarray) -> list[str]:
    o = cube_of(world, obj)
    # on Python floats: two-vectors as numpy arrays cost a microsecond an operation, and
    # the bridge asks this of every push step (issue 25)
    d0, d1 = float(target[0]) - o.pos[0], float(target[1]) - o.pos[1]
    norm = math.sqrt(d0 * d0 + d1 * d1)
    s = max(norm, 1e-9)
    u0, u1 = d0 / s, d1 / s
    # u is a unit vector (norm at least 1e-9), so along**2 + lateral**2 is |rel|**2: a cube
    # farther from the rear than the box of CHAIN_BACK and CHAIN_LATERAL allows (with a
    # margin far above rounding) is not in the row, and is passed over; NaN distances fail
    # every test that admits a cube
    reach2 = (CHAIN_BACK[1] ** 2 + CHAIN_LATERAL**2) * 1.01 if norm >= 1e-9 else math.inf
    back_lo, back_hi = CHAIN_BACK
    chain, (r0, r1) = [obj], o.pos[:2]
    for _ in range(len(world.objects)):
        best: tuple[float, str, float, float] | None = None
        for c in world.objects:
            if c.name in chain or c.held or c.fallen:
                continue
            x, y, z = c.pos
            if not 0.0 < z < CHAIN_MAX_Z or y > CHAIN_MAX_Y:
                continue
            q0, q1 = x - r0, y - r1
            if q0 * q0 + q1 * q1 > reach2:
                continue
            back, lateral = -(q0 * u0 + q1 * u1), abs(q1 * u0 - q0 * u1)
            if back_lo < back < back_hi and lateral < CHAIN_LATERAL:
                if best is None or back < best[0]:
                    best = (back, c.name, x, y)
        if best is None:
            break
        chain.append(best[1])
        r0, r1 = best[2], best[3]
    return chain


def _target_xy(b: Binding) -> np.ndarray:
    """The table point a push binding aims at."""
    # Push.bind (and the perturbation's hand-made push binding) always set the target point
    assert b.target_xyz is not None, "the push binding has no target point"
    return np.asarray(b.target_xyz[:2])


def chain(
    obs: dict, b: Binding, back: tuple[float, float] = CHAIN_BACK, side: float = CHAIN_LATERAL
) -> list[int]:
    """The pushed cube and the row of cubes touching it from behind along the push line,
    front to rear: the push moves them all."""
    cube = obs["object_pos"][bound_cube(b)]
    d = _target_xy(b) - cube[:2]
    u = d / max(float(np.linalg.norm(d)), 1e-6)
    perp = np.array([-u[1], u[0]])
    rear, used = cube, [bound_cube(b)]
    for _ in range(len(scene.CUBE_NAMES) - 1):
        best = None
        for i, p in enumerate(obs["object_pos"]):
            if i in used or obs["object_present"][i] < 0.5:
                continue
            if not 0.0 < p[2] < CHAIN_MAX_Z or p[1] > CHAIN_MAX_Y:
                continue
            rel = p[:2] - rear[:2]
            along, lateral = float(rel @ u), abs(float(rel @ perp))
            if back[0] < -along < back[1] and lateral < side:
                if best is None or -along < best[0]:
                    best = (-along, i)
        if best is None:
            break
        used.append(best[1])
        rear = obs["object_pos"][best[1]]
    return used


def chain_rear(obs: dict, b: Binding) -> np.ndarray:
    """Centre of the last cube in the row of cubes touching the pushed one from behind (the
    pushed cube itself if none): the gripper must come down behind it, not on top of it."""
    return obs["object_pos"][chain(obs, b)[-1]]


#: The row the expert pushes: cubes squarely behind (their faces meet over most of their
#: width; corner to corner along a slanted push they are 5.7 cm apart). One further to the
#: side only brushes the row: the fingers come down clear of it instead.
ROW_BACK = (0.01, 0.06)
ROW_LATERAL = 0.026
#: A cube leaving the fingers no room behind the row joins it when its centre lies within
#: this far back (m) and this far to the side of the row's rear.
ROW_BLOCKER = (0.075, CHAIN_LATERAL)
#: Cubes lower than this (m, centre height) can be in the way of the fingers coming down.
OBSTACLE_MAX_Z = 0.07
#: For a cube against a bin wall, a landing spot this close to the workspace box's side is
#: the edge too: the grip site gets there only at its limit, and the cube, pushed along the
#: wall's outside, slid out of reach (7 of 50 such starts passed the checks; the policy made
#: 2). Away from walls the policy makes such pushes (17 of 17 in rows, blocks and after a
#: push), so the margin applies only there.
EDGE_MARGIN = 0.006


def _near_edge(xy: np.ndarray) -> bool:
    lo, hi = scene.WORKSPACE_LOW[:2] + EDGE_MARGIN, scene.WORKSPACE_HIGH[:2] - EDGE_MARGIN
    return bool(np.any(xy < lo) or np.any(xy > hi))


def _in_the_way(obs: dict, row: list[int]) -> list[int]:
    """Present cubes the push does not move that the fingers could come down on."""
    return [
        i
        for i, p in enumerate(obs["object_pos"])
        if i not in row and obs["object_present"][i] >= 0.5 and p[2] < OBSTACLE_MAX_Z
    ]


def pushed_row(obs: dict, b: Binding) -> list[int]:
    """:func:`chain`, and behind its rear every cube that leaves the fingers no room to come
    down (one touching it corner-first along a slanted push, say): those go along too."""
    row = chain(obs, b, ROW_BACK, ROW_LATERAL)
    pos = obs["object_pos"]
    d = _target_xy(b) - pos[bound_cube(b)][:2]
    u = d / max(float(np.linalg.norm(d)), 1e-6)
    while True:
        rear = pos[row[-1]][:2]
        free = _in_the_way(obs, row)
        if scripted.push_landing(rear, u, pos[free]) is not None:
            return row
        landing = rear - u * scripted.PUSH_BACKOFF
        perp = np.array([-u[1], u[0]])
        behind = [
            i
            for i in free
            if 0.0 < -float((pos[i][:2] - rear) @ u) < ROW_BLOCKER[0]
            and abs(float((pos[i][:2] - rear) @ perp)) < ROW_BLOCKER[1]
        ]
        if not behind:
            return row
        row.append(min(behind, key=lambda i: float(np.linalg.norm(pos[i][:2] - landing))))


class PushParams(SkillParams):
    object: str = Field(
        ..., max_length=64, description="cube to slide", json_schema_extra={"domain": DOMAIN_OBJECT}
    )
    target: str | tuple[float, float] = Field(
        ...,
        description="table region name, or [x, y] in metres",
        json_schema_extra={"domain": DOMAIN_PUSH_TARGET},
    )

    @field_validator("target")
    @classmethod
    def _finite(cls, v: str | tuple[float, float]) -> str | tuple[float, float]:
        if isinstance(v, tuple) and not all(np.isfinite(v)):
            raise ValueError("target coordinates must be finite")
        if isinstance(v, str) and len(v) > 64:
            raise ValueError("target name too long")
        return v


def _goal(
    world: WorldState, target: str | tuple[float, float], obj: str | None = None
) -> tuple[np.ndarray | None, float]:
    """The point a push of ``obj`` aims at and its tolerance. At a region: beside the cubes
    already there, on ``obj``'s side (:func:`sim.cubes.region_spot`; the centre when the
    region is empty or the region is full). Asked by the preconditions and again by the
    effect about one world: remembered within a :func:`sim.call_memo.scope` (callers
    read the point, never write it)."""
    goal, tol, _ = _aimed(world, target, obj)
    return goal, tol


def _aimed(
    world: WorldState, target: str | tuple[float, float], obj: str | None
) -> tuple[np.ndarray | None, float, bool]:
    """:func:`_goal`, and whether the region is full for ``obj``: no spot there for it
    (:func:`sim.cubes.region_spot` gave None, so the goal is the region's centre)."""
    args = call_memo.key(target, obj)
    return call_memo.remembered("push_goal", world, args, lambda: _aim(world, target, obj))


def _aim(
    world: WorldState, target: str | tuple[float, float], obj: str | None
) -> tuple[np.ndarray | None, float, bool]:
    r = world.region(target) if isinstance(target, str) else None
    if r is not None:
        o = world.object(obj) if obj is not None else None
        spot = region_spot(world, r.name, obj, o.pos[:2]) if o is not None else None
        full = o is not None and spot is None
        return np.asarray(spot if spot is not None else r.pos), r.radius, full
    if isinstance(target, str):
        return None, 0.0, False
    return np.asarray(target, dtype=np.float64), POINT_TOLERANCE, False


def landing_wall(world: WorldState, name: str, goal: np.ndarray) -> str | None:
    """What takes every spot where the closed fingers could come down behind the row that
    pushing ``name`` towards ``goal`` moves, and slide up to it (the spots the expert
    tries): a bin (its wall), or "workspace's edge"; None when one is clear. A push needs the
    fingers behind the cube: against a wall, on the wall's side, or with the arm's reach
    ending there, no controller of this gripper gets them there.

    Where the other cubes leave the fingers room, the controllers come down at the first
    such spot (:func:`sim.scripted.push_landing`; the policy, which sees no walls, where its
    expert does): only that spot counts then. A later spot clear of the wall is no use to a
    controller that never goes there (3 of 100 starts against a wall passed, and failed)."""
    g0, g1 = float(goal[0]), float(goal[1])
    chain = push_chain(world, name, (g0, g1))
    r0, r1 = cube_of(world, chain[-1]).pos[:2]
    c0, c1 = cube_of(world, name).pos[:2]
    # on Python floats throughout: two-vectors as numpy arrays cost a microsecond an
    # operation, and the bridge asks this of every push step (issue 25)
    d0, d1 = g0 - c0, g1 - c1
    dist = math.sqrt(d0 * d0 + d1 * d1)
    if dist < 1e-6:
        return None
    u0, u1 = d0 / dist, d1 / dist
    p0, p1 = -u1, u0
    walls = _walls_of(world)
    h = scripted.FINGERS_HALF
    # the spots the expert tries, in its order (sim.scripted.landing_spots: each side, every
    # back), and where it comes down (sim.scripted.push_landing): only the spots at that
    # one count
    behind = _behind(r0, r1, u0, u1)
    others = [o.pos[:2] for o in world.objects if o.name not in chain and o.pos[2] < OBSTACLE_MAX_Z]
    # the spots made as the expert's search reaches them: it usually takes the first
    chosen = _landing_choice(_spots_of(behind, u0, u1, _SIDE_LIST), others)
    if chosen is None:
        spots = list(_spots_of(behind, u0, u1, _SIDE_LIST))
    else:
        k0, k1, side = chosen
        if math.isfinite(k0) and math.isfinite(k1):  # (_close, unrolled for the usual case)
            # spots on another side lie at least the sides' spacing (6 mm) across the push
            # line from this one, far beyond _close's tolerance (a micrometre here): only
            # the spots on its side can be close to it (in their order among all spots)
            t0, t1 = 1e-08 + 1e-05 * abs(k0), 1e-08 + 1e-05 * abs(k1)
            spots = [
                sp
                for sp in _spots_of(behind, u0, u1, (side,))
                if abs(sp[0] - k0) <= t0 and abs(sp[1] - k1) <= t1
            ]
        else:
            spots = [sp for sp in _spots_of(behind, u0, u1, _SIDE_LIST) if _close(sp, (k0, k1))]
    # at each spot tried the fingers come down, then slide along u up to the row's rear
    # face: the footprints at 8 points on the way (start + f * (end - start), with end =
    # (rear - u * (CUBE_HALF + h)) + perp * side)
    back = scene.CUBE_HALF + h
    e0, e1 = r0 - u0 * back, r1 - u1 * back
    (lx, ly), (hx, hy) = _EDGE_LOW, _EDGE_HIGH
    (wx0, wy0), (wx1, wy1) = _LOW_XY, _HIGH_XY
    against_wall: bool | None = None  # (asked only where a spot is at the workspace's limit)
    hit = None
    for s0, s1, side in spots:
        inside = not (s0 < wx0 or s1 < wy0 or s0 > wx1 or s1 > wy1)  # as landing_spots
        at_limit = s0 < lx or s1 < ly or s0 > hx or s1 > hy
        if inside and at_limit and against_wall is None:
            snug = [(float(c0), float(c1))]
            against_wall = _first_wall(snug, scene.CUBE_HALF + EDGE_MARGIN, walls) is not None
        if not inside or (at_limit and against_wall):
            # the grip site cannot get there; or only at its limit, beside a bin's outer
            # wall the cube is against, which it then slid along and out of reach
            hit = hit or "workspace's edge"
            continue
        f0, f1 = (e0 + p0 * side) - s0, (e1 + p1 * side) - s1
        blocking = _first_wall([(s0 + f * f0, s1 + f * f1) for f in _SLIDE_F], h, walls)
        if blocking is None:
            return None
        hit = hit or blocking
    return hit


#: Where along the fingers' slide to the row (fractions) their footprint is tested.
_SLIDE_F = np.linspace(0.0, 1.0, 8).tolist()
#: ``_near_edge``'s bounds.
_EDGE_LOW = tuple((scene.WORKSPACE_LOW[:2] + EDGE_MARGIN).tolist())
_EDGE_HIGH = tuple((scene.WORKSPACE_HIGH[:2] - EDGE_MARGIN).tolist())
_LOW_XY = tuple(float(v) for v in scene.WORKSPACE_LOW[:2])
_HIGH_XY = tuple(float(v) for v in scene.WORKSPACE_HIGH[:2])


#: ``sim.scripted.landing_spots``'s backs and sides, in its order.
_BACKS = tuple(float(b) for b in scripted.LANDING_BACK)
_SIDE_LIST = tuple(float(v) for v in scripted.LANDING_SIDE)
_ROOM_OFF = scripted.FINGERS_HALF + scene.CUBE_HALF


def _landing_spots(r0: float, r1: float, u0: float, u1: float) -> list[tuple[float, float, float]]:
    """``sim.scripted.landing_spots`` behind the point (r0, r1) for the push direction
    (u0, u1), as (x, y, side) in its order: the same IEEE operations on the same values,
    ((rear - u * back) + perp * side), so the same bits (``tests/bridge/test_push_geometry.py``
    holds them to the generator's)."""
    return list(_spots_of(_behind(r0, r1, u0, u1), u0, u1, _SIDE_LIST))


def _behind(r0: float, r1: float, u0: float, u1: float) -> list[tuple[float, float]]:
    """The points ``rear - u * back`` of :func:`_landing_spots`, one per back, in order."""
    nearest = (scripted.FINGERS_HALF + scene.CUBE_HALF) * (abs(u0) + abs(u1)) + 0.004
    return [(r0 - u0 * b, r1 - u1 * b) for b in (max(b, nearest) for b in _BACKS)]


def _spots_of(
    behind: list[tuple[float, float]], u0: float, u1: float, sides: tuple[float, ...]
) -> Iterator[tuple[float, float, float]]:
    """:func:`_landing_spots` for these ``sides`` (each side's backs in order), one by one."""
    for side in sides:
        o0, o1 = -u1 * side, u0 * side
        for bx, by in behind:
            yield bx + o0, by + o1, side


def _push_landing(
    spots: list[tuple[float, float, float]], obstacles: list
) -> tuple[float, float] | None:
    """``sim.scripted.push_landing`` on ``spots`` (x, y, side): the first spot inside the
    workspace with ``LANDING_ROOM`` beside every obstacle, else the one with the most room
    of at least ``LANDING_MIN_ROOM`` (the last of equals), else None; the same tests on the
    same values as ``sim.scripted._room`` (``tests/bridge/test_push_geometry.py``)."""
    chosen = _landing_choice(spots, obstacles)
    return None if chosen is None else (chosen[0], chosen[1])


def _landing_choice(
    spots: Iterable[tuple[float, float, float]], obstacles: list
) -> tuple[float, float, float] | None:
    """:func:`_push_landing`'s spot with its side, taking the spots one at a time (the
    search stops at the first with the full room)."""
    (wx0, wy0), (wx1, wy1) = _LOW_XY, _HIGH_XY
    best, best_room = None, scripted.LANDING_MIN_ROOM
    full, off = scripted.LANDING_ROOM, _ROOM_OFF
    for spot in spots:
        x, y = spot[0], spot[1]
        if x < wx0 or y < wy0 or x > wx1 or y > wy1:
            continue
        least = None  # min() of the gaps: the first, replaced by each smaller one
        for o in obstacles:
            dx, dy = abs(o[0] - x), abs(o[1] - y)
            gap = dx if dx >= dy or dx != dx else dy
            if least is None or gap < least:
                least = gap
        room = (math.inf if least is None else least) - off
        if room >= full:
            return spot
        if room >= best_room:
            best, best_room = spot, room
    return best


def _close(spot: tuple[float, float, float], p: tuple[float, float]) -> bool:
    """``np.allclose(spot[:2], p)``: ``|a - b| <= 1e-8 + 1e-5 |b|`` per coordinate, with
    ``b`` finite, or ``a == b``."""
    for a, b in zip(spot[:2], p, strict=False):
        if math.isfinite(b):
            if not abs(a - b) <= 1e-08 + 1e-05 * abs(b):
                return False
        elif a != b:
            return False
    return True


#: A wall's footprint and its box (min x, max x, min y, max y); NaN where a corner is not
#: finite (no box test rules it out then).
Box = tuple[float, float, float, float]
#: Per bin: its name, the box around its four walls, and each wall with its box.
BinWalls = list[tuple[str, Box, list[tuple[list[tuple[float, float]], Box]]]]
_WALLS: dict[bytes, BinWalls] = {}


def _walls_of(world: WorldState) -> BinWalls:
    """Every bin wall of ``world`` by bin, in bin order, with the boxes (:func:`_box_of`).
    Bins do not move, so these are remembered, keyed by the exact bits of what
    ``bin_walls`` reads (names, centres, inner halves)."""
    # one validate call's worlds share one bins list (a step's effect copies the world
    # shallowly): within a call_memo scope the list itself keys the answer
    return call_memo.remembered("bin_walls", world.bins, (), lambda: _walls_by_bits(world))


def _walls_by_bits(world: WorldState) -> BinWalls:
    flat = [v for b in world.bins for v in (b.pos[0], b.pos[1], b.inner_half)]
    key = "\0".join(b.name for b in world.bins).encode() + array("d", flat).tobytes()
    got = _WALLS.get(key)
    if got is None:
        got = []
        for b in world.bins:
            ws = [(w, _box_of(w)) for w in bin_walls(b)]
            boxes = [bx for _, bx in ws]
            if any(math.isnan(v) for bx in boxes for v in bx):
                outer: Box = (math.nan,) * 4
            else:
                outer = (
                    min(bx[0] for bx in boxes),
                    max(bx[1] for bx in boxes),
                    min(bx[2] for bx in boxes),
                    max(bx[3] for bx in boxes),
                )
            got.append((b.name, outer, ws))
        if len(_WALLS) >= 256:
            _WALLS.clear()
        _WALLS[key] = got
    return got


def _box_of(poly: list[tuple[float, float]]) -> Box:
    """(min x, max x, min y, max y) of a wall's corners; NaN where ``polygons_overlap``'s
    own box test would not answer (a coordinate, or their sum, not finite)."""
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    if len(poly) == 4:
        finite = (xs[0] + xs[1] + xs[2] + xs[3] + ys[0] + ys[1] + ys[2] + ys[3]) * 0.0 == 0.0
    else:
        finite = all(math.isfinite(v) for v in (*xs, *ys))
    return (min(xs), max(xs), min(ys), max(ys)) if finite else (math.nan,) * 4


def _first_wall(centres: list[tuple[float, float]], half: float, walls: BinWalls) -> str | None:
    """The bin of the first wall that the square footprint of half side ``half`` (yaw 0)
    overlaps, at the first of ``centres`` (in order) where one does, walls in bin order;
    None where none does: the answer of ``polygons_overlap`` footprint by footprint, wall by
    wall. A yaw-0 footprint's corners are exactly (x +- half, y +- half), and
    ``polygons_overlap`` says a pair whose boxes are strictly apart is apart (it tests the
    boxes first); a box strictly apart from the box around a bin's walls is apart from each.
    So boxes rule out bins and walls, and only the pairs left get the full test; a centre
    that is not finite gets it against every wall, as there.

    Centres all finite and far from overflow (so each one's own test is the box test):
    where the box around all their footprints is strictly apart from a bin's box, so is
    each footprint's (``x - half`` and ``x + half`` are monotone in ``x``, so the least
    and greatest of them are those of the least and greatest centre), and a search with
    every bin so ruled out finds none: the fingers' slide towards the row, away from
    the bins, is answered in one test per bin."""
    if len(centres) > 1:
        xs, ys = [c[0] for c in centres], [c[1] for c in centres]
        if (sum(xs) + sum(ys)) * 0.0 == 0.0:  # (every coordinate finite)
            x0, x1, y0, y1 = min(xs) - half, max(xs) + half, min(ys) - half, max(ys) + half
            if -1e300 < x0 and x1 < 1e300 and -1e300 < y0 and y1 < 1e300:
                for _, (bx0, bx1, by0, by1), _ in walls:
                    if not (x1 < bx0 or bx1 < x0 or y1 < by0 or by1 < y0):
                        break
                else:
                    return None
    for x, y in centres:
        x0, x1, y0, y1 = x - half, x + half, y - half, y + half
        # the corners' sum, as the box test of polygons_overlap checks it
        finite = (x1 + x0 + x0 + x1 + y1 + y1 + y0 + y0) * 0.0 == 0.0
        spot = None
        for name, (bx0, bx1, by0, by1), ws in walls:
            if finite and (x1 < bx0 or bx1 < x0 or y1 < by0 or by1 < y0):
                continue
            for wall, (wx0, wx1, wy0, wy1) in ws:
                if finite and (x1 < wx0 or wx1 < x0 or y1 < wy0 or wy1 < y0):
                    continue
                if spot is None:
                    spot = square_footprint(x, y, half, 0.0)
                if polygons_overlap(spot, wall):
                    return name
    return None


def pushed_ok(world: WorldState, obj: str, target: str | tuple[float, float]) -> bool:
    if isinstance(target, str) and world.region(target) is not None:
        # at(obj, region), beside the cubes there too, with a margin for its slide
        return world.in_region(obj, target, beside=PUSH_BESIDE)
    goal, tol = _goal(world, target)
    o = world.object(obj)
    if goal is None or o is None or not o.on_table:
        return False
    return float(np.hypot(o.pos[0] - goal[0], o.pos[1] - goal[1])) <= tol


class Push(Skill[PushParams]):
    name = "push"
    description = "Slide a cube along the table top to a table region or an [x, y] point."
    aliases = ("slide", "shove", "nudge")
    moves_object = puts_at_target = True
    perturbations = (
        *("nominal", "yaw_full", "yaw_high", "edges", "row", "block", "wall_y", "wall_x"),
        *("after_push", "heavy_slippery", "light_grippy", "obs_noise_2mm", "obs_noise_5mm"),
        *("action_noise", "displaced", "obs_noise_8mm", "action_noise_strong", "obs_latency"),
    )
    # the fingers must come down behind the cube, which against a wall is the wall's side
    # or past the workspace's edge (the preconditions refuse those: landing_wall)
    infeasible_under = ("wall_y", "wall_x")
    wrong_kind_hints = {
        k: "to put a cube into a bin or on a cube use pick then place" for k in ("bin", "object")
    }
    Params = PushParams
    precondition_text = (
        "the gripper is empty",
        "the cube is on the table with nothing on top of it",
        "the target is a table region or a reachable point on the table",
    )
    step_budget = 150

    def repair(self, world: WorldState, params: PushParams, code: str) -> Repair | None:
        """Where the predictor rates the push too low: two shorter pushes (a hint). Where
        it cannot run to a table region because the fingers cannot come down behind the
        cube (a bin wall on that side) or the cube is not on the table: a pick and a place
        on the region instead."""
        if code == LOW_AFFORDANCE:
            o = world.object(params.object)
            goal = resolve_xy(world, params.target)
            if success_model.shipped(self.name) is None or o is None or goal is None:
                return None
            mid = np.round((np.asarray(o.pos[:2]) + goal) / 2, 3)
            return Repair(None, None, f"push in two shorter steps, first to [{mid[0]}, {mid[1]}]")
        if code == PRECONDITION and isinstance(params.target, str):
            return _carry_instead(world, params.object, params.target)
        return None

    def preconditions(self, world: WorldState, params: PushParams) -> list[Violation]:
        v = check_object(world, params.object, "object")
        if v:
            return v
        out = []
        goal, _, full = _aimed(world, params.target, params.object)
        if goal is None:
            out.append(
                Violation(
                    "hallucinated_target",
                    f"there is no table region {params.target}",
                    f"regions: {', '.join(world.region_names)}",
                    "target",
                )
            )
        elif not in_workspace(goal):
            out.append(
                Violation(
                    OUT_OF_WORKSPACE,
                    f"point ({goal[0]:.2f}, {goal[1]:.2f}) is outside the workspace",
                    f"x in [{scene.WORKSPACE_LOW[0]}, {scene.WORKSPACE_HIGH[0]}], "
                    f"y in [{scene.WORKSPACE_LOW[1]}, {scene.WORKSPACE_HIGH[1]}]",
                    "target",
                )
            )
        out += hand_full(world, field="object")
        o = cube_of(world, params.object)
        if not o.on_table:
            out.append(Violation(PRECONDITION, f"{o.name} is not on the table", "", "object"))
        top = world.under(o.name)
        if top is not None:
            out.append(Violation(PRECONDITION, f"{top} is stacked on {o.name}", "", "object"))
        if not out and pushed_ok(world, o.name, params.target):
            out.append(
                Violation(NO_EFFECT, f"{o.name} is already at {params.target}", "", "target")
            )
        # region_full's question is whether region_spot finds a spot for the cube among
        # the others (the hand is empty here, so no release band): the question _aimed
        # asked with the cube's position as ``toward``, which orders the candidates but
        # never makes one free or not (sim.cubes.free_spot), so the same yes or no.
        # Asked again only where the answer was no, for its message
        if not out and isinstance(params.target, str) and full:
            out += region_full(world, params.target, o.name)
        if not out and object_spec(o.name).rolls:
            out.append(
                Violation(
                    PRECONDITION,
                    f"{o.name} rolls: a push cannot stop it where asked",
                    f"pick {o.name} and place it there instead",
                    "object",
                )
            )
        if not out and goal is not None:
            wall = landing_wall(world, o.name, goal)
            if wall is not None:
                out.append(
                    Violation(
                        PRECONDITION,
                        f"the fingers cannot come down behind {o.name} to push it that way: "
                        + (
                            "it is at the workspace's edge"
                            if wall == "workspace's edge"
                            else f"the {wall} wall is there"
                        ),
                        "push it along the wall or away from it; a cube against a wall is "
                        "picked instead (the hand turns to grasp it)",
                        "target",
                    )
                )
        return out

    def effect(self, world: WorldState, params: PushParams) -> WorldState:
        o = cube_of(world, params.object)
        goal, _ = _goal(world, params.target, params.object)  # where bind aims it
        # the preconditions held: the target is a table region or a point, so it resolves
        assert goal is not None, f"push target {params.target} does not resolve"
        new = moved(o, on_table=True, pos=(float(goal[0]), float(goal[1]), scene.CUBE_HALF))
        above = (new.pos[0], new.pos[1], RETREAT_Z)
        return replace_object(world, new, held=world.held_object, grip=above)

    def success(self, before: WorldState, after: WorldState, params: PushParams) -> bool:
        return after.held_object is None and pushed_ok(after, params.object, params.target)

    retreat_steps = 12

    def retreat(self, obs: dict, b: Binding) -> np.ndarray | None:
        """Lift the closed fingers off the pushed row, so a following pick does not drag it
        into a neighbour (the success test fires with them touching it): first off its
        face, as rising against it would roll the cube over, then straight up."""
        grip = grip_of(obs)
        if grip[2] >= RETREAT_Z - 0.005:
            return None
        for i in pushed_row(obs, b)[::-1]:
            off = scripted.clear_of(grip, obs["object_pos"][i])
            if off is not None:
                return off
        return scripted._move(grip, np.array([grip[0], grip[1], RETREAT_Z]), scripted.CLOSE)

    def doomed(
        self, before: WorldState, now: WorldState, params: PushParams, b: Binding
    ) -> str | None:
        why = lost(now, params.object)
        if why is None and cube_of(now, params.object).in_bin is not None:
            why = f"{params.object} was pushed into {cube_of(now, params.object).in_bin}"
        return why

    # ------------------------------------------------------------------ execution side
    obs_dim = 14

    def bind(self, world: WorldState, params: PushParams) -> Binding:
        goal, _ = _goal(world, params.target, params.object)
        # the preconditions held: the target is a table region or a point
        assert goal is not None, f"no table region {params.target}"
        kind = "region" if isinstance(params.target, str) else "point"
        shape = object_spec(params.object)
        round_ = shape.width_across(0.0) == shape.width_across(math.pi / 4)
        return Binding(
            cube=scenes.row(params.object),
            target_kind=kind,
            target_xyz=(float(goal[0]), float(goal[1]), scene.CUBE_HALF),
            near_speed=ROUND_NEAR_SPEED if round_ else 1.0,
        )

    def act(self, obs: dict, b: Binding, policy: Policy | None = None) -> np.ndarray:
        """The skill's action, slowed to ``Binding.near_speed`` within :data:`NEAR` of the
        object (across the table): a round object (an upright cylinder) struck at the
        policy's full speed tips onto its rim and rolls off, out of reach or off the table
        (3 of 12 chain failures in the mixed scene); a cube slides."""
        a = super().act(obs, b, policy)
        if b.near_speed == 1.0:
            return a
        o = obs["object_pos"][bound_cube(b)]
        if float(np.linalg.norm(o[:2] - grip_of(obs)[:2])) >= NEAR:
            return a
        slow = np.array(a, dtype=np.float64)
        slow[:3] *= b.near_speed
        if b.motion is not None:  # (the smoothing goes on from the motion applied)
            b.motion = slow[:3].copy()
        return slow

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        grip, cube = grip_of(obs), obs["object_pos"][bound_cube(b)]
        goal = _target_xy(b)
        rear = obs["object_pos"][pushed_row(obs, b)[-1]]
        return np.concatenate(
            [*proprio_features(obs), cube - grip, goal - cube[:2], rear[:2] - cube[:2]]
        )

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        """Push from behind the rear of the cubes touching it along the push line (all of
        them go along), aiming that rear cube at the goal shifted by its offset; the fingers
        come down clear of the other cubes."""
        row = pushed_row(obs, b)
        cube, rear = obs["object_pos"][bound_cube(b)], obs["object_pos"][row[-1]]
        goal = _target_xy(b) + (rear[:2] - cube[:2])
        way = obs["object_pos"][_in_the_way(obs, row)]
        return scripted.push_action(grip_of(obs), rear, goal, way)

    def potential(self, obs: dict, b: Binding) -> float:
        grip, cube = grip_of(obs), obs["object_pos"][bound_cube(b)]
        goal = _target_xy(b)
        d = goal - cube[:2]
        u = d / max(float(np.linalg.norm(d)), 1e-6)
        rear = obs["object_pos"][pushed_row(obs, b)[-1]]
        behind = np.array([*(rear[:2] - u * scripted.PUSH_BACKOFF), scripted.PUSH_Z])
        return -5.0 * float(np.linalg.norm(d)) - 0.5 * float(np.linalg.norm(grip - behind))

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> PushParams | None:
        """A free cube on the table and a region (or a point) it is not already at."""
        names = random_cubes(rng, env)
        env.reset(
            seed=int(rng.integers(2**31)), options={"cubes": names, "arm": sample_arm_start(rng)}
        )
        w = env.world_state()
        o = w.object(names[0])  # just laid out by the reset (from cameras: seen, or not yet)
        if o is None or not o.on_table:
            return None
        others = [p.pos for p in w.objects if p.name != o.name]
        if rng.random() < 0.7:
            cands = [
                r.name
                for r in w.regions
                if np.hypot(o.pos[0] - r.pos[0], o.pos[1] - r.pos[1]) > r.radius + 0.02
                and all(np.hypot(p[0] - r.pos[0], p[1] - r.pos[1]) > 0.08 for p in others)
            ]
            if not cands:
                return None
            return PushParams(object=o.name, target=str(rng.choice(cands)))
        for _ in range(50):
            xy = rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH)
            if np.hypot(*(xy - np.asarray(o.pos[:2]))) > POINT_TOLERANCE + 0.03 and all(
                np.hypot(p[0] - xy[0], p[1] - xy[1]) > 0.08 for p in others
            ):
                return PushParams(
                    object=o.name, target=(round(float(xy[0]), 3), round(float(xy[1]), 3))
                )
        return None


#: What the push skill's success predictor reads (fitted by ``scripts/affordance.py``).
PREDICTOR_FEATURES = (
    "x y reach_r reach_box_margin reach_r_margin gx gy goal_reach_r goal_box_margin "
    "goal_r_margin dist yaw yaw_to_push behind_clear path_clear nearest "
    "behind_box_margin behind_r_margin ux uy pushed_along"
).split()


def predictor_features(world: WorldState, p: PushParams) -> list[float]:
    """The values :data:`PREDICTOR_FEATURES` names, for the push success predictor
    (:mod:`skills.success_model`)."""
    assemble, groups = _feature_parts(world, p)
    return assemble([nearest_blocks(blocks, queries) for blocks, queries in groups])


def predictor_features_many(items: list[tuple[WorldState, PushParams]]) -> list:
    """:func:`predictor_features` of each (world, params), with the nearest-obstacle
    distances of all of them in one pass (:func:`skills.success_model.nearest_blocks_many`:
    the same numbers); an item whose features raise gives its exception in its place."""
    parts: list = []
    for world, p in items:
        try:
            parts.append(_feature_parts(world, p))
        except Exception as e:  # (its own answer: the caller raises it in its turn)
            parts.append(e)
    groups = [g for part in parts if not isinstance(part, Exception) for g in part[1]]
    found = iter(nearest_blocks_many(groups))
    out: list = []
    for part in parts:
        if isinstance(part, Exception):
            out.append(part)
            continue
        assemble, gs = part
        dists = [next(found) for _ in gs]
        try:
            out.append(assemble(dists))
        except Exception as e:
            out.append(e)
    return out


def _target_point(
    world: WorldState, target: str | tuple[float, float]
) -> tuple[float, float] | None:
    """``resolve_xy`` as two Python floats: the same doubles (its float64 array holds the
    coordinates as they are; a target point is two floats, as PushParams validates it)."""
    if isinstance(target, (tuple, list)):
        return float(target[0]), float(target[1])
    for getter in (world.region, world.bin, world.object):
        found = getter(target)
        if found is not None:
            return float(found.pos[0]), float(found.pos[1])
    return None


def _feature_parts(
    world: WorldState, p: PushParams
) -> tuple[Callable[[list[list[float]]], list[float]], list[tuple[list, list]]]:
    """:func:`predictor_features` up to its nearest-obstacle distances: the questions
    (obstacle blocks, points) and the function that makes the features from their answers."""
    o = cube_of(world, p.object)
    x, y = o.pos[0], o.pos[1]
    xy = _target_point(world, p.target)
    gx, gy = xy if xy is not None else (x, y)
    d = math.hypot(gx - x, gy - y)
    ang = math.atan2(gy - y, gx - x)
    u = ((gx - x) / max(d, 1e-9), (gy - y) / max(d, 1e-9))
    chain = push_chain(world, o.name, (gx, gy)) if d > 1e-6 else [o.name]
    rear = cube_of(world, chain[-1]).pos
    behind = (rear[0] - 0.05 * u[0], rear[1] - 0.05 * u[1])
    around = obstacle_blocks(world, chain, 0.0)
    # nearest() of the path's middle and end, of the spot behind the row, and of the cube
    # (whose obstacles are these when the row is the cube alone), in one pass
    queries = [(x + f * (gx - x), y + f * (gy - y)) for f in (0.5, 1.0)] + [behind]
    alone = chain == [o.name]
    if alone:
        groups = [(around, [*queries, (x, y)])]
    else:
        groups = [(around, queries), (obstacle_blocks(world, [o.name], 0.0), [(x, y)])]

    def assemble(found: list[list[float]]) -> list[float]:
        if alone:
            ((mid, end, behind_clear, here),) = found
        else:
            (mid, end, behind_clear), (here,) = found
        path = min(mid, end)
        return [
            x,
            y,
            *reach_features(x, y),
            gx,
            gy,
            *reach_features(gx, gy),
            d,
            fold_yaw(o.yaw),
            fold_yaw(o.yaw - ang),
            behind_clear,
            path,
            here,
            *reach_features(*behind)[1:],
            u[0],
            u[1],
            float(len(chain) - 1),
        ]

    return assemble, groups


success_model.register("push", PREDICTOR_FEATURES, predictor_features, many=predictor_features_many)


def _carry_instead(world: WorldState, obj: str, region: str) -> Repair | None:
    """A pick and a place on ``region`` in place of a push of ``obj`` there that cannot run
    (None where the push is not stopped by where the cube is, or the carry cannot run
    either)."""
    r, moved_cube = world.region(region), world.object(obj)
    if r is None or moved_cube is None or moved_cube.held:
        return None
    if moved_cube.on_table and object_spec(obj).rolls:
        why = f"{obj} rolls: a push cannot stop it where asked"
    elif moved_cube.on_table:
        if landing_wall(world, obj, np.asarray(r.pos[:2])) is None:
            return None
        # the fingers cannot come down behind it (a bin wall there): carry it instead
        why = f"the fingers cannot come down behind {obj} to push it"
    else:  # in a bin, or on another cube: nothing to push it along; carry it there
        why = f"{obj} is not on the table, so it cannot be pushed"
    # (looked up, not imported: pick imports the pushes that free a cube)
    pick, place = registry.get("pick"), registry.get("place")
    steps = [{"skill": "pick", "object": obj}, {"skill": "place", "target": region}]
    pick_p, place_p = pick.Params(object=obj), place.Params(target=region)
    hint = f"pick {obj} and place it on {region} instead"
    if world.held_object is not None or pick.preconditions(world, pick_p):
        return Repair(None, why, hint)
    if place.preconditions(pick.effect(world, pick_p), place_p):
        return Repair(None, why, hint)
    return Repair(steps, why, hint)
