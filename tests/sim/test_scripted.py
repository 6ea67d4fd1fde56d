"""The physics allow grasping: the scripted controller succeeds reliably."""

import numpy as np

from sim import scene
from sim.scripted import run_pick_place


def test_scripted_pick_place_into_bins(env):
    ok = 0
    for s in range(50):
        rng = np.random.default_rng(s)
        env.reset(seed=s)
        cube, b = str(rng.choice(scene.CUBE_NAMES)), str(rng.choice(scene.BIN_NAMES))
        ok += run_pick_place(env, cube, b)
    assert ok >= 48  # >= 95% of 50


def test_scripted_stacking(env):
    ok = 0
    for s in range(50):
        rng = np.random.default_rng(1000 + s)
        env.reset(seed=1000 + s)
        a, b = (str(x) for x in rng.choice(scene.CUBE_NAMES, 2, replace=False))
        ok += run_pick_place(env, a, b)
    assert ok >= 45  # >= 90% of 50
