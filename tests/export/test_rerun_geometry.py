"""The MJCF geoms as Rerun shapes (issue 23, item 3): every visible geom becomes one shape
whose pose, put through its body's pose, is where MuJoCo has the geom."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from skillbridge.episodes import rerun_geometry as geo


def _mat(xyzw) -> np.ndarray:
    x, y, z, w = xyzw
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.array([w, x, y, z], np.float64))
    return m.reshape(3, 3)


def _world_pose(sh: geo.Shapes, i: int, body_pos, body_mat) -> tuple[np.ndarray, np.ndarray]:
    """Centre and rotation in the world of instance ``i``, as the viewer composes them."""
    rot = _mat(sh.fields["quaternions"][i])
    if sh.kind == "Capsules3D":  # Rerun's capsule starts at its translation, along +z
        local = np.array(sh.fields["translations"][i]) + rot @ [0, 0, sh.fields["lengths"][i] / 2]
    else:
        local = np.array(sh.fields["centers"][i])
    return body_pos + body_mat @ local, body_mat @ rot


@pytest.mark.parametrize("scene_name", ["tabletop", "articulated"])
def test_every_visible_geom_is_a_shape_where_mujoco_has_it(scene_name):
    from sim.env import TabletopEnv

    env = TabletopEnv(scene=scene_name)
    env.reset(seed=3)
    env.step_physics(np.array([0.5, -0.3, 0.2, 1.0]), control_steps=5)  # a posed arm
    m, d = env.model, env.data
    shapes = geo.body_shapes(m)
    seen = []
    for b, kinds in shapes.items():
        for sh in kinds:
            assert sh.count == len(sh.geoms) > 0
            for i, g in enumerate(sh.geoms):
                assert int(m.geom_bodyid[g]) == b
                centre, rot = _world_pose(sh, i, d.xpos[b], d.xmat[b].reshape(3, 3))
                np.testing.assert_allclose(centre, d.geom_xpos[g], atol=1e-9)
                np.testing.assert_allclose(rot, d.geom_xmat[g].reshape(3, 3), atol=1e-9)
                assert sh.fields["colors"][i] == geo.geom_rgba(m, g)
                seen.append(g)
    assert sorted(seen) == [g for g in range(m.ngeom) if geo.visible(m, g)]
    kinds = {sh.kind for ks in shapes.values() for sh in ks}
    assert {"Boxes3D", "Capsules3D", "Cylinders3D"} <= kinds  # the arm is not a line
    link2 = shapes[m.body("link2").id][0]
    assert link2.kind == "Capsules3D"
    assert link2.fields["lengths"][0] == pytest.approx(2 * m.geom("upper_arm").size[1])
    assert m.geom("floor").id not in seen and m.geom("ee_target_marker").id not in seen
    env.close()


MESH_XML = """
<mujoco>
  <asset><mesh name="tetra" vertex="0 0 0  0.2 0 0  0 0.1 0  0 0 0.3"/></asset>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <body name="thing" pos="0.1 0.2 0.3" euler="0 0 30">
      <geom name="m" type="mesh" mesh="tetra" pos="0.05 0 0" rgba="0 1 0 1"/>
      <geom name="s" type="sphere" size="0.03" pos="0 0 0.1"/>
      <geom name="hidden" type="box" size="0.1 0.1 0.1" group="3"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_a_mesh_becomes_its_bounding_box_and_a_sphere_an_ellipsoid():
    m = mujoco.MjModel.from_xml_string(MESH_XML)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    ((b, kinds),) = geo.body_shapes(m).items()
    assert b == m.body("thing").id
    by_kind = {sh.kind: sh for sh in kinds}
    assert set(by_kind) == {"Boxes3D", "Ellipsoids3D"}  # the group-3 box and the plane: out
    box = by_kind["Boxes3D"]
    assert box.geoms == [m.geom("m").id] and box.fields["colors"] == [[0, 255, 0, 255]]
    centre, rot = _world_pose(box, 0, d.xpos[b], d.xmat[b].reshape(3, 3))
    verts = m.mesh_vert[: m.mesh_vertnum[0]].astype(np.float64)  # float32, in the geom frame
    g = m.geom("m").id
    world = d.geom_xpos[g] + verts @ d.geom_xmat[g].reshape(3, 3).T
    local = np.abs((world - centre) @ rot)
    half = np.array(box.fields["half_sizes"][0])
    assert (local <= half + 1e-6).all()  # every vertex in the box
    np.testing.assert_allclose(local.max(axis=0), half, atol=1e-6)  # and the box is tight
    assert by_kind["Ellipsoids3D"].fields["half_sizes"] == [[pytest.approx(0.03)] * 3]


def test_pinhole_intrinsics_match_the_field_of_view():
    k = geo.intrinsics(90.0, 320, 240)
    assert k[1, 1] == pytest.approx(120.0) and k[0, 0] == k[1, 1]  # tan(45 deg) = 1
    assert (k[0, 2], k[1, 2]) == (160.0, 120.0)
