"""A few hundred training steps per skill run and write a loadable policy."""

import json

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


def test_init_continues_a_policy_instead_of_a_new_warm_start(tmp_path):
    """--init: RL starts from the given policy's weights (no DAgger), and the manifest names
    it; a policy of other layers or of an off-policy algorithm is one clear error."""
    import numpy as np

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    first = train("home", config=cfg, logdir=tmp_path / "a", n_envs=1, seed=1)
    src, src_m = load_policy(first / "best", "home")
    run = train("home", config=cfg, logdir=tmp_path / "b", n_envs=1, seed=2, init=first / "best")
    start, start_m = load_policy(run / "bc", "home")
    x = np.linspace(-1, 1, src.obs_dim)
    assert np.array_equal(start.act(x), src.act(x))  # the very weights, not a new warm start
    assert start_m["init"]["sha256"] == src_m["sha256"]
    first_curve = json.loads((first / "evaluations.json").read_text())
    assert [c[0] for c in start_m["init"]["curve"]] == [e["timesteps"] for e in first_curve]
    _, m = load_policy(run / "best", "home")
    assert m["init"]["sha256"] == src_m["sha256"]
    assert m["learning_aids"][0].startswith(
        f"RL fine-tuning continued from policy {src_m['sha256'][:12]}"
    )
    assert m["warm_start"]["samples"] == src_m["warm_start"]["samples"]
    evals = json.loads((run / "evaluations.json").read_text())
    assert evals[0]["source"] == "init"

    wide = tmp_path / "wide.yaml"
    wide.write_text(yaml.safe_dump({**TINY, "net_arch": [8]}))
    bad = r"--init: .* has layers \[16, 16\], the config asks for \[8\]"
    with pytest.raises(TrainError, match=bad):
        train("home", config=wide, logdir=tmp_path / "c", init=first / "best")
    with pytest.raises(TrainError, match="cannot continue"):
        train("home", algo="sac", config=cfg, logdir=tmp_path / "d", init=first / "best")
    with pytest.raises(TrainError, match="is not a policy folder"):
        train("home", config=cfg, logdir=tmp_path / "e", init=tmp_path)
    for refused in "cde":  # each refused before a run folder was made
        assert not (tmp_path / refused).exists()
