"""Labelled rollouts for the affordance models: starts on *and off* each skill's
training distribution, and the outcome of running the skill from each.

A success predictor learned only from a skill's own start distribution would see nothing
but successes. The starts here mix the nominal chained start (``Skill.sample_start``) with
what the skill meets in the world and was not trained on: cubes turned through the full yaw
range, on the workspace edges, touching neighbours (along the finger axis and across it,
rows and 2x2 blocks, at gaps from 0 to 4 cm), against or inside bin walls, held cubes
turned before a place, pushes through clutter. Every start is a function of its seed.

The outcome is the skill's own success test after running it to its step budget, with the
preconditions *not* checked (the point is to learn where they are wrong).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sim import scene
from sim.env import TabletopEnv
from sim.world import WorldState
from skills.base import SkillParams
from skills.pick import PickParams
from skills.place import PlaceParams, grasp_and_carry
from skills.push import PushParams
from skills.registry import get

if TYPE_CHECKING:
    from skills.policy import MLPPolicy

Q = math.pi / 4
#: Where a green-bin south wall's outer face is (y), for the wall layouts.
BIN_FACE_Y = 0.25 - 0.068

LAYOUTS = {
    "pick": ("nominal", "yaw", "edges", "neighbour", "block", "row", "wall", "in_bin"),
    "place": ("nominal", "yaw"),
    "push": ("nominal", "yaw", "edges", "neighbour", "block"),
}


@dataclass
class Start:
    layout: str
    params: SkillParams
    world: WorldState  # the world the skill starts in (what the bridge would see)
    state: np.ndarray  # full physics state, so several controllers run the same start


def _arm(rng: np.random.Generator) -> list[float] | None:
    if rng.random() < 0.4:
        return None
    xy = rng.uniform([-0.2, -0.28], [0.2, 0.28])
    return [float(xy[0]), float(xy[1]), float(rng.uniform(0.07, 0.22))]


def _others(subject: str, rng: np.random.Generator, k: int) -> list[str]:
    rest = [n for n in scene.CUBE_NAMES if n != subject]
    return [str(n) for n in rng.permutation(rest)[:k]]


def _yaw(rng: np.random.Generator, full: bool = True) -> float:
    return float(rng.uniform(-Q, Q) if full else rng.uniform(-0.35, 0.35))


def _cluster(rng: np.random.Generator, layout: str, subject: str) -> dict | None:
    """A subject cube with neighbours placed relative to it (layouts of pick and push)."""
    full = rng.random() < 0.5
    x, y = rng.uniform([-0.18, -0.24], [0.18, 0.08])
    cubes: dict = {subject: [x, y, _yaw(rng, full)]}
    if layout == "neighbour":
        for n in _others(subject, rng, int(rng.integers(1, 4))):
            ang = (
                float(rng.choice([0.0, 0.5, 1.0, 1.5]) * math.pi)
                if rng.random() < 0.6
                else float(rng.uniform(0, 2 * math.pi))
            )
            d = 0.04 + float(rng.uniform(0.0, 0.04))
            cubes[n] = [x + d * math.cos(ang), y + d * math.sin(ang), _yaw(rng, full)]
    elif layout == "block":  # 2x2, the subject at a random corner, small gaps
        sx, sy = rng.choice([-1, 1], 2)
        gx, gy = rng.uniform(0.002, 0.01, 2)
        cubes[subject][2] = float(rng.uniform(-0.03, 0.03))
        others = _others(subject, rng, 3)
        dx, dy = sx * (0.04 + gx), sy * (0.04 + gy)
        for n, (ox, oy) in zip(others, [(dx, 0.0), (0.0, dy), (dx, dy)], strict=False):
            cubes[n] = [x + ox, y + oy, float(rng.uniform(-0.03, 0.03))]
    elif layout == "row":  # touching neighbours across the finger axis (along x)
        others = _others(subject, rng, int(rng.integers(1, 3)))
        cubes[subject][2] = float(rng.uniform(-0.03, 0.03))
        for n, s in zip(others, rng.permutation([-1, 1]), strict=False):
            off = s * (0.042 + rng.uniform(0, 0.008))
            cubes[n] = [x + off, y, float(rng.uniform(-0.03, 0.03))]
    return cubes


def _overlapping(cubes: dict) -> bool:
    from sim.world import polygons_overlap, square_footprint

    feet = [square_footprint(v[0], v[1], scene.CUBE_HALF, v[-1]) for v in cubes.values()]
    return any(polygons_overlap(a, b) for i, a in enumerate(feet) for b in feet[i + 1 :])


def _reset(
    env: TabletopEnv, rng: np.random.Generator, cubes: dict, arm: list[float] | None = None
) -> None:
    env.reset(seed=int(rng.integers(2**31)), options={"cubes": cubes, "arm": arm})


def sample_pick(env: TabletopEnv, rng: np.random.Generator, layout: str) -> SkillParams | None:
    skill = get("pick")
    if layout == "nominal":
        return skill.sample_start(env, rng)
    subject = str(rng.choice(scene.CUBE_NAMES))
    cubes: dict | None
    if layout in ("yaw", "edges"):
        k = int(rng.integers(0, 3))
        cubes = {subject: None}
        if layout == "edges":
            lo, hi = scene.SPAWN_LOW - 0.06, scene.SPAWN_HIGH + 0.06
            side = int(rng.integers(4))
            xy = rng.uniform(lo, hi)
            xy[side % 2] = (lo if side < 2 else hi)[side % 2] + rng.uniform(-0.03, 0.03)
            cubes[subject] = [float(xy[0]), float(xy[1]), _yaw(rng)]
        else:
            cubes[subject] = [*rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH), _yaw(rng)]
        for n in _others(subject, rng, k):
            cubes[n] = None
        _reset(env, rng, cubes, _arm(rng))
    elif layout in ("neighbour", "block", "row"):
        cubes = _cluster(rng, layout, subject)
        if cubes is None or _overlapping(cubes):
            return None
        _reset(env, rng, cubes, _arm(rng))
    elif layout == "wall":
        x = float(rng.uniform(-0.22, 0.22))
        gap = float(rng.uniform(0.0, 0.04))
        cubes = {subject: [x, BIN_FACE_Y - scene.CUBE_HALF - gap, _yaw(rng, False)]}
        _reset(env, rng, cubes, _arm(rng))
    elif layout == "in_bin":
        b = str(rng.choice(scene.BIN_NAMES))
        cx, cy = env.model.body(b).pos[:2]
        dx, dy = rng.uniform(-0.035, 0.035, 2)
        cubes = {subject: [cx + dx, cy + dy, 0.025, _yaw(rng, False)]}
        _reset(env, rng, cubes, _arm(rng))
    else:
        raise ValueError(layout)
    w = env.world_state()
    o = w.object(subject)
    if o is None or o.fallen or w.held_object is not None or w.under(subject) is not None:
        return None
    if not (o.on_table or o.in_bin or o.on):
        return None
    return PickParams(object=subject)


def sample_place(env: TabletopEnv, rng: np.random.Generator, layout: str) -> SkillParams | None:
    skill = get("place")
    if layout == "nominal":
        return skill.sample_start(env, rng)
    # the nominal start with the held cube turned first: grasp it at a yaw from the full range
    subject = str(rng.choice(scene.CUBE_NAMES))
    cubes: dict = {subject: [*rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH), _yaw(rng)]}
    for n in _others(subject, rng, int(rng.integers(0, 3))):
        cubes[n] = None
    _reset(env, rng, cubes, _arm(rng))
    held = scene.CUBE_NAMES.index(subject)
    carry = np.array([*rng.uniform([-0.2, -0.25], [0.2, 0.25]), rng.uniform(0.08, 0.2)])

    # half the turned cubes are picked by the shipped pick policy, as in a real chain: it
    # holds a turned cube differently from the scripted expert, and the place predictor must
    # learn what the skill meets after our own pick, not only after the expert's
    if rng.random() < 0.5 and not _policy_pick(env, subject):
        return None

    if not grasp_and_carry(env, held, carry):
        return None
    w = env.world_state()
    if w.held_object != subject:
        return None
    kinds = [b.name for b in w.bins] + [r.name for r in w.regions]
    kinds += [
        o.name for o in w.objects if o.name != subject and o.on_table and w.under(o.name) is None
    ]
    return PlaceParams(target=str(rng.choice(kinds)))


@functools.cache
def _shipped_pick() -> MLPPolicy:
    from skills.runtime import load_pretrained

    return load_pretrained("pick")


def _policy_pick(env: TabletopEnv, subject: str) -> bool:
    """Run the shipped pick policy on ``subject`` from the current state; True when it holds
    the cube at the end (the carry that follows is scripted)."""
    return _run_from_here(env, "pick", PickParams(object=subject), _shipped_pick())


def sample_push(env: TabletopEnv, rng: np.random.Generator, layout: str) -> SkillParams | None:
    skill = get("push")
    if layout == "nominal":
        return skill.sample_start(env, rng)
    subject = str(rng.choice(scene.CUBE_NAMES))
    if layout in ("neighbour", "block"):
        cubes = _cluster(rng, layout, subject)
        if cubes is None or _overlapping(cubes):
            return None
    elif layout == "edges":
        lo, hi = scene.SPAWN_LOW - 0.05, scene.SPAWN_HIGH + 0.05
        xy = rng.uniform(lo, hi)
        side = int(rng.integers(4))
        xy[side % 2] = (lo if side < 2 else hi)[side % 2]
        cubes = {subject: [float(xy[0]), float(xy[1]), _yaw(rng)]}
        for n in _others(subject, rng, int(rng.integers(0, 3))):
            cubes[n] = None
    else:  # yaw
        cubes = {subject: [*rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH), _yaw(rng)]}
        for n in _others(subject, rng, int(rng.integers(0, 3))):
            cubes[n] = None
    _reset(env, rng, cubes, _arm(rng))
    w = env.world_state()
    o = w.object(subject)
    if o is None or not o.on_table or w.under(subject) is not None:
        return None
    if rng.random() < 0.5:
        return PushParams(object=subject, target=str(rng.choice(w.region_names)))
    d = float(rng.uniform(0.06, 0.14))
    ang = float(rng.uniform(0, 2 * math.pi))
    point = (round(o.pos[0] + d * math.cos(ang), 3), round(o.pos[1] + d * math.sin(ang), 3))
    return PushParams(object=subject, target=point)


SAMPLERS = {"pick": sample_pick, "place": sample_place, "push": sample_push}


def sample_start(env: TabletopEnv, skill: str, rng: np.random.Generator, layout: str) -> Start:
    """A start of ``layout`` for ``skill`` whose parameters pass the skill's *own* checks
    other than graspability (a start the bridge could be asked about)."""
    for _ in range(200):
        params = SAMPLERS[skill](env, rng, layout)
        if params is None:
            continue
        w = env.world_state()
        if skill == "push":
            from skills.push import _goal

            assert isinstance(params, PushParams)  # the push sampler's
            goal, _ = _goal(w, params.target)
            if goal is None or not get("push").preconditions(w, params) == []:
                continue
        return Start(layout, params, w, env.get_state())
    raise RuntimeError(f"no {layout} start for {skill}")


def run_skill(
    env: TabletopEnv, skill_name: str, start: Start, policy: MLPPolicy | None = None
) -> bool:
    """Run ``skill_name`` from ``start`` with ``policy`` (an MLPPolicy; None: the scripted
    expert) to its step budget; the skill's own success test. No precondition checks."""
    env.set_state(start.state)
    return _run_from_here(env, skill_name, start.params, policy)


def _run_from_here(
    env: TabletopEnv, skill_name: str, params: SkillParams, policy: MLPPolicy | None = None
) -> bool:
    skill = get(skill_name)
    before = env.world_state()
    b = skill.bind(before, params)
    skill.start(env, b)
    for _ in range(skill.step_budget):
        env.step_physics(skill.act(env.observe(), b, policy))
        if skill.success(before, env.world_state(), params):
            return True
    return False
