"""The scene's MJCF geoms as Rerun shapes, so a recording shows the robot, the table, the bins
and the cubes as they are modelled rather than a line of link origins.

Every visible geom of a body (MuJoCo's default groups 0-2; groups 3+ are markers and
collision helpers the MuJoCo viewer hides too) becomes one instance of a Rerun archetype in
its body's frame, its pose inside the body baked into the instance: a box, a capsule, a
cylinder or an ellipsoid; any other type (a mesh, a height field) becomes the box MuJoCo
bounds it with. Planes are left out: the 3D view draws its own grid. Colours are the MJCF's
(the material's where the geom has one). The viewer then moves each body with one transform
per step, which moves all of its shapes at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

#: MuJoCo's viewer shows geom groups 0, 1 and 2 by default.
VISIBLE_GROUPS = 3

_G = mujoco.mjtGeom


@dataclass
class Shapes:
    """One kind of shape on one body: the fields of a Rerun archetype's ``columns()``, one
    element per instance (``kind`` names the archetype: ``Boxes3D``, ``Capsules3D``, ...)."""

    kind: str
    fields: dict[str, list] = field(default_factory=dict)
    #: The MuJoCo geom of each instance (not sent; what a test compares poses with).
    geoms: list[int] = field(default_factory=list)

    def add(self, **values) -> None:
        for k, v in values.items():
            self.fields.setdefault(k, []).append(v)

    @property
    def count(self) -> int:
        return len(next(iter(self.fields.values()), []))


def _xyzw(wxyz: np.ndarray) -> list[float]:
    w, x, y, z = (float(v) for v in wxyz)
    return [x, y, z, w]


def _rotate(quat: np.ndarray, v) -> np.ndarray:
    out = np.zeros(3)
    mujoco.mju_rotVecQuat(out, np.asarray(v, np.float64), quat)
    return out


def geom_rgba(model, g: int) -> list[int]:
    """The geom's colour as 0-255 RGBA (its material's colour where it has a material)."""
    mat = int(model.geom_matid[g])
    rgba = model.mat_rgba[mat] if mat >= 0 else model.geom_rgba[g]
    return [int(round(255 * float(np.clip(c, 0.0, 1.0)))) for c in rgba]


def visible(model, g: int) -> bool:
    return (
        int(model.geom_group[g]) < VISIBLE_GROUPS
        and geom_rgba(model, g)[3] > 0
        and int(model.geom_type[g]) != _G.mjGEOM_PLANE
    )


def _add_geom(shapes: dict[str, Shapes], model, g: int) -> None:
    t = int(model.geom_type[g])
    pos = np.asarray(model.geom_pos[g], np.float64)
    quat = np.asarray(model.geom_quat[g], np.float64)
    size = [float(v) for v in model.geom_size[g]]
    rgba = geom_rgba(model, g)
    q = _xyzw(quat)

    def get(kind: str) -> Shapes:
        out = shapes.setdefault(kind, Shapes(kind))
        out.geoms.append(g)
        return out

    if t == _G.mjGEOM_BOX:
        get("Boxes3D").add(half_sizes=size[:3], centers=pos.tolist(), quaternions=q, colors=rgba)
    elif t == _G.mjGEOM_CAPSULE:  # MuJoCo: centred, half-length size[1]; Rerun: from one end
        start = pos - _rotate(quat, [0.0, 0.0, size[1]])
        caps = get("Capsules3D")
        caps.add(lengths=2 * size[1], radii=size[0], translations=start.tolist())
        caps.add(quaternions=q, colors=rgba)
    elif t == _G.mjGEOM_CYLINDER:
        get("Cylinders3D").add(
            lengths=2 * size[1], radii=size[0], centers=pos.tolist(), quaternions=q, colors=rgba
        )
    elif t in (_G.mjGEOM_SPHERE, _G.mjGEOM_ELLIPSOID):
        half = [size[0]] * 3 if t == _G.mjGEOM_SPHERE else size[:3]
        get("Ellipsoids3D").add(half_sizes=half, centers=pos.tolist(), quaternions=q, colors=rgba)
    else:  # a mesh, height field or SDF: the box MuJoCo bounds it with, in the geom's frame
        aabb = np.asarray(model.geom_aabb[g], np.float64)
        centre = pos + _rotate(quat, aabb[:3])
        get("Boxes3D").add(
            half_sizes=aabb[3:].tolist(), centers=centre.tolist(), quaternions=q, colors=rgba
        )


def body_shapes(model) -> dict[int, list[Shapes]]:
    """``{body id: [Shapes, ...]}`` for every body with a visible geom, in body order."""
    out: dict[int, dict[str, Shapes]] = {}
    for g in range(model.ngeom):
        if visible(model, g):
            _add_geom(out.setdefault(int(model.geom_bodyid[g]), {}), model, g)
    return {b: list(kinds.values()) for b, kinds in sorted(out.items())}


def body_name(model, b: int) -> str:
    return model.body(b).name or f"body{b}"


def camera_pose(data, c: int) -> tuple[np.ndarray, np.ndarray]:
    """A camera's world position and orientation (xyzw quaternion; MuJoCo's cameras look
    along their -z with +y up, Rerun's ``RUB``)."""
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.asarray(data.cam_xmat[c], np.float64))
    return np.array(data.cam_xpos[c], np.float64), np.array(_xyzw(q))


def intrinsics(fovy_deg: float, width: int, height: int) -> np.ndarray:
    """The pinhole matrix of a MuJoCo camera (vertical field of view ``fovy_deg``, square
    pixels, principal point in the image centre), in pixels."""
    f = (height / 2.0) / np.tan(np.radians(fovy_deg) / 2.0)
    return np.array([[f, 0.0, width / 2.0], [0.0, f, height / 2.0], [0.0, 0.0, 1.0]])
