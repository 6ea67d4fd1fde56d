"""Videos never replace what is not a video and are never reported written when broken
(issue 10 B), and playback speed is bounded (issue 10 D)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.video import VideoError, VideoWriter, check_mp4
from skillbridge.episodes import replay
from tests.cli_helpers import run_cli
from tests.runner.common import TASK


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "name",
    [
        "meta.json",
        "trace.jsonl",
        "states-000000.npz",
        "initial.npz",
        "final.npz",
        "events.log.jsonl",
    ],
)
def test_replay_never_writes_a_video_over_the_episode(episode_copy, monkeypatch, capsys, name):
    before = (episode_copy / name).read_bytes()
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "replay",
        str(episode_copy),
        "--video",
        str(episode_copy / name),
        "--no-timeline",
    )
    assert code == 2 and "episode" in _one_line(err)
    assert (episode_copy / name).read_bytes() == before


def test_no_video_over_a_device(recorded, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "replay", str(recorded[1]), "--video", "/dev/full", "--no-timeline"
    )
    assert code == 2 and "device" in _one_line(err)
    assert Path("/dev/full").is_char_device()


def test_run_refuses_a_device_before_running(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--video",
        "/dev/full",
        "--out",
        str(tmp_path / "runs"),
        "--policy-source",
        "scripted",
    )
    assert code == 2 and "device" in _one_line(err)
    assert Path("/dev/full").is_char_device()
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_no_video_over_a_non_video_file(recorded, tmp_path, monkeypatch, capsys):
    notes = tmp_path / "notes.mp4"
    notes.write_text("my notes")
    code, out, err = run_cli(
        monkeypatch, capsys, "replay", str(recorded[1]), "--video", str(notes), "--no-timeline"
    )
    assert code == 2 and "not a video" in _one_line(err)
    assert notes.read_text() == "my notes"


def test_no_video_over_a_symlink(recorded, tmp_path, monkeypatch, capsys):
    target = tmp_path / "precious"
    target.write_text("x")
    link = tmp_path / "v.mp4"
    os.symlink(target, link)
    code, out, err = run_cli(
        monkeypatch, capsys, "replay", str(recorded[1]), "--video", str(link), "--no-timeline"
    )
    assert code == 2 and "symbolic link" in _one_line(err)
    assert target.read_text() == "x" and link.is_symlink()


def test_an_older_video_may_be_replaced(recorded, tmp_path, monkeypatch, capsys):
    v = tmp_path / "v.mp4"
    for _ in range(2):
        code, out, err = run_cli(
            monkeypatch,
            capsys,
            "replay",
            str(recorded[1]),
            "--video",
            str(v),
            "--no-timeline",
            "--speed",
            "4",
        )
        assert code == 0, err
    check_mp4(v)


def test_a_truncated_video_is_an_error_not_a_success(recorded, tmp_path, monkeypatch, capsys):
    """What a full disk does to ffmpeg's output: the file is cut short and imageio does not
    notice. The writer checks the file and reports one line; nothing is left behind."""
    orig_close = VideoWriter.close

    def truncating_close(self):
        inner = self._writer.close

        def close_then_truncate():
            inner()
            with open(self._tmp, "r+b") as f:
                f.truncate(max(0, os.path.getsize(self._tmp) // 2))

        self._writer.close = close_then_truncate
        return orig_close(self)

    monkeypatch.setattr(VideoWriter, "close", truncating_close)
    v = tmp_path / "v.mp4"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "replay",
        str(recorded[1]),
        "--video",
        str(v),
        "--no-timeline",
        "--speed",
        "4",
    )
    assert code == 2 and "incomplete" in _one_line(err)
    assert list(tmp_path.iterdir()) == []


def _can_mount_tmpfs(where: Path) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(where)], capture_output=True
    )
    return r.returncode == 0


def test_a_full_disk_is_an_error_not_a_success(recorded, tmp_path, monkeypatch, capsys):
    """A real full disk (a 24 KiB tmpfs), where the system allows mounting one."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not _can_mount_tmpfs(mnt):
        pytest.skip("cannot mount a small tmpfs here (needs root on Linux)")
    try:
        code, out, err = run_cli(
            monkeypatch,
            capsys,
            "replay",
            str(recorded[1]),
            "--video",
            str(mnt / "v.mp4"),
            "--no-timeline",
            "--speed",
            "0.5",
        )
        assert code == 2, err
        line = _one_line(err)
        assert "video" in line
        assert list(mnt.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("speed", ["inf", "nan", "1e-300", "1e-12", "0.001", "0", "-1", "1e9"])
def test_replay_speed_is_bounded(recorded, tmp_path, monkeypatch, capsys, speed):
    v = tmp_path / "v.mp4"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "replay",
        str(recorded[1]),
        "--video",
        str(v),
        "--speed",
        speed,
        "--no-timeline",
    )
    assert code == 2 and "--speed" in _one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_frame_count_is_capped(recorded):
    with pytest.raises(replay.EpisodeError, match="frames"):
        replay.frame_indices(10_000_000, 1.0)


def test_video_to_a_folder_that_cannot_be_created(recorded, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(VideoError, match="cannot create|Not a directory"):
        VideoWriter(blocker / "sub" / "v.mp4")
