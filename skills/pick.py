"""pick(object): grasp a cube and lift it clear of the table."""

from __future__ import annotations

from pydantic import Field

from sim.world import WorldState
from skills.base import (
    DOMAIN_OBJECT,
    PRECONDITION,
    Skill,
    SkillParams,
    Violation,
    check_object,
    moved,
    replace_object,
)

LIFT_Z = 0.08  # a picked cube's centre must be at least this high (m)


class PickParams(SkillParams):
    object: str = Field(
        ..., max_length=64, description="cube to grasp", json_schema_extra={"domain": DOMAIN_OBJECT}
    )


class Pick(Skill):
    name = "pick"
    description = "Grasp a cube with the gripper and lift it above the table."
    Params = PickParams
    precondition_text = (
        "the gripper is empty",
        "the cube is reachable and has no other cube on top of it",
    )
    step_budget = 80

    def preconditions(self, world: WorldState, params: PickParams) -> list[Violation]:
        v = check_object(world, params.object, "object")
        if v:
            return v
        out = []
        if world.held_object is not None:
            code_msg = (
                f"{params.object} is already held"
                if world.held_object == params.object
                else f"the gripper already holds {world.held_object}"
            )
            out.append(
                Violation(PRECONDITION, code_msg, f"place {world.held_object} first", "object")
            )
        top = world.under(params.object)
        if top is not None:
            out.append(
                Violation(
                    PRECONDITION,
                    f"{top} is stacked on {params.object}",
                    f"pick {top} and place it elsewhere first",
                    "object",
                )
            )
        return out

    def effect(self, world: WorldState, params: PickParams) -> WorldState:
        o = world.object(params.object)
        p = (o.pos[0], o.pos[1], 0.12)
        return replace_object(world, moved(o, held=True, pos=p), held=o.name)

    def success(self, before: WorldState, after: WorldState, params: PickParams) -> bool:
        o = after.object(params.object)
        return o is not None and after.held(params.object) and o.pos[2] >= LIFT_Z
