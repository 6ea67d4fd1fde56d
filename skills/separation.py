"""Pushes that make room: the repairs a pick or a drawer needs when a cube stands where it
must not.

The world state says *whether* a cube can be grasped (:meth:`sim.world.WorldState.graspable`);
:func:`separation_push` finds a ``push`` that moves the cube (or, failing that, the
neighbour in the way) to a free spot where the fingers fit, with the pusher's approach and
the cube's path clear of everything else; :func:`clearing_push` moves a cube out of the way
of something else. The pick's violation names the first in its hint, the bridge's
affordance repair and the rules planner insert them. Only the push skill and the
predictors are below this module, so any skill may ask it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import numpy as np

from sim import scene, scripted
from sim.objects import spec as object_spec
from sim.world import WorldState, bin_walls, cube_reachable, polygons_overlap
from skills.base import cube_of
from skills.push import Push, PushParams, push_chain
from skills.success_model import low_affordance

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


def _obstacles(world: WorldState, moving: list[str]) -> list[list[tuple[float, float]]]:
    out = [
        object_spec(o.name).footprint(o.pos[0], o.pos[1], o.yaw)
        for o in world.objects
        if o.name not in moving and not o.held and not o.fallen
    ]
    for b in world.bins:
        out.extend(bin_walls(b))
    return out


def _corridor(a: np.ndarray, b: np.ndarray, half: float) -> list[tuple[float, float]]:
    d = b - a
    u = d / max(float(np.linalg.norm(d)), 1e-9)
    n = np.array([-u[1], u[0]]) * half
    return [tuple(p) for p in (a + n, b + n, b - n, a - n)]


def push_path_clear(
    world: WorldState, obj: str, target: tuple[float, float], chain: list[str] | None = None
) -> bool:
    """Whether pushing ``obj`` straight to ``target`` sweeps nothing else: the pusher comes
    down ``PUSH_BACKOFF`` behind the rear of the row it pushes, then the row and the fingers
    travel as far as ``obj`` does."""
    o = world.object(obj)
    if o is None:
        return False
    start, goal = np.asarray(o.pos[:2]), np.asarray(target, dtype=np.float64)
    d = goal - start
    dist = float(np.linalg.norm(d))
    if dist < 1e-6:
        return False
    u = d / dist
    if chain is None:  # (a caller that has the pushed row already passes it)
        chain = push_chain(world, obj, target)
    obstacles = _obstacles(world, chain)
    for i, name in enumerate(chain):
        c = cube_of(world, name)
        p = np.asarray(c.pos[:2])
        back = scripted.PUSH_BACKOFF + 0.01 if i == len(chain) - 1 else scene.CUBE_HALF
        phi = abs(c.yaw - math.atan2(u[1], u[0])) % (math.pi / 2)
        half = scene.CUBE_HALF * (math.cos(phi) + math.sin(phi)) - SLIDE
        path = _corridor(p - u * back, p + d + u * scene.CUBE_HALF, half)
        if any(polygons_overlap(path, ob) for ob in obstacles):
            return False
    return True


def _moved(world: WorldState, chain: list[str], delta: np.ndarray) -> WorldState:
    """``world`` with every cube of ``chain`` shifted by ``delta`` on the table."""
    objs = [
        o.model_copy(update={"pos": (o.pos[0] + delta[0], o.pos[1] + delta[1], o.pos[2])})
        if o.name in chain
        else o
        for o in world.objects
    ]
    return world.model_copy(update={"objects": objs})


def _spot_ok(
    world: WorldState, chain: list[str], subject: str, shift: np.ndarray, back: np.ndarray
) -> bool:
    """The subject graspable wherever along the last stretch the pushed row stops."""
    mover = cube_of(world, chain[0])
    for f in (0.0, 0.5, 1.0):
        delta = np.asarray(shift) - f * back
        p = np.asarray(mover.pos[:2]) + delta
        if not cube_reachable(float(p[0]), float(p[1])):
            return False
        if not _moved(world, chain, delta).graspable(subject):
            return False
    return True


def separation_push(world: WorldState, obj: str) -> dict | None:
    """A ``push`` subgoal after which ``obj`` is graspable, or None if none is found.

    Asked only when neither grasp axis is free (a neighbour or a wall on each). The cube
    itself is pushed first (its neighbours, and what the plan wants of them, stay put), away
    from its first blocking neighbour; then each blocking neighbour, away from it."""
    o = world.object(obj)
    if o is None or o.held or not o.on_table or world.graspable(obj):
        return None
    blocking = world.blocked_by(obj)
    blockers = [b for b in blocking if world.object(b) is not None]
    away = 0.0  # angle away from the (first) blocker; along -y when a wall blocks
    if blockers:
        b = cube_of(world, blockers[0])
        away = math.atan2(o.pos[1] - b.pos[1], o.pos[0] - b.pos[0])
    else:
        away = -math.pi / 2 if any("wall" in s for s in blocking) else 0.0
    movers = [obj] + [b for b in blockers if cube_of(world, b).on_table and world.under(b) is None]
    for mover in movers:
        m = cube_of(world, mover)
        base = away if mover == obj else away + math.pi
        for dist in DISTANCES:
            for da in ANGLES if mover == obj else (0.0, math.pi / 4, -math.pi / 4):
                ang = base + da
                u = np.array([math.cos(ang), math.sin(ang)])
                xy = np.round(np.asarray(m.pos[:2]) + dist * u, 3)
                back = u * min(scene.REGION_RADIUS, dist - 0.02)
                chain = push_chain(world, mover, xy)
                if obj in chain[1:]:
                    continue  # the cube to free would be pushed along with its blocker
                if not _spot_ok(world, chain, obj, xy - np.asarray(m.pos[:2]), back):
                    continue
                step = _runnable_push(world, mover, xy, chain)
                if step is not None:
                    return step
    return None


def _runnable_push(world: WorldState, mover: str, xy: np.ndarray, chain: list[str]) -> dict | None:
    """The ``push`` of ``mover`` (with the row ``chain``) to ``xy`` as a subgoal, if its path
    is clear, its preconditions hold and its predictor does not rate it too low."""
    target = (float(xy[0]), float(xy[1]))
    if not push_path_clear(world, mover, target, chain):
        return None
    params = PushParams(object=mover, target=target)
    if _PUSH.preconditions(world, params):
        return None
    step = {"skill": "push", "object": mover, "target": list(target)}
    return step if low_affordance(world, step, params) is None else None


#: Distances (m) and turns from "away" (rad) a clearing push tries, nearest and straightest
#: first.
CLEAR_DISTANCES = (0.08, 0.11, 0.14)
CLEAR_ANGLES = (0.0, math.pi / 4, -math.pi / 4, math.pi / 2, -math.pi / 2, 3 * math.pi / 4)


def clearing_push(
    world: WorldState,
    mover: str,
    away: float,
    still_in_the_way: Callable[[WorldState], bool],
) -> dict | None:
    """A ``push`` of ``mover`` alone, roughly towards the angle ``away``, after which
    ``still_in_the_way`` no longer holds of the world it leaves; None if none is found.

    What a step that cannot run because of where a cube stands needs first: a cube in the
    drawer's path moved out of it, a cube against a bin wall moved off it so that the
    fingers can come down behind it. The pushed cube ends on the table, clear of the rest
    and reachable, and the push itself must be feasible and rated likely to succeed."""
    m = world.object(mover)
    if m is None or m.held or not m.on_table:
        return None
    start = np.asarray(m.pos[:2])
    for dist in CLEAR_DISTANCES:
        for da in CLEAR_ANGLES:
            u = np.array([math.cos(away + da), math.sin(away + da)])
            xy = np.round(start + dist * u, 3)
            if not cube_reachable(float(xy[0]), float(xy[1])):
                continue
            chain = push_chain(world, mover, xy)
            if len(chain) > 1 or still_in_the_way(_moved(world, chain, xy - start)):
                continue
            step = _runnable_push(world, mover, xy, chain)
            if step is not None:
                return step
    return None


def push_candidates(world: WorldState, obj: str) -> list[dict]:
    """Pushes of ``obj`` to each table region, and the separation push, that can run: what
    a pick the predictor rates too low may try first."""
    out: list[dict] = []
    fix = separation_push(world, obj)
    if fix is not None:
        out.append(fix)
    for r in world.regions:
        params = PushParams(object=obj, target=r.name)
        if _PUSH.preconditions(world, params) or not push_path_clear(world, obj, r.pos):
            continue
        out.append({"skill": "push", "object": obj, "target": r.name})
    return out


def moved_by(world: WorldState, push: dict) -> WorldState:
    """The world after the ``push`` subgoal ``push`` (its predicted effect)."""
    t = push["target"]
    # a JSON point [x, y] as the params' tuple; PushParams itself checks its length
    target = cast("tuple[float, float]", tuple(t)) if isinstance(t, list) else t
    return _PUSH.effect(world, PushParams(object=push["object"], target=target))
