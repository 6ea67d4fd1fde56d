"""Over the open drawer's inside the hand reaches further along -y than the tabletop's
workspace, so a cube that slid to the drawer's far side can still be taken out; everywhere
else (the knob, the button, the table) the workspace is the tabletop's."""

from __future__ import annotations

import numpy as np
import pytest

from sim import scene
from sim.env import TabletopEnv


@pytest.fixture(scope="module")
def aenv():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


def _drive_to(env: TabletopEnv, xy, z: float = 0.12, steps: int = 80) -> np.ndarray:
    for _ in range(steps):
        grip = env.world_state().grip_pos
        err = np.array([xy[0] - grip[0], xy[1] - grip[1], z - grip[2]])
        env.step(np.array([*np.clip(err / 0.02, -1, 1), -1.0]))
    return np.asarray(env.world_state().grip_pos)


def test_the_hand_reaches_over_the_open_drawer_only(aenv):
    aenv.reset(seed=0, options={"drawer": scene.DRAWER_TRAVEL, "cubes": {"red_block": None}})
    d = aenv.world_state().drawer
    assert d is not None
    over = _drive_to(aenv, (d.pos[0], -0.37))
    assert over[1] < scene.WORKSPACE_LOW[1] - 0.02  # beyond the tabletop's edge
    assert over[1] >= scene.DRAWER_REACH_Y - 1e-3
    beside = _drive_to(aenv, (-0.12, -0.37))  # over the button: the tabletop's edge holds
    assert beside[1] >= scene.WORKSPACE_LOW[1] - 0.004


def test_the_tabletop_keeps_its_edge(env):
    env.reset(seed=0, options={"cubes": {"red_block": None}})
    grip = _drive_to(env, (0.1, -0.37))
    assert grip[1] >= scene.WORKSPACE_LOW[1] - 0.004


def test_a_cube_on_the_drawers_far_side_is_reachable(aenv):
    aenv.reset(seed=0, options={"drawer": scene.DRAWER_TRAVEL, "cubes": {"red_block": None}})
    d = aenv.world_state().drawer
    far = [d.pos[0], -0.365, scene.DRAWER_FLOOR_Z + scene.CUBE_HALF + 0.001, 0.0]
    aenv.reset(
        seed=0,
        options={
            "drawer": scene.DRAWER_TRAVEL,
            "cubes": {"red_block": far, "blue_block": [-0.1, -0.36, 0.0]},
        },
    )
    aenv.step_physics(np.array([0.0, 0.0, 0.0, -1.0]), control_steps=5)
    w = aenv.world_state()
    assert w.in_("red_block", "drawer") and w.object("red_block").reachable
    assert w.graspable("red_block")
    # the same distance out on the table, away from the drawer, is out of reach
    assert not w.object("blue_block").reachable
