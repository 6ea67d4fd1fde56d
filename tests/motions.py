"""Scripted arm motions for tests that need the hand somewhere without a skill."""

from __future__ import annotations

import numpy as np

from sim import scene
from sim.env import TabletopEnv


def go(env: TabletopEnv, pos, grip: float, speed: float = 1.0, max_steps: int = 150) -> None:
    """Drive the grip site to ``pos`` with the gripper command held at ``grip``."""
    for _ in range(max_steps):
        err = np.asarray(pos, dtype=np.float64) - env.grip_pos
        if np.linalg.norm(err) < 0.004:
            return
        a = np.clip(err / (scene.MAX_EE_SPEED * scene.CONTROL_DT), -speed, speed)
        env.step_physics(np.array([*a, grip]))
