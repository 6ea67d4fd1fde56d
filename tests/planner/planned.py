"""A request planned by the hybrid planner and simulated symbolically: the world after it.

Shared by the understanding-family tests, which check what a request does, not how."""

from __future__ import annotations

from bridge.validate import simulate
from planner.hybrid import HybridPlanner
from sim.world import WorldState


def planned(text: str, w: WorldState) -> WorldState:
    """The world after ``text``'s plan; fails the test when ``text`` is not read as a plan
    or its steps do not all apply."""
    out = HybridPlanner().plan(text, w)
    assert out.kind == "plan", (out.kind, out.understanding)
    after, reasons = simulate(w, out.steps())
    assert not reasons, reasons
    return after
