"""Every env step is bit for bit what it was before the simulator's speed work (issue 25):
observations, reward, flags, info, the physics state and the world state of seeded
rollouts on both scenes, with hand turns and a restore midway (``tests/sim/rollouts.py``;
the fixture was recorded by the code before that work). A machine whose numpy and MuJoCo
builds take other vector paths rounds differently in the last bits, so the fixture holds
one digest per machine, each recorded by the code before that work (the second on
2026-12-04 by eaf0251^, equal there to the current code's)."""

from __future__ import annotations

import json

import pytest

from tests.sim import rollouts as R

FIXTURE = json.loads(R.FIXTURE.read_text())


@pytest.mark.parametrize(("scene", "seed"), R.ROLLOUTS)
def test_rollout_is_bit_exact_as_before(scene: str, seed: int):
    assert R.rollout(scene, seed) in FIXTURE[f"{scene}/{seed}"]
