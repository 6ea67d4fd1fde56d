"""Faults injected into real physics: how the tests and ``eval --faults`` check that a run's
success is the world's verdict, not the steps'.

A fault is the runner's test hook (``Runner(..., fault=...)``): after each subgoal it may
move a cube the way the world sometimes does (a cube bounces out of its bin, a stack
topples while the next subgoal runs). It moves bodies in the MuJoCo state itself, nothing
is mocked; the runner records the jump in the trace (``fault``) so replay can resync.
"""

from __future__ import annotations

import math

import numpy as np

from sim import scene
from sim.world import WorldState, reachable_xy

#: How close to another cube a displaced cube may land (m): clear of grasps and pushes.
MIN_CLEARANCE = 0.08
#: How far from every bin and every region a displaced cube lands (m beyond its radius).
REGION_MARGIN = 0.03
FAULT_KINDS = ("teleport", "topple")


def move_cube(env, name: str, xy, yaw: float = 0.0, z: float = scene.CUBE_HALF) -> None:
    """Put cube ``name`` at rest at ``(x, y, z)``; derived quantities follow (as after a
    state restore)."""
    env.put_cube(
        name, (float(xy[0]), float(xy[1]), z), (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    )
    env.set_state(env.get_state())


def free_spot(
    world: WorldState, cube: str, rng: np.random.Generator, near: tuple[float, float] | None = None
) -> tuple[float, float] | None:
    """A table spot where cubes start, clear of the other cubes, of the bins and of every region
    (so a displaced cube never lands where some goal wants it); ``near``: within 12 cm of
    that point (a toppled cube falls beside its stack)."""
    others = [o.pos[:2] for o in world.objects if o.name != cube]
    areas = [(r.pos, r.radius + REGION_MARGIN) for r in world.regions]
    areas += [(b.pos[:2], b.inner_half + REGION_MARGIN + scene.CUBE_HALF) for b in world.bins]
    for _ in range(500):
        if near is None:
            xy = rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH)
        else:
            ang, r = rng.uniform(0, 2 * math.pi), rng.uniform(0.07, 0.12)
            xy = np.array([near[0] + r * math.cos(ang), near[1] + r * math.sin(ang)])
        x, y = float(xy[0]), float(xy[1])
        lo, hi = scene.SPAWN_LOW, scene.SPAWN_HIGH
        # where cubes start at reset: the skills' start distribution (a cube against a bin
        # wall is a different fault, one the skills were never trained for)
        if not (lo[0] <= x <= hi[0] and lo[1] <= y <= hi[1]) or not reachable_xy(x, y):
            continue
        if any(math.hypot(x - p[0], y - p[1]) < MIN_CLEARANCE for p in others):
            continue
        if any(math.hypot(x - c[0], y - c[1]) < rad for c, rad in areas):
            continue
        return x, y
    return None


class Displace:
    """After the ``nth`` successful ``place``/``push`` subgoal, move the cube it handled to
    a free table spot: out of its bin (``teleport``), or off the cube it was stacked on
    (``topple``: it lands beside the stack). Fires once."""

    def __init__(self, *, nth: int = 1, seed: int = 0, skills=("place", "push")):
        self.nth, self.skills = int(nth), tuple(skills)
        self.rng = np.random.default_rng(seed)
        self.count = 0
        self.holding: str | None = None
        self.fired: dict | None = None

    def after_subgoal(self, env, index: int, step: dict, success: bool) -> dict | None:
        skill = step.get("skill")
        if skill == "pick" and success:
            self.holding = step.get("object")
        if self.fired is not None or not success or skill not in self.skills:
            return None
        cube = step.get("object") if skill == "push" else self.holding
        self.count += 1
        if cube is None or self.count < self.nth:
            return None
        world = env.world_state()
        o = world.object(cube)
        if o is None:
            return None
        base = o.on
        kind = "topple" if base else "teleport"
        near = None
        if base:
            b = world.object(base)
            near = (b.pos[0], b.pos[1]) if b is not None else None
        spot = free_spot(world, cube, self.rng, near) or free_spot(world, cube, self.rng)
        if spot is None:
            return None
        was = (
            "in " + o.in_bin
            if o.in_bin
            else "on " + base
            if base
            else f"at ({o.pos[0]:.3f}, {o.pos[1]:.3f})"
        )
        move_cube(env, cube, spot, yaw=float(self.rng.uniform(-0.3, 0.3)))  # as at reset
        self.fired = {
            "fault": kind,
            "cube": cube,
            "was": was,
            "to": [round(spot[0], 4), round(spot[1], 4)],
            "after": dict(step),
        }
        return dict(self.fired)


def seeded(seed: int) -> Displace:
    """The fault of ``eval --faults`` for an episode: after the first successful place or
    push, that cube is displaced to a seeded free spot."""
    return Displace(nth=1, seed=10_007 * int(seed) + 13)
