"""The pick policy's gripper is held no wider than the approach opening, which is what the
``graspable`` predicate assumes: a wider one lands a finger on a bin wall 2-3 cm away."""

from __future__ import annotations

import numpy as np

from sim import scene, scripted
from skills.registry import get
from skills.skill_env import SkillEnv


def test_pick_shield_caps_the_opening_and_nothing_else():
    pick, place = get("pick"), get("place")
    wide = np.array([0.3, -0.2, -1.0, -1.0])
    held = pick.shield(wide)
    assert held[3] == scripted.APPROACH and np.array_equal(held[:3], wide[:3])
    assert wide[3] == -1.0  # the policy's own array is left alone
    closing = np.array([0.0, 0.0, 0.0, 0.4])
    assert np.array_equal(pick.shield(closing), closing)
    assert np.array_equal(place.shield(wide), wide)  # place opens fully to release


def test_training_env_applies_it():
    env = SkillEnv("pick")
    env.reset(seed=1)
    env.step(np.array([0.0, 0.0, 0.0, -1.0]))
    ctrl = env.sim.data.ctrl[env.sim.controller.finger_act]
    want = scene.FINGER_OPEN * (1.0 - scripted.APPROACH) * 0.5
    assert np.allclose(ctrl, want)
