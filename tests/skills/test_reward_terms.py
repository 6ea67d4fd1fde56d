"""Skill environments report their reward's terms in ``info`` (Gymnasium-style)."""

from __future__ import annotations

import numpy as np
import pytest

from skills.skill_env import TIME_COST, SkillEnv


@pytest.mark.parametrize("skill", ["pick", "push"])
def test_reward_terms_sum_to_the_reward(skill):
    env = SkillEnv(skill)
    env.reset(seed=1)
    for _ in range(5):
        _, reward, done, _, info = env.step(env.expert_action())
        t = info["reward_terms"]
        assert set(t) == {"shaping", "time", "success"}
        assert t["time"] == -TIME_COST
        assert t["shaping"] + t["time"] + t["success"] == pytest.approx(reward, abs=1e-12)
        if done:
            break
    env.close()
    assert np.isfinite(reward)
