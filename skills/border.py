"""A push's success from cameras, with a margin: done only once clear of the border.

From images a cube's estimate is off by a millimetre or two, so a push that stops the moment
its estimate crosses its target's border leaves a claim there too close to call (reported
uncertain, never claimed). A push's policy aims at the target's point and goes on while its
success test does not pass; with cameras the test asks for the estimate clear of the border
by perception's error, so the push goes on that little further in. Both the control loops
(``skills.skill_env``, ``skills.runtime``) and the claim (``skills.claims``) read it, so it
lives below all three. In state mode it answers True at once.
"""

from __future__ import annotations


def pushes(skill) -> bool:
    """A skill that moves its object without grasping it (a push): its policy aims at the
    target's point and goes on while the success test does not pass."""
    return bool(skill.moves_object and not skill.grasps)


def clear_of_border(sim, skill, binding, before, params) -> bool:
    """With ``--perception camera``, for a skill that :func:`pushes`, where its success
    test passes on the estimate: whether it also passes with its cube's estimate moved by
    perception's error in every direction (``Perception.worlds_near``). A push whose cube
    the estimate has only just inside its target's border (within that error) is not done
    yet: its policy pushes on towards the target's point, where a claim on the border would
    only be reported uncertain. Other skills, and a cube held: True."""
    if sim.perception is None or not pushes(skill) or binding.cube is None:
        return True
    names = [sim.object_names[binding.cube]]
    return all(skill.success(before, w, params) for w in sim.perception.worlds_near(sim, names))
