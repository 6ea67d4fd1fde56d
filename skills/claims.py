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
    estimate, with every object it is about confirmed by this frame's images and the
    verdict the same for the object's estimate moved by perception's error; where they do
    not, the arm goes home to look again (:func:`look_again`). ``"success"``: claimed;
    ``"uncertain"``: the test passes on a belief the images cannot confirm (reported, not
    claimed); ``"undone"``: the test no longer passes."""
    run_retreat(sim, skill, binding, smoothing)
    if not skill.success(before, sim.world_state(), params):
        return "undone"
    if not claim_unsure(sim, skill.name, binding, before, params):
        return "success"
    if not look_again(sim):
        return "uncertain"
    if not skill.success(before, sim.world_state(), params):
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


def claim_unsure(sim, skill: str, binding, before=None, params=None) -> list[str]:
    """The beliefs a skill's success rests on that this frame's images do not confirm: its
    cube (a held one is confirmed by the fingers' own joints), the drawer or the light;
    with ``before`` and ``params``, also its cube where the success test fails for the
    cube's estimate moved by perception's error (``Perception.worlds_near``)."""
    from skills.registry import get

    unsure = set(sim.perception.report()["uncertain"])
    names = [] if binding.cube is None else [sim.object_names[binding.cube]]
    out = [n for n in (*names, *get(skill).success_rests_on) if n in unsure]
    if before is not None and names and not out:
        s = get(skill)
        if not all(s.success(before, w, params) for w in sim.perception.worlds_near(sim, names)):
            out.append(names[0])
    return out
