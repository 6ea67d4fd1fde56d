"""Every env step is bit for bit what it was before the simulator's speed work (issue 25):
observations, reward, flags, info, the physics state and the world state of seeded
rollouts on both scenes, with hand turns and a restore midway (``tests/sim/rollouts.py``;
the fixture was recorded by the code before that work)."""

from __future__ import annotations

import json

import pytest

from tests.sim import rollouts as R

FIXTURE = json.loads(R.FIXTURE.read_text())


@pytest.mark.parametrize(("scene", "seed"), R.ROLLOUTS)
def test_rollout_is_bit_exact_as_before(scene: str, seed: int):
    assert R.rollout(scene, seed) == FIXTURE[f"{scene}/{seed}"]
