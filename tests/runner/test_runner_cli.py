"""The `run` and `replay` verbs as a user meets them (in-process, real entry point)."""

from __future__ import annotations

import pytest

from skillbridge.episodes import episode as E
from tests.cli_helpers import run_cli
from tests.runner.common import TASK


def test_run_prints_progress_and_summary(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "run", TASK, "--out", str(tmp_path), "--policy-source", "scripted"
    )
    assert code == 0, err
    for needle in (
        "plan 1 accepted by rules",
        "pick(object=red_block)",
        "success",
        "real time",
        "episode:",
        "skillbridge replay",
    ):
        assert needle in out, needle
    (ep,) = tmp_path.iterdir()
    assert E.load(ep).complete


def test_run_rejects_a_stray_argument(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "run", "put", "the red block", "--out", str(tmp_path)
    )
    assert code == 2 and "quote the task" in err
    assert not any(tmp_path.iterdir())


def test_bad_log_level(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "run", TASK, "--log-level", "loud", "--out", str(tmp_path)
    )
    assert code == 2 and "--log-level" in err


def test_replay_video_with_speed(recorded, tmp_path, monkeypatch, capsys):
    import imageio.v2 as imageio

    out = tmp_path / "fast.mp4"
    code, o, err = run_cli(
        monkeypatch,
        capsys,
        "replay",
        str(recorded[1]),
        "--video",
        str(out),
        "--speed",
        "8",
        "--no-timeline",
    )
    assert code == 0, err
    n_states = recorded[0].steps + 1
    expected = -(-n_states // 8)
    with imageio.get_reader(out) as rd:
        assert sum(1 for _ in rd) == expected
    assert f"({expected} frames)" in o


def test_replay_bad_speed(recorded, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(recorded[1]), "--speed", "0")
    assert code == 2 and "--speed" in err


@pytest.mark.slow
def test_run_with_video_in_episode_folder(tmp_path, monkeypatch, capsys):
    """`skillbridge run TASK --video` as `make run` calls it: full-size, every frame."""
    import imageio.v2 as imageio

    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--video",
        "--out",
        str(tmp_path),
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    (ep,) = tmp_path.iterdir()
    e = E.load(ep)
    with imageio.get_reader(ep / "video.mp4") as rd:
        frames = [f for f in rd]
    assert len(frames) == e.n_steps + 1 and frames[0].shape == (360, 480, 3)


@pytest.mark.slow
def test_run_with_video_path(tmp_path, monkeypatch, capsys):
    out = tmp_path / "clips" / "task.mp4"
    code, o, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--video",
        str(out),
        "--out",
        str(tmp_path / "runs"),
        "--policy-source",
        "scripted",
        "--json",
    )
    assert code == 0, err
    assert out.is_file() and out.stat().st_size > 0


def test_default_policies_are_the_pretrained_ones(tmp_path, monkeypatch, capsys):
    """Without --policy-source the shipped policies run; missing ones are one line, exit 2."""
    from skills.policy import pretrained_dir
    from skills.registry import names

    if all((pretrained_dir(n) / "manifest.json").is_file() for n in names()):
        pytest.skip("pretrained policies are installed; covered by the end-to-end runs")
    code, out, err = run_cli(monkeypatch, capsys, "run", TASK, "--out", str(tmp_path / "runs"))
    assert code == 2 and "pretrained policy" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
