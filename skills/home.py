"""home(): open the gripper and return to the rest pose (also the safe stop)."""

from __future__ import annotations

import numpy as np

from sim import scene
from sim.world import WorldState
from skills.base import NO_EFFECT, Skill, SkillParams, Violation, moved, replace_object

HOME_TOLERANCE = 0.03  # m


class HomeParams(SkillParams):
    pass


def at_home(world: WorldState) -> bool:
    return float(np.linalg.norm(np.asarray(world.grip_pos) - scene.HOME_POS)) <= HOME_TOLERANCE


class Home(Skill):
    name = "home"
    description = (
        "Open the gripper (releasing anything held) and move the arm to its rest pose "
        "above the table."
    )
    Params = HomeParams
    precondition_text = ("none; a held cube is dropped where the gripper is",)
    step_budget = 60

    def preconditions(self, world: WorldState, params: HomeParams) -> list[Violation]:
        if world.held_object is None and at_home(world):
            return [Violation(NO_EFFECT, "the arm is already at home with the gripper open")]
        return []

    def effect(self, world: WorldState, params: HomeParams) -> WorldState:
        w = world.model_copy(update={"grip_pos": tuple(float(v) for v in scene.HOME_POS)})
        if world.held_object is None:
            return w
        o = world.object(world.held_object)
        in_bin = next(
            (
                b.name
                for b in world.bins
                if abs(o.pos[0] - b.pos[0]) < b.inner_half and abs(o.pos[1] - b.pos[1]) < b.inner_half
            ),
            None,
        )
        new = moved(o, in_bin=in_bin, on_table=in_bin is None, pos=(o.pos[0], o.pos[1], scene.CUBE_HALF))
        return replace_object(w, new, held=None)

    def success(self, before: WorldState, after: WorldState, params: HomeParams) -> bool:
        return after.held_object is None and at_home(after)
