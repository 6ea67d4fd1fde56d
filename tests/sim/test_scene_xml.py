"""sim/scene.py names and sizes things that sim/assets/tabletop.xml defines: they must agree."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from sim import physics, scene


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return physics.load_model()


def test_named_things_exist(model):
    for n in scene.CUBE_NAMES:
        assert model.body(n).id >= 0
        assert model.joint(f"{n}_joint").type == mujoco.mjtJoint.mjJNT_FREE
    for n in scene.BIN_NAMES:
        assert model.body(n).id >= 0
    for j in scene.ARM_JOINTS:
        assert model.joint(j).type == mujoco.mjtJoint.mjJNT_HINGE
    for j in scene.FINGER_JOINTS:
        assert model.joint(j).type == mujoco.mjtJoint.mjJNT_SLIDE
    for g in scene.FINGER_GEOMS + scene.FINGER_PADS:
        assert model.geom(g).id >= 0
    assert model.site("grip_site").id >= 0
    assert model.nu == len(scene.ARM_JOINTS) + len(scene.FINGER_JOINTS)


def test_timing(model):
    assert model.opt.timestep == scene.PHYSICS_DT
    assert scene.CONTROL_DT == pytest.approx(scene.PHYSICS_DT * scene.CONTROL_SUBSTEPS)


def test_cube_and_bin_sizes(model):
    for n in scene.CUBE_NAMES:
        assert np.allclose(model.geom(f"{n}_geom").size, [scene.CUBE_HALF] * 3)
    for n in scene.BIN_NAMES:
        # the walls stand BIN_WALL_HEIGHT tall, their inner faces BIN_INNER_HALF from the centre
        north = model.geom(f"{n}_wall_n")
        assert 2 * north.size[2] == pytest.approx(scene.BIN_WALL_HEIGHT)
        assert north.pos[1] - north.size[1] == pytest.approx(scene.BIN_INNER_HALF)


def test_fingers_and_base(model):
    for j in scene.FINGER_JOINTS:
        assert model.joint(j).range[1] == pytest.approx(scene.FINGER_OPEN)
    assert np.allclose(model.body("base").pos[:2], scene.BASE_XY)


def test_regions_and_spawn_area_are_on_the_table_and_clear_of_the_bins(model):
    half = model.geom("table_top").size[:2]
    for x, y in scene.REGIONS.values():
        assert abs(x) + scene.REGION_RADIUS < half[0] and abs(y) + scene.REGION_RADIUS < half[1]
    for n in scene.BIN_NAMES:
        bin_y = model.body(n).pos[1]
        assert scene.SPAWN_HIGH[1] + scene.CUBE_HALF < bin_y - scene.BIN_INNER_HALF
