"""Fixtures of the bridge tests; the worlds themselves live in ``bridge_worlds``."""

from __future__ import annotations

import pytest

from sim.world import WorldState
from tests.bridge.bridge_worlds import WORLDS


@pytest.fixture
def worlds() -> dict[str, WorldState]:
    return WORLDS


@pytest.fixture
def world() -> WorldState:
    return WORLDS["fresh"]
