"""Steps that cannot run because of where a cube stands, replaced by steps that can (the
repairs the bridge's hints name)."""

from __future__ import annotations

from sim.world import WorldState

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
    when it is not a case a repair is run for). The step's own skill knows its repairs
    (:meth:`skills.base.Skill.repair`); this asks it."""
    from bridge.reasons import LOW_AFFORDANCE, NOT_GRASPABLE, PRECONDITION_VIOLATED
    from skills.registry import get

    if code not in (NOT_GRASPABLE, LOW_AFFORDANCE, PRECONDITION_VIOLATED):
        return None, None
    skill = get(step["skill"])
    params = skill.Params(**{k: v for k, v in step.items() if k != "skill"})
    r = skill.repair(world, params, code)
    if r is None or r.what is None:
        return None, None
    return r.steps, r.what
