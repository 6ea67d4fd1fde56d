"""place(target): put the held cube into a bin, onto another cube, or on a table region."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from sim import scene, scripted
from sim.world import WorldState
from skills.base import (
    DOMAIN_PLACE_TARGET,
    PRECONDITION,
    UNREACHABLE,
    Binding,
    Skill,
    SkillParams,
    Violation,
    bound_cube,
    cube_of,
    cube_yaw,
    grip_of,
    lost,
    moved,
    opening_of,
    proprio_features,
    random_cubes,
    replace_object,
    run_expert_until,
    sample_arm_start,
    yaw_features,
)

if TYPE_CHECKING:
    from sim.env import TabletopEnv


class PlaceParams(SkillParams):
    target: str = Field(
        ...,
        max_length=64,
        description="bin, cube to stack on, or table region",
        json_schema_extra={"domain": DOMAIN_PLACE_TARGET},
    )


#: After placing, the grip site must be this far above the placed cube: the gripper has
#: let go and backed off, so the cube has settled and the next skill starts clear.
CLEARANCE = 0.05
KINDS = ("bin", "cube", "region")
#: A cube resting this far from the grip site is out of the gripper (m) ...
DROP_GRIP = 0.06
#: ... and, this far from its target (a bin's inner half width plus a margin), was dropped
#: short of it: the place can no longer succeed.
DROP_TARGET = 0.075


def placed_ok(world: WorldState, obj: str, target: str) -> bool:
    """Whether ``obj`` rests in/on ``target`` with the gripper empty and clear of it."""
    o = world.object(obj)
    if world.held_object is not None or o is None:
        return False
    if world.grip_pos[2] < o.pos[2] + CLEARANCE:
        return False
    if world.bin(target) is not None:
        return world.in_(obj, target)
    if world.region(target) is not None:
        return world.in_region(obj, target)
    return world.on(obj, target)


class Place(Skill[PlaceParams]):
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
        out: list[Violation] = []
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
        assert world.held_object is not None  # the preconditions: the gripper holds a cube
        h = cube_of(world, world.held_object)
        t = params.target
        if (b := world.bin(t)) is not None:
            new = moved(h, in_bin=t, pos=(b.pos[0], b.pos[1], 0.025))
        elif (r := world.region(t)) is not None:
            new = moved(h, on_table=True, pos=(r.pos[0], r.pos[1], scene.CUBE_HALF))
        else:
            o = cube_of(world, t)
            new = moved(h, on=t, pos=(o.pos[0], o.pos[1], o.pos[2] + 2 * scene.CUBE_HALF))
        above = (new.pos[0], new.pos[1], new.pos[2] + 2 * scene.CUBE_HALF)
        return replace_object(world, new, held=None, grip=above)

    def success(self, before: WorldState, after: WorldState, params: PlaceParams) -> bool:
        if before.held_object is None:
            return False
        return placed_ok(after, before.held_object, params.target)

    def doomed(
        self, before: WorldState, now: WorldState, params: PlaceParams, b: Binding
    ) -> str | None:
        """The held cube fell off the table, or came to rest out of the gripper away from
        the target (knocked out, dropped on the way): place cannot pick it up again. A cube
        target that fell or went out of reach ends it too."""
        h = before.held_object
        if h is None:
            return None
        why = lost(now, h)
        if why is None and b.target_cube is not None:
            why = lost(now, params.target, "the target ")
        if why is not None:
            return why
        o = cube_of(now, h)  # not lost
        if o.held or not (o.on_table or o.in_bin is not None or o.on is not None):
            return None  # in the gripper, or still falling
        if float(np.linalg.norm(np.asarray(o.pos) - np.asarray(now.grip_pos))) < DROP_GRIP:
            return None  # just released, or slipping between the fingers
        if b.target_cube is not None:
            goal = np.asarray(cube_of(now, params.target).pos[:2])
        else:
            assert b.target_xyz is not None  # a bin or region target binds its point
            goal = np.asarray(b.target_xyz[:2])
        if float(np.hypot(*(np.asarray(o.pos[:2]) - goal))) > DROP_TARGET:
            return f"{h} left the gripper away from {params.target}"
        return None

    # ------------------------------------------------------------------ execution side
    obs_dim = 18

    def bind(self, world: WorldState, params: PlaceParams) -> Binding:
        assert world.held_object is not None  # the preconditions: the gripper holds a cube
        cube = scene.CUBE_NAMES.index(world.held_object)
        t = params.target
        if world.bin(t) is not None or world.region(t) is not None:
            kind = "bin" if world.bin(t) is not None else "region"
            x, y, z = (float(v) for v in scripted.release_point(world, t))
            return Binding(cube=cube, target_kind=kind, target_xyz=(x, y, z))
        return Binding(cube=cube, target_kind="cube", target_cube=scene.CUBE_NAMES.index(t))

    @staticmethod
    def release(obs: dict, b: Binding) -> np.ndarray:
        if b.target_cube is not None:
            return obs["object_pos"][b.target_cube] + np.array([0, 0, scripted.STACK_RELEASE_DZ])
        assert b.target_xyz is not None  # a bin or region target binds its point
        return np.asarray(b.target_xyz)

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        c = bound_cube(b)
        grip, cube = grip_of(obs), obs["object_pos"][c]
        kind = np.array([float(b.target_kind == k) for k in KINDS])
        return np.concatenate(
            [
                *proprio_features(obs),
                cube - grip,
                self.release(obs, b) - grip,
                kind,
                yaw_features(obs, c),
            ]
        )

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        c = bound_cube(b)
        grip, cube = grip_of(obs), obs["object_pos"][c]
        return scripted.place_action(
            grip, opening_of(obs), cube, self.release(obs, b), cube_yaw(obs, c)
        )

    def potential(self, obs: dict, b: Binding) -> float:
        c = bound_cube(b)
        grip, cube = grip_of(obs), obs["object_pos"][c]
        rel = self.release(obs, b)
        phi = -2.0 * float(np.linalg.norm(cube[:2] - rel[:2])) - float(abs(cube[2] - rel[2]))
        if not scripted.is_grasped(grip, opening_of(obs), cube, cube_yaw(obs, c)):
            phi += 2.0 * min(max(grip[2] - cube[2], 0.0), CLEARANCE + 0.01)
        return phi

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> PlaceParams | None:
        """A cube in a grasp the pick skill produced, carried somewhere above the table."""
        names = random_cubes(rng)
        k = len(names)
        cubes: dict = {n: None for n in names}
        filled: str | None = None
        if k >= 2 and rng.random() < 0.3:
            # earlier places left cubes in a bin: this one must find room beside them
            filled = str(rng.choice(scene.BIN_NAMES))
            centre = env.model.body(filled).pos[:2]
            spots = rng.permutation(len(scripted.BIN_SPOTS) - 1)[: min(k - 1, 2)] + 1
            for n, i in zip(names[1:], spots, strict=False):
                x, y = centre + scripted.BIN_SPOTS[i] + rng.uniform(-0.006, 0.006, 2)
                cubes[n] = [x, y, 0.025, rng.uniform(-0.2, 0.2)]
        env.reset(
            seed=int(rng.integers(2**31)),
            options={"cubes": cubes, "arm": sample_arm_start(rng)},
        )
        held = scene.CUBE_NAMES.index(names[0])
        carry = np.array([*rng.uniform([-0.2, -0.25], [0.2, 0.25]), rng.uniform(0.08, 0.2)])

        def act(obs: dict) -> np.ndarray:
            grip, op, cube = grip_of(obs), opening_of(obs), obs["object_pos"][held]
            yaw = cube_yaw(obs, held)
            if scripted.is_grasped(grip, op, cube, yaw) and cube[2] > 0.07:
                return scripted._move(grip, carry, scripted.CLOSE)
            return scripted.pick_action(grip, op, cube, yaw)

        def done(obs: dict) -> bool:
            grip = grip_of(obs)
            return scripted.is_grasped(
                grip, opening_of(obs), obs["object_pos"][held], cube_yaw(obs, held)
            ) and bool(np.linalg.norm(grip - carry) < 0.02)

        if not run_expert_until(env, act, done, 120):
            return None
        w = env.world_state()
        if w.held_object != names[0]:
            return None
        kind = rng.choice(KINDS, p=[0.5, 0.3, 0.2])
        if kind == "cube":
            options = [
                o.name
                for o in w.objects
                if o.name != w.held_object
                and o.on_table
                and w.under(o.name) is None
                and o.reachable
            ]
        elif kind == "region":
            options = [
                r.name
                for r in w.regions
                if all(
                    np.hypot(o.pos[0] - r.pos[0], o.pos[1] - r.pos[1]) > 0.07
                    for o in w.objects
                    if o.name != w.held_object
                )
            ]
        else:
            options = [filled] if filled and rng.random() < 0.8 else list(w.bin_names)
        if not options:
            options = list(w.bin_names)
        return PlaceParams(target=str(rng.choice(options)))
