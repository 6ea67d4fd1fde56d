"""A pick the fingers cannot make along y (a bin wall or a neighbour beside the cube) is made
along x: the hand turns a quarter and the same policy runs in the turned frame."""

import numpy as np
import pytest

from sim import scene
from sim.world import yaw_of
from skills.base import Binding, to_frame, to_world
from skills.registry import get
from skills.runtime import SkillExecutor

BIN_FACE_Y = 0.25 - 0.068  # outer face of the green bin's south wall
AGAINST_WALL = {"red_block": [0.02, BIN_FACE_Y - scene.CUBE_HALF - 0.0005, 0.1]}


def hand_y_axis(env) -> np.ndarray:
    site = env.model.site("grip_site").id
    return env.data.site_xmat[site].reshape(3, 3)[:, 1]


def test_frame_turns_positions_about_the_pivot_and_actions_back():
    b = Binding(cube=0, grip_yaw=np.pi / 2, pivot=(0.1, 0.2))
    obs = {
        "proprio": np.array([0.1, 0.3, 0.2, 0.5, 0.0, 0.0, 0.01, 0.01]),
        "object_pos": np.array([[0.2, 0.2, 0.02]] * 4),
        "object_quat": np.tile([np.cos(0.15), 0.0, 0.0, np.sin(0.15)], (4, 1)),
        "object_present": np.ones(4),
    }
    f = to_frame(obs, b)
    # a point 0.1 north of the pivot is 0.1 east of it in the frame turned by -90 degrees
    np.testing.assert_allclose(f["proprio"][:3], [0.2, 0.2, 0.2], atol=1e-12)
    np.testing.assert_allclose(f["proprio"][3:6], [0.0, -0.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(f["object_pos"][0], [0.1, 0.1, 0.02], atol=1e-12)
    assert yaw_of(f["object_quat"][0]) == pytest.approx(0.3 - np.pi / 2)
    assert obs["proprio"][0] == 0.1  # the caller's observation is left alone
    # moving +x in the frame is moving +y in the world
    np.testing.assert_allclose(
        to_world(np.array([1.0, 0.0, 0.3, -1.0]), b), [0, 1, 0.3, -1], atol=1e-12
    )
    # the resting hand's frame is the world itself
    assert to_frame(obs, Binding(cube=0)) is obs


def test_hand_turns_and_the_turn_is_part_of_the_state(env):
    env.reset(seed=0)
    assert env.grip_yaw == 0.0
    assert abs(hand_y_axis(env)[1]) > 0.99
    env.set_grip_yaw(np.pi / 2)
    hold = np.array([0.0, 0.0, 0.0, -1.0])
    env.step_physics(hold, control_steps=25)
    assert abs(hand_y_axis(env)[0]) > 0.99  # the fingers now close along world x
    s = env.get_state()
    env.set_grip_yaw(0.0)
    env.set_state(s)
    assert env.grip_yaw == pytest.approx(np.pi / 2)
    env.set_grip_yaw(0.0)
    env.step_physics(hold, control_steps=25)
    assert abs(hand_y_axis(env)[1]) > 0.99


@pytest.mark.parametrize("source", ["scripted", "pretrained"])
def test_pick_against_a_bin_wall_turns_the_hand(env, source):
    env.reset(seed=0, options={"cubes": AGAINST_WALL})
    w = env.world_state()
    assert w.grasp_axis("red_block") == "x"
    pick = get("pick")
    assert pick.preconditions(w, pick.Params(object="red_block")) == []
    assert pick.bind(w, pick.Params(object="red_block")).grip_yaw == pytest.approx(np.pi / 2)
    out = SkillExecutor(source).run(env, {"skill": "pick", "object": "red_block"})
    assert out.success, out.reason
    assert abs(hand_y_axis(env)[0]) > 0.95
    # the next skill turns the hand back to rest while it carries the cube
    out = SkillExecutor(source).run(env, {"skill": "place", "target": "red_bin"})
    assert out.success, out.reason
    assert env.grip_yaw == 0.0 and abs(hand_y_axis(env)[1]) > 0.95
