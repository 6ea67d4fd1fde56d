"""place(target): put the held cube into a bin, onto a cube or a tower, on a table region, or
into the open drawer (the articulated scene)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

import skills.success_model as success_model
from sim import scene, scenes, scripted
from sim.cubes import RELEASE_BAND, region_spot
from sim.objects import spec as object_spec
from sim.world import ObjectState, WorldState
from skills.base import (
    DOMAIN_PLACE_TARGET,
    LOW_AFFORDANCE,
    PRECONDITION,
    UNREACHABLE,
    Binding,
    Policy,
    Repair,
    Skill,
    SkillParams,
    Violation,
    as_trained,
    bound_cube,
    cube_of,
    cube_yaw,
    grip_of,
    lost,
    lowered,
    moved,
    opening_of,
    proprio_features,
    random_cubes,
    replace_object,
    resolve_xy,
    run_expert_until,
    sample_arm_start,
    vel_of,
    yaw_features,
)
from skills.success_model import CAP, fold_yaw, nearest, reach_features

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
#: The tallest tower a place builds, the placed cube included. Four cubes is every cube the
#: scene has; the scripted expert and the shipped policy build it (scripts/eval_towers_drawer.py);
#: the carry height follows the tower, so the limit is the scene's, not the arm's reach.
MAX_TOWER = 4
#: Cubes the drawer takes, and where a place drops one, relative to the centre of its inside
#: (x along its travel, y across; tried in order): the middle first, the one spot a pick can
#: take a cube out of (the hand turned a quarter; elsewhere the walls are in the fingers'
#: way); then its front and back halves. The inside reaches 4.6 cm along +-y, the arm only
#: to y = -0.34 and a cube to -0.35 (the inside's centre is at -0.351): the spots lie 2 cm
#: towards +y, where a dropped cube that slides a little is still within reach.
DRAWER_CAPACITY = 2
DRAWER_SPOTS = ((0.0, 0.02), (-0.03, 0.02), (0.03, 0.02))
#: A spot has room when every cube in the drawer is this far from it along x or y (m).
DRAWER_ROOM = 2 * scene.CUBE_HALF + 0.004
#: Grip-site height of the release over the drawer: the fingertips clear its walls (m).
DRAWER_RELEASE_Z = 0.09
#: A target cube higher than this (centre z, m) tops a tower: the policy, which learned to
#: stack on cubes resting on the table, places in a frame lowered until the target rests
#: on the table there (see :func:`skills.base.lowered`). Nothing it observes but the hand,
#: the held cube and the release point tells heights apart, so it is the stacking it knows,
#: carried as high above the tower as above a single cube.
TOWER_FROM = 2 * scene.CUBE_HALF
#: Share of the starts with three cubes or more where a tower of two or three stands and the
#: held cube goes on top (see :func:`side_draw`).
TOWER_START = 0.3
#: A start's tower counts as standing straight with each level this close above the one
#: below (m, horizontally); stacked by the reset they are within a millimetre.
UPRIGHT_TOL = 0.004
#: The policy observes a drawer target as a bin target: a point to drop the cube from; a
#: bin a rolling object is set down in (``"bin_floor"``) as a table region: a point just
#: above the floor to let go at.
OBSERVED_KIND = {"drawer": "bin", "bin_floor": "region"}
#: Grip-site height above a bin's floor at which a rolling object (a ball) is let go: as
#: low as on the table (``scripted.TABLE_RELEASE_Z``). Dropped from the bins' release
#: height it bounces, and with nothing to stop it rolling it ends against a wall, most
#: often where two walls meet and neither finger axis is free (a ball put in a bin by the
#: policy came to rest graspable 8 times in 20); set down at the floor it stays near the
#: spot.
BIN_FLOOR_Z = 2 * 0.002  # the floor's top (its geom's half height 2 mm, at z 2 mm)
ROLLING_BIN_RELEASE_Z = BIN_FLOOR_Z + scripted.TABLE_RELEASE_Z
#: The finger opening (m) from which a rolling object is out of the fingers' hold: the hand
#: may move again (4 cm across, it is held at about 4.1 cm; open is 8 cm).
LET_GO_OPENING = 0.06
#: The hand's speed across the table (m/s) under which a rolling object is let go: it takes
#: the hand's motion with it and, on the table, nothing stops it again (1 cm/s is 20 cm
#: over a chain).
STILL_SPEED = 0.003
#: Fingers this much (m) further apart than the held object is wide are opening on it.
CLOSED_SLACK = 0.004


def grasp_and_carry(env: TabletopEnv, held: int, carry: np.ndarray, steps: int = 120) -> bool:
    """Grasp cube ``held`` (its index) with the scripted pick and carry it to ``carry``:
    how a place start (and an affordance start) gets a cube into the hand. True once it is
    held there within ``steps`` control steps."""

    half = object_spec(env.object_names[held]).half_width  # (across the fingers)

    def act(obs: dict) -> np.ndarray:
        grip, op, cube = grip_of(obs), opening_of(obs), obs["object_pos"][held]
        yaw = cube_yaw(obs, held)
        if scripted.is_grasped(grip, op, cube, yaw, half) and cube[2] > 0.07:
            return scripted._move(grip, carry, scripted.CLOSE)
        return scripted.pick_action(grip, op, cube, yaw, half=half)

    def done(obs: dict) -> bool:
        grip = grip_of(obs)
        return scripted.is_grasped(
            grip, opening_of(obs), obs["object_pos"][held], cube_yaw(obs, held), half
        ) and bool(np.linalg.norm(grip - carry) < 0.02)

    return run_expert_until(env, act, done, steps)


def drawer_spot(world: WorldState) -> tuple[float, float] | None:
    """The table point (x, y) of the first drawer spot clear of the cubes inside, or None."""
    d = world.drawer
    if d is None:
        return None
    inside = [o.pos[:2] for o in world.objects if o.name in d.contents and not o.held]
    for dx, dy in DRAWER_SPOTS:
        x, y = d.pos[0] + dx, d.pos[1] + dy
        if all(max(abs(x - p[0]), abs(y - p[1])) >= DRAWER_ROOM for p in inside):
            return (x, y)
    return None


def drawer_violations(world: WorldState) -> list[Violation]:
    """Why the held cube cannot go into the drawer: none here, closed, or no room."""
    d = world.drawer
    if d is None:
        names = world.bin_names + world.object_names + world.region_names
        return [
            Violation(
                "hallucinated_target",
                "this scene has no drawer",
                f"targets: {', '.join(names)}",
                "target",
            )
        ]
    if not d.is_open:
        state = "closed" if d.is_closed else f"only {d.opening:.2f} m open"
        return [
            Violation(PRECONDITION, f"the drawer is {state}", "open the drawer first", "target")
        ]
    inside = ", ".join(d.contents)
    if len(d.contents) >= DRAWER_CAPACITY or drawer_spot(world) is None:
        what = "full" if len(d.contents) >= DRAWER_CAPACITY else "out of room"
        return [
            Violation(
                PRECONDITION,
                f"the drawer is {what} ({inside} inside)",
                "pick a cube out of the drawer first, or choose a bin",
                "target",
            )
        ]
    return []


def _where(world: WorldState, name: str) -> str:
    o = cube_of(world, name)
    if o.in_bin:
        return f"in {o.in_bin}"
    if world.in_drawer(name):
        return "in the drawer"
    return f"on {o.on}" if o.on else "not on the table"


def tower_violations(world: WorldState, t: str) -> list[Violation]:
    """Why the held cube cannot go onto cube ``t``: something on it, a tower not standing
    on the table (in a bin, in the drawer), one already ``MAX_TOWER`` high, out of reach."""
    o = cube_of(world, t)
    out: list[Violation] = []
    top = world.under(t)
    if top is not None:
        tip = world.top_of_stack(t)
        out.append(
            Violation(PRECONDITION, f"{top} is already on {t}", f"stack on {tip}?", "target")
        )
    below = world.stack_below(t)
    base = below[-1] if below else t
    if not world.on_table(base):
        where = _where(world, base)
        msg = (
            f"{t} stands on {base}, which is {where}; a tower must stand on the table"
            if below
            else f"{t} is {where}; stacking needs a cube on the table"
        )
        out.append(Violation(PRECONDITION, msg, "", "target"))
    if top is None and len(below) + 2 > MAX_TOWER:
        out.append(
            Violation(
                PRECONDITION,
                f"{t} tops a tower of {len(below) + 1}; towers stop at {MAX_TOWER} cubes",
                "place it on a lower tower, in a bin or on the table",
                "target",
            )
        )
    if not o.reachable:
        out.append(Violation(UNREACHABLE, f"{t} is out of the arm's reach", "", "target"))
    return out


def side_draw(rng: np.random.Generator) -> float:
    """A uniform number for a choice added to an existing start sampler, taken beside its
    stream rather than from it: ``rng`` is left where it was, so every start that does not
    take the new branch is drawn exactly as before (and the figures measured on them stay)."""
    state = rng.bit_generator.state
    u = rng.random()
    rng.bit_generator.state = state
    return float(np.random.default_rng([int(u * 2**53), 15]).random())


def upright(world: WorldState, names: list[str], tol: float = UPRIGHT_TOL) -> bool:
    """Whether ``names`` (bottom first) stand as one straight tower: each on the one below
    and within ``tol`` of it horizontally. A tower a carried cube brushed can still read
    ``on`` at every level while leaning past what any place onto it survives."""
    if world.tower(names[0]) != names:
        return False
    ps = [cube_of(world, n).pos for n in names]
    pairs = zip(ps, ps[1:], strict=False)
    return all(np.hypot(a[0] - b[0], a[1] - b[1]) <= tol for a, b in pairs)


def region_full(world: WorldState, region: str, moving: str | None) -> list[Violation]:
    """Why ``moving`` cannot be set down or pushed at ``region``: no spot there is clear of
    the cubes already in it (:func:`sim.cubes.region_spot`); none when one is."""
    band = RELEASE_BAND if world.held_object == moving else None  # placed, or pushed
    if region_spot(world, region, moving, band=band) is not None:
        return []
    there = [o.name for o in world.objects if o.name != moving and world.in_region(o.name, region)]
    return [
        Violation(
            PRECONDITION,
            f"{region} is full: no room beside {', '.join(there) or 'the cubes there'}",
            "choose another table region or a bin",
            "target",
        )
    ]


def placed_ok(world: WorldState, obj: str, target: str) -> bool:
    """Whether ``obj`` rests in/on ``target`` with the gripper empty and clear of it."""
    o = world.object(obj)
    if world.held_object is not None or o is None:
        return False
    if world.grip_pos[2] < o.pos[2] + CLEARANCE:
        return False
    if world.bin(target) is not None or target == scene.DRAWER_NAME:
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
    aliases = ("put", "drop", "release", "put_down", "stack", "insert")
    releases = puts_at_target = True
    perturbations = (
        *("nominal", "yaw_full", "yaw_high", "edges", "heavy_slippery", "light_grippy"),
        *("obs_noise_2mm", "obs_noise_5mm", "action_noise", "forced_open", "knocked_out"),
        *("target_moved", "obs_noise_8mm", "action_noise_strong", "obs_latency", "tower"),
    )
    # the cube it was to carry is no longer in the hand
    infeasible_under = ("forced_open", "knocked_out")
    Params = PlaceParams
    precondition_text = (
        "the gripper holds a cube",
        "a cube target is not the held cube, has nothing on top, and its tower stands on the "
        f"table, under {MAX_TOWER} cubes with the held one",
        f"the drawer is open and holds under {DRAWER_CAPACITY} cubes (where there is a drawer)",
    )
    step_budget = 100

    def repair(self, world: WorldState, params: PlaceParams, code: str) -> Repair | None:
        """Where the predictor rates the place too low: the other targets it rates higher
        (a hint; no steps to run instead)."""
        model = success_model.shipped(self.name)
        if code != LOW_AFFORDANCE or model is None:
            return None
        alts: list[tuple[float, str]] = []
        for t in [b.name for b in world.bins] + [r.name for r in world.regions]:
            if t == params.target:
                continue
            p2 = PlaceParams(target=t)
            if not self.preconditions(world, p2):
                alts.append((model.prob(world, p2), t))
        alts.sort(reverse=True)
        good = [f"{t} ({p:.2f})" for p, t in alts[:3] if p >= model.threshold]
        held = world.object(world.held_object) if world.held_object else None
        turned = f"the held cube is turned {abs(held.yaw):.2f} rad; " if held is not None else ""
        if good:
            return Repair(None, None, f"{turned}targets rated higher: {', '.join(good)}")
        return Repair(None, None, f"{turned}no target is rated feasible: home releases the cube")

    def preconditions(self, world: WorldState, params: PlaceParams) -> list[Violation]:
        t = params.target
        if world.held_object is None:
            return [Violation(PRECONDITION, "the gripper is empty", "pick a cube first", "target")]
        if world.region(t) is not None:
            return region_full(world, t, world.held_object)
        if world.bin(t) is not None:
            return []
        if t == scene.DRAWER_NAME:
            return drawer_violations(world)
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
        if object_spec(world.held_object).rolls:
            return [
                Violation(
                    PRECONDITION,
                    f"{world.held_object} would roll off {t}: a "
                    f"{object_spec(world.held_object).kind} does not stay on another object",
                    "put it in a bin or on a table region",
                    "target",
                )
            ]
        if not object_spec(t).stackable:
            return [
                Violation(
                    PRECONDITION,
                    f"nothing stays on top of {t}: a {object_spec(t).kind} cannot carry another",
                    "choose a bin, a region or an object with a flat top",
                    "target",
                )
            ]
        return tower_violations(world, t)

    def effect(self, world: WorldState, params: PlaceParams) -> WorldState:
        assert world.held_object is not None  # the preconditions: the gripper holds a cube
        h = cube_of(world, world.held_object)
        held = object_spec(h.name)
        t = params.target
        if world.bin(t) is not None:
            # at the drop spot the skill lets go over (the centre of an empty bin, else the
            # spot farthest from what it holds): a later pick is judged where the object is
            x, y = scripted.release_point(world, t)[:2]
            new = moved(h, in_bin=t, pos=(float(x), float(y), 0.025))
        elif world.region(t) is not None:  # where the release point is: beside the others
            x, y = scripted.release_point(world, t)[:2]
            new = moved(h, on_table=True, pos=(float(x), float(y), held.half_height))
        elif t == scene.DRAWER_NAME:
            return self._into_drawer(world, h)
        else:
            o = cube_of(world, t)
            # (the two halves summed first: for equal halves the same double as twice one)
            rest = o.pos[2] + (object_spec(o.name).half_height + held.half_height)
            new = moved(h, on=t, pos=(o.pos[0], o.pos[1], rest))
        above = (new.pos[0], new.pos[1], new.pos[2] + held.height)
        return replace_object(world, new, held=None, grip=above)

    @staticmethod
    def _into_drawer(world: WorldState, h: ObjectState) -> WorldState:
        """The held cube at the drawer's free spot, listed in its contents."""
        d, xy = world.drawer, drawer_spot(world)
        assert d is not None and xy is not None  # the preconditions: open, with room
        held = object_spec(h.name)
        new = moved(h, pos=(xy[0], xy[1], scene.DRAWER_FLOOR_Z + held.half_height))
        above = (xy[0], xy[1], new.pos[2] + held.height)
        out = replace_object(world, new, held=None, grip=above)
        out.drawer = d.model_copy(update={"contents": [*d.contents, h.name]})
        return out

    def success(self, before: WorldState, after: WorldState, params: PlaceParams) -> bool:
        if before.held_object is None:
            return False
        return placed_ok(after, before.held_object, params.target)

    def doomed(
        self, before: WorldState, now: WorldState, params: PlaceParams, b: Binding
    ) -> str | None:
        """The held cube fell off the table, or came to rest out of the gripper away from
        the target (knocked out, dropped on the way): place cannot pick it up again. A cube
        target that fell or went out of reach ends it too. A cube in the drawer is where it
        should be, reachable or not."""
        h = before.held_object
        if h is None or now.in_drawer(h):
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
        cube = scenes.row(world.held_object)
        off = float(object_spec(world.held_object).half_width - scene.CUBE_HALF)
        t = params.target
        if world.bin(t) is not None or world.region(t) is not None:
            kind = "bin" if world.bin(t) is not None else "region"
            x, y, z = (float(v) for v in scripted.release_point(world, t))
            rolls = object_spec(world.held_object).rolls
            b = world.bin(t)
            # set down, not dropped, where the drop spot is the centre (the bin holds nothing
            # else): there the opening fingers clear the walls, which at the corner spots
            # beside other objects they come down on (place of the ball 0.92 against 1.000)
            if b is not None and rolls and np.hypot(x - b.pos[0], y - b.pos[1]) < 1e-9:
                kind, z = "bin_floor", ROLLING_BIN_RELEASE_Z
            return Binding(
                cube=cube,
                target_kind=kind,
                target_xyz=(x, y, z),
                finger_offset=off,
                still_release=rolls,
            )
        if t == scene.DRAWER_NAME:
            spot = drawer_spot(world)
            assert spot is not None  # the preconditions: an open drawer with room
            xyz = (float(spot[0]), float(spot[1]), DRAWER_RELEASE_Z)
            return Binding(cube=cube, target_kind="drawer", target_xyz=xyz, finger_offset=off)
        z = cube_of(world, t).pos[2]
        lower = float(z - scene.CUBE_HALF) if z > TOWER_FROM else 0.0
        halves = object_spec(t).half_height + object_spec(world.held_object).half_height
        return Binding(
            cube=cube,
            target_kind="cube",
            target_cube=scenes.row(t),
            lower=lower,
            keep_turn=True,
            release_dz=float(halves - 2 * scene.CUBE_HALF),
            finger_offset=off,
        )

    def act(self, obs: dict, b: Binding, policy: Policy | None = None) -> np.ndarray:
        """The skill's action; with ``still_release``, once the policy first opens the
        fingers on the object (``Binding.letting_go``, kept from then on) the hand stops
        across the table, holds on until it has stopped (:data:`STILL_SPEED`), then opens,
        moving up at most, until the fingers stand :data:`LET_GO_OPENING` apart or the
        object has left them: a ball let go from a moving hand rolls on, and a policy
        interrupted at the moment it let go does not always decide to again."""
        a = super().act(obs, b, policy)
        if not b.still_release or (a[3] >= 0.0 and not b.letting_go):
            return a
        c = bound_cube(b)
        near = float(np.linalg.norm(obs["object_pos"][c] - grip_of(obs))) < DROP_GRIP
        if opening_of(obs) >= LET_GO_OPENING or not near:
            return a
        b.letting_go = True
        still = np.array(a, dtype=np.float64)
        still[:2] = 0.0  # (up it may go: fingertips pressed on the table do not open)
        still[2] = max(still[2], 0.0)
        closed = opening_of(obs) < 2 * (scene.CUBE_HALF + b.finger_offset) + CLOSED_SLACK
        if closed and float(np.linalg.norm(vel_of(obs)[:2])) > STILL_SPEED:
            still[2:] = (0.0, 1.0)  # (held on until the hand has stopped)
        else:
            still[3] = -1.0
        if b.motion is not None:  # (the smoothing goes on from the motion applied)
            b.motion = still[:3].copy()
        if b.grip is not None:
            b.grip = float(still[3])
        return still

    @staticmethod
    def release(obs: dict, b: Binding) -> np.ndarray:
        if b.target_cube is not None:
            at = obs["object_pos"][b.target_cube] + np.array([0, 0, scripted.STACK_RELEASE_DZ])
            return at if not b.release_dz else at + np.array([0.0, 0.0, b.release_dz])
        assert b.target_xyz is not None  # a bin or region target binds its point
        return np.asarray(b.target_xyz)

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        obs = as_trained(lowered(obs, b), b)
        c = bound_cube(b)
        grip, cube = grip_of(obs), obs["object_pos"][c]
        seen = OBSERVED_KIND.get(b.target_kind or "", b.target_kind)
        kind = np.array([float(seen == k) for k in KINDS])
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
        obs = as_trained(lowered(obs, b), b)
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
        """A cube in a grasp the pick skill produced, carried somewhere above the table;
        sometimes a tower earlier places built stands there, and the cube goes on top."""
        names = random_cubes(rng, env)
        # the split's (and training's) ``tower`` layout: always the tallest tower, three
        # cubes with the held one going fourth, which the nominal mix seldom draws
        tall = getattr(getattr(env, "cond", None), "layout", None) == "tower"
        if tall:
            names = [str(n) for n in rng.permutation(env.object_names)]
        k = len(names)
        cubes: dict = {n: None for n in names}
        filled: str | None = None
        tower: list[str] = []
        if tall or (k >= 3 and side_draw(rng) < TOWER_START):
            tower = names[1:4] if tall else names[1 : 1 + int(rng.integers(2, k))]
            xy = rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH)
            top = 0.0  # each on the one below, 1 mm apart
            for i, n in enumerate(tower):
                half = object_spec(n).half_height
                z = top + half + (0.001 if i else 0.0)
                top = z + half
                cubes[n] = [xy[0], xy[1], z, rng.uniform(-0.2, 0.2)]
        elif k >= 2 and rng.random() < 0.3:
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
        held = scenes.row(names[0])
        carry = np.array([*rng.uniform([-0.2, -0.25], [0.2, 0.25]), rng.uniform(0.08, 0.2)])

        if not grasp_and_carry(env, held, carry):
            return None
        w = env.world_state()
        if w.held_object != names[0]:
            return None
        if tower:  # unless the carry knocked it over, or askew (or a ball is in it)
            stands = upright(w, tower) and all(object_spec(n).stackable for n in tower)
            stands = stands and not object_spec(names[0]).rolls  # (a ball rolls off)
            return PlaceParams(target=tower[-1]) if stands else None
        kind = rng.choice(KINDS, p=[0.5, 0.3, 0.2])
        if kind == "cube":
            options = [
                o.name
                for o in w.objects
                if o.name != w.held_object
                and o.on_table
                and w.under(o.name) is None
                and o.reachable
                and object_spec(o.name).stackable
                and not object_spec(w.held_object).rolls
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


#: What the place skill's success predictor reads (fitted by ``scripts/affordance.py``).
PREDICTOR_FEATURES = (
    "held_yaw to_bin to_cube tx ty reach_r reach_box_margin reach_r_margin target_yaw "
    "room cubes_in_bin"
).split()


def predictor_features(world: WorldState, p: PlaceParams) -> list[float]:
    """The values :data:`PREDICTOR_FEATURES` names, for the place success predictor
    (:mod:`skills.success_model`)."""
    h = world.object(world.held_object) if world.held_object else None
    yaw = fold_yaw(h.yaw) if h is not None else 0.0
    t = p.target
    kind = [float(world.bin(t) is not None), float(world.object(t) is not None)]
    xy = resolve_xy(world, t)
    tx, ty = (float(xy[0]), float(xy[1])) if xy is not None else (0.0, 0.0)
    tgt = world.object(t)
    t_yaw = fold_yaw(tgt.yaw) if tgt is not None else 0.0
    room = nearest(world, t if tgt is not None else "", (tx, ty)) if world.bin(t) is None else 0.0
    in_bin = sum(1 for o in world.objects if o.in_bin == t) if world.bin(t) is not None else 0
    return [yaw, *kind, tx, ty, *reach_features(tx, ty), t_yaw, min(room, CAP), float(in_bin)]


success_model.register(
    "place",
    PREDICTOR_FEATURES,
    predictor_features,
    # a target cube on the table
    support_top_z=scene.CUBE_HALF + 0.01,
)
