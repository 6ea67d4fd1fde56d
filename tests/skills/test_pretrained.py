"""The shipped policies load and do their job on a handful of fixed starts.

Catches a broken or mismatched artifact (wrong observation layout, stale weights) fast;
the success-rate figures themselves come from ``skillbridge eval-skill -n 200``.
"""

import pytest

from skills.evaluate import evaluate_policy
from skills.policy import load_policy, pretrained_dir
from skills.registry import names


@pytest.mark.parametrize("skill", names())
def test_shipped_policy_succeeds_on_fixed_seeds(skill):
    policy, manifest = load_policy(pretrained_dir(skill), skill)
    assert manifest["skill"] == skill and manifest["algo"] == "ppo"
    r = evaluate_policy(skill, policy, episodes=6, seed=777)
    assert r["success_rate"] >= 5 / 6, r


def test_manifests_record_training_and_evaluation():
    for skill in names():
        _, m = load_policy(pretrained_dir(skill), skill)
        assert m["training_steps"] > 0 and m["training_wall_time_s"] > 0
        assert m["learning_aids"] and m["versions"]["stable_baselines3"]
        assert m["observation_space"]["shape"] == [m["obs_dim"]]
