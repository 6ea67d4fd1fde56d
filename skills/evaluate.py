"""Measuring a skill: success rate with a 95% Wilson interval over the chained starts."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sim.util import wilson
from skills.policy import MLPPolicy
from skills.skill_env import SkillEnv


def evaluate_policy(
    skill: str,
    policy: MLPPolicy | Callable[[SkillEnv, np.ndarray], np.ndarray],
    episodes: int,
    seed: int = 0,
    env: SkillEnv | None = None,
    progress: Callable[[int, bool], None] | None = None,
) -> dict:
    """Deterministic rollouts from ``episodes`` seeded chained starts."""
    env = env or SkillEnv(skill)
    successes, steps = 0, []
    kinds: dict[str, list[int]] = {}  # target kind -> [successes, episodes]
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed * 100_003 + ep)
        done = False
        info = {"is_success": False}
        while not done:
            a = policy.act(obs) if isinstance(policy, MLPPolicy) else policy(env, obs)
            obs, _, term, trunc, info = env.step(a)
            done = term or trunc
        ok = bool(info["is_success"])
        successes += ok
        k = kinds.setdefault(env.binding.target_kind or "-", [0, 0])
        k[0] += ok
        k[1] += 1
        if ok:
            steps.append(env.steps)
        if progress:
            progress(ep, ok)
    lo, hi = wilson(successes, episodes)
    out = {
        "skill": skill,
        "episodes": episodes,
        "success_rate": successes / max(episodes, 1),
        "ci95": [round(lo, 4), round(hi, 4)],
        "mean_steps": float(np.mean(steps)) if steps else None,
    }
    if len(kinds) > 1:  # e.g. place into bins vs onto cubes vs onto regions
        out["by_target"] = {
            k: {"episodes": n, "success_rate": s / n, "ci95": [round(v, 4) for v in wilson(s, n)]}
            for k, (s, n) in sorted(kinds.items())
        }
    return out


def expert_policy(env: SkillEnv, obs: np.ndarray) -> np.ndarray:
    return env.expert_action()
