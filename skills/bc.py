"""Demonstrations from the scripted experts and a behaviour-cloning warm start (DAgger).

DAgger rolls out the current student (mixed with the expert with probability beta) and
labels every visited state with the stateless expert's action, so the student learns to
recover from its own mistakes instead of only imitating perfect trajectories.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from skills.policy import MLPPolicy
from skills.skill_env import SkillEnv


def collect(
    env: SkillEnv,
    episodes: int,
    rng: np.random.Generator,
    student: MLPPolicy | None = None,
    beta: float = 1.0,
    noise: float = 0.0,
    progress: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Roll out (expert w.p. beta, else student), label with the expert. Returns X, Y, success."""
    xs, ys, successes = [], [], 0
    for ep in range(episodes):
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        done = False
        while not done:
            label = env.expert_action()
            xs.append(obs)
            ys.append(label)
            if student is None or rng.random() < beta:
                a = label.copy()
            else:
                a = student.act(obs).astype(np.float32)
            if noise > 0:
                a[:3] = np.clip(a[:3] + rng.normal(0, noise, 3), -1, 1)
            obs, _, term, trunc, info = env.step(a)
            done = term or trunc
        successes += int(info["is_success"])
        if progress:
            progress(ep)
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32), successes / max(episodes, 1)


def fit(
    policy: MLPPolicy, X: np.ndarray, Y: np.ndarray, epochs: int, lr: float, seed: int
) -> float:
    """Regress the actor's mean onto expert actions; returns the final training loss."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    Xt, Yt = torch.as_tensor(X), torch.as_tensor(Y)
    n = len(Xt)
    bs = 256
    loss_fn = nn.MSELoss()
    last = float("nan")
    for _ in range(epochs):
        perm = torch.randperm(n, generator=g)
        total = 0.0
        for i in range(0, n, bs):
            idx = perm[i : i + bs]
            loss = loss_fn(policy(Xt[idx]), Yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        last = total / n
    return last


def normaliser(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = X.mean(axis=0)
    std = np.maximum(X.std(axis=0), 1e-3)
    return mean, std
