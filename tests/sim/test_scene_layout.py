"""The tests' hand-built worlds (tests/worldkit.py) sit on the same table as the compiled scene."""

from __future__ import annotations

import numpy as np

from sim import physics
from tests import worlds


def test_layout_matches_the_scene():
    model = physics.load_model()
    for name, xy in worlds.BIN_XY.items():
        assert np.allclose(model.body(name).pos[:2], xy), name
    assert [b.name for b in worlds.bins()] == list(worlds.BIN_XY)
