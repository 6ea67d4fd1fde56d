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


# The robot lives in sim/assets/robot.xml, included by the scene. Splitting it out of the
# single scene file left the compiled model unchanged: these are the figures of the single
# file, computed before the split (MuJoCo 4.0.0). The saved XML's digest was taken again when
# the wrist camera was turned to look down past the fingers (issue 29): a camera is not
# physics, so the rollout's digest is the one it always was.
BODIES = (
    "world table ee_target base link1 link2 link3 link4 link5 hand finger_left finger_right "
    "red_bin green_bin blue_bin red_block green_block blue_block yellow_block"
).split()
REFERENCE_MUJOCO = "4.0.0"
SAVED_XML_SHA256 = "cbcc331e22d739fa423a75f9790552b840f3454f93856c806d208bd67f4e44d5"
ROLLOUT_SHA256 = "c3783341eb3d5082e1ab77c93b4290f821a69096f1f3eba0259b8ac497fa200d"


def _rollout(m: mujoco.MjModel) -> np.ndarray:
    """200 physics steps under fixed controls and a moving mocap target: qpos and qvel."""
    d = mujoco.MjData(m)
    ctrl = np.linspace(-0.3, 0.3, m.nu)
    out = []
    for t in range(200):
        d.ctrl[:] = ctrl * np.sin(0.05 * t)
        d.mocap_pos[0] = [-0.05 + 0.0005 * t, 0.0, 0.25]
        mujoco.mj_step(m, d)
        out.append(np.concatenate([d.qpos, d.qvel]))
    return np.array(out)


def test_robot_is_a_separate_file_included_by_the_scene():
    assert scene.ROBOT_PATH.is_file()
    assert f'<include file="{scene.ROBOT_PATH.name}"/>' in scene.ASSET_PATH.read_text()
    # MuJoCo's own include resolution compiles the same model as load_model
    a = mujoco.MjModel.from_xml_path(str(scene.ASSET_PATH))
    b = physics.load_model()
    assert (a.nq, a.nv, a.nu, a.nbody) == (b.nq, b.nv, b.nu, b.nbody)
    assert np.array_equal(_rollout(a), _rollout(b))


def test_compiled_model_is_that_of_the_single_scene_file(model, tmp_path):
    import hashlib

    assert (model.nq, model.nv, model.nu) == (36, 32, 8)
    assert [model.body(i).name for i in range(model.nbody)] == BODIES
    if mujoco.__version__ != REFERENCE_MUJOCO:
        pytest.skip(f"reference digests were taken with MuJoCo {REFERENCE_MUJOCO}")
    saved = tmp_path / "saved.xml"
    mujoco.mj_saveLastXML(str(saved), physics.load_model())
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == SAVED_XML_SHA256
    assert hashlib.sha256(_rollout(model).tobytes()).hexdigest() == ROLLOUT_SHA256
