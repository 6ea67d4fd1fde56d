"""Affordance repairs: what would make an infeasible step feasible.

When a step's skill's success predictor (:mod:`skills.success_model`) rates it too low,
:func:`affordance_repair` asks that skill what to do about it (each skill declares its own
repairs, :meth:`skills.base.Skill.repair`): a push before a pick, the targets a place's
predictor rates higher, a push in two shorter steps. The bridge names it in its hint. This
module sits above every skill (it looks skills up in the registry); no skill imports it.
"""

from __future__ import annotations

from sim.world import WorldState
from skills.base import LOW_AFFORDANCE
from skills.registry import get


def affordance_repair(world: WorldState, step: dict) -> tuple[dict | None, str]:
    """What would make ``step`` feasible where its skill's success predictor rates it too
    low: a step to insert before it (or None) and a hint, as the step's own skill knows
    it (:meth:`skills.base.Skill.repair` with ``LOW_AFFORDANCE``)."""
    skill = get(step["skill"])
    params = skill.Params(**{k: v for k, v in step.items() if k != "skill"})
    r = skill.repair(world, params, LOW_AFFORDANCE)
    if r is None:
        return None, "check the world state before this step"
    first = r.steps[0] if r.steps is not None and len(r.steps) > 1 else None
    return first, r.hint
