"""A few hundred training steps per skill run and write a loadable policy."""

import pytest
import yaml

from skills.policy import load_policy
from skills.registry import names
from skills.train import TrainError, train
from tests.skills.tiny_training import TINY


@pytest.mark.parametrize("skill", names())
def test_tiny_training_writes_loadable_policy(skill, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    run = train(skill, config=cfg, logdir=tmp_path / "logs", n_envs=1, seed=1)
    policy, manifest = load_policy(run / "best", skill)
    assert manifest["training_steps"] >= 128
    assert policy.act([0.0] * policy.obs_dim).shape == (4,)
    for f in ("config.yml", "args.yml", "command.txt", "versions.json", "evaluations.json"):
        assert (run / f).is_file()
    # resuming a finished run is a no-op that keeps the policy
    again = train(skill, config=cfg, logdir=tmp_path / "logs", n_envs=1, seed=1, resume=True)
    assert again == run


def test_bad_config_and_algo_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("net_arch: [16\n")
    with pytest.raises(TrainError, match="bad.yaml: invalid YAML"):
        train("pick", config=bad, logdir=tmp_path)
    with pytest.raises(TrainError, match="algo 'dqn' is not supported"):
        train("pick", algo="dqn", logdir=tmp_path)


@pytest.mark.parametrize("algo", ["sac", "tqc"])
def test_tiny_off_policy_training_and_resume(algo, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({**TINY, "timesteps": 64, "eval": {"episodes": 1, "freq": 32}}))
    run = train("home", algo=algo, config=cfg, logdir=tmp_path / "logs", seed=2, timesteps=32)
    policy, manifest = load_policy(run / "best", "home")
    assert manifest["algo"] == algo and manifest["squash"] is True
    assert (run / "checkpoint" / "replay.npz").is_file()
    # continue the same run to 64 steps: replay buffer and optimisers come back
    again = train(
        "home", algo=algo, config=cfg, logdir=tmp_path / "logs", seed=2, timesteps=64, resume=True
    )
    assert again == run
    import json

    evals = json.loads((run / "evaluations.json").read_text())
    assert [e["timesteps"] for e in evals] == [0, 32, 64]
