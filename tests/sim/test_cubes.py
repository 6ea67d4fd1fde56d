"""The cube-pose grammar (``sim/cubes.py``): what ``--cubes``, suite scenes and the env's
reset accept, and the one-line reasons for what they refuse."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim import scene
from sim.cubes import check_cubes, cube_pose, scene_options
from sim.env import TabletopEnv


def test_a_pose_without_z_rests_on_the_table_and_without_yaw_is_square():
    h = scene.CUBE_HALF
    assert cube_pose("red_block", [0.1, 0.05]) == (0.1, 0.05, h, 0.0)
    assert cube_pose("red_block", (0.1, 0.05, 0.3)) == (0.1, 0.05, h, 0.3)
    assert cube_pose("red_block", [0.1, 0.05, 0.06, 0.3]) == (0.1, 0.05, 0.06, 0.3)
    with pytest.raises(ValueError, match=r"pose of red_block must be \[x, y\], \[x, y, yaw\]"):
        cube_pose("red_block", [0.1])


def test_the_env_places_a_cube_by_the_same_grammar():
    env = TabletopEnv()
    try:
        env.reset(seed=0, options={"cubes": {"red_block": [0.05, -0.12, 0.4]}})
        red = env.world_state().objects[0]
        assert red.name == "red_block"
        assert np.allclose(red.pos[:2], [0.05, -0.12], atol=1e-3) and red.yaw == pytest.approx(
            0.4, abs=1e-3
        )
        with pytest.raises(ValueError, match="pose of red_block must be"):
            env.reset(seed=0, options={"cubes": {"red_block": [0.05]}})
    finally:
        env.close()


def test_names_are_normalised():
    assert check_cubes(["red", "blue_block"]) == ["red_block", "blue_block"]
    assert check_cubes(("green_block",)) == ["green_block"]


def test_poses_are_normalised_to_float_lists():
    got = check_cubes(
        {
            "red": (0.05, -0.12),
            "blue_block": None,
            "green_block": [0.1, 0.05, 0.3],
            "yellow_block": [-0.16, 0.25, 0.025, 0],
        }
    )
    assert got == {
        "red_block": [0.05, -0.12],
        "blue_block": None,
        "green_block": [0.1, 0.05, 0.3],
        "yellow_block": [-0.16, 0.25, 0.025, 0.0],
    }
    assert all(isinstance(v, float) for v in got["yellow_block"])
    assert scene_options(got) == {"cubes": got} and scene_options(None) is None


@pytest.mark.parametrize(
    "spec, needle",
    [
        (["purple"], "unknown cube(s) purple_block"),
        ({"pink_block": None}, "unknown cube(s) pink_block"),
        ([], "unknown cube(s) (none)"),
        ({}, "unknown cube(s) (none)"),
        (["red", "red_block"], "listed twice: red_block"),
        ("red_block", "a list of names or a {name: pose} mapping"),
        ({"red_block": [0.1]}, "pose of red_block must be [x, y], [x, y, yaw] or [x, y, z, yaw]"),
        ({"red_block": [0.1, 0.0, 0.0, 0.0, 0.0]}, "pose of red_block must be"),
        ({"red_block": "0.1, 0.0"}, "pose of red_block must be"),
        ({"red_block": {"x": 0.1, "y": 0.0}}, "pose of red_block must be"),
        ({"red_block": [0.1, "a"]}, "pose of red_block must be numbers"),
        ({"red_block": [True, 0.0]}, "pose of red_block must be numbers"),
        ({"red_block": [math.nan, 0.0]}, "non-finite"),
        ({"red_block": [0.1, math.inf, 0.0]}, "non-finite"),
        (
            {"red_block": [0.5, 0.0]},
            "red_block at (0.5, 0) is off the table or out of the arm's reach",
        ),
        ({"red_block": [0.0, -0.4]}, "off the table or out of the arm's reach"),
        ({"red_block": [-0.3, 0.0]}, "off the table or out of the arm's reach"),  # under the arm
        ({"red_block": [0.0, 0.0, -0.1, 0.0]}, "below the table or above the workspace"),
        ({"red_block": [0.0, 0.0, 0.5, 0.0]}, "below the table or above the workspace"),
        (
            {"red_block": [0.0, 0.0], "blue_block": [0.01, 0.02]},
            "red_block and blue_block would overlap",
        ),
    ],
)
def test_bad_scene_is_one_clear_line(spec, needle):
    with pytest.raises(ValueError) as e:
        check_cubes(spec)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg, msg


def test_a_stack_by_height_is_not_an_overlap():
    assert check_cubes({"blue_block": [0.0, -0.08], "red_block": [0.0, -0.08, 0.06, 0.0]})
