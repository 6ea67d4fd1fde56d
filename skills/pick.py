"""pick(object): grasp a cube and lift it clear of the table."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

import skills.success_model as success_model
from sim import scene, scenes, scripted
from sim.objects import spec as object_spec
from sim.world import WorldState
from skills import registry
from skills.base import (
    ALIGN_FROM,
    DOMAIN_OBJECT,
    LOW_AFFORDANCE,
    NOT_GRASPABLE,
    PRECONDITION,
    QUARTER_TURN,
    Binding,
    Repair,
    Skill,
    SkillParams,
    Violation,
    bound_cube,
    check_object,
    cube_of,
    cube_yaw,
    grip_of,
    lost,
    lowered,
    moved,
    of_subjects,
    opening_of,
    proprio_features,
    raised,
    random_cubes,
    replace_object,
    sample_arm_start,
    square_to,
    to_frame,
    yaw_features,
)
from skills.separation import moved_by, push_candidates, separation_push
from skills.success_model import finger_gaps, fold_yaw, nearest, reach_features

if TYPE_CHECKING:
    from sim.env import TabletopEnv

LIFT_Z = 0.08  # a picked cube's centre must be at least this high (m)
#: A cube taken off a tower must rise this far above where it rested (m): clear of the cube
#: below (``on`` reads up to 1.2 cm of gap as resting).
TOWER_LIFT = 0.02
#: The highest cube the pick policy learned from: the top of a two-cube stack (centre z, m).
#: A cube higher up (the top of a taller tower) is picked in a frame lowered by the
#: difference: the same pick, since nothing the policy observes but the cube and the hand
#: tells heights apart; it then lifts the cube as far above the tower as it would above a
#: stack. Only from LOWER_FROM up, so every pick it learned from is unchanged.
TRAINED_TOP_Z = 3 * scene.CUBE_HALF
LOWER_FROM = TRAINED_TOP_Z + scene.CUBE_HALF
#: How much higher than it is the policy sees an object resting on another
#: (``Binding.seen_higher``): it grips a cube about 8 mm below its centre, which on a stack
#: puts the fingers' tips past the top of the cube below, which then comes up too; 5 mm
#: higher they pass clear of it (of the picks ``sample_start`` stacks, the object below
#: moved over 5 mm in 3 of 210 on the tabletop, was 11, and 17 of 320 in the mixed scene
#: without the ball on top, was 24; picked as often, 209 and 312; 3 mm higher was too
#: little for a chain link that had lifted the cube below).
STACKED_SEEN_HIGHER = 0.005


def stacked_seen_higher(name: str) -> float:
    """``STACKED_SEEN_HIGHER`` less what ``name`` stands taller than a 4 cm cube: the
    tips reach as far below its centre on any object, so a taller one (the 5 cm cube) keeps
    them clear of the one below by its own height (seen higher, it was missed)."""
    return max(0.0, STACKED_SEEN_HIGHER - (object_spec(name).half_height - scene.CUBE_HALF))


class PickParams(SkillParams):
    object: str = Field(
        ..., max_length=64, description="cube to grasp", json_schema_extra={"domain": DOMAIN_OBJECT}
    )


def _separation_hint(obj: str, fix: dict | None) -> str:
    if fix is not None:
        x, y = fix["target"]
        return (
            f'insert {{"skill": "push", "object": "{fix["object"]}", '
            f'"target": [{x}, {y}]}} before this pick to separate the cubes'
        )
    return (
        f"no push frees {obj}: every approach to it is blocked; "
        "move the cubes around it first, or choose another cube"
    )


def not_graspable(world: WorldState, obj: str, blockers: list[str]) -> Violation:
    """The violation of a pick the fingers cannot make, with the push that would free it."""
    hint = _separation_hint(obj, separation_push(world, obj))
    return Violation(
        NOT_GRASPABLE,
        f"{obj} cannot be grasped: {', '.join(blockers)} in the way of the fingers "
        "(along y and along x)",
        hint,
        "object",
    )


class Pick(Skill[PickParams]):
    name = "pick"
    description = "Grasp a cube with the gripper and lift it above the table."
    aliases = ("grasp", "grab", "pick_up", "pickup", "lift", "take")
    moves_object = grasps = True
    perturbations = (
        *("nominal", "yaw_full", "yaw_high", "edges", "row", "block", "wall_y", "wall_x"),
        *("after_push", "heavy_slippery", "light_grippy", "obs_noise_2mm", "obs_noise_5mm"),
        *("action_noise", "displaced", "forced_open", "knocked_out", "obs_noise_8mm"),
        *("action_noise_strong", "obs_latency"),
    )
    infeasible_under = ("block",)  # a neighbour along each finger axis: no grasp fits
    Params = PickParams
    precondition_text = (
        "the gripper is empty",
        "the cube is reachable and has no other cube on top of it",
        "the fingers fit beside the cube along y or along x: no touching neighbour or bin "
        "wall on that axis",
    )
    step_budget = 80

    def shield(self, a: np.ndarray) -> np.ndarray:
        """No wider than the approach opening (6.4 cm): ``graspable`` promises room for
        fingers that come down that wide, and no more. Fine-tuned under noise and latency,
        the policy opened to 7.6 cm, which tolerates a late or noisy view of the cube, and
        came down on the wall of a bin 2.7 cm away (89 of 100 such picks, from 99)."""
        if a[3] < scripted.APPROACH:
            a = np.array(a, dtype=np.float64)
            a[3] = scripted.APPROACH
        return a

    def repair(self, world: WorldState, params: PickParams, code: str) -> Repair | None:
        """A push first: the one that separates the cube from its neighbour when the
        fingers cannot get around it (``not_graspable``), or, when the predictor rates the
        pick too low, the push (to a table region, or apart) after which both the geometry
        and the predictor accept it."""
        obj = params.object
        what = f"{obj} cannot be picked where it is"
        step = {"skill": self.name, "object": obj}
        if code == PRECONDITION:
            return self._clear_first(world, obj, step)
        if code == NOT_GRASPABLE:
            fix = separation_push(world, obj)
            return Repair(
                [fix, step] if fix is not None else None, what, _separation_hint(obj, fix)
            )
        if code != LOW_AFFORDANCE:
            return None
        model = success_model.shipped(self.name)
        best: tuple[float, dict] | None = None
        for push in push_candidates(world, obj):
            w2 = moved_by(world, push)
            if self.preconditions(w2, params):
                continue
            p = model.prob(w2, params) if model is not None else 1.0
            if model is None or p >= model.threshold:
                if best is None or p > best[0]:
                    best = (p, push)
        if best is None:
            return Repair(None, what, f"no single push makes {obj} pickable; choose another cube")
        p, push = best
        hint = f"insert {json.dumps(push)} before this pick (predicted success then {p:.2f})"
        return Repair([push, step], what, hint)

    def _clear_first(self, world: WorldState, obj: str, step: dict) -> Repair | None:
        """What is stacked on ``obj`` set down on the nearest table region that takes it,
        then the pick ("put the blue block in the bin" with the yellow one on it). None
        where the pick is refused for something else (the hand full, the drawer shut)."""
        top = world.under(obj)
        if top is None or world.held_object is not None or world.in_drawer(obj):
            return None
        what = f"{top} is stacked on {obj}"
        place = registry.get("place")
        lifted = self.effect(world, PickParams(object=top))
        o = cube_of(world, obj)

        def order(n: str) -> tuple[bool, float]:
            # not the region the stack stands in: set down beside it, the object lands
            # where the hand then comes down for ``obj`` (a place there rated p=0.29, or
            # out of steps, in the mixed scene's chains)
            d = float(np.hypot(*(np.asarray(world.region(n).pos[:2]) - o.pos[:2])))  # type: ignore[union-attr]
            return (world.in_region(obj, n), d)

        regions = sorted(world.region_names, key=order)
        for r in regions:
            if not place.preconditions(lifted, place.Params(target=r)):
                aside = [{"skill": self.name, "object": top}, {"skill": "place", "target": r}]
                return Repair([*aside, step], what, f"pick {top} and place it on {r} first")
        return Repair(None, what, f"pick {top} and place it elsewhere first")

    def preconditions(self, world: WorldState, params: PickParams) -> list[Violation]:
        if world.in_drawer(params.object) and not world.is_open():
            # under the cabinet, or behind the drawer's front: no grasp gets there
            return [
                Violation(
                    PRECONDITION,
                    f"{params.object} is in the drawer, which is not open",
                    "open the drawer first",
                    "object",
                )
            ]
        v = check_object(world, params.object, "object")
        if v:
            return v
        out: list[Violation] = []
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
        blockers = world.blocked_by(params.object)
        if not out and blockers:
            out.append(not_graspable(world, params.object, blockers))
        return out

    def effect(self, world: WorldState, params: PickParams) -> WorldState:
        o = cube_of(world, params.object)
        p = (o.pos[0], o.pos[1], 0.12)
        out = replace_object(world, moved(o, held=True, pos=p), held=o.name, grip=p)
        if out.drawer is not None and o.name in out.drawer.contents:
            left = [n for n in out.drawer.contents if n != o.name]
            out.drawer = out.drawer.model_copy(update={"contents": left})
        return out

    def success(self, before: WorldState, after: WorldState, params: PickParams) -> bool:
        """Held and lifted: above LIFT_Z, and off whatever it rested on (the top of a tower
        already stands above LIFT_Z before the pick)."""
        o, was = after.object(params.object), before.object(params.object)
        low = max(LIFT_Z, was.pos[2] + TOWER_LIFT if was is not None else LIFT_Z)
        return o is not None and after.held(params.object) and o.pos[2] >= low

    def doomed(
        self, before: WorldState, now: WorldState, params: PickParams, b: Binding
    ) -> str | None:
        return lost(now, params.object)

    # ------------------------------------------------------------------ execution side
    obs_dim = 13

    def bind(self, world: WorldState, params: PickParams) -> Binding:
        """The cube, and the hand turned a quarter when only x leaves room for the fingers
        (a bin wall or a neighbour beside the cube along y), and further square to the
        cube's faces when it is turned (``ALIGN_FROM``) and nothing stands where the fingers
        then come down: the policy then runs in that turned frame, pivoting about the cube
        (see :func:`skills.base.to_frame`)."""
        o = world.object(params.object)
        axis = world.grasp_axis(params.object) or "y"
        turn = QUARTER_TURN if axis == "x" else 0.0
        z = o.pos[2] if o is not None else 0.0
        align = square_to(o.yaw) if o is not None else 0.0
        on_cube = o is not None and o.on is not None
        # square enough (or round) for the fingers as the hand is
        square = o is None or object_spec(params.object).width_across(o.yaw) <= ALIGN_WIDTH
        # (off a stack's top too where it is wider than a 4 cm cube: the fingers, opened for
        # the width across, came down on a turned 5 cm cube's corners and knocked it off)
        wide = object_spec(params.object).half_width > scene.CUBE_HALF
        stays = on_cube and not wide
        if square or stays or world.grasp_blockers(params.object, axis, align):
            align = 0.0  # (square, or the fingers square to it would meet something)
        yaw = turn + align
        return Binding(
            cube=scenes.row(params.object),
            grip_yaw=yaw,
            pivot=(float(o.pos[0]), float(o.pos[1])) if yaw and o is not None else (0.0, 0.0),
            lower=float(z - TRAINED_TOP_Z) if z >= LOWER_FROM else 0.0,
            finger_offset=float(object_spec(params.object).half_width - scene.CUBE_HALF),
            seen_higher=stacked_seen_higher(params.object) if on_cube else 0.0,
        )

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        # (not as_trained: seen as around a 4 cm cube, the 5 cm cube is picked more often
        # under 40 ms latency, 39 against 35 of 40, and less often under 8 mm of observation
        # noise, 33 against 39)
        obs = raised(lowered(to_frame(obs, b), b), b)
        c = bound_cube(b)
        grip, cube = grip_of(obs), obs["object_pos"][c]
        return np.concatenate(
            [*proprio_features(obs), cube - grip, [cube[2]], yaw_features(obs, c)]
        )

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        obs = lowered(to_frame(obs, b), b)
        c = bound_cube(b)
        # (the expert takes the object's own half width: its grasp test reads the fingers)
        half = scene.CUBE_HALF + b.finger_offset
        return scripted.pick_action(
            grip_of(obs), opening_of(obs), obs["object_pos"][c], cube_yaw(obs, c), half=half
        )

    def potential(self, obs: dict, b: Binding) -> float:
        c = bound_cube(b)
        grip, cube = grip_of(obs), obs["object_pos"][c]
        phi = -float(np.linalg.norm(grip - cube))
        if scripted.is_grasped(grip, opening_of(obs), cube, cube_yaw(obs, c)):
            phi += 0.2 + 2.0 * min(cube[2] - scene.CUBE_HALF, 0.1)
        return phi

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> PickParams | None:
        """Cubes at random (sometimes one stacked on another); the arm where others left it."""
        names = random_cubes(rng, env)
        k = len(names)
        cubes: dict = {n: None for n in names}
        if k >= 2 and rng.random() < 0.2:
            xy = rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH)
            cubes[names[1]] = [xy[0], xy[1], rng.uniform(-0.3, 0.3)]
            below, top = object_spec(names[1]).half_height, object_spec(names[0]).half_height
            cubes[names[0]] = [xy[0], xy[1], 2 * below + top + 0.001, rng.uniform(-0.3, 0.3)]
        env.reset(
            seed=int(rng.integers(2**31)), options={"cubes": cubes, "arm": sample_arm_start(rng)}
        )
        w = env.world_state()
        free = [
            o.name
            for o in w.objects
            if w.under(o.name) is None and o.reachable and (o.on_table or o.on is not None)
        ]
        free = of_subjects(env, free)
        if not free:
            return None
        return PickParams(object=str(rng.choice(free)))


#: The width across the fingers from which the hand turns square to an object: a 4 cm
#: cube's at ``ALIGN_FROM`` (5.1 cm; the tabletop's cubes turn from ``ALIGN_FROM`` as
#: ever). A larger cube turned less is already this wide (a 5 cm cube from 0.03 rad), and a
#: round object never is.
ALIGN_WIDTH = float(scripted.grasp_width(ALIGN_FROM))


#: What the pick skill's success predictor reads (fitted by ``scripts/affordance.py``).
PREDICTOR_FEATURES = (
    "x y z reach_r reach_box_margin reach_r_margin yaw min_finger_gap max_finger_gap "
    "nearest in_bin on_cube graspable"
).split()


def predictor_features(world: WorldState, p: PickParams) -> list[float]:
    """The values :data:`PREDICTOR_FEATURES` names, for the pick success predictor
    (:mod:`skills.success_model`)."""
    o = cube_of(world, p.object)
    x, y, z = o.pos
    # the gaps along the axis the pick will use (the hand turns a quarter when only x is free)
    g_pos, g_neg = finger_gaps(world, o.name, world.grasp_axis(o.name) or "y")
    return [
        x,
        y,
        z,
        *reach_features(x, y),
        fold_yaw(o.yaw),
        min(g_pos, g_neg),
        max(g_pos, g_neg),
        nearest(world, o.name, (x, y)),
        float(o.in_bin is not None),
        float(o.on is not None),
        float(world.graspable(o.name)),
    ]


success_model.register(
    "pick",
    PREDICTOR_FEATURES,
    predictor_features,
    # a cube on the table, in a bin or on one other cube
    support_top_z=3 * scene.CUBE_HALF + 0.01,
)
