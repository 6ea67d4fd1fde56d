"""Steps that cannot run because of where a cube stands, replaced by steps that can (the
repairs the bridge's hints name)."""

from __future__ import annotations

import math

import numpy as np

from sim.world import WorldState
from skills.base import cube_of

#: At most this many pushes are inserted into one plan to free cubes for picking.
MAX_SEPARATIONS = 4


def repair_steps(steps: list[dict], world: WorldState, notes: list[str]) -> list[dict]:
    """Replace each step that cannot run because of where a cube stands by steps that can
    (the repairs the bridge's hints name), one at a time, as :func:`_repair` finds them:

    - a pick whose cube the fingers cannot get around (a touching neighbour along the finger
      axis), or that the pick skill's success predictor rates too low: the push that frees
      it first (``not_graspable``, ``low_affordance``);
    - opening or closing the drawer with a cube in its path: that cube pushed out of it
      first;
    - a push to a table region whose fingers cannot come down behind the cube (a bin wall on
      that side), or of a cube that is not on the table: a pick and a place on the region.

    A step nothing repairs is left as it is, for the bridge to refuse with its reason."""
    from bridge.validate import simulate

    steps = list(steps)
    for _ in range(MAX_SEPARATIONS):
        try:
            # the world returned is the one before the first step that cannot run
            before, reasons = simulate(world, steps)
        except Exception:  # a step the bridge will reject anyway, with its own reason
            return steps
        if not reasons:
            return steps
        i = int(reasons[0].path.split("/")[2])
        fix, what = _repair(before, steps[i], reasons[0].code)
        if what is None:
            return steps
        if fix is None:
            notes.append(f"{what} and nothing repairs it")
            return steps
        steps[i : i + 1] = fix
        notes.append(f"{what}: {', then '.join(_say(s) for s in fix)}")
    return steps


def _say(step: dict) -> str:
    args = ", ".join(f"{k}={v}" for k, v in step.items() if k != "skill")
    return f"{step['skill']}({args})"


def _repair(world: WorldState, step: dict, code: str) -> tuple[list[dict] | None, str | None]:
    """The steps to run instead of ``step`` in ``world`` so that it can run (a push, then
    ``step``; or another way to the same effect), or None; and what is in its way (None
    when it is not a case this repairs)."""
    from bridge.reasons import LOW_AFFORDANCE, NOT_GRASPABLE, PRECONDITION_VIOLATED
    from skills.affordance import affordance_repair
    from skills.separation import clearing_push, separation_push

    skill = step["skill"]
    if skill == "pick" and code in (NOT_GRASPABLE, LOW_AFFORDANCE):
        obj = step["object"]
        what = f"{obj} cannot be picked where it is"
        if code == NOT_GRASPABLE:
            fix = separation_push(world, obj)
        else:
            fix = affordance_repair(world, step)[0]
        return ([fix, step] if fix is not None else None), what
    if code != PRECONDITION_VIOLATED:
        return None, None
    if skill in ("open_drawer", "close_drawer") and world.drawer is not None:
        from skills.drawer import path_blockers

        opening = skill == "open_drawer"
        blocking = path_blockers(world, opening)
        if not blocking:
            return None, None
        name, d = blocking[0], world.drawer
        o = cube_of(world, name)
        away = math.atan2(o.pos[1] - d.pos[1], o.pos[0] - d.pos[0])
        fix = clearing_push(world, name, away, lambda w: name in path_blockers(w, opening))
        return ([fix, step] if fix is not None else None), f"{name} is in the drawer's path"
    if skill == "push" and isinstance(step["target"], str) and world.region(step["target"]):
        from skills.pick import Pick, PickParams
        from skills.place import Place, PlaceParams
        from skills.push import landing_wall

        obj, region = step["object"], step["target"]
        moved = world.object(obj)
        if moved is None or moved.held:
            return None, None
        goal = np.asarray(world.region(region).pos[:2])  # type: ignore[union-attr]
        if moved.on_table:
            if landing_wall(world, obj, goal) is None:
                return None, None
            # the fingers cannot come down behind it (a bin wall there): carry it instead
            why = f"the fingers cannot come down behind {obj} to push it"
        else:  # in a bin, or on another cube: nothing to push it along; carry it there
            why = f"{obj} is not on the table, so it cannot be pushed"
        pick, place = PickParams(object=obj), PlaceParams(target=region)
        if world.held_object is not None or Pick().preconditions(world, pick):
            return None, why
        carried = Pick().effect(world, pick)
        if Place().preconditions(carried, place):
            return None, why
        return [
            {"skill": "pick", "object": obj},
            {"skill": "place", "target": region},
        ], why
    return None, None
