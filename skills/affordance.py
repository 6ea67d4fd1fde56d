"""Affordances: what would make an infeasible step feasible, from geometry alone.

The world state says *whether* a cube can be grasped (:meth:`sim.world.WorldState.graspable`);
this module says what to do about it: :func:`separation_push` finds a ``push`` that moves
the cube (or, failing that, the neighbour in the way) to a free spot where the fingers fit,
with the pusher's approach and the cube's path clear of everything else. The bridge names
it in its hint; the rules planner inserts it before the pick.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import numpy as np

from sim import scene, scripted
from sim.world import WorldState, bin_walls, cube_reachable, polygons_overlap, square_footprint
from skills import call_memo
from skills.base import SkillParams, cube_of, resolve_xy
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


def _obstacles(world: WorldState, moving: list[str]) -> list[list[tuple[float, float]]]:
    out = [
        square_footprint(o.pos[0], o.pos[1], scene.CUBE_HALF, o.yaw)
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


def push_chain(world: WorldState, obj: str, target: tuple[float, float] | np.ndarray) -> list[str]:
    """The cubes a push of ``obj`` towards ``target`` moves: ``obj`` and the row of cubes
    touching it from behind along the push line (the push skill comes down behind the
    rear one and pushes them all; see ``skills.push.chain_rear``), front to rear.

    Asked by the push's preconditions and again by its predictor's features, about the
    same world: remembered within a :func:`skills.call_memo.scope` (a fresh list each)."""
    args = call_memo.key(obj, target)
    return list(call_memo.remembered("push_chain", world, args, lambda: _chain(world, obj, target)))


def _chain(world: WorldState, obj: str, target: tuple[float, float] | np.ndarray) -> list[str]:
    from skills.push import CHAIN_BACK, CHAIN_LATERAL, CHAIN_MAX_Y, CHAIN_MAX_Z

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
    if _PUSH.preconditions(world, PushParams(object=mover, target=target)):
        return None
    step = {"skill": "push", "object": mover, "target": list(target)}
    return step if low_affordance(world, step) is None else None


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


# ---------------------------------------------------------------------- learned affordance
def low_affordance(
    world: WorldState, step: dict, params: SkillParams | None = None
) -> tuple[float, float] | None:
    """(p, threshold) when the skill's shipped success predictor rates ``step`` in
    ``world`` below its threshold; None when it does not (or the skill has no predictor).
    ``params``: the step already validated as the skill's parameters (the bridge has it),
    else they are built from ``step``."""
    from skills import success_model
    from skills.registry import get

    model = success_model.shipped(step["skill"])
    if model is None or not success_model.enabled():
        return None
    if params is None:
        skill = get(step["skill"])
        params = skill.Params(**{k: v for k, v in step.items() if k != "skill"})
    if not success_model.in_support(step["skill"], world, params):
        return None
    p = model.prob(world, params)
    return (p, model.threshold) if p < model.threshold else None


def _push_candidates(world: WorldState, obj: str) -> list[dict]:
    """Pushes of ``obj`` to each table region, and the separation push, that can run."""
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


def affordance_repair(world: WorldState, step: dict) -> tuple[dict | None, str]:
    """What would make ``step`` feasible: a step to insert before it (or None) and a hint.

    For a pick: a push of the cube (apart from its neighbour, or to a table region) after
    which both the geometry and the predictor accept the pick. For a place: the targets the
    predictor rates higher. For a push: going in two shorter pushes."""
    from skills import success_model
    from skills.registry import get

    name = step["skill"]
    model = success_model.shipped(name)
    skill = get(name)
    params = skill.Params(**{k: v for k, v in step.items() if k != "skill"})
    if name == "pick":
        best: tuple[float, dict] | None = None
        for push in _push_candidates(world, params.object):
            w2 = _moved_by(world, push)
            if skill.preconditions(w2, params):
                continue
            p = model.prob(w2, params) if model is not None else 1.0
            if model is None or p >= model.threshold:
                if best is None or p > best[0]:
                    best = (p, push)
        if best is not None:
            push = best[1]
            return push, (
                f"insert {_json(push)} before this pick (predicted success then {best[0]:.2f})"
            )
        return None, f"no single push makes {params.object} pickable; choose another cube"
    if name == "place" and model is not None:
        alts: list[tuple[float, str]] = []
        for t in [b.name for b in world.bins] + [r.name for r in world.regions]:
            if t == params.target:
                continue
            p2 = skill.Params(target=t)
            if not skill.preconditions(world, p2):
                alts.append((model.prob(world, p2), t))
        alts.sort(reverse=True)
        good = [f"{t} ({p:.2f})" for p, t in alts[:3] if p >= model.threshold]
        held = world.object(world.held_object) if world.held_object else None
        turned = f"the held cube is turned {abs(held.yaw):.2f} rad; " if held is not None else ""
        if good:
            return None, f"{turned}targets rated higher: {', '.join(good)}"
        return None, f"{turned}no target is rated feasible: home releases the cube"
    if name == "push" and model is not None:
        o = world.object(params.object)
        goal = resolve_xy(world, params.target)
        if o is not None and goal is not None:
            mid = np.round((np.asarray(o.pos[:2]) + goal) / 2, 3)
            return None, f"push in two shorter steps, first to [{mid[0]}, {mid[1]}]"
    return None, "check the world state before this step"


def _moved_by(world: WorldState, push: dict) -> WorldState:
    params = PushParams(object=push["object"], target=_target(push["target"]))
    return _PUSH.effect(world, params)


def _target(t: str | list[float]) -> str | tuple[float, float]:
    # a JSON point [x, y] as the params' tuple; PushParams itself checks its length
    return cast("tuple[float, float]", tuple(t)) if isinstance(t, list) else t


def _json(step: dict) -> str:
    import json

    return json.dumps(step)
