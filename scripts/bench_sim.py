#!/usr/bin/env python
"""Simulator throughput: env steps/s against the raw mj_step rate of the same model.

ratio = env steps/s x physics steps per control step / raw mj_step rate. A ratio near 1
means the controller (IK), observations and bookkeeping cost little next to physics.

For a fair raw rate the physics must do the same work: contacts dominate mj_step's cost,
and random actions drive the arm into the table and the cubes. So the env run records, per
control step, the controls the controller produced; the raw run then restores the same
start states and steps bare MuJoCo with those controls, timing only ``mj_step``. The two
runs alternate a few times in one process and the median ratio is reported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import mujoco
import numpy as np

import sim  # noqa: F401
from sim import physics, scene, util
from sim.env import TabletopEnv

EPISODE = 250  # control steps between resets


def env_round(env: TabletopEnv, seconds: float, rng: np.random.Generator):
    """Random actions for ``seconds``; returns (steps/s, recorded segments)."""
    segments, steps, t0 = [], 0, time.perf_counter()
    busy = 0.0
    while busy < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        start = env.get_state()
        actions = rng.uniform(-1, 1, size=(EPISODE, 4)).astype(np.float32)
        ctrls = np.empty((EPISODE, env.model.nu))
        mocaps = np.empty((EPISODE, 3))
        t = time.perf_counter()
        for i, a in enumerate(actions):
            env.step(a)
            ctrls[i], mocaps[i] = env.data.ctrl, env.data.mocap_pos[0]
        busy += time.perf_counter() - t
        steps += EPISODE
        segments.append((start, ctrls, mocaps))
    del t0
    return steps / busy, segments


def raw_round(model, data, segments) -> float:
    """Bare mj_step over the recorded segments; returns physics steps/s."""
    busy, n = 0.0, 0
    for start, ctrls, mocaps in segments:
        physics.set_state(model, data, start)
        for c, mp in zip(ctrls, mocaps, strict=False):
            data.ctrl[:] = c
            data.mocap_pos[0] = mp
            t = time.perf_counter()
            mujoco.mj_step(model, data, nstep=scene.CONTROL_SUBSTEPS)
            busy += time.perf_counter() - t
            n += scene.CONTROL_SUBSTEPS
    return n / busy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="env time per round")
    ap.add_argument("--rounds", type=int, default=3, help="alternating env/raw rounds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    env = TabletopEnv()
    model = physics.load_model()
    data = mujoco.MjData(model)
    rounds = []
    for _ in range(a.rounds):
        env_sps, segments = env_round(env, a.seconds / a.rounds, rng)
        raw = raw_round(model, data, segments)
        rounds.append((env_sps, raw, env_sps * scene.CONTROL_SUBSTEPS / raw))
    env_sps = statistics.median(r[0] for r in rounds)
    raw = statistics.median(r[1] for r in rounds)
    res = {
        "env_steps_per_s": round(env_sps, 1),
        "raw_mj_steps_per_s": round(raw, 1),
        "physics_steps_per_control_step": scene.CONTROL_SUBSTEPS,
        "ratio": round(statistics.median(r[2] for r in rounds), 3),
        "ratio_per_round": [round(r[2], 3) for r in rounds],
        "sim_seconds_per_wall_second": round(env_sps * scene.CONTROL_DT, 1),
        "machine": util.processor(),
        "mujoco": mujoco.__version__,
    }
    if a.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:32s} {v}")


if __name__ == "__main__":
    main()
