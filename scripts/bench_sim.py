#!/usr/bin/env python
"""Simulator throughput: env steps/s against the raw mj_step rate of the same model.

ratio = env steps/s x physics steps per control step / raw mj_step rate. A ratio near 1
means the controller (IK), observations and bookkeeping cost little next to physics.
Both rates are measured in this run, on this machine, so the ratio is what to compare.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import mujoco
import numpy as np

import sim  # noqa: F401
from sim import physics, scene
from sim.env import TabletopEnv


def raw_rate(seconds: float) -> float:
    m = physics.load_model()
    d = mujoco.MjData(m)
    env = TabletopEnv()
    env.reset(seed=0)
    physics.set_state(m, d, env.get_state())  # same scene, same contacts
    d.ctrl[:] = env.data.ctrl
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        mujoco.mj_step(m, d, nstep=200)
        n += 200
    return n / (time.perf_counter() - t0)


def env_rate(seconds: float, seed: int) -> float:
    env = TabletopEnv()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, size=(4096, 4)).astype(np.float32)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(actions[n % len(actions)])
        n += 1
        if n % 500 == 0:
            env.reset(seed=seed + n)
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="measurement time per rate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    raw = raw_rate(a.seconds)
    envr = env_rate(a.seconds, a.seed)
    res = {
        "env_steps_per_s": round(envr, 1),
        "raw_mj_steps_per_s": round(raw, 1),
        "physics_steps_per_control_step": scene.CONTROL_SUBSTEPS,
        "ratio": round(envr * scene.CONTROL_SUBSTEPS / raw, 3),
        "sim_seconds_per_wall_second": round(envr * scene.CONTROL_DT, 1),
        "machine": platform.processor() or platform.machine(),
        "mujoco": mujoco.__version__,
    }
    if a.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:32s} {v}")


if __name__ == "__main__":
    main()
