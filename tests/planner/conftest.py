"""Fixtures for the planner tests: world states built directly (no physics)."""

from __future__ import annotations

import pytest

from sim.world import WorldState
from tests.planner.planner_worlds import make_world


@pytest.fixture
def world() -> WorldState:
    return make_world()


@pytest.fixture
def world2() -> WorldState:
    return make_world(("red_block", "blue_block"))
