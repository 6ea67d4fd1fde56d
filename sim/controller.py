"""Cartesian end-effector control of the arm by damped-least-squares inverse kinematics.

An action ``(dx, dy, dz, grip)`` in [-1, 1] moves a target point (a mocap body, so the
target is part of MuJoCo's own state and survives save/restore) at up to ``MAX_EE_SPEED``
per axis, clipped to the workspace and kept within ``MAX_LEAD`` of the grip site so the
target cannot wind up when the arm is blocked (by the table or a cube). Once per control
step one DLS step on the 6-D task (position + "pointing down, fingers along world y")
turns the target into joint position set-points, clipped to the joint limits. The gripper
command maps linearly to the finger set-point: -1 fully open, +1 fully closed.

The fingers stay along world y unless a skill turns the hand about the vertical
(:meth:`ArmController.set_grip_yaw`): a pick whose cube has a wall or a neighbour beside it
along y grasps it along x instead. The turn is the mocap target's orientation, so it too is
part of the saved state; a yaw of exactly 0 runs the original closed-form error terms, so
every rollout that never turns the hand is bit for bit what it was.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np

from sim import scene
from sim.physics import index_span

#: How far the target may lead the grip site (m): bounds wind-up when blocked.
MAX_LEAD = 0.05
#: Over the drawer's inside (this far from its centre along x, m) the workspace reaches
#: ``scene.DRAWER_REACH_Y`` along -y. The knob and the button stay outside that strip, so
#: what the drawer and button skills learned against the tabletop's edge is unchanged.
DRAWER_REACH_HALF_X = scene.DRAWER_INNER_HALF[0]
#: DLS damping and the weight of the orientation error against position error.
DLS_LAMBDA = 0.05
ROT_WEIGHT = 0.5

#: Desired grip orientation: columns are the hand's x, y, z axes in world coordinates.
R_DOWN = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]).T


_HOME_CACHE: dict[str, np.ndarray] = {}  # the scene is fixed, so one solution serves all
#: How far one action unit moves the target in one control step (m).
_STEP = scene.MAX_EE_SPEED * scene.CONTROL_DT


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.linalg.solve(a, b)`` for the damped 6x6 system, bit for bit.

    ``np.linalg.solve`` checks and converts its arguments and sets up an error state around
    the one LAPACK call (``gesv``) it makes, which costs five times the solve itself here.
    The arguments are float64 arrays of fixed shapes, so the same gufunc is called directly;
    where its answer is not finite (a singular or poisoned system, which damping rules out
    in practice) ``np.linalg.solve`` itself answers, raising what it always raised."""
    if _SOLVE1 is not None:
        x = _SOLVE1(a, b)  # float64 arguments: numpy picks its "dd->d" loop
        if math.isfinite(sum(x.tolist())):
            return x
    return np.linalg.solve(a, b)


def _solve1() -> Any:
    """numpy's own gufunc behind ``np.linalg.solve`` for one right-hand side (None where
    this numpy lays it out otherwise: then ``np.linalg.solve`` serves)."""
    try:
        from numpy.linalg import _umath_linalg
    except ImportError:  # pragma: no cover - another numpy layout
        return None
    return getattr(_umath_linalg, "solve1", None)


_SOLVE1 = _solve1()
# bound once: the control step calls each of these every step
_mj_jacSite = mujoco.mj_jacSite
_multiply, _matmul, _add = np.multiply, np.matmul, np.add
#: numpy's clip ufunc (``np.clip`` without its Python wrapper): for values away from the
#: bounds it returns the value, at or past one the bound, as maximum-then-minimum does; the
#: two could differ only in the sign of a zero bound, so a controller uses it only where no
#: joint limit is zero. None where numpy lays it out otherwise.
_CLIP = getattr(getattr(getattr(np, "_core", None), "umath", None), "clip", None)
#: Per row of the 6-D task Jacobian: 1.0 for position, ROT_WEIGHT for orientation.
_ROW_WEIGHT = np.array([[1.0]] * 3 + [[ROT_WEIGHT]] * 3)
#: The same weights for every column of a 6-column Jacobian (the arm's): the same products
#: as the broadcast row weights, without the broadcast's setup.
_WEIGHT_6x6 = np.repeat(_ROW_WEIGHT, 6, axis=1)
#: Action dtypes (float32, float64) read as they are: ``tolist()`` of these gives the doubles
#: that the float64 copy of them would give.
_FLOAT_CHARS = "fd"


def doubles_view(a: Any) -> memoryview[float]:
    """A memoryview of the float64 array ``a``: its items read as Python floats and take
    floats, the same doubles as the array's, without an ndarray getitem/setitem's setup."""
    view: memoryview[float] = memoryview(a)
    if view.format != "d":
        raise TypeError(f"doubles_view needs a float64 array, got format {view.format!r}")
    return view  # format "d": its items are floats


class _Views:
    """Views into one MjData of what a control step reads and writes (see
    :meth:`ArmController._views`)."""

    def __init__(self, ctl: ArmController, data: mujoco.MjData):
        self.data = data
        self.site_pos = data.site_xpos[ctl.site]
        self.site_mat = data.site_xmat[ctl.site]
        self.mocap_pos = data.mocap_pos[ctl.mocap]
        self.mocap_quat = data.mocap_quat[ctl.mocap]
        self.drawer_pos = data.xpos[ctl._drawer] if ctl._drawer >= 0 else None
        # views only where the indices run contiguously (else None: a gather each step)
        self.arm_q = data.qpos[ctl.q_span] if isinstance(ctl.q_span, slice) else None
        self.arm_ctrl = data.ctrl[ctl._arm_ctrl] if isinstance(ctl._arm_ctrl, slice) else None
        fingers = ctl._finger_ctrl
        self.finger_ctrl = data.ctrl[fingers] if isinstance(fingers, slice) else None
        # memoryviews of the same rows: reading them as floats and storing floats into
        # them costs a fraction of an ndarray's setitem from a tuple (the same doubles)
        self.site_pos_mv = doubles_view(self.site_pos)
        self.site_mat_mv = doubles_view(self.site_mat)
        self.mocap_mv = doubles_view(self.mocap_pos)
        self.mocap_quat_mv = doubles_view(self.mocap_quat)
        self.finger_mv = None if self.finger_ctrl is None else doubles_view(self.finger_ctrl)


class ArmController:
    """Turns normalised actions into actuator set-points for one compiled model."""

    def __init__(self, model: mujoco.MjModel):
        self.model = model
        jids = [model.joint(n).id for n in scene.ARM_JOINTS]
        self.qadr = np.array([model.jnt_qposadr[j] for j in jids])
        self.dadr = np.array([model.jnt_dofadr[j] for j in jids])
        self.qlow = model.jnt_range[jids, 0].copy()
        self.qhigh = model.jnt_range[jids, 1].copy()
        nonzero = bool(np.all(self.qlow != 0.0) and np.all(self.qhigh != 0.0))
        self._clip = _CLIP if nonzero else None  # see _CLIP
        self.arm_act = np.array([model.actuator(f"a{i + 1}").id for i in range(6)])
        self.finger_act = np.array(
            [model.actuator("finger_left_act").id, model.actuator("finger_right_act").id]
        )
        self.site = model.site("grip_site").id
        self.mocap = model.body_mocapid[model.body("ee_target").id]
        # one (6, nv) buffer: mj_jacSite fills its two halves, the IK reads it at once
        self._jac = np.zeros((6, model.nv))
        self._jacp, self._jacr = self._jac[:3], self._jac[3:]
        # slices where the indices run contiguously (they do in both scenes): the same
        # elements as the index arrays, read without a gather on every control step
        self.q_span, self._d = index_span(self.qadr), index_span(self.dadr)
        self._arm_ctrl, self._finger_ctrl = index_span(self.arm_act), index_span(self.finger_act)
        # preallocated work arrays: the IK step runs every control step
        self._J = np.zeros((6, 6))
        self._JT = self._J.T
        # the arm's columns of the Jacobian as a view where they run contiguously
        self._jac_arm = self._jac[:, self._d] if isinstance(self._d, slice) else None
        six = self._jac_arm is not None and self._jac_arm.shape == (6, 6)
        self._weight = _WEIGHT_6x6 if six else _ROW_WEIGHT
        self._bound: _Views | None = None
        self._err = np.zeros(6)
        self._err_mv = doubles_view(self._err)
        self._damp = (DLS_LAMBDA**2) * np.eye(6)
        self._A = np.zeros((6, 6))
        self._lo, self._hi = scene.WORKSPACE_LOW, scene.WORKSPACE_HIGH
        self._lo_xyz = tuple(self._lo.tolist())
        self._hi_xyz = tuple(self._hi.tolist())
        # the articulated scene's drawer: over its inside the hand reaches further along -y
        self._drawer = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, scene.DRAWER_NAME)
        self._drawer_lo = scene.WORKSPACE_LOW.copy()
        self._drawer_lo[1] = scene.DRAWER_REACH_Y
        self._drawer_lo_xyz = tuple(self._drawer_lo.tolist())

    # ------------------------------------------------------------------ queries
    def grip_pos(self, data: mujoco.MjData) -> np.ndarray:
        return data.site_xpos[self.site].copy()

    def arm_q(self, data: mujoco.MjData) -> np.ndarray:
        return data.qpos[self.qadr].copy()

    def target(self, data: mujoco.MjData) -> np.ndarray:
        return data.mocap_pos[self.mocap].copy()

    def grip_yaw(self, data: mujoco.MjData) -> float:
        """The commanded turn of the hand about world z (rad): 0 = fingers along world y."""
        q = data.mocap_quat[self.mocap]
        return 0.0 if q[3] == 0.0 else float(2.0 * np.arctan2(q[3], q[0]))

    def set_grip_yaw(self, data: mujoco.MjData, yaw: float) -> None:
        """Command the hand to turn to ``yaw`` about world z; the IK turns the wrist there
        over the next control steps. ``yaw`` 0 restores the default exactly."""
        h = 0.5 * float(yaw)
        data.mocap_quat[self.mocap] = (
            (1.0, 0.0, 0.0, 0.0) if yaw == 0 else (np.cos(h), 0, 0, np.sin(h))
        )

    # ------------------------------------------------------------------ control
    def _views(self, data: mujoco.MjData) -> _Views:
        """The rows and spans of ``data`` the control step reads and writes, as views made
        once per data object (an MjData's arrays never move; building a view through the
        bindings on every step costs more than the arithmetic that reads it)."""
        v = self._bound
        if v is None or v.data is not data:
            v = self._bound = _Views(self, data)
        return v

    def apply(self, data: mujoco.MjData, action: np.ndarray) -> None:
        """Set mocap target, arm and finger set-points for one control step.

        The arithmetic is element for element that of the vector form (clip the action,
        move the target, bound it by the lead and the workspace), done on the three
        coordinates as Python floats: the same IEEE operations in the same order, so the
        set-points are bit for bit the same, at a fraction of the small-array overhead."""
        if type(action) is np.ndarray and action.dtype.char in _FLOAT_CHARS:
            a = action  # tolist() gives the same doubles as the float64 copy would
        else:
            a = np.asarray(action, dtype=np.float64)
        if a.shape != (scene.ACTION_DIM,):
            raise ValueError(f"action must have shape ({scene.ACTION_DIM},), got {a.shape}")
        vals = a.tolist()
        ax, ay, az, ag = vals
        # a finite sum means every value is finite (an inf or nan carries into the sum);
        # only a sum that is not (or overflowed) needs the values one by one
        if not math.isfinite(ax + ay + az + ag) and not all(map(math.isfinite, vals)):
            raise ValueError(f"action must be finite, got {vals}")
        # min(max(v, -1.0), 1.0), unrolled (the values are finite)
        ax = 1.0 if ax > 1.0 else (-1.0 if ax < -1.0 else ax)
        ay = 1.0 if ay > 1.0 else (-1.0 if ay < -1.0 else ay)
        az = 1.0 if az > 1.0 else (-1.0 if az < -1.0 else az)
        ag = 1.0 if ag > 1.0 else (-1.0 if ag < -1.0 else ag)
        v = self._bound
        if v is None or v.data is not data:
            v = self._views(data)
        grip = v.site_pos_mv.tolist()
        gx, gy, gz = grip
        px, py, pz = v.mocap_mv.tolist()
        # min(max(t, low), high) written out: max keeps t unless low > t, min keeps it
        # unless high < it, so the same comparisons pick the same floats
        k, lead = _STEP, MAX_LEAD
        tx, b = px + ax * k, gx - lead
        tx = b if b > tx else tx
        b = gx + lead
        tx = b if b < tx else tx
        ty, b = py + ay * k, gy - lead
        ty = b if b > ty else ty
        b = gy + lead
        ty = b if b < ty else ty
        tz, b = pz + az * k, gz - lead
        tz = b if b > tz else tz
        b = gz + lead
        tz = b if b < tz else tz
        lx, ly, lz = self._lo_xyz
        if v.drawer_pos is not None and abs(tx - float(v.drawer_pos[0])) < DRAWER_REACH_HALF_X:
            lx, ly, lz = self._drawer_lo_xyz  # (the tabletop has no drawer)
        hx, hy, hz = self._hi_xyz
        tx = lx if lx > tx else tx
        tx = hx if hx < tx else tx
        ty = ly if ly > ty else ty
        ty = hy if hy < ty else ty
        tz = lz if lz > tz else tz
        tz = hz if hz < tz else tz
        tgt = (tx, ty, tz)
        m = v.mocap_mv
        m[0], m[1], m[2] = tx, ty, tz
        if v.arm_ctrl is not None:  # straight into the actuators' set-points
            self._ik_step(data, tgt, out=v.arm_ctrl, site=grip, views=v)
        else:
            data.ctrl[self._arm_ctrl] = self._ik_step(data, tgt, site=grip, views=v)
        finger = scene.FINGER_OPEN * (1.0 - ag) * 0.5
        f = v.finger_mv
        if f is not None and len(f) == 2:  # (both scenes: two fingers)
            f[0] = f[1] = finger
        elif v.finger_ctrl is not None:
            v.finger_ctrl[:] = finger
        else:
            data.ctrl[self._finger_ctrl] = finger

    def _ik_step(
        self,
        data: mujoco.MjData,
        target,
        out: np.ndarray | None = None,
        site=None,
        views: _Views | None = None,
    ) -> np.ndarray:
        """One DLS step towards ``target``: the joint set-points (written into ``out`` when
        given); ``site``: the grip site's position when the caller has read it already."""
        v = self._views(data) if views is None else views
        _mj_jacSite(self.model, data, self._jacp, self._jacr, self.site)
        J = self._J
        # the arm's columns, the rotation rows scaled by ROT_WEIGHT (and the position rows
        # by exactly 1.0) in one ufunc call
        src = self._jac[:, self._d] if self._jac_arm is None else self._jac_arm
        _multiply(src, self._weight, out=J)
        # orientation error 0.5 * sum_i R[:, i] x R_DOWN[:, i], expanded for the constant
        # R_DOWN columns (-x, +y, -z): three np.cross calls cost more than the whole solve
        r = v.site_mat_mv.tolist()  # row-major 3x3: r[3*row + col]
        h = 0.5 * ROT_WEIGHT
        sx, sy, sz = v.site_pos_mv.tolist() if site is None else site
        if v.mocap_quat_mv[3] == 0.0:
            # (0, -x2, x1) + (-y2, 0, y0) + (-z1, z0, 0), with x, y, z the columns of R
            e3 = h * (-r[7] - r[5])
            e4 = h * (-r[6] + r[2])
            e5 = h * (r[3] + r[1])
        else:
            # the same sum against R_DOWN turned by yaw about z: columns (-c, -s, 0),
            # (-s, c, 0), (0, 0, -1)
            yaw = self.grip_yaw(data)
            c, s = float(np.cos(yaw)), float(np.sin(yaw))
            e3 = h * (s * r[6] - c * r[7] - r[5])
            e4 = h * (-c * r[6] - s * r[7] + r[2])
            e5 = h * (-s * r[0] + c * r[3] + c * r[1] + s * r[4])
        # stored one by one through a memoryview: the doubles an ndarray setitem would store
        e = self._err_mv
        e[0], e[1], e[2] = target[0] - sx, target[1] - sy, target[2] - sz
        e[3], e[4], e[5] = e3, e4, e5
        A = _matmul(J, self._JT, out=self._A)  # J @ J.T, in place
        A += self._damp
        dq = self._JT @ _solve(A, self._err)
        arm_q = data.qpos[self.q_span] if v.arm_q is None else v.arm_q
        q = _add(arm_q, dq, out=out)
        if self._clip is not None:  # nonzero joint limits: the same values picked
            return self._clip(q, self.qlow, self.qhigh, out=q)
        np.maximum(q, self.qlow, out=q)
        return np.minimum(q, self.qhigh, out=q)

    # ------------------------------------------------------------------ home pose
    def home_q(self) -> np.ndarray:
        """Joint angles that put the grip site at HOME_POS pointing down (cached per scene)."""
        if "home" not in _HOME_CACHE:
            _HOME_CACHE["home"] = self.solve_ik(scene.HOME_POS)
        return _HOME_CACHE["home"].copy()

    def solve_ik(self, pos: np.ndarray, iters: int = 300) -> np.ndarray:
        """Iterative IK on a scratch MjData (kinematics only; the sim is untouched)."""
        m = self.model
        d = mujoco.MjData(m)
        d.qpos[self.qadr] = np.array([0.0, 0.5, 1.7, 0.95, 0.0, 0.0])
        for _ in range(iters):
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            d.qpos[self.qadr] = self._ik_step(d, np.asarray(pos, dtype=np.float64))
        mujoco.mj_kinematics(m, d)
        err = np.linalg.norm(d.site_xpos[self.site] - pos)
        if err > 1e-3:
            raise RuntimeError(f"IK did not converge to {pos} (error {err:.4f} m)")
        return d.qpos[self.qadr].copy()

    def set_home(self, data: mujoco.MjData) -> None:
        """Put the arm at rest at the home pose with the gripper open (no dynamics)."""
        q = self.home_q()
        data.qpos[self.qadr] = q
        data.qvel[self.dadr] = 0.0
        data.ctrl[self.arm_act] = q
        for name in scene.FINGER_JOINTS:
            j = self.model.joint(name)
            data.qpos[self.model.jnt_qposadr[j.id]] = scene.FINGER_OPEN
        data.ctrl[self.finger_act] = scene.FINGER_OPEN
        data.mocap_pos[self.mocap] = scene.HOME_POS
