"""A cube just in front of the articulated scene's button: a finger coming down along y
would land on the button's housing, so the world state says so and the pick turns the hand
(fingers along x); further off, the hand stays at rest."""

from __future__ import annotations

import pytest

from sim.env import TabletopEnv
from skills.runtime import SkillExecutor


@pytest.fixture(scope="module")
def aenv():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


def _world(env, y: float):
    env.reset(seed=0, options={"cubes": {"red_block": [-0.12, y, 0.0], "blue_block": None}})
    return env.world_state()


def test_the_button_blocks_a_finger_along_y(aenv):
    w = _world(aenv, -0.268)
    assert w.button is not None
    assert w.grasp_blockers("red_block", "y") == ["button"]
    assert w.grasp_axis("red_block") == "x"
    far = _world(aenv, -0.2)
    assert far.grasp_axis("red_block") == "y"


def test_the_shipped_pick_takes_it_with_the_hand_turned(aenv):
    _world(aenv, -0.268)
    out = SkillExecutor("pretrained").run(aenv, {"skill": "pick", "object": "red_block"})
    assert out.success, out.reason
    assert abs(aenv.grip_yaw - 1.5707963) < 1e-6


def test_the_tabletop_has_no_button(env):
    env.reset(seed=0, options={"cubes": {"red_block": [-0.12, -0.268, 0.0]}})
    w = env.world_state()
    assert w.button is None and w.grasp_axis("red_block") == "y"
