"""Claiming a skill's success from cameras: what is checked before a success counts.

With ``--perception camera`` the success test reads the cameras' estimate, and an estimate
can cross into success before the world does (a cube seen in the bin while the hand still
hides it). A claim is made only after the skill's retreat and a short settle, on what this
frame's images confirm (:func:`confirm`). Evaluation (:mod:`skills.evaluate`) and the
perturbed rollouts (:mod:`skills.perturb`) both claim this way, so it lives below both.
"""

from __future__ import annotations

import numpy as np

from skills.base import smoothed
from skills.border import clear_of_border


def run_retreat(sim, skill, binding, smoothing=None) -> int:
    """The retreat's steps on ``sim``; how many it took."""
    last = None
    n = 0
    for _ in range(skill.retreat_steps):
        obs = sim.observe()
        action = skill.retreat(obs, binding)
        if action is None:
            break
        if smoothing is not None:
            action = smoothed(action, obs, binding, smoothing)
        sim.step_physics(action)
        last, n = action, n + 1
    return n + settle(sim, None if last is None else float(last[3]))


#: Control steps the arm holds still, the gripper as it is, before a camera's claim: a
#: hold read from the fingers is confirmed once they stay at the cube's width, and the
#: scene has stopped moving under the cameras.
SETTLE_STEPS = 3


def settle(sim, grip: float | None) -> int:
    if sim.perception is None:
        return 0
    if grip is None:
        w = sim.world_state()
        grip = 1.0 if w.held_object or w.gripper_opening < 0.02 else -1.0
    for _ in range(SETTLE_STEPS):
        sim.step_physics(np.array([0.0, 0.0, 0.0, grip]))
    return SETTLE_STEPS


def confirm(sim, skill, binding, before, params, smoothing=None) -> str:
    """With ``--perception camera``, after the estimate crossed into success: the skill's
    retreat and a settle of :data:`SETTLE_STEPS`, then the success test again on the
    estimate, with every cube it rests on pinned by this frame's images and the verdict the
    same for their estimates moved by their possible error (``sim.perception.confirm``);
    where they are not, the arm goes home to look again (:func:`look_again`).
    ``"success"``: claimed; ``"uncertain"``: the test passes on a belief the images cannot
    confirm (reported, not claimed); ``"undone"``: the test no longer passes (or, for a
    push, seen from home, its cube is too near the target's border to call)."""
    run_retreat(sim, skill, binding, smoothing)
    if not skill.success(before, sim.world_state(), params):
        return "undone"
    if not claim_unsure(sim, skill.name, binding, before, params):
        return "success"
    if not look_again(sim):
        return "uncertain"
    # the images at their best: a push whose cube is now seen too near its target's border
    # to call goes on (:func:`clear_of_border`), its policy aiming further in
    if not skill.success(before, sim.world_state(), params) or not clear_of_border(
        sim, skill, binding, before, params
    ):
        return "undone"
    return "uncertain" if claim_unsure(sim, skill.name, binding, before, params) else "success"


def look_again(sim) -> bool:
    """Where the hand hides what a claim rests on: the arm home (the scripted motion), out
    of the cameras' way, as the runner's goal check from images does. False where it
    cannot (a cube in the hand)."""
    from skills.runtime import SkillExecutor

    if sim.world_state().held_object is not None:
        return False
    return SkillExecutor("scripted").run(sim, {"skill": "home"}).steps > 0


def claim_unsure(sim, skill: str, binding, before, params) -> list[str]:
    """The beliefs a skill's success rests on that this frame's images do not confirm
    (``sim.perception.confirm``): its cube, its target cube and any other without which
    the success test would not pass (a neighbour a region's "beside" counts) where the
    images do not pin them (unseen, partly hidden, or placed from their sides only; a held
    one is confirmed by the fingers' own joints; onto a cube, the stacking is confirmed by
    the column seen), the drawer or the light where uncertain; else a cube whose estimate
    moved by its possible error fails the test."""
    from sim.perception.confirm import unconfirmed
    from skills.registry import get

    s = get(skill)
    rows = [r for r in (binding.cube, binding.target_cube) if r is not None]
    names = [sim.object_names[r] for r in rows]
    stacked = names if binding.target_kind == "cube" else ()
    return unconfirmed(
        sim, lambda w: s.success(before, w, params), names, stacked, extra=s.success_rests_on
    )
