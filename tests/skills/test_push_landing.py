"""A push needs the closed fingers to come down behind the cube and slide up to it: against
a bin wall (on the wall's side) or at the workspace's edge no controller of this gripper gets
them there, and the push is refused with that reason instead of being attempted."""

import numpy as np

from skills.push import PushParams
from skills.registry import get

BIN_FACE_Y = 0.25 - 0.068  # outer face of the green bin's south wall


def _world(env, cubes):
    env.reset(seed=0, options={"cubes": cubes})
    return env.world_state()


def _landing(world, target):
    v = get("push").preconditions(world, PushParams(object="red_block", target=target))
    return [x for x in v if "cannot come down behind" in x.message]


def test_pushing_away_from_a_wall_it_touches_is_refused(env):
    w = _world(env, {"red_block": [0.0, BIN_FACE_Y - 0.0205]})
    (v,) = _landing(w, "table_center")  # south, away from the wall: the fingers go north
    assert "green_bin wall" in v.message and v.hint


def test_pushing_along_the_wall_or_from_open_table_is_not(env):
    w = _world(env, {"red_block": [0.0, BIN_FACE_Y - 0.0205]})
    assert _landing(w, (0.12, BIN_FACE_Y - 0.0205)) == []  # along the wall
    w = _world(env, {"red_block": [0.0, -0.08]})
    assert _landing(w, "table_front") == [] and _landing(w, "table_left") == []


def test_pushing_from_the_workspace_edge_inwards_is_refused(env):
    w = _world(env, {"red_block": [-0.255, -0.08]})
    (v,) = _landing(w, "table_back")  # the fingers would have to come down beyond x -0.26
    assert "workspace's edge" in v.message


def test_a_clear_spot_the_controllers_never_use_does_not_count(env):
    """Against the blue bin's wall, pushed mostly along -x: a spot far to the side is clear
    of the wall, but the controllers come down at the first spot with room beside the other
    cubes, which the wall takes; both failed every such start, so the push is refused."""
    cube = [0.176, 0.16, 0.02, -0.09]
    w = _world(env, {"red_block": cube})
    (v,) = _landing(w, "table_left")
    assert "blue_bin wall" in v.message
    # and the expert, run anyway, never moves the cube: the refusal is not a lost success
    push, params = get("push"), PushParams(object="red_block", target="table_left")
    b = push.bind(w, params)
    push.start(env, b)
    for _ in range(push.step_budget):
        env.step_physics(push.act(env.observe(), b))
    moved = np.linalg.norm(
        np.subtract(env.world_state().object("red_block").pos, w.object("red_block").pos)
    )
    assert moved < 0.01


def test_along_a_bins_outer_wall_at_the_workspace_edge_is_refused(env):
    """Against the red bin's west wall, pushed south: the fingers would come down at the
    workspace's limit beside the wall, and the cube slid out of reach; away from a wall
    the same spot at the edge is left to the controllers, which make it."""
    w = _world(env, {"red_block": [-0.25, 0.276]})
    (v,) = _landing(w, "table_back")
    assert "workspace's edge" in v.message
    w = _world(env, {"red_block": [-0.245, 0.05]})
    assert _landing(w, (-0.2, -0.1)) == []
