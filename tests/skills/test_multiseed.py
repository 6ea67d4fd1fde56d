"""``skillbridge train SKILL --seeds ...`` (issue 16): several seeds trained in parallel, the
mean and spread of their final success, a failed seed reported without losing the others."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

import pytest
import yaml

from skillbridge import multiseed
from skillbridge.cli.train import rewrite_train_args
from tests.cli_helpers import run_cli
from tests.skills import tiny_training

#: The training tests' tiny config, PPO only, with a shorter run: each seed trains in seconds.
TINY = {
    **{k: v for k, v in tiny_training.TINY.items() if k != "sac"},
    "timesteps": 64,
    "eval": {"episodes": 2, "freq": 64},
}


@pytest.fixture
def cfg(tmp_path) -> Path:
    p = tmp_path / "tiny.yaml"
    p.write_text(yaml.safe_dump(TINY))
    return p


def _train(tmp_path, cfg, *extra):
    return ["train", "home", "-c", str(cfg), "-f", str(tmp_path / "logs"), "--n-envs", "1", *extra]


def blocked_or_dying(skill, seed, logdir, **kw):
    """A stand-in training function (run in the worker process): seed 7's log folder is
    blocked by a file (the real unwritable-folder error), seed 8's worker is killed, the
    others train normally."""
    from skills.train import train

    if seed == 7:
        logdir = Path(logdir) / "blocked"
    if seed == 8:
        os._exit(9)  # what kill -9 or the OOM killer does
    return train(skill, seed=seed, logdir=logdir, **kw)


def test_two_seeds_in_parallel_report_mean_and_spread(tmp_path, cfg, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, *_train(tmp_path, cfg, "--seeds", "0", "1"))
    assert code == 0, err
    summary = json.loads((tmp_path / "logs" / "seeds_summary.json").read_text())
    runs = summary["runs"]
    assert [r["seed"] for r in runs] == [0, 1] and summary["failed"] == []
    rates = [r["success_rate"] for r in runs]
    assert summary["final_success"]["mean"] == pytest.approx(statistics.fmean(rates))
    assert summary["final_success"]["std"] == pytest.approx(statistics.stdev(rates))
    assert summary["final_success"]["min"] == min(rates)
    assert summary["final_success"]["max"] == max(rates)
    folders = {r["run"] for r in runs}
    assert len(folders) == 2  # one run folder per seed
    for r in runs:
        run = Path(r["run"])
        assert r["episodes"] == 2 and r["timesteps"] == 64 and r["wall_s"] > 0
        assert yaml.safe_load((run / "args.yml").read_text())["seed"] == r["seed"]
        assert (run / "best" / "manifest.json").is_file()
        # the run records the single-seed command that reproduces it
        command = (run / "command.txt").read_text()
        assert command.rstrip().endswith(f"--seed {r['seed']}") and "--seeds" not in command
    assert "final evaluation success over seeds" in out and "mean" in out


def test_failed_seeds_are_reported_and_exit_1(tmp_path, cfg, monkeypatch, capsys):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "blocked").write_text("a file where seed 7's log folder would be")
    monkeypatch.setattr(multiseed, "TRAIN_FN", f"{__name__}:blocked_or_dying")
    args = _train(tmp_path, cfg, "--seeds", "7", "2", "8", "--n-jobs", "2", "--json")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 1, err
    summary = json.loads(out)  # stdout is the JSON only
    assert summary == {
        **json.loads((tmp_path / "logs" / "seeds_summary.json").read_text()),
        "summary_file": str(tmp_path / "logs" / "seeds_summary.json"),
    }
    by_seed = {r["seed"]: r for r in summary["runs"]}
    assert summary["failed"] == [7, 8]
    assert by_seed[7]["status"] == "failed" and "is not writable" in by_seed[7]["error"]
    assert by_seed[8]["error"] == "worker process died (exit 9)"
    assert by_seed[2]["status"] == "ok" and Path(by_seed[2]["run"]).is_dir()
    assert summary["final_success"]["n"] == 1
    assert summary["final_success"]["mean"] == by_seed[2]["success_rate"]
    assert summary["final_success"]["std"] is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seed", "1", "--seeds", "0", "2"], "--seed and --seeds exclude each other"),
        (["--seeds", "0", "-3"], "--seeds must be between 0 and 4294967295, not -3"),
        (["--seeds", "0", "0"], "seed 0 is given twice"),
        (["--seeds", "0", "1", "--install"], "which seed's policy would be installed"),
        (["--seeds", "0", "1", "--resume"], "--resume continues one run"),
        (["--ray"], "--ray only goes with --seeds"),
        (["--n-jobs", "2"], "--n-jobs only goes with --seeds"),
        (["--seeds", "0", "--ray", "nohost"], "give HOST:PORT"),
    ],
)
def test_bad_seed_options_exit_2(tmp_path, cfg, monkeypatch, capsys, extra, message):
    code, out, err = run_cli(monkeypatch, capsys, *_train(tmp_path, cfg, *extra))
    assert code == 2 and message in err and out == ""
    assert not (tmp_path / "logs").exists()  # refused before any work


def test_seeds_and_bare_ray_are_rewritten():
    assert rewrite_train_args(["home", "--seeds", "0", "1", "-2", "--json"]) == [
        "home",
        "--seeds=0",
        "--seeds=1",
        "--seeds=-2",
        "--json",
    ]
    assert rewrite_train_args(["--ray", "home", "--seeds", "3"]) == [
        "--ray=local",
        "home",
        "--seeds=3",
    ]
    assert rewrite_train_args(["home", "--ray", "--seeds", "3"])[1] == "--ray=local"
    assert rewrite_train_args(["home", "--seeds", "3", "--ray"])[-1] == "--ray=local"
    assert rewrite_train_args(["home", "--ray", "h:6379"])[1:] == ["--ray", "h:6379"]


def test_seed_command_reproduces_one_seed():
    argv = ["skillbridge", "train", "pick", "--seeds", "0", "1", "--ray", "h:1", "-n", "64"]
    cmd = multiseed.seed_command([*argv, "--n-jobs", "2", "--json"], 1, lambda a: ":" in a)
    assert cmd == ["skillbridge", "train", "pick", "-n", "64", "--seed", "1"]
    bare = multiseed.seed_command(
        ["skillbridge", "train", "--ray", "pick", "--seeds=4"], 4, lambda a: False
    )
    assert bare == ["skillbridge", "train", "pick", "--seed", "4"]


@pytest.mark.slow
def test_two_seeds_as_ray_tasks_on_a_local_cluster(tmp_path, cfg, monkeypatch, capsys):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    args = _train(tmp_path, cfg, "--seeds", "0", "1", "--ray", "--json")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["runner"] == "ray local" and summary["failed"] == []
    assert sorted(r["seed"] for r in summary["runs"]) == [0, 1]
    rates = [r["success_rate"] for r in summary["runs"]]
    assert summary["final_success"]["mean"] == pytest.approx(statistics.fmean(rates))
    assert all(Path(r["run"]).is_dir() for r in summary["runs"])
