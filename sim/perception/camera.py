"""The simulated RGB-D cameras: one render pass per camera gives colour and depth.

This is the only place in ``sim.perception`` that touches MuJoCo's data, and only as a
camera would: it renders the scene (``mjv_updateScene``, what the simulator shows) and
reads the camera's pose (its calibration, ``cam_xpos``/``cam_xmat``). Everything after it
works from :class:`Frame` alone: pixels, depth and that calibration.

``mujoco.Renderer`` renders colour and depth in two passes; here one ``mjr_render`` is read
back twice (``mjr_readPixels`` fills both buffers), with shadows, reflections and the skybox
off and no multisampling: a shadow map of the scene's size costs more than the rest of the
frame in a software renderer, and none of them helps to find a cube.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

#: Scene flags turned off for perception renders (their cost, not their look, decides).
_OFF_FLAGS = ("mjRND_SHADOW", "mjRND_REFLECTION", "mjRND_SKYBOX")


@dataclass(frozen=True)
class Frame:
    """One camera's image, its depth and its calibration.

    ``rgb`` (H, W, 3) uint8 and ``depth`` (H, W) float32 (metres along the optical axis)
    are stored top row first. ``f`` is the focal length in pixels (square pixels, principal
    point at the image centre); ``pos`` and ``mat`` are the camera's position and rotation
    in the world (columns: the camera's x right, y up, z backwards; it looks along -z)."""

    name: str
    rgb: np.ndarray
    depth: np.ndarray
    f: float
    pos: np.ndarray
    mat: np.ndarray
    #: For a camera on the hand: the hand's pose (position, rotation) from the camera's
    #: and the camera's fixed mounting (calibration too); None for a fixed camera.
    hand: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.depth.shape[0], self.depth.shape[1]

    def rays(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Camera-frame directions (x, y, -1) through the centres of pixels (rows, cols)."""
        h, w = self.shape
        x = (cols + 0.5 - 0.5 * w) / self.f
        y = (0.5 * h - (rows + 0.5)) / self.f
        return np.stack([x, y, -np.ones_like(x)], axis=-1)

    def points(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """World points (N, 3) seen at pixels (rows, cols): depth times the ray, posed."""
        cam = self.rays(rows, cols) * self.depth[rows, cols][:, None]
        return cam @ self.mat.T + self.pos

    def pixel_area(self, depth: np.ndarray) -> np.ndarray:
        """Area (m^2) one pixel covers on a plane facing the camera at ``depth``."""
        return (depth / self.f) ** 2

    def project(self, p) -> tuple[float, float, float]:
        """(row, col, depth) of world point ``p`` (rows and cols as floats)."""
        c = self.mat.T @ (np.asarray(p, dtype=np.float64) - self.pos)
        z = -c[2]
        h, w = self.shape
        return 0.5 * h - self.f * c[1] / z - 0.5, self.f * c[0] / z + 0.5 * w - 0.5, z


@dataclass(frozen=True)
class CameraSpec:
    """A camera to render: its name in the model and its image size (pixels)."""

    name: str
    width: int
    height: int


class RGBDCameras:
    """Offscreen RGB-D rendering of a few named cameras of one model.

    One GL context and one MuJoCo render context serve them all. ``render`` needs the data
    forward-computed (after ``mj_step`` and the env's kinematics refresh); it refreshes the
    camera poses (``mj_camlight``, derived quantities only) before drawing."""

    def __init__(self, model: mujoco.MjModel, cameras: tuple[CameraSpec, ...]):
        self.model = model
        self.specs = cameras
        w = max(c.width for c in cameras)
        h = max(c.height for c in cameras)
        if w > model.vis.global_.offwidth or h > model.vis.global_.offheight:
            raise ValueError(
                f"camera images up to {w}x{h} exceed the model's offscreen buffer "
                f"{model.vis.global_.offwidth}x{model.vis.global_.offheight}"
            )
        self.ids = [model.camera(c.name).id for c in cameras]
        # a camera mounted on a moving body: its pose in that body (the mounting)
        self.mount: list[tuple[np.ndarray, np.ndarray] | None] = []
        for i in self.ids:
            if int(model.cam_bodyid[i]) == 0:
                self.mount.append(None)
                continue
            r = np.zeros(9)
            mujoco.mju_quat2Mat(r, model.cam_quat[i])
            self.mount.append((model.cam_pos[i].copy(), r.reshape(3, 3)))
        self.focal = [
            0.5 * c.height / math.tan(math.radians(float(model.cam_fovy[i])) / 2)
            for c, i in zip(cameras, self.ids, strict=True)
        ]
        self._gl: mujoco.GLContext | None = mujoco.GLContext(w, h)
        self._gl.make_current()
        samples = int(model.vis.quality.offsamples)
        model.vis.quality.offsamples = 0  # no multisampling in this context only
        try:
            self._con = mujoco.MjrContext(model, int(mujoco.mjtFontScale.mjFONTSCALE_100))
        finally:
            model.vis.quality.offsamples = samples
        mujoco.mjr_setBuffer(int(mujoco.mjtFramebuffer.mjFB_OFFSCREEN), self._con)
        self._scn = mujoco.MjvScene(model, maxgeom=2000)
        self._opt = mujoco.MjvOption()
        self._cam = mujoco.MjvCamera()
        self._cam.type = int(mujoco.mjtCamera.mjCAMERA_FIXED)
        extent = float(model.stat.extent)
        near = np.float32(model.vis.map.znear * extent)
        far = np.float32(model.vis.map.zfar * extent)
        # the perspective projection's depth buffer, undone: metric = f n / (f - b (f - n))
        self._fn = np.float64(far) * np.float64(near)
        self._f, self._fmn = np.float64(far), np.float64(far) - np.float64(near)
        self._bufs = [
            (np.empty((c.height, c.width, 3), np.uint8), np.empty((c.height, c.width), np.float32))
            for c in cameras
        ]

    def render(self, data: mujoco.MjData) -> list[Frame]:
        m = self.model
        assert self._gl is not None, "closed"
        self._gl.make_current()
        mujoco.mj_camlight(m, data)
        out = []
        for spec, cid, f, mount, (rgb, depth) in zip(
            self.specs, self.ids, self.focal, self.mount, self._bufs, strict=True
        ):
            self._cam.fixedcamid = cid
            mujoco.mjv_updateScene(
                m, data, self._opt, None, self._cam, int(mujoco.mjtCatBit.mjCAT_ALL), self._scn
            )
            for flag in _OFF_FLAGS:
                self._scn.flags[int(getattr(mujoco.mjtRndFlag, flag))] = 0
            rect = mujoco.MjrRect(0, 0, spec.width, spec.height)
            mujoco.mjr_render(rect, self._scn, self._con)
            mujoco.mjr_readPixels(rgb, depth, rect, self._con)
            metric = (self._fn / (self._f - depth[::-1] * self._fmn)).astype(np.float32)
            pos, mat = data.cam_xpos[cid].copy(), data.cam_xmat[cid].reshape(3, 3).copy()
            hand = None
            if mount is not None:  # body = camera pose composed with the mounting's inverse
                body_mat = mat @ mount[1].T
                hand = (pos - body_mat @ mount[0], body_mat)
            out.append(
                Frame(
                    name=spec.name,
                    rgb=rgb[::-1].copy(),
                    depth=metric,
                    f=f,
                    pos=pos,
                    mat=mat,
                    hand=hand,
                )
            )
        return out

    def close(self) -> None:
        if self._gl is not None:
            self._con.free()
            self._gl.free()
            self._gl = None
