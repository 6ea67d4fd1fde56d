"""Fixtures of the bridge tests; the worlds themselves live in ``bridge_worlds``."""

from __future__ import annotations

import pytest
from bridge_worlds import WORLDS

from sim.world import WorldState


@pytest.fixture
def worlds() -> dict[str, WorldState]:
    return WORLDS


@pytest.fixture
def world() -> WorldState:
    return WORLDS["fresh"]
