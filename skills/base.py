"""What a skill declares: the contract the bridge, the planner and the runner rely on.

A skill is data first (name, description, a pydantic parameter model whose fields say
which *domain* of scene names they take, preconditions, a symbolic effect, a success test,
a step budget) and a learned policy second. The bridge and the planner read only the
declarations, so the catalogue is never duplicated as prose in prompts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from sim import scene
from sim.world import ObjectState, WorldState, reachable_xy, yaw_of

if TYPE_CHECKING:
    from sim.env import TabletopEnv

#: Parameter domains: which scene names a parameter may take. The bridge turns each into
#: an enum in the per-scene JSON Schema.
DOMAIN_OBJECT = "object"  # a cube present in the scene
#: a bin, another cube (the top of a tower), a table region, or the drawer where there is one
DOMAIN_PLACE_TARGET = "place_target"
DOMAIN_PUSH_TARGET = "push_target"  # a table region, or an [x, y] point on the table


class SkillParams(BaseModel):
    """Base of every parameter model: unknown keys are an error, never ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


#: A skill's own parameter model: ``Pick`` is a ``Skill[PickParams]``, so its methods take
#: ``PickParams`` without narrowing the base's signature.
P = TypeVar("P", bound=SkillParams)


@dataclass(frozen=True)
class Violation:
    """Why a subgoal cannot run here. ``code`` is one of the bridge's stable codes."""

    code: str
    message: str
    hint: str = ""
    field: str | None = None


# Codes a skill may raise (the bridge documents the full list).
PRECONDITION = "precondition_violated"
UNREACHABLE = "unreachable"
OUT_OF_WORKSPACE = "out_of_workspace"
NO_EFFECT = "no_effect"
NOT_GRASPABLE = "not_graspable"
#: Not a violation of the geometry: the skill's success predictor rates the step too low
#: (the bridge raises it; a skill's :meth:`Skill.repair` answers it).
LOW_AFFORDANCE = "low_affordance"


class Repair(NamedTuple):
    """What would make a step that cannot run here feasible, as its own skill knows it.

    ``steps``: the subgoals to run instead (the step itself among them, usually last), or
    None where the skill found none; ``what``: what stands in the step's way, said to the
    user when a planner makes the repair (None: the skill offers only ``hint``, no steps a
    planner should run instead); ``hint``: the advice for a planner that regenerates."""

    steps: list[dict] | None
    what: str | None
    hint: str


class Policy(Protocol):
    """What a skill asks of a learned policy (:class:`skills.policy.MLPPolicy` is one): an
    action for the skill's observation vector, and the smoothing it was trained with.
    (A protocol, so that the declarations need not import the policies' module.)"""

    smoothing: Smoothing

    def act(self, obs: np.ndarray) -> np.ndarray: ...


class Skill(ABC, Generic[P]):
    """A skill declaration. Subclasses fill the class attributes, the four declarative
    methods the bridge and planner read, and the execution side the policies use.

    Abstract: what every skill must say (preconditions, effect, success; bind, observe,
    potential, sample_start). ``expert`` is not: a skill learned by RL alone has none."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: Set on each subclass (not a ClassVar only because a ClassVar cannot hold a type variable).
    Params: type[P]
    #: Human-readable preconditions for the catalogue and prompts.
    precondition_text: ClassVar[tuple[str, ...]] = ()
    #: The scene the skill needs (``sim.scene.SCENE_NAMES``): a drawer or button skill runs
    #: only where there is a drawer or button; its training env is built on that scene.
    scene: ClassVar[str] = "tabletop"
    #: Whether :meth:`expert` exists: False for a skill learned by RL alone, which the
    #: scripted source runs with its policy and ``eval-skill --expert`` refuses.
    has_expert: ClassVar[bool] = True
    #: Control steps the policy may take before the subgoal counts as failed.
    step_budget: ClassVar[int] = 100
    #: Requests that ask for this skill alone, for a skill without parameters (``"wave"``,
    #: ``"wave hello"``): the rules planner plans the skill for a request that is one of
    #: them, after lower-casing and dropping punctuation and a leading "please".
    commands: ClassVar[tuple[str, ...]] = ()
    #: Names a planner may use for this skill by mistake (``"grab"`` for pick): the bridge
    #: answers such a step with "did you mean ...".
    aliases: ClassVar[tuple[str, ...]] = ()
    #: What a step of this skill does with the cubes, for checks that read plain subgoals
    #: (the user's "don't move the red block" constraints): it moves its ``object``
    #: parameter; it takes that object into the hand; it lets go of what the hand holds
    #: (moving it); it puts what it moves at its ``target`` parameter.
    moves_object: ClassVar[bool] = False
    grasps: ClassVar[bool] = False
    releases: ClassVar[bool] = False
    puts_at_target: ClassVar[bool] = False
    #: Per kind of scene name (``"bin"``, ``"object"``, ``"region"``, ``"drawer"``), advice
    #: for a parameter given a name of that kind that the skill does not take there.
    wrong_kind_hints: ClassVar[dict[str, str]] = {}
    #: The perturbation conditions of ``skills/perturb.py`` this skill is measured under
    #: (``eval-skill --split``; "nominal" first), and those of them no controller can
    #: succeed at (reported beside the others, not held to their bar).
    perturbations: ClassVar[tuple[str, ...]] = ()
    infeasible_under: ClassVar[tuple[str, ...]] = ()
    #: The beliefs about the articulation (``"drawer"``, ``"light"``) the skill's success
    #: test reads besides its cube: with cameras a success is claimed only once this frame's
    #: images confirm them (``skills.claims.claim_unsure``).
    success_rests_on: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def preconditions(self, world: WorldState, params: P) -> list[Violation]:
        raise NotImplementedError

    @abstractmethod
    def effect(self, world: WorldState, params: P) -> WorldState:
        """The world after the skill succeeds, predicted symbolically (no physics)."""
        raise NotImplementedError

    @abstractmethod
    def success(self, before: WorldState, after: WorldState, params: P) -> bool:
        raise NotImplementedError

    # ---------------------------------------------------------------- execution side
    #: Length of the goal-conditioned observation vector the policy reads.
    obs_dim: ClassVar[int]

    @abstractmethod
    def bind(self, world: WorldState, params: P) -> Binding:
        """Resolve the parameters against the scene at the moment the subgoal starts."""
        raise NotImplementedError

    @abstractmethod
    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        """The policy's observation from the env's observation dict."""
        raise NotImplementedError

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        """The scripted expert's action: demonstrations and DAgger labels."""
        raise NotImplementedError

    @abstractmethod
    def potential(self, obs: dict, b: Binding) -> float:
        """Shaping potential; the reward is its change plus a success bonus."""
        raise NotImplementedError

    def act(self, obs: dict, b: Binding, policy: Policy | None = None) -> np.ndarray:
        """The env action here: ``policy`` (an MLPPolicy) on :meth:`observe`, or the
        scripted expert when None, turned from the binding's frame into world axes. Every
        loop that drives a skill goes through this, so a turned grasp needs no special case
        there; the observation and the expert's label stay in the frame the policy learns in.
        """
        if policy is None:
            return to_world(self.expert(obs, b), b)
        a = to_world(self.shield(policy.act(self.observe(obs, b))), b)
        return smoothed(a, obs, b, policy.smoothing)

    def shield(self, a: np.ndarray) -> np.ndarray:
        """A learned action held inside what the skill's preconditions assume (training
        applies it too, so the policy learns with it): nothing by default."""
        return a

    @staticmethod
    def start(env: TabletopEnv, b: Binding) -> None:
        """Set the hand's turn the subgoal needs before its first step (a quarter turn for a
        pick along x, or square to a turned cube; back to rest for everything else), unless
        the binding keeps the turn the previous subgoal left (``keep_turn``)."""
        if not b.keep_turn and env.grip_yaw != b.grip_yaw:
            env.set_grip_yaw(b.grip_yaw)

    @abstractmethod
    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> P | None:
        """Put ``env`` in a start state from the chained distribution; None to resample."""
        raise NotImplementedError

    #: At most this many scripted control steps after success (see :meth:`retreat`).
    retreat_steps: ClassVar[int] = 0

    def retreat(self, obs: dict, b: Binding) -> np.ndarray | None:
        """A scripted action that moves the arm clear after success, or None once clear.

        The learned policy's episode ends at the success test; a skill whose success leaves
        the gripper against what it moved (push ends with the fingers on the cube) lifts
        it clear with this fixed motion, so that the next skill starts from a clean state.
        It needs no learning, so it is not part of the policy."""
        return None

    def doomed(self, before: WorldState, now: WorldState, params: P, b: Binding) -> str | None:
        """Why success has become impossible mid-skill (the held cube is gone, the cube fell
        off the table), or None. The executor stops at once with this reason, so the runner
        replans without waiting out the step budget. Only what no controller can undo
        counts: a cube that is merely displaced is the policy's to chase."""
        return None

    def repair(self, world: WorldState, params: P, code: str) -> Repair | None:
        """What makes this step feasible in ``world`` when it fails with ``code`` (one of
        the codes above: its own violation, or ``LOW_AFFORDANCE``): the push that frees a
        cube before a pick, a cube moved out of the drawer's path, a pick and place instead
        of a push against a wall. The bridge names it in its hint, the rules planner runs
        it. None: nothing this skill knows repairs that; the default."""
        return None

    def catalogue_entry(self) -> dict:
        schema = self.Params.model_json_schema()
        return {
            "skill": self.name,
            "description": self.description,
            "parameters": {
                k: {
                    "domain": v.get("domain"),
                    "description": v.get("description", ""),
                }
                for k, v in schema.get("properties", {}).items()
            },
            "preconditions": list(self.precondition_text),
            "step_budget": self.step_budget,
        }


# ---------------------------------------------------------------------- helpers
def resolve_xy(world: WorldState, target: str | tuple[float, float]) -> np.ndarray | None:
    """Table point of a region, a bin, a cube or a literal [x, y]."""
    if isinstance(target, (tuple, list)):
        return np.asarray(target, dtype=np.float64)
    for getter in (world.region, world.bin, world.object):
        found = getter(target)
        if found is not None:
            return np.asarray(found.pos[:2], dtype=np.float64)
    return None


def check_object(world: WorldState, name: str, field: str) -> list[Violation]:
    """The object exists, has not fallen, and the arm can reach it."""
    o = world.object(name)
    if o is None:
        return [
            Violation(
                "hallucinated_object",
                f"there is no {name} in the scene",
                f"objects present: {', '.join(world.object_names)}",
                field,
            )
        ]
    if o.fallen or not o.reachable:
        return [Violation(UNREACHABLE, f"{name} is out of the arm's reach", "", field)]
    return []


def cube_of(world: WorldState, name: str) -> ObjectState:
    """Cube ``name``, which the caller knows is in ``world`` (its preconditions held)."""
    o = world.object(name)
    assert o is not None, f"no cube {name}"
    return o


def hand_full(world: WorldState, why: str = "", field: str | None = None) -> list[Violation]:
    """The violation of a skill that needs the gripper empty (``why``: what holding the cube
    would do), or none when it is."""
    h = world.held_object
    if h is None:
        return []
    hint = f"place {h} first" + (f": {why}" if why else "")
    return [Violation(PRECONDITION, f"the gripper holds {h}", hint, field)]


def lost(world: WorldState, name: str, what: str = "") -> str | None:
    """Why cube ``name`` can no longer be acted on (gone, fallen, out of reach), or None."""
    o = world.object(name)
    label = f"{what}{name}"
    if o is None or o.fallen:
        return f"{label} fell off the table"
    if not o.reachable:
        return f"{label} is out of the arm's reach"
    return None


def in_workspace(xy: Sequence[float] | np.ndarray) -> bool:
    x, y = float(xy[0]), float(xy[1])
    return reachable_xy(x, y)


_M = TypeVar("_M", bound=BaseModel)
_setattr = object.__setattr__


def _copy_with(m: _M, update: dict[str, Any]) -> _M:
    """``m.model_copy(update=update)``, the same object built without its generic steps:
    pydantic's shallow copy (the instance dict copied, then updated; the fields set joined
    by the updated names; no extra and no private values on these models) is four
    attribute stores, and a step's effect makes two such copies (issue 25: the bridge
    simulates every step). A model with extra or private values takes ``model_copy``."""
    if (
        m.model_config.get("extra") == "allow"
        or m.__pydantic_extra__ is not None
        or getattr(m, "__pydantic_private__", None) is not None
    ):
        return m.model_copy(update=update)
    cls = type(m)
    new = cls.__new__(cls)
    d = m.__dict__.copy()
    d.update(update)
    _setattr(new, "__dict__", d)
    _setattr(new, "__pydantic_extra__", None)
    _setattr(new, "__pydantic_fields_set__", m.__pydantic_fields_set__ | update.keys())
    _setattr(new, "__pydantic_private__", None)
    return new


def moved(o: ObjectState, **changes: Any) -> ObjectState:
    base = dict(held=False, on_table=False, in_bin=None, on=None, fallen=False, reachable=True)
    base.update(changes)
    return _copy_with(o, base)


def replace_object(
    world: WorldState, new: ObjectState, held: str | None, grip: tuple | None = None
) -> WorldState:
    """``world`` with ``new`` in place of the cube of that name; ``grip`` moves the gripper.

    Skills that move the arm pass ``grip`` so that a later ``home`` is not judged a no-op
    because the symbolic gripper never left the rest pose.
    """
    objs = [new if o.name == new.name else o for o in world.objects]
    update: dict[str, Any] = {"objects": objs, "held_object": held}
    if grip is not None:
        update["grip_pos"] = tuple(float(v) for v in grip)
    return _copy_with(world, update)


# ---------------------------------------------------------------------- execution side
#: The hand's quarter turn about world z: fingers along x, for a grasp that a wall or a
#: neighbour along y leaves no room for.
QUARTER_TURN = float(np.pi / 2)
#: A cube turned more than this (rad) from the fingers' square is grasped with the hand
#: turned square to its faces. Closed on a cube turned 0.5-0.8 rad, the fingers pinch two
#: of its edges: it holds, but hangs askew, and a cube dropped askew tips (into the drawer,
#: out of the pick's reach). Square to the faces, it is the grasp the policy learned on. Up
#: to this turn the hand stays at rest: the cube then sits well enough in the fingers, and
#: every such pick is what it was (from 0.15 rad on, towers of four built by the policies
#: stood 26 times in 30 instead of 29: the hand then came down turned onto towers).
ALIGN_FROM = 0.35


def square_to(yaw: float) -> float:
    """The turn in [-pi/4, pi/4] that brings a square seen at ``yaw`` square to the axes."""
    return float((yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4)


@dataclass
class Binding:
    """A subgoal's parameters resolved against the scene at the moment it starts.

    Observation builders, experts and rewards read positions from the live observation
    through these indices, so a target cube that moves is tracked, not remembered.
    """

    cube: int | None = None  # the row of the object acted on (sim.scenes.row)
    target_kind: str | None = None  # "bin" | "cube" | "region" | "point" | "home"
    target_cube: int | None = None  # index of a cube target (stacking)
    #: How much higher than on a 4 cm cube a stacked object is let go (m): the held and
    #: the target object's heights less two of the tabletop's (0 there; the mixed scene's
    #: 5 cm cube, for one, takes 5 mm more).
    release_dz: float = 0.0
    #: How much further open each finger stands holding the object than holding a 4 cm
    #: cube (m): the policy sees the fingers as the tabletop's cubes left them
    #: (:func:`as_trained`; 0 there, 5 mm for the mixed scene's 5 cm cube).
    finger_offset: float = 0.0
    target_xyz: tuple[float, float, float] | None = None  # fixed target point
    #: The hand's turn about world z for this subgoal (rad; 0: fingers along world y). A
    #: skill that turns it runs its policy in a frame turned with the hand, about ``pivot``
    #: (a table point), so one policy serves both grasp axes (see :func:`to_frame`).
    grip_yaw: float = 0.0
    pivot: tuple[float, float] = (0.0, 0.0)
    #: How far the world is seen lowered for this subgoal (m): a pick or place at the top of
    #: a tower runs its policy as if the tower's top rested on the table (see :func:`lowered`).
    lower: float = 0.0
    #: How much higher than it is a pick's policy sees the object it takes (m): one resting
    #: on another is gripped this much higher up its sides, where the fingers' tips stay
    #: clear of the object below (gripped as the policy grips one on the table, the tips came
    #: down past the top of the one below and lifted it too; see ``skills.pick``). 0 for
    #: one on the table, so every other pick is as before.
    seen_higher: float = 0.0
    #: Leave the hand turned as the previous subgoal left it (a place onto a cube: the cube
    #: it holds square goes down turned as it was found, as a tower's cubes were before
    #: picks held them square); else the subgoal turns it to ``grip_yaw`` before its first
    #: step (into a bin, where the arm turned far from rest reaches less deep at the far
    #: corners, it goes back to rest).
    keep_turn: bool = False
    #: Let go with the hand still (a place of a rolling object, see ``skills.place``): the
    #: policy opens the fingers while the hand still moves, and fingers that open on the
    #: move drag a ball along, which then rolls on until a wall or the table's edge stops it.
    still_release: bool = False
    #: Whether that release has begun (the policy opened the fingers on the object once).
    letting_go: bool = field(default=False, compare=False, repr=False)
    #: The share of the policy's speed a push keeps near the object (``skills.push``; 1
    #: but for round objects, which tip when struck at full speed).
    near_speed: float = 1.0
    #: The action smoothing's state (see :func:`smoothed`): the motion applied last step
    #: (world axes, a fraction of ``scene.MAX_EE_SPEED``) and the gripper command; None
    #: before the first step of the subgoal (a fresh binding per subgoal resets them).
    motion: np.ndarray | None = field(default=None, compare=False, repr=False)
    grip: float | None = field(default=None, compare=False, repr=False)


def lowered(obs: dict, b: Binding) -> dict:
    """``obs`` with every height lowered by the binding's ``lower``."""
    if b.lower == 0.0:
        return obs
    proprio = np.array(obs["proprio"], dtype=np.float64)
    proprio[2] -= b.lower
    pos = np.array(obs["object_pos"], dtype=np.float64)
    pos[:, 2] -= b.lower
    return {**obs, "proprio": proprio, "object_pos": pos}


def raised(obs: dict, b: Binding) -> dict:
    """``obs`` with the bound object seen ``b.seen_higher`` higher than it is."""
    if b.seen_higher == 0.0:
        return obs
    pos = np.array(obs["object_pos"], dtype=np.float64)
    pos[bound_cube(b), 2] += b.seen_higher
    return {**obs, "object_pos": pos}


def as_trained(obs: dict, b: Binding) -> dict:
    """``obs`` with the fingers' joints less the binding's ``finger_offset``: an object wider
    or narrower than the 4 cm cubes the policies learned on keeps the fingers elsewhere, and
    a policy that reads "not closed on it yet" there never lets it go."""
    if b.finger_offset == 0.0:
        return obs
    proprio = np.array(obs["proprio"], dtype=np.float64)
    proprio[6:8] -= b.finger_offset
    return {**obs, "proprio": proprio}


def bound_cube(b: Binding) -> int:
    """The index of the cube a binding acts on (every skill but home binds one)."""
    assert b.cube is not None, "the binding has no cube"
    return b.cube


def _turn(xy: np.ndarray, c: float, s: float) -> np.ndarray:
    """Points ``xy`` (..., 2) turned by the angle whose cosine and sine are ``c``, ``s``."""
    return np.stack([c * xy[..., 0] - s * xy[..., 1], s * xy[..., 0] + c * xy[..., 1]], -1)


def to_frame(obs: dict, b: Binding) -> dict:
    """``obs`` as seen from the binding's frame: the world turned by ``-b.grip_yaw`` about
    ``b.pivot``, so that the hand's fingers lie along the frame's y as they do at rest.

    A square cube looks the same every quarter turn and nothing a policy observes is tied to
    the world's axes but the arm's reach, so a pick that needs the fingers along x (a wall or
    a neighbour beside the cube along y) is the same pick turned a quarter: the policy runs
    unchanged on the turned observation, and its action is turned back by :func:`to_world`.
    """
    if b.grip_yaw == 0.0:
        return obs
    p = np.asarray(b.pivot, dtype=np.float64)
    c, s = np.cos(-b.grip_yaw), np.sin(-b.grip_yaw)
    out = dict(obs)
    proprio = np.array(obs["proprio"], dtype=np.float64)
    proprio[:2] = p + _turn(proprio[:2] - p, c, s)
    proprio[3:5] = _turn(proprio[3:5], c, s)
    pos = np.array(obs["object_pos"], dtype=np.float64)
    pos[:, :2] = p + _turn(pos[:, :2] - p, c, s)
    h = -0.5 * b.grip_yaw  # quaternion of the turn, applied on the left: q' = r * q
    rw, rz = np.cos(h), np.sin(h)
    q = np.array(obs["object_quat"], dtype=np.float64)
    w, x, y, z = q[:, 0].copy(), q[:, 1].copy(), q[:, 2].copy(), q[:, 3].copy()
    q[:, 0], q[:, 1] = rw * w - rz * z, rw * x - rz * y
    q[:, 2], q[:, 3] = rw * y + rz * x, rw * z + rz * w
    out.update(proprio=proprio, object_pos=pos, object_quat=q)
    return out


def to_world(action: np.ndarray, b: Binding) -> np.ndarray:
    """A frame action (see :func:`to_frame`) in world axes: its motion turned back."""
    if b.grip_yaw == 0.0:
        return action
    a = np.array(action, dtype=np.float64)
    a[:2] = _turn(a[:2], np.cos(b.grip_yaw), np.sin(b.grip_yaw))
    return a


def from_world(action: np.ndarray, b: Binding) -> np.ndarray:
    """A world action in the binding's frame (the inverse of :func:`to_world`)."""
    if b.grip_yaw == 0.0:
        return action
    a = np.array(action, dtype=np.float64)
    a[:2] = _turn(a[:2], np.cos(-b.grip_yaw), np.sin(-b.grip_yaw))
    return a


def arm_motion(obs: dict) -> np.ndarray:
    """The grip site's velocity as an action's motion (a fraction of ``MAX_EE_SPEED``)."""
    return np.clip(np.asarray(vel_of(obs), dtype=np.float64) / scene.MAX_EE_SPEED, -1.0, 1.0)


@dataclass(frozen=True)
class Smoothing:
    """How a policy's actions are smoothed before they are applied (its manifest's
    ``action_filter``, ``action_rate`` and ``grip_filter``; all 0: applied as they are).

    A policy that saturates its actions reverses at full speed from one 40 ms step to the
    next. This is part of how the policy is executed, and training applies the same (so the
    policy learns with its own lag): ``alpha``, a first-order low-pass filter on the motion,
    ``m_t = alpha * m_(t-1) + (1 - alpha) * a_t``; ``rate``, the most the motion may change
    per step and axis after it; ``grip``, a low-pass filter on the gripper command (the
    fingers slamming onto a cube jolt the hand)."""

    alpha: float = 0.0
    rate: float = 0.0
    grip: float = 0.0

    @property
    def active(self) -> bool:
        return self.alpha > 0 or self.rate > 0 or self.grip > 0


def smoothed(action: np.ndarray, obs: dict, b: Binding, s: Smoothing) -> np.ndarray:
    """A world action after ``s`` (see :class:`Smoothing`), its state kept in ``b``.

    The motion's state starts from the motion the arm already has (``obs``'s grip
    velocity), so a subgoal continues what the previous one (or its retreat) left rather
    than reversing at the switch; a pure function of the state, so a run restored from a
    saved state, or an executor shared by many episodes, acts the same. The gripper's
    starts at the first command. Inactive, it returns ``action`` itself: policies without
    the fields act exactly as before."""
    if not s.active:
        return action
    prev = b.motion if b.motion is not None else arm_motion(obs)
    out = np.array(action, dtype=np.float64)
    m = s.alpha * prev + (1.0 - s.alpha) * out[:3]
    if s.rate > 0:
        m = np.clip(m, prev - s.rate, prev + s.rate)
    out[:3] = m
    b.motion = m
    if s.grip > 0:
        if b.grip is not None:
            out[3] = s.grip * b.grip + (1.0 - s.grip) * out[3]
        b.grip = float(out[3])
    return out


def grip_of(obs: dict) -> np.ndarray:
    return obs["proprio"][:3]


def vel_of(obs: dict) -> np.ndarray:
    return obs["proprio"][3:6]


def opening_of(obs: dict) -> float:
    return float(obs["proprio"][6] + obs["proprio"][7])


def cube_yaw(obs: dict, cube: int) -> float:
    return yaw_of(obs["object_quat"][cube])


def yaw_features(obs: dict, cube: int) -> np.ndarray:
    """A cube's yaw as (sin 4θ, cos 4θ): a square looks the same every quarter turn."""
    y = cube_yaw(obs, cube)
    return np.array([np.sin(4 * y), np.cos(4 * y)])


def proprio_features(obs: dict) -> list[np.ndarray]:
    """Features every skill observes: grip position, velocity, finger opening."""
    return [grip_of(obs), 0.1 * vel_of(obs), np.array([opening_of(obs) / (2 * scene.FINGER_OPEN)])]


def sample_arm_start(rng: np.random.Generator) -> np.ndarray | None:
    """Where other skills leave the arm: at home, or above the table after a place/push."""
    if rng.random() < 0.4:
        return None  # home
    xy = rng.uniform([-0.2, -0.28], [0.2, 0.28])
    return np.array([xy[0], xy[1], rng.uniform(0.07, 0.22)])


def random_cubes(rng: np.random.Generator, env: TabletopEnv | None = None) -> list[str]:
    """A random non-empty subset of the scene's objects (``env``'s; the tabletop's without
    one), in random order (the first is the subject). Where ``env.subjects`` names some
    objects (``eval-skill --kind``), the subject is one of them: the draw is the same, then
    the first of them drawn comes first, or, none drawn, one of them (by a further draw)
    takes the first place."""
    names = scene.CUBE_NAMES if env is None else env.object_names
    k = int(rng.integers(1, len(names) + 1))
    out = [str(n) for n in rng.choice(names, size=k, replace=False)]
    subjects = getattr(env, "subjects", None)
    if subjects:
        have = [n for n in out if n in subjects]
        if have:
            out.remove(have[0])
            out.insert(0, have[0])
        else:
            out[0] = str(subjects[int(rng.integers(len(subjects)))])
    return out


def of_subjects(env: TabletopEnv, names: list[str]) -> list[str]:
    """``names`` less those that are not among ``env.subjects`` where it names some (the
    objects a run is restricted to, ``eval-skill --kind``); ``names`` itself without."""
    subjects = getattr(env, "subjects", None)
    return [n for n in names if n in subjects] if subjects else names


def run_expert_until(
    env: TabletopEnv,
    act: Callable[[dict], np.ndarray],
    done: Callable[[dict], bool],
    max_steps: int,
) -> bool:
    """Drive ``env`` with ``act(obs)`` until ``done(obs)``; True if reached."""
    for _ in range(max_steps):
        obs = env.observe()
        if done(obs):
            return True
        env.step_physics(act(obs))
    return done(env.observe())
