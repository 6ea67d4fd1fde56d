"""The control step's fast paths (issue 25, env speed) answer as the general path: an
action as a float32 array, a float64 array, a list or an int array sets the same bits; a
non-finite action is refused and a huge finite one is clipped (the finiteness test on the
sum must not refuse it); and the views the controller keeps follow the MjData it is given."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from sim.env import TabletopEnv


def _after(env: TabletopEnv, action) -> bytes:
    env.reset(seed=3)
    env.controller.apply(env.data, action)
    d = env.data
    return d.ctrl.tobytes() + d.mocap_pos.tobytes()


def test_every_action_form_sets_the_same_bits():
    env = TabletopEnv()
    a = np.array([0.3, -1.7, 0.25, 0.5], dtype=np.float32)
    want = _after(env, a)
    for same in (a.astype(np.float64), a.tolist(), tuple(a.tolist())):
        assert _after(env, same) == want
    ints = np.array([1, -1, 0, 1])
    assert _after(env, ints) == _after(env, ints.astype(np.float64))
    assert _after(env, a) != _after(env, ints)
    env.close()


def test_huge_finite_actions_are_clipped_not_refused():
    env = TabletopEnv()
    huge = np.array([1e308, 1e308, -1e308, 1e308])  # their sum overflows
    assert _after(env, huge) == _after(env, np.array([1.0, 1.0, -1.0, 1.0]))
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="finite"):
            _after(env, np.array([0.0, bad, 0.0, 0.0]))
    env.close()


def test_the_controller_follows_another_mjdata():
    """A controller asked about a second MjData (as ``solve_ik`` does with its scratch
    copy) reads and writes that one, and the env's again afterwards."""
    env = TabletopEnv()
    env.reset(seed=1)
    other = mujoco.MjData(env.model)
    mujoco.mj_forward(env.model, other)
    before = env.data.ctrl.copy()
    env.controller.apply(other, np.array([1.0, 0.0, 0.0, 1.0]))
    assert env.data.ctrl.tobytes() == before.tobytes()
    assert other.ctrl.tobytes() != np.zeros_like(other.ctrl).tobytes()
    env.controller.apply(env.data, np.array([1.0, 0.0, 0.0, 1.0]))
    assert env.data.ctrl.tobytes() != before.tobytes()
    env.close()
