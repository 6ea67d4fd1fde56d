"""``train`` with bad input or a damaged run folder (issue 10 D): one line, exit 2, and no
half-made run folder that ``--resume`` could pick later."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from skills.train import TrainError, latest_run_dir, load_config, train
from tests.cli_helpers import run_cli
from tests.skills.tiny_training import TINY


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def _cfg(tmp_path, **changes) -> Path:
    cfg = copy.deepcopy(TINY)
    for dotted, value in changes.items():
        d = cfg
        *head, last = dotted.split("__")
        for k in head:
            d = d[k]
        d[last] = value
    p = tmp_path / "cfg.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_shipped_configs_are_valid():
    for skill in ("pick", "place", "push", "home"):
        load_config(skill)


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"net_arch": [1e9]}, "net_arch"),
        ({"net_arch": [100000]}, "net_arch"),
        ({"net_arch": []}, "net_arch"),
        ({"timesteps": -5}, "timesteps"),
        ({"timesteps": "4e4"}, "timesteps"),
        ({"dagger__lr": -1.0}, "dagger.lr"),
        ({"dagger__expert_episodes": 0}, "dagger.expert_episodes"),
        ({"ppo__gamma": 2.0}, "ppo.gamma"),
        ({"ppo__batch_size": "big"}, "ppo.batch_size"),
        ({"ppo__n_steps": None}, "ppo.n_steps"),
        ({"eval__freq": 0}, "eval.freq"),
        ({"sac__buffer_size": 10**12}, "sac.buffer_size"),
        ({"ppo__typo_key": 1}, "typo_key"),
        ({"dagger": "lots"}, "dagger"),
    ],
)
def test_bad_config_values_are_one_line_and_make_no_folder(
    change, needle, tmp_path, monkeypatch, capsys
):
    cfg = _cfg(tmp_path, **change)
    logs = tmp_path / "logs"
    code, out, err = run_cli(monkeypatch, capsys, "train", "home", "-c", str(cfg), "-f", str(logs))
    assert code == 2
    assert needle in _one_line(err)
    assert not logs.exists() or not any(logs.rglob("home_*"))


@pytest.mark.parametrize("what", ["file", "fifo"])
def test_config_that_is_not_a_regular_file(what, tmp_path, monkeypatch, capsys):
    p = tmp_path / "cfg.yaml"
    if what == "fifo":
        os.mkfifo(p)
    else:
        p.write_text("[" * 5000)
    code, out, err = run_cli(
        monkeypatch, capsys, "train", "home", "-c", str(p), "-f", str(tmp_path / "logs")
    )
    assert code == 2
    _one_line(err)


def test_log_folder_that_is_a_file(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "logs"
    blocker.write_text("x")
    code, out, err = run_cli(
        monkeypatch, capsys, "train", "home", "-c", str(_cfg(tmp_path)), "-f", str(blocker)
    )
    assert code == 2 and "not writable" in _one_line(err)
    assert blocker.read_text() == "x"


def test_failed_setup_leaves_no_folder_and_resume_ignores_half_made_ones(tmp_path, monkeypatch):
    import skills.train as T

    logs = tmp_path / "logs"
    monkeypatch.setattr(T, "versions", lambda: (_ for _ in ()).throw(OSError(28, "No space")))
    with pytest.raises(TrainError, match="No space"):
        train("home", config=_cfg(tmp_path), logdir=logs, n_envs=1)
    assert list((logs / "ppo").iterdir()) == []
    (logs / "ppo" / "home_7").mkdir()  # half-made by an older version: no args.yml
    assert latest_run_dir(logs, "ppo", "home") is None
    with pytest.raises(TrainError, match="nothing to resume"):
        train("home", config=_cfg(tmp_path), logdir=logs, n_envs=1, resume=True)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train")
    cfg = tmp / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    run = train("home", config=cfg, logdir=tmp / "logs", n_envs=1, seed=1)
    return cfg, tmp / "logs", run


@pytest.mark.parametrize(
    "damage",
    [
        ("checkpoint/policy.safetensors", b"garbage"),
        ("checkpoint/optimizers.pt", b"garbage"),
        ("checkpoint/progress.json", b"{not json"),
        ("checkpoint/progress.json", b'{"timesteps": "many", "num_timesteps": 1}'),
        ("checkpoint/progress.json", b"[]"),
        ("evaluations.json", b"{oops"),
        ("bc/manifest.json", b"{}"),
    ],
)
def test_damaged_resume_checkpoint_is_one_line(tiny_run, damage, tmp_path, monkeypatch, capsys):
    import shutil

    cfg, logs, run = tiny_run
    mine = tmp_path / "logs"
    shutil.copytree(logs, mine)
    rel, data = damage
    (mine / "ppo" / run.name / rel).write_bytes(data)
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "train",
        "home",
        "-c",
        str(cfg),
        "-f",
        str(mine),
        "--resume",
        "-n",
        "128",
    )
    assert code == 2, err
    assert "resume" in _one_line(err)


def test_fifo_in_a_checkpoint_does_not_hang(tiny_run, tmp_path, monkeypatch, capsys):
    import shutil

    cfg, logs, run = tiny_run
    mine = tmp_path / "logs"
    shutil.copytree(logs, mine)
    f = mine / "ppo" / run.name / "checkpoint" / "optimizers.pt"
    f.unlink()
    os.mkfifo(f)
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "train",
        "home",
        "-c",
        str(cfg),
        "-f",
        str(mine),
        "--resume",
        "-n",
        "128",
    )
    assert code == 2 and "FIFO" in _one_line(err)


def test_too_many_envs(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "train",
        "home",
        "-c",
        str(_cfg(tmp_path)),
        "-f",
        str(tmp_path / "logs"),
        "--n-envs",
        "100000",
    )
    assert code == 2 and "--n-envs" in _one_line(err)


@pytest.mark.parametrize(
    ("init", "needle"),
    [
        ("missing", "is not a policy folder"),
        ("skills/pretrained/place", "policy is for skill 'place', not 'home'"),
    ],
)
def test_bad_init_is_one_line_and_makes_no_folder(init, needle, tmp_path, monkeypatch, capsys):
    src = str(tmp_path / init) if init == "missing" else init
    logs = tmp_path / "logs"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "train",
        "home",
        "--init",
        src,
        "-c",
        str(_cfg(tmp_path)),
        "-f",
        str(logs),
    )
    assert code == 2 and needle in _one_line(err)
    assert not logs.exists() or not any(logs.rglob("home_*"))
