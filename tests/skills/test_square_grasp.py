"""A turned cube is grasped with the hand turned square to its faces, so it is held square
(not pinched by two edges, hanging askew); a neighbour where the square fingers would come
down keeps the hand at rest; a place onto a cube keeps the hand's turn, one into a bin turns
it back to rest."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim import scene
from sim.env import TabletopEnv
from skills.base import ALIGN_FROM, square_to
from skills.registry import get
from skills.runtime import SkillExecutor

PICK = get("pick")


def _relative(env: TabletopEnv, cube: str) -> float:
    """The held cube's turn in the hand, folded into [-pi/4, pi/4]."""
    return square_to(env.world_state().object(cube).yaw - env.grip_yaw)


@pytest.mark.parametrize("yaw", [0.0, 0.1, 0.4, -0.6, 0.78])
def test_square_to_folds_a_square(yaw):
    for k in range(-2, 3):
        assert square_to(yaw + k * math.pi / 2) == pytest.approx(yaw, abs=1e-9)


@pytest.mark.parametrize("source", ["scripted", "pretrained"])
@pytest.mark.parametrize("yaw", [0.5, -0.7])
def test_a_turned_cube_is_held_square(env, source, yaw):
    env.reset(seed=0, options={"cubes": {"red_block": [0.05, -0.1, yaw]}})
    b = PICK.bind(env.world_state(), PICK.Params(object="red_block"))
    assert b.grip_yaw == pytest.approx(yaw, abs=0.02) and b.pivot == pytest.approx((0.05, -0.1))
    out = SkillExecutor(source).run(env, {"skill": "pick", "object": "red_block"})
    assert out.success, out.reason
    assert abs(_relative(env, "red_block")) < 0.1


def test_a_nearly_square_cube_keeps_the_hand_at_rest(env):
    env.reset(seed=0, options={"cubes": {"red_block": [0.05, -0.1, ALIGN_FROM / 2]}})
    assert PICK.bind(env.world_state(), PICK.Params(object="red_block")).grip_yaw == 0.0


def test_no_square_turn_into_a_neighbour(env):
    """Red turned 0.6 rad with blue diagonally in front of it: at rest the fingers (along
    y) clear blue, turned square to red one would come down on it."""
    cubes = {"red_block": [0.0, -0.1, 0.6], "blue_block": [0.036, -0.15, 0.0]}
    env.reset(seed=0, options={"cubes": cubes})
    w = env.world_state()
    assert w.grasp_blockers("red_block", "y") == []
    assert w.grasp_blockers("red_block", "y", square_to(0.6)) == ["blue_block"]
    assert PICK.bind(w, PICK.Params(object="red_block")).grip_yaw == 0.0


def test_a_place_onto_a_cube_keeps_the_turn_a_bin_place_turns_back(env):
    env.reset(
        seed=0,
        options={"cubes": {"red_block": [0.05, -0.1, 0.5], "blue_block": [-0.1, -0.15, 0.5]}},
    )
    ex = SkillExecutor("pretrained")
    assert ex.run(env, {"skill": "pick", "object": "red_block"}).success
    turned = env.grip_yaw
    assert abs(turned) > ALIGN_FROM
    assert ex.run(env, {"skill": "place", "target": "blue_block"}).success
    assert env.grip_yaw == turned
    w = env.world_state()
    assert w.on("red_block", "blue_block")
    assert abs(square_to(w.object("red_block").yaw - w.object("blue_block").yaw)) < 0.15
    assert ex.run(env, {"skill": "pick", "object": "red_block"}).success
    assert ex.run(env, {"skill": "place", "target": "green_bin"}).success
    assert env.grip_yaw == 0.0 and env.world_state().in_("red_block", "green_bin")


def test_a_cube_put_in_the_drawer_can_be_taken_out():
    """The cube the shipped pick held square lands flat in the drawer's middle, where the
    next pick takes it out (held askew, it tipped to the drawer's far side)."""
    e = TabletopEnv(scene="articulated")
    try:
        e.reset(
            seed=0,
            options={"drawer": scene.DRAWER_TRAVEL, "cubes": {"red_block": [0.0, -0.15, 0.7]}},
        )
        ex = SkillExecutor("pretrained")
        assert ex.run(e, {"skill": "pick", "object": "red_block"}).success
        assert ex.run(e, {"skill": "place", "target": "drawer"}).success
        e.step_physics(np.array([0.0, 0.0, 0.0, -1.0]), control_steps=10)
        w = e.world_state()
        assert w.in_("red_block", "drawer") and w.graspable("red_block")
        assert ex.run(e, {"skill": "pick", "object": "red_block"}).success
    finally:
        e.close()
