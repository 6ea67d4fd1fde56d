"""Geometric affordances of the world state: ``graspable`` and ``reachable`` follow the
gripper's geometry (fingers along world y), so preconditions stop promising what no
controller can do."""

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
    # the neighbour along the finger axis (y) is what blocks, not the one along x
    assert w.grasp_blockers("red_block") == ["blue_block"]
    assert "not graspable (blocked by blue_block)" in w.describe()


def test_touching_row_across_the_finger_axis_is_graspable(env):
    w = world(env, {"red_block": [0.0, -0.08], "green_block": [0.0405, -0.08]})
    assert w.graspable("red_block") and w.graspable("green_block")


@pytest.mark.parametrize("gap, ok", [(0.0, False), (0.01, False), (0.03, True)])
def test_neighbour_along_the_finger_axis(env, gap, ok):
    w = world(env, {"red_block": [0.0, -0.08], "blue_block": [0.0, -0.08 + 0.04 + gap]})
    assert w.graspable("red_block") is ok


@pytest.mark.parametrize("gap, ok", [(0.0, False), (0.012, False), (0.035, True)])
def test_cube_beside_a_bin_wall(env, gap, ok):
    w = world(env, {"red_block": [0.0, BIN_FACE_Y - scene.CUBE_HALF - gap]})
    assert w.graspable("red_block") is ok
    if not ok:
        assert w.grasp_blockers("red_block") == ["green_bin wall"]


@pytest.mark.parametrize("dy, ok", [(0.0, True), (0.03, False)])
def test_cube_inside_a_bin(env, dy, ok):
    w = world(env, {"red_block": [0.0, 0.25 + dy, 0.025, 0.0]})
    assert w.in_("red_block", "green_bin")
    assert w.graspable("red_block") is ok


def test_predicate_follows_a_predicted_world(env):
    """Computed from poses, so a symbolically moved cube is judged where it would be."""
    w = world(env, {"red_block": [0.0, -0.08], "blue_block": [0.0, -0.0395]})
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
