"""A request planned by the hybrid planner and simulated symbolically: the world after it.

Shared by the understanding-family tests, which check what a request does, not how."""

from __future__ import annotations

import functools

from bridge.validate import simulate
from planner.hybrid import HybridPlanner
from sim.world import WorldState
from tests.worlds import cube, world


def planned(text: str, w: WorldState) -> WorldState:
    """The world after ``text``'s plan; fails the test when ``text`` is not read as a plan
    or its steps do not all apply."""
    out = HybridPlanner().plan(text, w)
    assert out.kind == "plan", (out.kind, out.understanding)
    after, reasons = simulate(w, out.steps())
    assert not reasons, reasons
    return after


def four() -> WorldState:
    """Four blocks apart on the table: red front left, green back right, blue front right,
    yellow back left (the families' common scene)."""
    return world(
        [
            cube("red_block", (0.1, 0.05, 0.02)),
            cube("green_block", (-0.1, -0.1, 0.02)),
            cube("blue_block", (0.12, -0.18, 0.02)),
            cube("yellow_block", (-0.14, 0.07, 0.02)),
        ]
    )


def moved(text: str, w: WorldState) -> set[str]:
    """The blocks the plan for ``text`` picks or pushes."""
    return {s["object"] for s in HybridPlanner().plan(text, w).steps() if "object" in s}


@functools.cache
def scene_world(name: str) -> WorldState:
    """A scene's world from physics at seed 0 ("articulated", "mixed"), built once per run."""
    from sim.env import TabletopEnv

    env = TabletopEnv(scene=name)
    env.reset(seed=0)
    try:
        return env.world_state()
    finally:
        env.close()
