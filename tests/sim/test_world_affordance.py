"""Geometric affordances of the world state: ``graspable`` and ``reachable`` follow the
gripper's geometry (fingers along world y, or along x with the hand turned a quarter), so
preconditions stop promising what no controller can do."""

import numpy as np
import pytest

from sim import scene
from sim.world import cube_reachable

BIN_FACE_Y = 0.25 - 0.068  # outer face of the green bin's south wall


def world(env, cubes):
    env.reset(seed=0, options={"cubes": cubes})
    return env.world_state()


def test_isolated_cube_is_graspable(env):
    w = world(env, {"red_block": [0.0, -0.08, 0.3]})
    assert w.graspable("red_block") and w.grasp_blockers("red_block") == []


def test_two_by_two_block_is_not_graspable(env):
    w = world(
        env,
        {
            "red_block": [0.0, -0.08],
            "green_block": [0.0405, -0.08],
            "blue_block": [0.0, -0.0395],
            "yellow_block": [0.0405, -0.0395],
        },
    )
    for n in scene.CUBE_NAMES:
        assert not w.graspable(n), n
        assert w.grasp_axis(n) is None
    # along each axis the neighbour on that axis blocks, not the one across it
    assert w.grasp_blockers("red_block") == ["blue_block"]
    assert w.grasp_blockers("red_block", "x") == ["green_block"]
    assert w.blocked_by("red_block") == ["blue_block", "green_block"]
    assert "not graspable (blocked by blue_block, green_block)" in w.describe()


def test_touching_row_across_the_finger_axis_is_graspable(env):
    w = world(env, {"red_block": [0.0, -0.08], "green_block": [0.0405, -0.08]})
    assert w.graspable("red_block") and w.graspable("green_block")
    assert w.grasp_axis("red_block") == "y"  # the hand stays as it rests
    assert w.grasp_blockers("red_block", "x") == ["green_block"]


@pytest.mark.parametrize("gap, free_y", [(0.0, False), (0.01, False), (0.03, True)])
def test_neighbour_along_the_finger_axis(env, gap, free_y):
    """Blocked along y, the same cube is grasped with the fingers along x instead."""
    w = world(env, {"red_block": [0.0, -0.08], "blue_block": [0.0, -0.08 + 0.04 + gap]})
    assert (w.grasp_blockers("red_block") == []) is free_y
    assert w.grasp_axis("red_block") == ("y" if free_y else "x")
    assert w.graspable("red_block")


@pytest.mark.parametrize("gap, free_y", [(0.0, False), (0.012, False), (0.035, True)])
def test_cube_beside_a_bin_wall(env, gap, free_y):
    w = world(env, {"red_block": [0.0, BIN_FACE_Y - scene.CUBE_HALF - gap]})
    assert w.grasp_axis("red_block") == ("y" if free_y else "x")
    assert w.graspable("red_block")
    if not free_y:
        assert w.grasp_blockers("red_block") == ["green_bin wall"]


def test_wall_on_one_axis_and_neighbour_on_the_other_is_not_graspable(env):
    """Against a bin wall (along y) with a touching neighbour along x, no grasp is left."""
    y = BIN_FACE_Y - scene.CUBE_HALF - 0.0005
    w = world(env, {"red_block": [0.0, y], "blue_block": [0.0405, y]})
    assert w.grasp_axis("red_block") is None and not w.graspable("red_block")
    assert w.blocked_by("red_block") == ["green_bin wall", "blue_block"]


@pytest.mark.parametrize(
    "dx, dy, axis", [(0.0, 0.0, "y"), (0.0, 0.03, "x"), (0.02, 0.03, None), (0.02, 0.0, "y")]
)
def test_cube_inside_a_bin(env, dx, dy, axis):
    """Inside a bin the walls leave room along y only near the middle, along x only near the
    middle the other way (checked against the expert and the policy: both pick exactly the
    cubes given an axis here)."""
    w = world(env, {"red_block": [dx, 0.25 + dy, 0.025, 0.0]})
    assert w.in_("red_block", "green_bin")
    assert w.grasp_axis("red_block") == axis
    assert w.graspable("red_block") is (axis is not None)


def test_predicate_follows_a_predicted_world(env):
    """Computed from poses, so a symbolically moved cube is judged where it would be."""
    w = world(
        env,
        {
            "red_block": [0.0, -0.08],
            "blue_block": [0.0, -0.0395],
            "green_block": [0.0405, -0.08],
        },
    )
    assert not w.graspable("red_block")
    objs = [
        o.model_copy(update={"pos": (0.12, -0.08, o.pos[2])}) if o.name == "red_block" else o
        for o in w.objects
    ]
    assert w.model_copy(update={"objects": objs}).graspable("red_block")


def test_unreachable_cube_is_not_graspable(env):
    w = world(env, {"red_block": [0.24, -0.30]})
    assert not w.reachable("red_block") and not w.graspable("red_block")


@pytest.mark.parametrize(
    "xy, ok",
    [((0.0, -0.08), True), ((0.265, 0.0), True), ((0.29, 0.0), False), ((0.0, -0.37), False)],
)
def test_cube_reachable_allows_the_grasp_slack(xy, ok):
    assert cube_reachable(*xy) is ok


@pytest.mark.slow
def test_predicate_agrees_with_rollouts(env):
    """The scripted expert and the shipped policy fail where the predicate says no (a cube
    in a 2x2 block) and pick the same cube once its neighbour is 3 cm away."""
    from skills.affordance_data import Start, run_skill
    from skills.pick import PickParams
    from skills.runtime import load_pretrained

    policy = load_pretrained("pick")
    for gap, ok in ((0.0005, False), (0.03, True)):
        cubes = {
            "red_block": [0.0, -0.08],
            "green_block": [0.0405, -0.08],
            "blue_block": [0.0, -0.08 + 0.04 + gap],
            "yellow_block": [0.0405, -0.08 + 0.04 + gap],
        }
        w = world(env, cubes)
        assert w.graspable("red_block") is ok
        start = Start("block", PickParams(object="red_block"), w, env.get_state())
        for ctrl in (None, policy):
            assert run_skill(env, "pick", start, ctrl) is ok
    assert np.isfinite(env.get_state()).all()
