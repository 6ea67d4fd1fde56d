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

import mujoco
import numpy as np

from sim import scene

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


class ArmController:
    """Turns normalised actions into actuator set-points for one compiled model."""

    def __init__(self, model: mujoco.MjModel):
        self.model = model
        jids = [model.joint(n).id for n in scene.ARM_JOINTS]
        self.qadr = np.array([model.jnt_qposadr[j] for j in jids])
        self.dadr = np.array([model.jnt_dofadr[j] for j in jids])
        self.qlow = model.jnt_range[jids, 0].copy()
        self.qhigh = model.jnt_range[jids, 1].copy()
        self.arm_act = np.array([model.actuator(f"a{i + 1}").id for i in range(6)])
        self.finger_act = np.array(
            [model.actuator("finger_left_act").id, model.actuator("finger_right_act").id]
        )
        self.site = model.site("grip_site").id
        self.mocap = model.body_mocapid[model.body("ee_target").id]
        self._jacp = np.zeros((3, model.nv))
        self._jacr = np.zeros((3, model.nv))
        # preallocated work arrays: the IK step runs every control step
        self._J = np.zeros((6, 6))
        self._err = np.zeros(6)
        self._damp = (DLS_LAMBDA**2) * np.eye(6)
        self._lo, self._hi = scene.WORKSPACE_LOW, scene.WORKSPACE_HIGH
        # the articulated scene's drawer: over its inside the hand reaches further along -y
        self._drawer = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, scene.DRAWER_NAME)
        self._drawer_lo = scene.WORKSPACE_LOW.copy()
        self._drawer_lo[1] = scene.DRAWER_REACH_Y

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
    def apply(self, data: mujoco.MjData, action: np.ndarray) -> None:
        """Set mocap target, arm and finger set-points for one control step."""
        a = np.asarray(action, dtype=np.float64)
        if a.shape != (scene.ACTION_DIM,):
            raise ValueError(f"action must have shape ({scene.ACTION_DIM},), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"action must be finite, got {a.tolist()}")
        a = np.minimum(np.maximum(a, -1.0), 1.0)
        grip = data.site_xpos[self.site]
        tgt = data.mocap_pos[self.mocap] + a[:3] * (scene.MAX_EE_SPEED * scene.CONTROL_DT)
        tgt = np.minimum(np.maximum(tgt, grip - MAX_LEAD), grip + MAX_LEAD)
        lo = self._lo
        if self._drawer >= 0 and abs(tgt[0] - data.xpos[self._drawer][0]) < DRAWER_REACH_HALF_X:
            lo = self._drawer_lo  # (the tabletop has no drawer: _drawer is -1)
        tgt = np.minimum(np.maximum(tgt, lo), self._hi)
        data.mocap_pos[self.mocap] = tgt
        data.ctrl[self.arm_act] = self._ik_step(data, tgt)
        data.ctrl[self.finger_act] = scene.FINGER_OPEN * (1.0 - a[3]) * 0.5

    def _ik_step(self, data: mujoco.MjData, target: np.ndarray) -> np.ndarray:
        m = self.model
        mujoco.mj_jacSite(m, data, self._jacp, self._jacr, self.site)
        J, err = self._J, self._err
        J[:3] = self._jacp[:, self.dadr]
        np.multiply(self._jacr[:, self.dadr], ROT_WEIGHT, out=J[3:])
        # orientation error 0.5 * sum_i R[:, i] x R_DOWN[:, i], expanded for the constant
        # R_DOWN columns (-x, +y, -z): three np.cross calls cost more than the whole solve
        r = data.site_xmat[self.site]  # row-major 3x3: r[3*row + col]
        h = 0.5 * ROT_WEIGHT
        err[:3] = target - data.site_xpos[self.site]
        q = data.mocap_quat[self.mocap]
        if q[3] == 0.0:
            # (0, -x2, x1) + (-y2, 0, y0) + (-z1, z0, 0), with x, y, z the columns of R
            err[3] = h * (-r[7] - r[5])
            err[4] = h * (-r[6] + r[2])
            err[5] = h * (r[3] + r[1])
        else:
            # the same sum against R_DOWN turned by yaw about z: columns (-c, -s, 0),
            # (-s, c, 0), (0, 0, -1)
            yaw = self.grip_yaw(data)
            c, s = np.cos(yaw), np.sin(yaw)
            err[3] = h * (s * r[6] - c * r[7] - r[5])
            err[4] = h * (-c * r[6] - s * r[7] + r[2])
            err[5] = h * (-s * r[0] + c * r[3] + c * r[1] + s * r[4])
        dq = J.T @ np.linalg.solve(J @ J.T + self._damp, err)
        q = data.qpos[self.qadr] + dq
        return np.minimum(np.maximum(q, self.qlow), self.qhigh)

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
