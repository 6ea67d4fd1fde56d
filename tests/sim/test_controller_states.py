"""One control step's set-points are bit for bit what they were before the control step's
second round of speed work (issue 25), over many random states rather than along a few
rollouts: random arm poses (some at the joint limits), hand turns (yaw 0 half the time),
mocap targets inside and outside the workspace and the lead bound, actions inside and past
[-1, 1], in both scenes (the articulated one with its drawer's wider reach).

``DIGESTS`` was recorded by the controller before that work (``python -m
tests.sim.test_controller_states``): a change that reorders an IEEE operation anywhere in
the step shows up here even where no rollout happens to reach it.
"""

from __future__ import annotations

import hashlib

import mujoco
import numpy as np
import pytest

from sim import scene
from sim.env import TabletopEnv

#: Per scene: the digests of every state's set-points, each recorded by the controller
#: before the change. The last bits of a transcendental or a fused multiply-add differ
#: between machines (one CPU's numpy and MuJoCo builds take other vector paths), so each
#: machine this suite runs on has its own digest; the second pair was recorded on
#: 2026-12-04 by the tree before the change (37fe1f8^) and equals the current
#: controller's there, and so was the third (another machine, the same evening, the same
#: mujoco 4.0.1 and numpy 2.4.6).
DIGESTS = {
    "tabletop": (
        "67e6d2f9632e33795ecde0d5",
        "1b80b6f2d4944ae154a26760",
        "cb14b5dbd0b6f4d572823c76",
    ),
    "articulated": (
        "bdb63e1739813ba4c503ded0",
        "3b92a2ce9b10e8bf70676773",
        "9e737fcc15b149d71a74ad71",
    ),
}
N_STATES = 400


def _digest(scene_name: str, n: int = N_STATES) -> str:
    env = TabletopEnv(scene=scene_name)
    env.reset(seed=0)
    m, d, ctl = env.model, env.data, env.controller
    rng = np.random.default_rng(25)
    h = hashlib.sha256()
    home = d.qpos.copy()
    b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, scene.DRAWER_NAME)
    drawer = d.xpos[b].copy() if b >= 0 else None
    for i in range(n):
        d.qpos[:] = home
        q = rng.uniform(ctl.qlow, ctl.qhigh)
        if i % 10 == 0:  # some joints at a limit
            q = np.where(rng.random(6) < 0.5, ctl.qlow, ctl.qhigh)
        d.qpos[ctl.qadr] = q
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        grip = d.site_xpos[ctl.site].copy()
        # targets near the grip site (within the lead and past it) and anywhere
        if i % 3 == 0:
            mocap = rng.uniform(scene.WORKSPACE_LOW - 0.1, scene.WORKSPACE_HIGH + 0.1)
        elif i % 3 == 1 and drawer is not None:  # over the drawer's strip, past the edge
            mocap = np.array(
                [
                    drawer[0] + rng.uniform(-0.08, 0.08),
                    rng.uniform(scene.DRAWER_REACH_Y - 0.03, scene.WORKSPACE_LOW[1] + 0.02),
                    rng.uniform(0.0, 0.2),
                ]
            )
            grip = mocap + rng.uniform(-0.03, 0.03, size=3)
            d.site_xpos[ctl.site] = grip  # (read, never written back by the step)
        else:
            mocap = grip + rng.uniform(-0.08, 0.08, size=3)
        d.mocap_pos[ctl.mocap] = mocap
        ctl.set_grip_yaw(d, 0.0 if i % 2 == 0 else float(rng.uniform(-1.5, 1.5)))
        action = rng.uniform(-1.6, 1.6, size=4)
        if i % 4 == 1:
            action = action.astype(np.float32)
        ctl.apply(d, action)
        h.update(d.ctrl.tobytes() + d.mocap_pos.tobytes())
    env.close()
    return h.hexdigest()[:24]


@pytest.mark.parametrize("scene_name", sorted(DIGESTS))
def test_set_points_over_random_states_are_as_before(scene_name: str):
    assert _digest(scene_name) in DIGESTS[scene_name]


if __name__ == "__main__":
    for s in sorted(DIGESTS):
        print(s, _digest(s))
