"""The perturbation split: seeded conditions off a skill's nominal start distribution.

A skill's nominal evaluation (:mod:`skills.evaluate`) draws starts from its own chained
distribution. This module measures it off that distribution, condition by condition, for
the policy *and* the scripted expert on the same starts (paired): each episode's start is
built once, saved with :meth:`TabletopEnv.get_state`, and restored for both controllers,
which also share the episode's noise and disturbance draws. Everything is a function of
``(seed, condition, episode)``, so a figure is reproducible bit for bit.

Conditions (see :data:`CONDITIONS`):

- start layout: the full cube yaw range and its hard band, cubes on the spawn-area edges,
  touching neighbours (a row across the finger axis; a 2x2 block), a cube against a bin
  wall (along or across the finger axis);
- dynamics: cube mass and friction scaled;
- sensing and acting: Gaussian noise on the observed cube positions (2 mm, 5 mm), on the
  commanded motion;
- mid-skill disturbances: the cube displaced, the gripper forced open, the held cube
  knocked out, the target cube moved.

A condition lists the skills it applies to and those for which *no* controller can succeed
(``infeasible``: a place whose cube was knocked out of the gripper, a pick in a 2x2 block);
there the figure that matters is how soon the skill notices, through
:meth:`skills.base.Skill.doomed`, which ends the episode with a reason (reported as
``aborted`` and ``abort_steps``). A cube against a bin wall along the finger axis is not
marked so: the pick turns the hand a quarter and closes the fingers along the wall.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from sim import scene, scripted
from sim.env import TabletopEnv
from sim.objects import spec as object_spec
from sim.util import mcnemar_exact, wilson
from sim.world import WorldState
from skills.base import Binding, Skill, SkillParams, cube_yaw, grip_of, opening_of
from skills.push import PushParams
from skills.registry import REGISTRY, get

if TYPE_CHECKING:
    from skills.policy import MLPPolicy

SPLITS = ("nominal", "perturbed", "all")
#: Starts are resampled this often before a condition is declared unusable for a skill.
MAX_RESAMPLE = 200
#: Hard band of cube yaw: the cube's corners, not its faces, meet a square approach.
YAW_HIGH = (0.45, float(np.pi / 4))


@dataclass(frozen=True)
class Condition:
    """One perturbation. Unset fields leave that part of the world nominal."""

    name: str
    description: str
    yaw: tuple[float, float] | None = None  # |yaw| band every cube is turned into at reset
    #: "edges" (at reset), "row" | "block" | "wall_y" | "wall_x" | "after_push" (after the
    #: start), "tower" (place's own start: onto a tower of three)
    layout: str | None = None
    mass: float = 1.0  # cube mass scale
    friction: float = 1.0  # cube sliding friction scale
    obs_noise: float = 0.0  # std (m) of noise on the observed cube positions, per step
    action_noise: float = 0.0  # std of noise on the commanded motion (action units), per step
    #: control steps between a measurement and the action taken on it (the whole
    #: observation, arm included, arrives this late: sensing and inference latency)
    obs_delay: int = 0
    event: str | None = None  # "displace" | "open" | "knock" | "move_target"

    @property
    def skills(self) -> tuple[str, ...]:
        """The registered skills this condition applies to: each skill lists its own
        (:attr:`skills.base.Skill.perturbations`)."""
        return tuple(n for n, s in REGISTRY.items() if self.name in s.perturbations)

    @property
    def infeasible(self) -> tuple[str, ...]:
        """The skills no controller can succeed at under this condition (each skill's
        :attr:`skills.base.Skill.infeasible_under`): reported, not held to a bar."""
        return tuple(n for n, s in REGISTRY.items() if self.name in s.infeasible_under)


CONDITIONS: tuple[Condition, ...] = (
    Condition("nominal", "the skill's own chained start distribution"),
    Condition("yaw_full", "every cube turned uniformly in [-pi/4, pi/4]", yaw=(0.0, np.pi / 4)),
    Condition("yaw_high", "every cube turned 0.45-0.785 rad, either sign", yaw=YAW_HIGH),
    Condition("edges", "free cubes on the edges of the spawn area", layout="edges"),
    Condition(
        "row",
        "a touching row of cubes across the finger axis (neighbours along x)",
        layout="row",
    ),
    Condition(
        "block",
        "a touching 2x2 block: a neighbour along each finger axis the hand can take",
        layout="block",
    ),
    # a pick turns the hand to grasp along the wall; a push needs the fingers behind the cube,
    # which for most targets is the wall's side or past the workspace's edge (the push's
    # preconditions refuse those: skills.push.landing_wall)
    Condition(
        "wall_y",
        "the cube touching the table-side wall of a bin (along the finger axis)",
        layout="wall_y",
    ),
    Condition(
        "wall_x",
        "the cube touching the outer side wall of the red bin (across the finger axis)",
        layout="wall_x",
    ),
    Condition(
        "after_push",
        "the cube just pushed 8-14 cm by the push skill's expert (as a chain leaves it)",
        layout="after_push",
    ),
    Condition("heavy_slippery", "cube mass x3, friction x0.5", mass=3.0, friction=0.5),
    Condition("light_grippy", "cube mass x0.5, friction x2", mass=0.5, friction=2.0),
    Condition("obs_noise_2mm", "observed cube positions + N(0, 2 mm)", obs_noise=0.002),
    Condition("obs_noise_5mm", "observed cube positions + N(0, 5 mm)", obs_noise=0.005),
    Condition("action_noise", "commanded motion + N(0, 0.2) per axis", action_noise=0.2),
    Condition("displaced", "the cube moved 3-6 cm early in the skill", event="displace"),
    Condition(
        "forced_open",
        "the gripper forced open for 6 steps once the cube is held",
        event="open",
    ),
    Condition(
        "knocked_out",
        "the held cube knocked out of the gripper onto the table",
        event="knock",
    ),
    Condition(
        "target_moved",
        "the target cube moved 3-6 cm during the carry",
        event="move_target",
    ),
    # Sensing and actuation at the strength where the expert's fixed thresholds give out (it
    # lowers a held cube only once within 6 mm of the drop point, and lifts it again when
    # noise pushes it out): a closed-loop policy trained under them need not. Last, because a
    # condition's place in this tuple seeds its starts (the rows above keep theirs).
    Condition("obs_noise_8mm", "observed cube positions + N(0, 8 mm)", obs_noise=0.008),
    Condition("action_noise_strong", "commanded motion + N(0, 0.4) per axis", action_noise=0.4),
    # One control period (40 ms) of latency: the expert closes, lowers and releases on
    # thresholds met one step ago, so it overshoots them.
    Condition(
        "obs_latency",
        "the controller acts on the observation one control step (40 ms) old",
        obs_delay=1,
    ),
    Condition(
        "tower",
        "the target a tower of three cubes: the held cube goes fourth, 8-9 cm up",
        layout="tower",
    ),
)
BY_NAME = {c.name: c for c in CONDITIONS}


def conditions_for(skill: str, split: str) -> list[Condition]:
    """The conditions of ``split`` that apply to ``skill``."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    out = [c for c in CONDITIONS if skill in c.skills]
    if split == "nominal":
        return out[:1]
    if split == "perturbed":
        return out[1:]
    return out


# ---------------------------------------------------------------------- the perturbed env
class PerturbedEnv(TabletopEnv):
    """A :class:`TabletopEnv` whose cube dynamics are scaled and whose reset may re-lay the
    cubes (yaw band, spawn-area edges) before the arm moves, so a skill's own
    ``sample_start`` (a place start picks the cube up first) runs on the perturbed layout."""

    def __init__(
        self, cond: Condition, scene_name: str = scene.DEFAULT_SCENE, subjects: tuple = ()
    ):
        self._sensing: Sensing | None = None  # see sense(); set before the env, which may
        super().__init__(scene=scene_name)  # observe while it is built
        self.cond = cond
        #: The objects a start's subject is drawn among (``eval-skill --kind``; all: empty).
        self.subjects = subjects
        self.layout_rng = np.random.default_rng(0)
        m = self.model
        for n in self.object_names:
            m.body_mass[m.body(n).id] *= cond.mass
            m.body_inertia[m.body(n).id] *= cond.mass
            m.geom_friction[m.geom(f"{n}_geom").id, 0] *= cond.friction
        mujoco.mj_setConst(m, self.data)  # derived masses and inverse weights

    def _place_cubes(
        self, spec: Mapping[str, Sequence[float] | None] | Sequence[str] | None
    ) -> None:
        super()._place_cubes(spec)
        rng, c = self.layout_rng, self.cond
        if c.layout == "edges":
            _to_edges(self, rng)
        if c.yaw is not None:
            for n in self.present:
                lo, hi = c.yaw
                yaw = rng.uniform(lo, hi) * rng.choice([-1.0, 1.0])
                a = self._cube_qadr[n]
                self.data.qpos[a + 3 : a + 7] = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))

    def sense(self, rng: np.random.Generator | None) -> None:
        """With ``rng``, from now on :meth:`observe` and :meth:`step_physics` carry the
        condition's observation noise, latency and action noise themselves, drawn from
        ``rng``: for the pick-place chain, whose executor reads and steps the env directly as
        a plan's does. ``None`` turns that off (the single-skill rollouts add them in their
        own loop)."""
        self._sensing = None if rng is None else Sensing(self.cond, rng)

    def observe(self) -> dict[str, np.ndarray]:
        obs = super().observe()
        return obs if self._sensing is None else self._sensing.see(obs)

    def step_physics(self, action, control_steps: int = 1) -> None:
        if self._sensing is not None:
            action = self._sensing.send(action)
        super().step_physics(action, control_steps)

    def cube_xy(self, name: str) -> np.ndarray:
        a = self._cube_qadr[name]
        return self.data.qpos[a : a + 2].copy()

    def move_cube(
        self,
        name: str,
        xy: Sequence[float] | np.ndarray,
        z: float = scene.CUBE_HALF,
        yaw: float | None = None,
    ) -> None:
        """Put cube ``name`` at rest at ``(x, y, z)`` (keeping its yaw unless given)."""
        a = self._cube_qadr[name]
        quat = self.data.qpos[a + 3 : a + 7].copy()
        if yaw is not None:
            quat = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        self.put_cube(name, (float(xy[0]), float(xy[1]), z), quat)
        mujoco.mj_forward(self.model, self.data)


def _free_table_cubes(env: PerturbedEnv) -> list[str]:
    """Present cubes resting alone on the table (not stacked, not in or beside a bin)."""
    out = []
    for n in env.present:
        a = env._cube_qadr[n]
        p = env.data.qpos[a : a + 3]
        if abs(p[2] - scene.CUBE_HALF) > 0.003 or p[1] > scene.SPAWN_HIGH[1] + 0.02:
            continue
        stacked = any(m != n and np.hypot(*(env.cube_xy(m) - p[:2])) < 0.03 for m in env.present)
        if not stacked:
            out.append(n)
    return out


def _to_edges(env: PerturbedEnv, rng: np.random.Generator) -> None:
    """Move every free table cube onto the spawn rectangle's perimeter, kept apart."""
    lo, hi = scene.SPAWN_LOW, scene.SPAWN_HIGH
    movers = _free_table_cubes(env)
    fixed = [env.cube_xy(n) for n in env.present if n not in movers]
    placed: list[np.ndarray] = []
    for n in movers:
        for _ in range(200):
            side = int(rng.integers(4))
            t = rng.uniform(0, 1)
            xy = np.array(
                [
                    (lo[0], lo[1] + t * (hi[1] - lo[1])),
                    (hi[0], lo[1] + t * (hi[1] - lo[1])),
                    (lo[0] + t * (hi[0] - lo[0]), lo[1]),
                    (lo[0] + t * (hi[0] - lo[0]), hi[1]),
                ][side]
            )
            if all(np.linalg.norm(xy - q) >= scene.SPAWN_MIN_DIST for q in fixed + placed):
                placed.append(xy)
                env.move_cube(n, xy)
                break


def _cluster(env: PerturbedEnv, subject: str, kind: str, rng: np.random.Generator) -> bool:
    """Bring the other cubes (absent ones too) into touch with ``subject`` on the table:
    ``row`` puts neighbours along x (across the finger axis), ``block`` makes a 2x2 square
    (one neighbour along the finger axis, y). False if there is no room."""
    others = [n for n in env.object_names if n != subject]
    # the subject's half width and the widest neighbour's (the tabletop's cubes: 2 cm each)
    widest = max(object_spec(n).half_width for n in others)
    gap = object_spec(subject).half_width + widest + 0.001
    if kind == "row":
        offsets = [(gap, 0.0), (-gap, 0.0)]
    else:
        sx, sy = rng.choice([-1.0, 1.0], 2)
        offsets = [(sx * gap, 0.0), (0.0, sy * gap), (sx * gap, sy * gap)]
    base = env.cube_xy(subject)
    pts = [base + np.array(o) for o in offsets]
    lo, hi = scene.SPAWN_LOW - 0.02, scene.SPAWN_HIGH + 0.02
    if not all(np.all(p >= lo) and np.all(p <= hi) for p in pts):
        return False
    grip = env.grip_pos
    if any(np.hypot(*(p - grip[:2])) < 0.05 and grip[2] < 0.1 for p in pts):
        return False
    env.present = env.object_names  # a cluster needs its neighbours on the table
    movers = others[: len(pts)]
    spare = [n for n in others if n not in movers]
    env.move_cube(subject, base, yaw=0.0)  # squared up: turned cubes this close would overlap
    for n, p in zip(movers, pts, strict=True):
        env.move_cube(n, p, yaw=0.0)
    for i, n in enumerate(spare):  # not part of the cluster: well away from it
        x = scene.SPAWN_HIGH[0] if base[0] < 0 else scene.SPAWN_LOW[0]
        env.move_cube(n, np.array([x, scene.SPAWN_LOW[1] + 0.1 * i]))
    return True


def _against_wall(env: PerturbedEnv, subject: str, side: str, rng: np.random.Generator) -> bool:
    """Move ``subject`` to touch a bin wall from outside: ``wall_y`` the table-side (south)
    wall of a random bin, ``wall_x`` the outer (west) wall of the red bin."""
    out = scene.BIN_INNER_HALF + 0.008 + scene.CUBE_HALF + 0.001  # bin centre to cube centre
    if side == "wall_y":
        bx, by = env.model.body(str(rng.choice(scene.BIN_NAMES))).pos[:2]
        xy = np.array([bx + rng.uniform(-0.04, 0.04), by - out])
    else:
        bx, by = env.model.body("red_bin").pos[:2]
        xy = np.array([bx - out, by + rng.uniform(-0.05, 0.03)])
    for n in env.present:
        if n != subject and np.hypot(*(env.cube_xy(n) - xy)) < scene.SPAWN_MIN_DIST:
            return False
    env.move_cube(subject, xy, yaw=rng.uniform(-0.2, 0.2))
    return True


def _after_push(env: PerturbedEnv, subject: str, rng: np.random.Generator) -> bool:
    """Push ``subject`` 8-14 cm with the push skill's expert, ending with its retreat: the
    state a ``push`` hands to the next skill (the cube turned by the push, the arm above).
    Only a push the skill accepts: pushing a cube that sits on another at table height
    drags the stack, and the fingers lift it off the table."""
    push = get("push")
    others = [env.cube_xy(n) for n in env.present if n != subject]
    goal = None
    for _ in range(100):
        xy = _free_spot(env, rng, others, near=env.cube_xy(subject), dist=(0.08, 0.14))
        if xy is not None and all(np.hypot(*(xy - q)) > scene.SPAWN_MIN_DIST for q in others):
            goal = xy
            break
    if goal is None:
        return False
    target = (float(goal[0]), float(goal[1]))
    if push.preconditions(env.world_state(), PushParams(object=subject, target=target)):
        return False  # a cube the push skill refuses (stacked, under another): no push left it
    b = Binding(cube=env.object_names.index(subject), target_kind="point")
    b.target_xyz = (float(goal[0]), float(goal[1]), scene.CUBE_HALF)
    for _ in range(push.step_budget):
        obs = env.observe()
        if np.hypot(*(obs["object_pos"][b.cube][:2] - goal)) < 0.02:
            break
        env.step_physics(push.expert(obs, b))
    else:
        return False
    for _ in range(push.retreat_steps):
        a = push.retreat(env.observe(), b)
        if a is None:
            break
        env.step_physics(a)
    return True


def sample_start(
    skill: Skill, env: PerturbedEnv, rng: np.random.Generator
) -> tuple[SkillParams, WorldState] | None:
    """A start of ``skill`` under ``env.cond``, or None to resample."""
    c = env.cond
    env.layout_rng = np.random.default_rng(rng.integers(2**63))
    params = skill.sample_start(env, rng)
    if params is None:
        return None
    subject = getattr(params, "object", None)
    if c.layout in ("row", "block", "wall_y", "wall_x", "after_push") and subject is not None:
        if c.layout == "after_push":
            ok = _after_push(env, subject, rng)
        elif c.layout in ("row", "block"):
            ok = _cluster(env, subject, c.layout, rng)
        else:
            ok = _against_wall(env, subject, c.layout, rng)
        if not ok:
            return None
        for _ in range(5):  # settle the new contacts under the holding controller
            env.step_physics(np.array([0.0, 0.0, 0.0, -1.0]))
    world = env.world_state()
    # not skill.preconditions: where the world state already calls a layout infeasible
    # (touching neighbours), the split still measures what the controllers do there
    if skill.doomed(world, world, params, skill.bind(world, params)) is not None:
        return None
    if skill.success(world, world, params):
        return None  # a push whose cube the chain already left at its target
    if c.event == "move_target" and getattr(params, "target", None) not in world.object_names:
        return None  # only a cube target can move
    return params, world


# ---------------------------------------------------------------------- mid-skill events
def _free_spot(
    env: PerturbedEnv,
    rng: np.random.Generator,
    avoid: list[np.ndarray],
    near: np.ndarray | None = None,
    dist: tuple[float, float] = (0.03, 0.06),
) -> np.ndarray | None:
    """A table point in the spawn area clear of ``avoid`` (and ``dist`` from ``near``)."""
    for _ in range(200):
        if near is None:
            xy = rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH)
        else:
            ang, r = rng.uniform(0, 2 * np.pi), rng.uniform(*dist)
            xy = np.asarray(near) + r * np.array([np.cos(ang), np.sin(ang)])
            if np.any(xy < scene.SPAWN_LOW) or np.any(xy > scene.SPAWN_HIGH):
                continue
        if all(np.hypot(*(xy - q)) > 0.065 for q in avoid):
            return xy
    return None


class Event:
    """A disturbance that fires once during an episode; it may override the gripper."""

    def __init__(
        self, kind: str | None, cube: str | None, target: str | None, rng: np.random.Generator
    ) -> None:
        self.kind, self.cube, self.target, self.rng = kind, cube, target, rng
        self.at = int(rng.integers(6, 14))  # step of the time-triggered events
        self.fired = False
        self.open_left = 0

    def before_step(self, env: PerturbedEnv, step: int, obs: dict, b: Binding) -> bool:
        """Fire the event if this is its step; True when it fired now (the scene may have
        changed, so the observation is to be read again)."""
        if self.kind is None or self.fired:
            return False
        held = b.cube is not None and scripted.is_grasped(
            grip_of(obs), opening_of(obs), obs["object_pos"][b.cube], cube_yaw(obs, b.cube)
        )
        lifted = held and obs["object_pos"][b.cube][2] > scene.CUBE_HALF + 0.02
        others = [env.cube_xy(n) for n in env.present if n != self.cube]
        grip = env.grip_pos[:2]
        if self.kind == "displace" and step == self.at:
            assert self.cube is not None  # displaced is a condition of pick and push: a cube
            xy = _free_spot(env, self.rng, [*others, grip], near=env.cube_xy(self.cube))
            if xy is not None:
                env.move_cube(self.cube, xy)
            self.fired = True
        elif self.kind == "open" and lifted and step >= self.at:
            self.open_left, self.fired = 6, True
        elif self.kind == "knock" and lifted and step >= self.at:
            assert self.cube is not None  # lifted: the bound cube is held, so there is one
            xy = _free_spot(env, self.rng, [*others, grip])
            if xy is not None:
                env.move_cube(self.cube, xy)
            self.fired = True
        elif self.kind == "move_target" and step == self.at and self.target in env.present:
            avoid = [env.cube_xy(n) for n in env.present if n != self.target] + [grip]
            xy = _free_spot(env, self.rng, avoid, near=env.cube_xy(self.target))
            if xy is not None:
                env.move_cube(self.target, xy)
            self.fired = True
        return self.fired

    def gripper(self, action: np.ndarray) -> np.ndarray:
        if self.open_left > 0:
            self.open_left -= 1
            action = action.copy()
            action[3] = scripted.OPEN
        return action


class Latency:
    """The observation ``delay`` control steps late: call it with each new one, act on what
    it returns. The first call fills the line with the episode's first observation (before
    that there was nothing newer to see)."""

    def __init__(self, delay: int) -> None:
        self.delay = delay
        self.line: deque[dict] = deque(maxlen=delay + 1)

    def __call__(self, obs: dict) -> dict:
        if self.delay <= 0:
            return obs
        if not self.line:
            self.line.extend([obs] * self.delay)
        self.line.append(obs)
        return self.line[0]


class Sensing:
    """What a condition does, in one episode, to what the controller sees and sends: noise
    on the observed cube positions, the observation ``obs_delay`` control steps late, and
    noise on the commanded motion, drawn from ``rng`` in that order each step. The split's
    rollouts, the training env and the chain's env all perturb through this one."""

    def __init__(self, cond: Condition, rng: np.random.Generator) -> None:
        self.cond, self.rng = cond, rng
        self.late = Latency(cond.obs_delay)

    def see(self, obs: dict) -> dict:
        if self.cond.obs_noise > 0:
            pos = obs["object_pos"]
            obs = {**obs, "object_pos": pos + self.rng.normal(0, self.cond.obs_noise, pos.shape)}
        return self.late(obs)

    def send(self, action: np.ndarray) -> np.ndarray:
        a = np.array(action, dtype=np.float64)
        if self.cond.action_noise > 0:
            a[:3] = np.clip(a[:3] + self.rng.normal(0, self.cond.action_noise, 3), -1.0, 1.0)
        return a


# ---------------------------------------------------------------------- rollouts
#: A controller: the policy's or the expert's action from the observation dict.
Actor = Callable[[dict, Binding], np.ndarray]


def policy_actor(skill: Skill, policy: MLPPolicy) -> Actor:
    return lambda obs, b: np.asarray(skill.act(obs, b, policy), dtype=np.float64)


def expert_actor(skill: Skill) -> Actor:
    return lambda obs, b: np.asarray(skill.act(obs, b), dtype=np.float64)


@dataclass
class Outcome:
    success: bool
    steps: int
    aborted: str | None = None  # the skill's doomed() reason, if it stopped early
    false_claim: bool = False  # camera: claimed, but not true in the simulator


def rollout(
    skill: Skill,
    env: PerturbedEnv,
    params: SkillParams,
    before: WorldState,
    actor: Actor,
    rng: np.random.Generator,
    true_before: WorldState | None = None,
) -> Outcome:
    """One episode from the env's current state, under ``env.cond``'s noise and event.

    ``true_before`` (with ``--perception camera``: ``before`` is then the estimate): the
    estimate's success is claimed only once the images confirm it after the skill's
    retreat (``skills.claims.confirm``; where they show it is not done yet the skill
    goes on), and each claim is judged on the truth."""
    c = env.cond
    b = skill.bind(before, params)
    cube = env.object_names[b.cube] if b.cube is not None else None
    target = getattr(params, "target", None)
    event = Event(c.event, cube, target if isinstance(target, str) else None, rng)
    sensing = Sensing(c, np.random.default_rng(rng.integers(2**63)))
    skill.start(env, b)
    step = 0
    while step < skill.step_budget:
        step += 1
        obs = env.observe()
        if event.before_step(env, step, obs, b):
            if env.perception is not None:
                env.perception.invalidate()  # a cube moved by hand, time standing still
            obs = env.observe()
        a = sensing.send(np.clip(actor(sensing.see(obs), b), -1.0, 1.0))
        env.step_physics(event.gripper(a))
        world = env.world_state()
        if skill.success(before, world, params):
            if true_before is None:
                return Outcome(True, step)
            from skills.claims import SETTLE_STEPS, confirm

            verdict = confirm(env, skill, b, before, params)
            step += skill.retreat_steps + SETTLE_STEPS
            if verdict == "undone" and step < skill.step_budget:
                continue  # the images show it is not done yet: the skill goes on
            ok = verdict == "success"
            real = skill.success(true_before, env.true_world_state(), params)
            return Outcome(ok, step, None, bool(ok and not real))
        why = skill.doomed(before, world, params, b)
        if why is not None:
            return Outcome(False, step, why)
    return Outcome(False, skill.step_budget)


def _rate(outs: list[Outcome]) -> dict:
    n = len(outs)
    k = sum(o.success for o in outs)
    lo, hi = wilson(k, n)
    aborted = [o.steps for o in outs if o.aborted]
    steps = [o.steps for o in outs if o.success]
    return {
        "successes": k,
        "episodes": n,
        "success_rate": k / max(n, 1),
        "ci95": [round(lo, 4), round(hi, 4)],
        "mean_steps": round(float(np.mean(steps)), 1) if steps else None,
        "aborted": len(aborted),
        "mean_abort_steps": round(float(np.mean(aborted)), 1) if aborted else None,
        "false_success_claims": sum(o.false_claim for o in outs),
    }


def _paired(outs: dict[str, list[Outcome]]) -> dict:
    """Episode by episode, of two actors on the same starts: both, only one, only the other."""
    (na, a), (nb, b) = outs.items()
    pairs = [(x.success, y.success) for x, y in zip(a, b, strict=True)]
    only_a = sum(x and not y for x, y in pairs)
    only_b = sum(y and not x for x, y in pairs)
    return {
        "both": sum(x and y for x, y in pairs),
        f"{na}_only": only_a,
        f"{nb}_only": only_b,
        "p_mcnemar": round(mcnemar_exact(only_a, only_b), 6),
    }


def evaluate_condition(
    skill_name: str,
    cond: Condition,
    actors: dict[str, Actor],
    episodes: int,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    perception: str = "state",
    scene_name: str = scene.DEFAULT_SCENE,
    subjects: tuple = (),
) -> dict:
    """Every actor on the same ``episodes`` starts of ``cond`` (paired), in ``scene_name``
    with the subject among ``subjects`` where it names some. ``perception=
    "camera"``: the actors see, and the success test reads, the cameras' estimate; each
    actor starts from the belief the start left, and each claim is judged on the truth."""
    skill = get(skill_name)
    env = PerturbedEnv(cond, scene_name, subjects)
    if perception == "camera":
        from sim.perception import Perception

        env.perception = Perception(env.model)
    index = CONDITIONS.index(cond)
    outs: dict[str, list[Outcome]] = {k: [] for k in actors}
    reasons: dict[str, int] = {}
    for ep in range(episodes):
        rng = np.random.default_rng([seed, index, ep])
        for _ in range(MAX_RESAMPLE):
            start = sample_start(skill, env, rng)
            if start is not None:
                break
        else:
            if subjects:  # a layout these objects cannot have (a ball is never pushed)
                env.close()
                return {
                    "condition": cond.name,
                    "description": cond.description,
                    "feasible": False,
                    "no_start": f"no start of {skill_name} on {', '.join(subjects)}",
                    **{k: _rate([]) for k in actors},
                }
            raise RuntimeError(f"no start of {skill_name} under condition {cond.name}")
        params, before = start
        state, present = env.get_state(), env.present
        seen = env.perception.snapshot() if env.perception is not None else None
        true_before = env.true_world_state() if env.perception is not None else None
        run_seed = int(rng.integers(2**63))
        for name, actor in actors.items():
            env.set_state(state)
            env.present = present
            if seen is not None:
                env.perception.restore(seen)
            o = rollout(
                skill, env, params, before, actor, np.random.default_rng(run_seed), true_before
            )
            outs[name].append(o)
            if o.aborted:
                key = f"{name}: {o.aborted}"
                reasons[key] = reasons.get(key, 0) + 1
        if progress:
            progress(ep)
    if env.perception is not None:
        env.perception.close()
    env.close()
    out = {
        "condition": cond.name,
        "description": cond.description,
        "feasible": skill_name not in cond.infeasible,
        **{k: _rate(v) for k, v in outs.items()},
    }
    if len(outs) == 2:
        out["paired"] = _paired(outs)
    if reasons:
        out["abort_reasons"] = reasons
    return out


def evaluate_split(
    skill_name: str,
    split: str,
    actors: dict[str, Actor],
    episodes: int,
    seed: int = 0,
    progress: Callable[[str, int], None] | None = None,
    perception: str = "state",
    scene_name: str = scene.DEFAULT_SCENE,
    subjects: tuple = (),
) -> dict:
    """Each condition of ``split`` for ``skill_name``, every actor paired on its starts (in
    ``scene_name``, on ``subjects`` where it names some: ``eval-skill --kind``)."""
    conds = conditions_for(skill_name, split)
    rows = []
    for c in conds:
        hook = (lambda ep, c=c: progress(c.name, ep)) if progress else None
        rows.append(
            evaluate_condition(
                skill_name, c, actors, episodes, seed, hook, perception, scene_name, subjects
            )
        )
    extra = {"scene": scene_name, "subjects": list(subjects)} if subjects else {}
    return {
        **extra,
        "skill": skill_name,
        "split": split,
        "perception": perception,
        "seed": seed,
        "episodes_per_condition": episodes,
        "actors": list(actors),
        "conditions": rows,
    }


# ---------------------------------------------------------------------- the pick->place chain
#: Conditions of the chain: start layouts, dynamics, and sensing (the env itself adds the
#: noise and latency, :meth:`PerturbedEnv.sense`, as the executor runs the skills the way a
#: plan does); mid-skill events are the single skills' business.
CHAIN_CONDITIONS = (
    "nominal",
    "yaw_full",
    "yaw_high",
    "edges",
    "heavy_slippery",
    "light_grippy",
    "wall_y",  # picked with the hand turned, carried while it turns back
    "wall_x",
    "obs_noise_8mm",
    "action_noise_strong",
    "obs_latency",
)


def chain_conditions(split: str) -> list[Condition]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    out = [BY_NAME[n] for n in CHAIN_CONDITIONS]
    return out[:1] if split == "nominal" else out[1:] if split == "perturbed" else out


def evaluate_chain_condition(
    cond: Condition,
    executors: dict,
    episodes: int,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """pick(cube) then place(bin) with each :class:`~skills.runtime.SkillExecutor` of
    ``executors`` from the same starts: random cubes laid out under ``cond``."""
    from skills.base import random_cubes

    env = PerturbedEnv(cond)
    index = 1000 + CHAIN_CONDITIONS.index(cond.name)
    outs: dict[str, list[Outcome]] = {k: [] for k in executors}
    for ep in range(episodes):
        rng = np.random.default_rng([seed, index, ep])
        env.layout_rng = np.random.default_rng(rng.integers(2**63))
        names = random_cubes(rng, env)
        env.reset(seed=int(rng.integers(2**31)), options={"cubes": names})
        cube, target = names[0], str(rng.choice(scene.BIN_NAMES))
        if cond.layout in ("wall_y", "wall_x"):
            if not _against_wall(env, cube, cond.layout, rng):  # a neighbour is there
                env.reset(seed=int(rng.integers(2**31)), options={"cubes": [cube]})
                _against_wall(env, cube, cond.layout, rng)
            for _ in range(5):  # settle the new contacts under the holding controller
                env.step_physics(np.array([0.0, 0.0, 0.0, -1.0]))
        state, present = env.get_state(), env.present
        sense_seed = int(rng.integers(2**63))
        for name, ex in executors.items():
            env.set_state(state)
            env.present = present
            env.sense(np.random.default_rng(sense_seed))  # the same draws for each executor
            a = ex.run(env, {"skill": "pick", "object": cube})
            ok, steps, why = a.success, a.steps, a.reason
            if ok:
                b = ex.run(env, {"skill": "place", "target": target})
                ok = b.success and env.world_state().in_(cube, target)
                steps, why = steps + b.steps, b.reason
            env.sense(None)
            aborted = why if why and why.startswith("impossible") else None
            outs[name].append(Outcome(bool(ok), steps, aborted))
        if progress:
            progress(ep)
    env.close()
    out = {
        "condition": cond.name,
        "description": cond.description,
        "feasible": True,
        **{k: _rate(v) for k, v in outs.items()},
    }
    if len(outs) == 2:
        out["paired"] = _paired(outs)
    return out


def evaluate_chain_split(
    split: str,
    executors: dict,
    episodes: int,
    seed: int = 0,
    progress: Callable[[str, int], None] | None = None,
) -> dict:
    rows = []
    for c in chain_conditions(split):
        hook = (lambda ep, c=c: progress(c.name, ep)) if progress else None
        rows.append(evaluate_chain_condition(c, executors, episodes, seed, hook))
    return {
        "skill": "pick-place",
        "split": split,
        "seed": seed,
        "episodes_per_condition": episodes,
        "actors": list(executors),
        "conditions": rows,
    }
