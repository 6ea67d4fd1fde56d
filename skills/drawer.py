"""open_drawer() and close_drawer(): pull the drawer out by its knob, push it back in.

Both act on the articulated scene's one drawer, so they take no parameters. The knob's
grasp point is read from the drawer's opening and where the knob sits with the drawer shut
(bound when the subgoal starts): the observation and the experts follow the drawer as it
moves, with no state of their own.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sim import scene, scripted
from sim.world import DrawerState, WorldState
from skills.base import (
    NO_EFFECT,
    PRECONDITION,
    Binding,
    Repair,
    Skill,
    SkillParams,
    Violation,
    cube_of,
    grip_of,
    hand_full,
    opening_of,
    proprio_features,
    random_cubes,
    replace_object,
    sample_arm_start,
)
from skills.separation import clearing_push

if TYPE_CHECKING:
    from sim.env import TabletopEnv

#: The drawer's front face, from the centre of its inside along -x (m; its front wall's
#: centre plus half its thickness, as in articulated.xml).
FRONT_OFFSET = 0.068
#: Half its outer width across y (m): the side walls' outer faces.
OUTER_HALF_Y = 0.051
#: How far the fingers reach past the knob's grasp point towards the robot while they pull
#: or come down in front of it (m), and how far out beside the drawer (m).
HAND_REACH_X = 0.07
HAND_REACH_Y = 0.01
#: A cube blocks the drawer when its centre is this close to the swept area (m): half an
#: edge, grown for a cube turned by 45 degrees.
CUBE_REACH = scene.CUBE_HALF * 1.45
#: Above this height (centre, m) a cube clears the drawer, the knob and the fingers.
CLEAR_Z = 0.15
#: A cube in the drawer higher than this (centre, m) is stacked and would catch on the
#: cabinet's top as the drawer goes in.
STACKED_Z = scene.DRAWER_FLOOR_Z + scene.CUBE_HALF + 0.02
#: The fingers count as released from the knob from this opening on (m).
RELEASED_OPENING = scripted.KNOB_CLEAR_OPENING
#: Where each skill leaves the grip site: above the knob's grasp point (m).
LEAVE_Z = scripted.KNOB_HOVER


class DrawerParams(SkillParams):
    pass


# ---------------------------------------------------------------------- geometry
def knob_when_shut(d: DrawerState) -> np.ndarray:
    """The knob's grasp point with the drawer pushed in (it moves along -x as it opens)."""
    return np.asarray(d.handle_pos) + [d.opening, 0.0, 0.0]


def knob_of(obs: dict, b: Binding) -> np.ndarray:
    """The knob's grasp point now, from the drawer's observed opening."""
    assert b.target_xyz is not None, "the binding has no knob"
    return np.asarray(b.target_xyz) - [float(obs["articulation"][0]), 0.0, 0.0]


def _moved_drawer(world: WorldState, opening: float, grip: np.ndarray) -> WorldState:
    """``world`` with the drawer out ``opening`` m, its contents carried along, and the grip
    site at ``grip``."""
    d = world.drawer
    assert d is not None
    dx = d.opening - opening  # the drawer's frame moves along -x as it opens
    shift = np.array([dx, 0.0, 0.0])
    new = d.model_copy(
        update={
            "opening": opening,
            "is_open": opening >= scene.DRAWER_OPEN_MIN,
            "is_closed": opening <= scene.DRAWER_CLOSED_MAX,
            "pos": tuple(float(v) for v in np.asarray(d.pos) + shift),
            "handle_pos": tuple(float(v) for v in np.asarray(d.handle_pos) + shift),
        }
    )
    w = world.model_copy(update={"drawer": new})
    for name in d.contents:
        o = w.object(name)
        assert o is not None
        moved = o.model_copy(update={"pos": tuple(float(v) for v in np.asarray(o.pos) + shift)})
        w = replace_object(w, moved, held=w.held_object)
    return w.model_copy(update={"grip_pos": tuple(float(v) for v in grip)})


def blockers(world: WorldState, x_lo: float, x_hi: float, y_lo: float, y_hi: float) -> list[str]:
    """Cubes (not held, not in the drawer) whose centre lies in or next to the table area
    ``[x_lo, x_hi] x [y_lo, y_hi]`` low enough to be struck."""
    d = world.drawer
    contents = d.contents if d is not None else []
    r = CUBE_REACH
    return [
        o.name
        for o in world.objects
        if not o.held
        and not o.fallen
        and o.name not in contents
        and o.pos[2] < CLEAR_Z
        and x_lo - r < o.pos[0] < x_hi + r
        and y_lo - r < o.pos[1] < y_hi + r
    ]


def path_blockers(world: WorldState, opening: bool) -> list[str]:
    """Cubes in the way of the drawer and the hand: for ``opening``, the floor the drawer
    and its knob sweep out to full travel and the fingers pulling beyond; for closing, the
    drawer's part outside the cabinet and the spot in front of the knob where the fingers
    come down."""
    d = world.drawer
    assert d is not None
    knob = np.asarray(d.handle_pos)
    front = d.pos[0] - FRONT_OFFSET
    y_lo, y_hi = d.pos[1] - OUTER_HALF_Y, d.pos[1] + OUTER_HALF_Y
    if opening:
        far = knob[0] - (scene.DRAWER_TRAVEL - d.opening) - HAND_REACH_X
        return blockers(world, far, front, y_lo - HAND_REACH_Y, y_hi + HAND_REACH_Y)
    far = knob[0] - scripted.DRAWER_PUSH_BACK - HAND_REACH_X / 2
    ky = knob[1]
    hand = blockers(world, far, knob[0], ky - 0.03, ky + 0.03)
    drawer = blockers(world, front, scene.CABINET_LOW[0], y_lo, y_hi)
    return list(dict.fromkeys(hand + drawer))


def _common(world: WorldState, opening: bool) -> list[Violation]:
    """What stops either skill: no drawer here, a held cube, a cube in the way."""
    if world.drawer is None:
        return [
            Violation(
                PRECONDITION,
                "this scene has no drawer",
                "the drawer skills need the articulated scene",
            )
        ]
    out = hand_full(world)
    for name in path_blockers(world, opening):
        out.append(
            Violation(
                PRECONDITION,
                f"{name} is in the drawer's path",
                f"push or pick {name} out of the way first",
            )
        )
    return out


_SHUT: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def shut_geometry(env: TabletopEnv) -> tuple[np.ndarray, np.ndarray]:
    """The drawer's inside centre and its knob's grasp point with the drawer shut, from the
    env's model (a start is drawn before the env's own state is forward-computed)."""
    if "drawer" not in _SHUT:
        import mujoco

        data = mujoco.MjData(env.model)
        mujoco.mj_kinematics(env.model, data)
        inside = np.array(data.xpos[env.model.body(scene.DRAWER_NAME).id])
        knob = np.array(data.site_xpos[env.model.site(f"{scene.DRAWER_HANDLE}_site").id])
        _SHUT["drawer"] = (inside, knob)
    return _SHUT["drawer"]


def _drawer_start(
    env: TabletopEnv, rng: np.random.Generator, opening: float, leave: np.ndarray
) -> None:
    """Reset ``env`` to a chained start: the arm where other skills leave it (or where the
    other drawer skill left it, above ``leave`` relative to the knob), cubes at random, one
    sometimes in the drawer, the drawer out ``opening`` m, the light at random."""
    shut_inside, shut_knob = shut_geometry(env)
    inside = shut_inside - [opening, 0.0, 0.0]
    knob = shut_knob - [opening, 0.0, 0.0]
    names = random_cubes(rng, env)
    cubes: dict[str, Any] = {n: None for n in names}
    if rng.random() < 0.3:
        hx, hy = scene.DRAWER_INNER_HALF
        dx = rng.uniform(-(hx - 0.025), hx - 0.025)
        dy = rng.uniform(-(hy - 0.024), hy - 0.024)
        z = scene.DRAWER_FLOOR_Z + scene.CUBE_HALF
        yaw = float(rng.uniform(-0.2, 0.2))
        cubes[names[-1]] = [inside[0] + dx, inside[1] + dy, z, yaw]
    arm = sample_arm_start(rng)
    if rng.random() < 0.25:
        arm = knob + leave + [0.0, 0.0, rng.uniform(0.0, 0.04)]
    elif arm is not None and arm[1] < -0.2:
        arm[2] = max(arm[2], 0.13)  # not into the cabinet's top or the drawer's walls
    env.reset(
        seed=int(rng.integers(2**31)),
        options={"cubes": cubes, "arm": arm, "drawer": opening, "light": bool(rng.random() < 0.5)},
    )


class _DrawerSkill(Skill[DrawerParams]):
    """What open_drawer and close_drawer share: no parameters, the knob as the binding."""

    Params = DrawerParams
    scene = "articulated"
    obs_dim = 11
    retreat_steps = 12
    success_rests_on = ("drawer",)
    #: Whether the skill opens the drawer (else it closes it).
    opening: ClassVar[bool]

    def repair(self, world: WorldState, params: DrawerParams, code: str) -> Repair | None:
        """A cube in the drawer's path pushed out of it first (away from the drawer, to
        where it no longer blocks the path)."""
        if code != PRECONDITION or world.drawer is None:
            return None
        blocking = path_blockers(world, self.opening)
        if not blocking:
            return None
        name, d = blocking[0], world.drawer
        o = cube_of(world, name)
        away = math.atan2(o.pos[1] - d.pos[1], o.pos[0] - d.pos[0])
        opening = self.opening
        fix = clearing_push(world, name, away, lambda w: name in path_blockers(w, opening))
        what = f"{name} is in the drawer's path"
        hint = (
            f"insert {json.dumps(fix)} before this step"
            if fix is not None
            else f"move {name} out of the drawer's path first"
        )
        return Repair([fix, {"skill": self.name}] if fix is not None else None, what, hint)

    def bind(self, world: WorldState, params: DrawerParams) -> Binding:
        assert world.drawer is not None  # the preconditions held
        x, y, z = (float(v) for v in knob_when_shut(world.drawer))
        return Binding(target_kind="drawer", target_xyz=(x, y, z))

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        knob = knob_of(obs, b)
        drawer = float(obs["articulation"][0]) / scene.DRAWER_TRAVEL
        return np.concatenate([*proprio_features(obs), knob - grip_of(obs), [drawer]])


class OpenDrawer(_DrawerSkill):
    name = "open_drawer"
    opening = True
    description = "Pull the drawer open by its knob, then let go of the knob."
    precondition_text = (
        "the scene has a drawer",
        "the gripper is empty",
        "the drawer is not already open",
        "no cube stands in the drawer's path in front of it",
    )
    step_budget = 150

    def preconditions(self, world: WorldState, params: DrawerParams) -> list[Violation]:
        out = _common(world, opening=True)
        if world.drawer is not None and world.is_open():
            out.append(Violation(NO_EFFECT, "the drawer is already open"))
        return out

    def effect(self, world: WorldState, params: DrawerParams) -> WorldState:
        d = world.drawer
        assert d is not None
        knob = knob_when_shut(d) - [scene.DRAWER_TRAVEL, 0.0, 0.0]
        return _moved_drawer(world, scene.DRAWER_TRAVEL, knob + [0.0, 0.0, LEAVE_Z])

    def success(self, before: WorldState, after: WorldState, params: DrawerParams) -> bool:
        return (
            after.is_open()
            and after.held_object is None
            and after.gripper_opening >= RELEASED_OPENING
        )

    def retreat(self, obs: dict, b: Binding) -> np.ndarray | None:
        """Rise off the knob with open fingers: the next skill starts clear of it."""
        grip, knob = grip_of(obs), knob_of(obs, b)
        if grip[2] >= knob[2] + LEAVE_Z - 0.005:
            return None
        return scripted._move(grip, np.array([grip[0], grip[1], knob[2] + LEAVE_Z]), scripted.OPEN)

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        assert b.target_xyz is not None
        return scripted.open_drawer_action(
            grip_of(obs),
            opening_of(obs),
            knob_of(obs, b),
            float(obs["articulation"][0]),
            b.target_xyz[0],
        )

    def potential(self, obs: dict, b: Binding) -> float:
        drawer = min(float(obs["articulation"][0]), scripted.PULL_RELEASE)
        reach = float(np.linalg.norm(grip_of(obs) - knob_of(obs, b)))
        if drawer >= scripted.PULL_RELEASE:
            return 3.0 * drawer + 0.1 * opening_of(obs) / (2 * scene.FINGER_OPEN)
        return 3.0 * drawer - reach

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> DrawerParams | None:
        """The drawer shut (half the time) or part way out, short of open."""
        opening = 0.0 if rng.random() < 0.5 else rng.uniform(0.0, scene.DRAWER_OPEN_MIN - 0.01)
        leave = np.array([-scripted.DRAWER_PUSH_BACK - 0.01, 0.0, LEAVE_Z])  # after a close
        _drawer_start(env, rng, float(opening), leave)
        if self.preconditions(env.world_state(), DrawerParams()):
            return None
        return DrawerParams()


class CloseDrawer(_DrawerSkill):
    name = "close_drawer"
    opening = False
    description = "Push the drawer shut with the closed fingers against its knob."
    precondition_text = (
        "the scene has a drawer",
        "the gripper is empty",
        "the drawer is not already closed",
        "no cube stands in front of the knob or sticks out of the drawer",
    )
    step_budget = 120

    def preconditions(self, world: WorldState, params: DrawerParams) -> list[Violation]:
        out = _common(world, opening=False)
        d = world.drawer
        if d is None:
            return out
        for name in d.contents:
            o = world.object(name)
            if o is not None and o.pos[2] > STACKED_Z:
                out.append(
                    Violation(
                        PRECONDITION,
                        f"{name} sticks out of the drawer",
                        f"pick {name} off the cube under it first",
                    )
                )
        if world.is_closed():
            out.append(Violation(NO_EFFECT, "the drawer is already closed"))
        return out

    def effect(self, world: WorldState, params: DrawerParams) -> WorldState:
        d = world.drawer
        assert d is not None
        knob = knob_when_shut(d)
        return _moved_drawer(world, 0.0, knob + [-scripted.DRAWER_PUSH_BACK, 0.0, LEAVE_Z])

    def success(self, before: WorldState, after: WorldState, params: DrawerParams) -> bool:
        return after.is_closed() and after.held_object is None

    def retreat(self, obs: dict, b: Binding) -> np.ndarray | None:
        """Back off the knob and rise, fingers closed (they pushed against it)."""
        grip, knob = grip_of(obs), knob_of(obs, b)
        if grip[2] >= knob[2] + LEAVE_Z - 0.005:
            return None
        x = min(grip[0], knob[0] - scripted.DRAWER_PUSH_BACK)
        return scripted._move(grip, np.array([x, grip[1], knob[2] + LEAVE_Z]), scripted.CLOSE)

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        assert b.target_xyz is not None
        return scripted.close_drawer_action(
            grip_of(obs), knob_of(obs, b), float(obs["articulation"][0]), b.target_xyz[0]
        )

    def potential(self, obs: dict, b: Binding) -> float:
        drawer = float(obs["articulation"][0])
        behind = knob_of(obs, b) + [-0.03, 0.0, 0.0]
        return -3.0 * drawer - 0.5 * float(np.linalg.norm(grip_of(obs) - behind))

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> DrawerParams | None:
        """The drawer fully out (as open_drawer leaves it) or part way, not shut."""
        if rng.random() < 0.4:
            opening = scene.DRAWER_TRAVEL
        else:
            opening = rng.uniform(scene.DRAWER_CLOSED_MAX + 0.01, scene.DRAWER_TRAVEL)
        _drawer_start(env, rng, float(opening), np.array([0.0, 0.0, LEAVE_Z]))
        if self.preconditions(env.world_state(), DrawerParams()):
            return None
        return DrawerParams()
