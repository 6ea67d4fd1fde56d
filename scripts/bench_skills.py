#!/usr/bin/env python
"""Skill policies: inference time per step, and training steps/wall time to reach the bar.

Inference is timed on the shipped networks (single observation, batch 1, as the runner
calls them) against a baseline measured in the same run: one control step of the env.
The learning figures come from the evaluation history shipped beside each policy
(``evaluations.json``, written during ``skillbridge train``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

import sim  # noqa: F401
from sim.env import TabletopEnv
from skills.policy import load_manifest, load_policy, pretrained_dir
from skills.registry import names

BARS = {"pick": 0.95, "place": 0.95, "push": 0.90, "home": 0.99}


def time_inference(policy, obs_dim: int, n: int) -> float:
    obs = np.random.default_rng(0).normal(size=(n, obs_dim)).astype(np.float32)
    for o in obs[:50]:
        policy.act(o)
    t0 = time.perf_counter()
    for o in obs:
        policy.act(o)
    return (time.perf_counter() - t0) / n * 1e3


def time_env_step(n: int) -> float:
    env = TabletopEnv()
    env.reset(seed=0)
    a = np.zeros(4)
    t0 = time.perf_counter()
    for _ in range(n):
        env.step_physics(a)
    return (time.perf_counter() - t0) / n * 1e3


def learning(skill: str) -> dict:
    d = pretrained_dir(skill)
    m = load_manifest(d)
    demo_steps = int((m.get("warm_start") or {}).get("samples") or 0)
    # A policy fine-tuned with ``train --init`` carries the stages before it under ``init``:
    # the first stage (warm start + RL) is what reaching the bar took; the later ones
    # learnt new conditions on top.
    stages, root = [], m
    while root.get("init"):
        stages.append(
            {
                "rl_steps": root.get("training_steps"),
                "wall_s": root.get("training_wall_time_s"),
                "randomize": root.get("randomize"),
            }
        )
        root = root["init"]
    out = {
        "training_steps": root.get("training_steps"),
        "training_wall_time_s": root.get("training_wall_time_s"),
        "warm_start_env_steps": demo_steps,
        "fine_tuning": stages[::-1],
    }
    if stages:  # the first stage's curve, where its fine-tuning recorded it
        first = root.get("curve") or []
        evals = [{"timesteps": t, "success_rate": r, "episodes": n} for t, r, n in first]
    else:
        curve = d / "evaluations.json"
        evals = json.loads(curve.read_text()) if curve.is_file() else []
    if evals:
        bar = BARS.get(skill, 0.9)
        hit = next((e for e in evals if e["success_rate"] >= bar), None)
        out["bar"] = bar
        out["rl_steps_to_bar"] = hit["timesteps"] if hit else None
        out["env_steps_to_bar"] = demo_steps + hit["timesteps"] if hit else None
        out["curve"] = [(e["timesteps"], e["success_rate"], e["episodes"]) for e in evals]
    ev = m.get("evaluation")
    if ev:
        out["evaluation"] = {k: ev[k] for k in ("success_rate", "episodes", "ci95")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000, help="timed inference calls per skill")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    env_ms = time_env_step(300)
    res = {"env_step_ms": round(env_ms, 4), "skills": {}}
    for s in names():
        try:
            pol, m = load_policy(pretrained_dir(s), s)
        except Exception as e:  # report, do not crash: one missing policy is a finding
            res["skills"][s] = {"error": str(e)}
            continue
        ms = time_inference(pol, m["obs_dim"], a.n)
        res["skills"][s] = {
            "inference_ms": round(ms, 4),
            "inference_vs_env_step": round(ms / env_ms, 3),
            "net_arch": m["net_arch"],
            **learning(s),
        }
    if a.json:
        print(json.dumps(res))
    else:
        print(f"env control step: {env_ms:.3f} ms")
        for s, r in res["skills"].items():
            if "error" in r:
                print(f"{s:6s} {r['error']}")
                continue
            print(
                f"{s:6s} inference {r['inference_ms']:.3f} ms/step "
                f"({r['inference_vs_env_step']:.2f} x env step); "
                f"RL steps to bar {r.get('rl_steps_to_bar')}; trained {r['training_steps']} steps "
                f"in {r['training_wall_time_s']} s"
            )


if __name__ == "__main__":
    main()
