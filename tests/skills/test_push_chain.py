"""push with touching neighbours behind the cube: the expert comes down behind the whole
row and pushes it along, instead of landing on the neighbour; beside other cubes it comes
down where the fingers have room, and it leaves a cube sideways before rising."""

from __future__ import annotations

import numpy as np
import pytest

from sim import scene, scripted
from sim.env import TabletopEnv
from skills import perturb as P
from skills.base import Binding
from skills.push import ROW_BACK, ROW_LATERAL, chain, chain_rear, pushed_row
from skills.registry import get
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


def test_the_fingers_come_down_where_they_have_room_beside_other_cubes():
    cube, u = np.array([0.0, 0.0, scene.CUBE_HALF]), np.array([1.0, 0.0])
    usual = cube[:2] - u * scripted.PUSH_BACKOFF
    assert np.allclose(scripted.push_landing(cube, u), usual)
    # a cube beside the usual spot (not in line: it is not pushed along) moves the spot
    # to the side away from it
    beside = np.array([-0.05, 0.036, scene.CUBE_HALF])
    spot = scripted.push_landing(cube, u, [beside])
    assert spot is not None and spot[1] < -0.005
    assert np.max(np.abs(spot - beside[:2])) >= scripted.FINGERS_HALF + scene.CUBE_HALF
    # boxed in on both sides: nowhere to come down
    other = np.array([-0.05, -0.036, scene.CUBE_HALF])
    assert scripted.push_landing(cube, u, [beside, other]) is None


def test_the_fingers_leave_a_cube_sideways_before_rising():
    cube = np.array([0.0, 0.0, scene.CUBE_HALF])
    touching = np.array([-0.031, 0.0, scripted.PUSH_Z])
    a = scripted.clear_of(touching, cube)
    assert a is not None and a[0] < -0.5 and abs(a[2]) < 0.2  # away, barely rising
    assert scripted.clear_of(np.array([-0.06, 0.0, scripted.PUSH_Z]), cube) is None
    assert scripted.clear_of(np.array([-0.03, 0.0, 0.08]), cube) is None


def test_a_cube_blocking_every_landing_spot_behind_the_row_joins_it():
    """A cube too far behind to count as touching, yet too close for the fingers to come
    down in between (nor beside it): the push takes it along."""
    z = scene.CUBE_HALF
    obs = _obs((0.0, 0.0, z), (-0.065, 0.015, z))
    b = Binding(cube=0, target_kind="point", target_xyz=(0.15, 0.0, z))
    assert chain(obs, b, ROW_BACK, ROW_LATERAL) == [0]
    assert pushed_row(obs, b) == [0, 1]
    far = _obs((0.0, 0.0, z), (-0.065, 0.06, z))  # well to the side: not in the way
    assert pushed_row(far, b) == [0]


@pytest.mark.parametrize("layout", ["row", "block"])
def test_the_expert_pushes_cubes_out_of_a_cluster(layout):
    """The first starts of the split at its seed include pushes the expert used to fail:
    coming down on a neighbour, and chains lost on the way (issue 14)."""
    ex = P.expert_actor(get("push"))
    r = P.evaluate_condition("push", P.BY_NAME[layout], {"expert": ex}, 12, seed=777)
    assert r["expert"]["successes"] == 12


def test_after_push_only_pushes_a_cube_the_push_skill_accepts():
    env = P.PerturbedEnv(P.BY_NAME["after_push"])
    cubes = {"red_block": [0.0, -0.08, 0.0], "blue_block": [0.1, -0.08, 0.0]}
    env.reset(seed=0, options={"cubes": cubes, "arm": [0.1, 0.05, 0.15]})
    env.move_cube("blue_block", (0.0, -0.08), z=3 * scene.CUBE_HALF)  # stacked on red
    for _ in range(5):
        env.step_physics(np.array([0.0, 0.0, 0.0, -1.0]))
    assert env.world_state().on("blue_block", "red_block")
    rng = np.random.default_rng(0)
    assert not P._after_push(env, "blue_block", rng)
    assert not P._after_push(env, "red_block", rng)  # blue sits on it
