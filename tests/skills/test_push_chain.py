"""push with touching neighbours behind the cube: the expert comes down behind the whole
row and pushes it along, instead of landing on the neighbour."""

from __future__ import annotations

import numpy as np

from sim import scene
from sim.env import TabletopEnv
from skills.base import Binding
from skills.push import chain_rear
from skills.runtime import SkillExecutor

GAP = 2 * scene.CUBE_HALF + 0.001


def _obs(*cubes) -> dict:
    pos = np.array([[2.0, 2.0, -0.73]] * 4)
    present = np.zeros(4)
    for i, p in enumerate(cubes):
        pos[i], present[i] = p, 1.0
    return {"object_pos": pos, "object_present": present}


def test_chain_rear_follows_touching_cubes_behind_along_the_push_line():
    b = Binding(cube=0, target_kind="point", target_xyz=(0.2, 0.0, scene.CUBE_HALF))
    z = scene.CUBE_HALF
    assert np.allclose(chain_rear(_obs((0, 0, z)), b), (0, 0, z))
    two = _obs((0, 0, z), (-GAP, 0.002, z), (-2 * GAP, -0.003, z))
    assert np.allclose(chain_rear(two, b)[:2], (-2 * GAP, -0.003))
    beside = _obs((0, 0, z), (0, GAP, z), (GAP, 0, z))  # beside and ahead: not pushed from
    assert np.allclose(chain_rear(beside, b)[:2], (0, 0))
    in_bin = Binding(cube=0, target_kind="point", target_xyz=(0.0, 0.0, z))
    wall = _obs((0.0, 0.16, z), (0.0, 0.21, z + 0.004))  # behind a bin wall, on its floor
    assert np.allclose(chain_rear(wall, in_bin)[:2], (0.0, 0.16))


def test_the_expert_pushes_a_touching_row_to_the_goal():
    env = TabletopEnv()
    cubes = {"red_block": [0.0, -0.08, 0.0], "blue_block": [-GAP, -0.08, 0.0]}
    env.reset(seed=0, options={"cubes": cubes, "arm": [0.1, 0.05, 0.15]})
    out = SkillExecutor("scripted").run(
        env, {"skill": "push", "object": "red_block", "target": "table_front"}
    )
    assert out.success, out.reason
    w = env.world_state()
    assert w.in_region("red_block", "table_front") and w.object("blue_block").on_table
