#!/usr/bin/env python
"""Simulator throughput: env steps/s against the raw mj_step rate of the same model.

ratio = env steps/s x physics steps per control step / raw mj_step rate. A ratio near 1
means the controller (IK), observations and bookkeeping cost little next to physics.

For a fair raw rate the physics must do the same work: contacts dominate mj_step's cost,
and random actions drive the arm into the table and the cubes. So the env run records, per
control step, the controls the controller produced; the raw run then restores the same
start states and steps bare MuJoCo with those controls, timing only ``mj_step``. The two
runs alternate round by round in one process (a busy machine slows both alike), and the
median ratio is reported with every round's and their spread (max - min).

    python scripts/bench_sim.py --rounds 5 --seconds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import mujoco
import numpy as np

import sim  # noqa: F401
from sim import physics, scene, util
from sim.env import TabletopEnv

EPISODE = 250  # control steps between resets
#: The env's steps/s over the raw rate it should reach on a quiet machine (issue 25).
TARGET_RATIO = 0.95


def env_round(env: TabletopEnv, seconds: float, rng: np.random.Generator):
    """Random actions for ``seconds`` of env time; returns (steps/s, recorded segments).

    Only ``env.step`` is timed, call by call (as ``raw_round`` times ``mj_step``): the
    resets and the recording of the controls for the raw run are the benchmark's own work."""
    segments, steps, busy = [], 0, 0.0
    clock = time.perf_counter
    while busy < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        start = env.get_state()
        actions = rng.uniform(-1, 1, size=(EPISODE, 4)).astype(np.float32)
        ctrls = np.empty((EPISODE, env.model.nu))
        mocaps = np.empty((EPISODE, 3))
        for i, a in enumerate(actions):
            t = clock()
            env.step(a)
            busy += clock() - t
            ctrls[i], mocaps[i] = env.data.ctrl, env.data.mocap_pos[0]
        steps += EPISODE
        segments.append((start, ctrls, mocaps))
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


def measure(seconds: float, rounds: int, seed: int, scene_name: str = scene.DEFAULT_SCENE):
    """``rounds`` rounds, each an env run then a raw run over the same segments."""
    rng = np.random.default_rng(seed)
    env = TabletopEnv(scene=scene_name)
    model = physics.load_model(scene_name)
    data = mujoco.MjData(model)
    out = []
    for _ in range(rounds):
        env_sps, segments = env_round(env, seconds / rounds, rng)
        raw = raw_round(model, data, segments)
        out.append((env_sps, raw, env_sps * scene.CONTROL_SUBSTEPS / raw))
    env.close()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="env time in all rounds")
    ap.add_argument("--rounds", type=int, default=5, help="alternating env/raw rounds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scene", default=scene.DEFAULT_SCENE, choices=scene.SCENE_NAMES)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if a.rounds < 1 or not a.seconds > 0:
        ap.error("--rounds must be at least 1 and --seconds positive")
    rounds = measure(a.seconds, a.rounds, a.seed, a.scene)
    env_sps = statistics.median(r[0] for r in rounds)
    raw = statistics.median(r[1] for r in rounds)
    ratios = [r[2] for r in rounds]
    res = {
        "scene": a.scene,
        "env_steps_per_s": round(env_sps, 1),
        "raw_mj_steps_per_s": round(raw, 1),
        "physics_steps_per_control_step": scene.CONTROL_SUBSTEPS,
        "ratio": round(statistics.median(ratios), 3),
        "ratio_per_round": [round(x, 3) for x in ratios],
        "ratio_min": round(min(ratios), 3),
        "ratio_max": round(max(ratios), 3),
        "ratio_spread": round(max(ratios) - min(ratios), 3),
        "rounds": a.rounds,
        "target_ratio": TARGET_RATIO,
        "sim_seconds_per_wall_second": round(env_sps * scene.CONTROL_DT, 1),
        "load_avg_1m": round(os.getloadavg()[0], 2),
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
