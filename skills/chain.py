"""The pick-then-place chain: each skill starts where the previous one really ended."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sim import scene
from sim.env import TabletopEnv
from sim.util import wilson
from skills.base import random_cubes
from skills.runtime import SkillExecutor

CHAIN = "pick-place"


def evaluate_chain(
    executor: SkillExecutor,
    episodes: int,
    seed: int = 0,
    progress: Callable[[int, bool], None] | None = None,
) -> dict:
    """pick(cube) then place(bin) over random (cube, bin) pairs and random layouts."""
    env = TabletopEnv()
    rng = np.random.default_rng(seed)
    ok_count, steps = 0, []
    for ep in range(episodes):
        names = random_cubes(rng, env)
        env.reset(seed=int(rng.integers(2**31)), options={"cubes": names})
        cube, target = names[0], str(rng.choice(scene.BIN_NAMES))
        a = executor.run(env, {"skill": "pick", "object": cube})
        ok = a.success
        n = a.steps
        if ok:
            b = executor.run(env, {"skill": "place", "target": target})
            ok = b.success and env.world_state().in_(cube, target)
            n += b.steps
        ok_count += ok
        if ok:
            steps.append(n)
        if progress:
            progress(ep, ok)
    lo, hi = wilson(ok_count, episodes)
    return {
        "skill": CHAIN,
        "episodes": episodes,
        "success_rate": ok_count / max(episodes, 1),
        "ci95": [round(lo, 4), round(hi, 4)],
        "mean_steps": float(np.mean(steps)) if steps else None,
    }
