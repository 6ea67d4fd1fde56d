"""Affordances: what would make an infeasible step feasible, from geometry alone.

The world state says *whether* a cube can be grasped (:meth:`sim.world.WorldState.graspable`);
this module says what to do about it: :func:`separation_push` finds a ``push`` that moves
the cube (or, failing that, the neighbour in the way) to a free spot where the fingers fit,
with the pusher's approach and the cube's path clear of everything else. The bridge names
it in its hint; the rules planner inserts it before the pick.
"""

from __future__ import annotations

import math

import numpy as np

from sim import scene, scripted
from sim.world import WorldState, _overlap, _square, bin_walls, cube_reachable
from skills.push import Push, PushParams

#: Push distances tried (m), shortest first. The push skill stops once the cube is within
#: its point tolerance, so a cube may end up to ``POINT_TOLERANCE`` short of the target: a
#: target counts only if the cube is graspable anywhere on that last stretch.
DISTANCES = (0.10, 0.13, 0.08)
#: Directions tried, as angles from the push away from the blocker (0 first).
ANGLES = (math.pi / 2, -math.pi / 2, 0.0, math.pi / 4, -math.pi / 4, 3 * math.pi / 4, math.pi)
#: The corridor the cube sweeps is its width across the push less this (m): a neighbour it
#: only slides along is not in the way.
SLIDE = 0.001
_PUSH = Push()


def _obstacles(world: WorldState, moving: str) -> list[list[tuple[float, float]]]:
    out = [
        _square(o.pos[0], o.pos[1], scene.CUBE_HALF, o.yaw)
        for o in world.objects
        if o.name != moving and not o.held and not o.fallen
    ]
    for b in world.bins:
        out.extend(bin_walls(b))
    return out


def _corridor(a: np.ndarray, b: np.ndarray, half: float) -> list[tuple[float, float]]:
    d = b - a
    u = d / max(float(np.linalg.norm(d)), 1e-9)
    n = np.array([-u[1], u[0]]) * half
    return [tuple(p) for p in (a + n, b + n, b - n, a - n)]


def push_path_clear(world: WorldState, obj: str, target: tuple[float, float]) -> bool:
    """Whether pushing ``obj`` straight to ``target`` sweeps nothing else: the pusher comes
    down ``PUSH_BACKOFF`` behind the cube, then cube and fingers travel to the target."""
    o = world.object(obj)
    if o is None:
        return False
    start, goal = np.asarray(o.pos[:2]), np.asarray(target, dtype=np.float64)
    d = goal - start
    dist = float(np.linalg.norm(d))
    if dist < 1e-6:
        return False
    u = d / dist
    behind = start - u * (scripted.PUSH_BACKOFF + 0.01)
    ahead = goal + u * scene.CUBE_HALF
    phi = abs(o.yaw - math.atan2(u[1], u[0])) % (math.pi / 2)
    half = scene.CUBE_HALF * (math.cos(phi) + math.sin(phi)) - SLIDE
    path = _corridor(behind, ahead, half)
    return not any(_overlap(path, ob) for ob in _obstacles(world, obj))


def _moved(world: WorldState, obj: str, xy) -> WorldState:
    return _PUSH.effect(world, PushParams(object=obj, target=(float(xy[0]), float(xy[1]))))


def _spot_ok(world: WorldState, mover: str, subject: str, xy: np.ndarray, back: np.ndarray):
    """The subject graspable wherever along the last stretch the pushed cube stops."""
    if not cube_reachable(float(xy[0]), float(xy[1])):
        return False
    for f in (0.0, 0.5, 1.0):
        p = xy - f * back
        w = _moved(world, mover, p)
        if not w.graspable(subject):
            return False
    return True


def separation_push(world: WorldState, obj: str) -> dict | None:
    """A ``push`` subgoal after which ``obj`` is graspable, or None if none is found.

    The cube itself is pushed first (its neighbours, and what the plan wants of them, stay
    put), sideways to the finger axis before anything else; then each blocking neighbour,
    away from it."""
    o = world.object(obj)
    if o is None or o.held or not o.on_table or world.graspable(obj):
        return None
    blockers = [b for b in world.grasp_blockers(obj) if world.object(b) is not None]
    away = 0.0  # angle away from the (first) blocker; along -y when a wall blocks
    if blockers:
        b = world.object(blockers[0])
        away = math.atan2(o.pos[1] - b.pos[1], o.pos[0] - b.pos[0])
    else:
        away = -math.pi / 2 if any("wall" in s for s in world.grasp_blockers(obj)) else 0.0
    movers = [obj] + [b for b in blockers if world.object(b).on_table and world.under(b) is None]
    for mover in movers:
        m = world.object(mover)
        base = away if mover == obj else away + math.pi
        for dist in DISTANCES:
            for da in ANGLES if mover == obj else (0.0, math.pi / 4, -math.pi / 4):
                ang = base + da
                u = np.array([math.cos(ang), math.sin(ang)])
                xy = np.asarray(m.pos[:2]) + dist * u
                xy = np.round(xy, 3)
                back = u * min(scene.REGION_RADIUS, dist - 0.02)
                if not _spot_ok(world, mover, obj, xy, back):
                    continue
                if not push_path_clear(world, mover, (float(xy[0]), float(xy[1]))):
                    continue
                params = PushParams(object=mover, target=(float(xy[0]), float(xy[1])))
                if _PUSH.preconditions(world, params):
                    continue
                return {"skill": "push", "object": mover, "target": [float(xy[0]), float(xy[1])]}
    return None
