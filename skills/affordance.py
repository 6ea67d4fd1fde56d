"""Affordance repairs: what would make an infeasible step feasible.

When a step's geometry or its skill's success predictor (:mod:`skills.success_model`)
rules it out, :func:`affordance_repair` says what to do about it: a push before a pick
(:mod:`skills.separation`), the targets a place's predictor rates higher, a push in two
shorter steps. The bridge names it in its hint; the rules planner inserts it. This module
sits above every skill (it looks skills up in the registry); no skill imports it.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from sim.world import WorldState
from skills import success_model
from skills.base import resolve_xy
from skills.push import Push, PushParams
from skills.registry import get
from skills.separation import push_path_clear, separation_push

_PUSH = Push()


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
