"""place(target): put the held cube into a bin, onto another cube, or on a table region."""

from __future__ import annotations

from pydantic import Field

from sim import scene
from sim.world import WorldState
from skills.base import (
    DOMAIN_PLACE_TARGET,
    PRECONDITION,
    UNREACHABLE,
    Skill,
    SkillParams,
    Violation,
    moved,
    replace_object,
)


class PlaceParams(SkillParams):
    target: str = Field(
        ...,
        max_length=64,
        description="bin, cube to stack on, or table region",
        json_schema_extra={"domain": DOMAIN_PLACE_TARGET},
    )


def placed_ok(world: WorldState, obj: str, target: str) -> bool:
    """Whether ``obj`` rests in/on ``target`` with the gripper empty."""
    if world.held_object is not None:
        return False
    if world.bin(target) is not None:
        return world.in_(obj, target)
    if world.region(target) is not None:
        return world.in_region(obj, target)
    return world.on(obj, target)


class Place(Skill):
    name = "place"
    description = (
        "Put the cube the gripper holds into a bin, on top of another cube, or on a table "
        "region, and open the gripper."
    )
    Params = PlaceParams
    precondition_text = (
        "the gripper holds a cube",
        "a cube target is on the table, not held, with nothing on top, and is not the held cube",
    )
    step_budget = 100

    def preconditions(self, world: WorldState, params: PlaceParams) -> list[Violation]:
        t = params.target
        if world.held_object is None:
            return [Violation(PRECONDITION, "the gripper is empty", "pick a cube first", "target")]
        if world.bin(t) is not None or world.region(t) is not None:
            return []
        o = world.object(t)
        if o is None:
            names = world.bin_names + world.object_names + world.region_names
            return [
                Violation(
                    "hallucinated_target",
                    f"there is no target {t} in the scene",
                    f"targets: {', '.join(names)}",
                    "target",
                )
            ]
        if t == world.held_object:
            return [
                Violation(
                    PRECONDITION,
                    f"cannot stack {t} on itself",
                    "choose a bin, a region or another cube",
                    "target",
                )
            ]
        out = []
        top = world.under(t)
        if top is not None:
            out.append(
                Violation(PRECONDITION, f"{top} is already on {t}", f"stack on {top}?", "target")
            )
        if not o.on_table:
            where = f"in {o.in_bin}" if o.in_bin else (f"on {o.on}" if o.on else "not on the table")
            out.append(
                Violation(
                    PRECONDITION,
                    f"{t} is {where}; stacking needs a cube on the table",
                    "",
                    "target",
                )
            )
        if not o.reachable:
            out.append(Violation(UNREACHABLE, f"{t} is out of the arm's reach", "", "target"))
        return out

    def effect(self, world: WorldState, params: PlaceParams) -> WorldState:
        h = world.object(world.held_object)
        t = params.target
        if world.bin(t) is not None:
            b = world.bin(t)
            new = moved(h, in_bin=t, pos=(b.pos[0], b.pos[1], 0.025))
        elif world.region(t) is not None:
            r = world.region(t)
            new = moved(h, on_table=True, pos=(r.pos[0], r.pos[1], scene.CUBE_HALF))
        else:
            o = world.object(t)
            new = moved(h, on=t, pos=(o.pos[0], o.pos[1], o.pos[2] + 2 * scene.CUBE_HALF))
        return replace_object(world, new, held=None)

    def success(self, before: WorldState, after: WorldState, params: PlaceParams) -> bool:
        if before.held_object is None:
            return False
        return placed_ok(after, before.held_object, params.target)
