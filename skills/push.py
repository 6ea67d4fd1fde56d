"""push(object, target): slide a cube along the table to a named region or a point."""

from __future__ import annotations

import numpy as np
from pydantic import Field, field_validator

from sim import scene
from sim.world import WorldState
from skills.base import (
    DOMAIN_PUSH_TARGET,
    DOMAIN_OBJECT,
    NO_EFFECT,
    OUT_OF_WORKSPACE,
    PRECONDITION,
    Skill,
    SkillParams,
    Violation,
    check_object,
    in_workspace,
    moved,
    replace_object,
    resolve_xy,
)

#: A push succeeds when the cube ends within this distance of a point target (m).
POINT_TOLERANCE = scene.REGION_RADIUS


class PushParams(SkillParams):
    object: str = Field(
        ..., max_length=64, description="cube to slide", json_schema_extra={"domain": DOMAIN_OBJECT}
    )
    target: str | tuple[float, float] = Field(
        ...,
        description="table region name, or [x, y] in metres",
        json_schema_extra={"domain": DOMAIN_PUSH_TARGET},
    )

    @field_validator("target")
    @classmethod
    def _finite(cls, v):
        if isinstance(v, tuple) and not all(np.isfinite(v)):
            raise ValueError("target coordinates must be finite")
        if isinstance(v, str) and len(v) > 64:
            raise ValueError("target name too long")
        return v


def _goal(world: WorldState, target) -> tuple[np.ndarray | None, float]:
    r = world.region(target) if isinstance(target, str) else None
    if r is not None:
        return np.asarray(r.pos), r.radius
    if isinstance(target, str):
        return None, 0.0
    return np.asarray(target, dtype=np.float64), POINT_TOLERANCE


def pushed_ok(world: WorldState, obj: str, target) -> bool:
    goal, tol = _goal(world, target)
    o = world.object(obj)
    if goal is None or o is None or not o.on_table:
        return False
    return float(np.hypot(o.pos[0] - goal[0], o.pos[1] - goal[1])) <= tol


class Push(Skill):
    name = "push"
    description = "Slide a cube along the table top to a table region or an [x, y] point."
    Params = PushParams
    precondition_text = (
        "the gripper is empty",
        "the cube is on the table with nothing on top of it",
        "the target is a table region or a reachable point on the table",
    )
    step_budget = 150

    def preconditions(self, world: WorldState, params: PushParams) -> list[Violation]:
        v = check_object(world, params.object, "object")
        if v:
            return v
        out = []
        goal, _ = _goal(world, params.target)
        if goal is None:
            out.append(
                Violation(
                    "hallucinated_target",
                    f"there is no table region {params.target}",
                    f"regions: {', '.join(world.region_names)}",
                    "target",
                )
            )
        elif not in_workspace(goal):
            out.append(
                Violation(
                    OUT_OF_WORKSPACE,
                    f"point ({goal[0]:.2f}, {goal[1]:.2f}) is outside the workspace",
                    f"x in [{scene.WORKSPACE_LOW[0]}, {scene.WORKSPACE_HIGH[0]}], "
                    f"y in [{scene.WORKSPACE_LOW[1]}, {scene.WORKSPACE_HIGH[1]}]",
                    "target",
                )
            )
        if world.held_object is not None:
            out.append(
                Violation(
                    PRECONDITION,
                    f"the gripper holds {world.held_object}",
                    f"place {world.held_object} first",
                    "object",
                )
            )
        o = world.object(params.object)
        if not o.on_table:
            out.append(Violation(PRECONDITION, f"{o.name} is not on the table", "", "object"))
        top = world.under(o.name)
        if top is not None:
            out.append(Violation(PRECONDITION, f"{top} is stacked on {o.name}", "", "object"))
        if not out and pushed_ok(world, o.name, params.target):
            out.append(
                Violation(NO_EFFECT, f"{o.name} is already at {params.target}", "", "target")
            )
        return out

    def effect(self, world: WorldState, params: PushParams) -> WorldState:
        o = world.object(params.object)
        goal = resolve_xy(world, params.target)
        new = moved(o, on_table=True, pos=(float(goal[0]), float(goal[1]), scene.CUBE_HALF))
        return replace_object(world, new, held=world.held_object)

    def success(self, before: WorldState, after: WorldState, params: PushParams) -> bool:
        return after.held_object is None and pushed_ok(after, params.object, params.target)
