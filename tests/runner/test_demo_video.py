"""``demo --video`` (issue 10 D): a folder, a device, a non-video file or a read-only disk is
one line with exit 2, before any simulation runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_demo_video_to_a_folder(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "demo", "-n", "1", "--video", str(tmp_path))
    assert code == 2 and "folder" in _one_line(err)


def test_demo_video_to_a_device(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "demo", "-n", "1", "--video", "/dev/full")
    assert code == 2 and "device" in _one_line(err)
    assert Path("/dev/full").is_char_device()


def test_demo_video_over_a_non_video(tmp_path, monkeypatch, capsys):
    f = tmp_path / "notes.mp4"
    f.write_text("notes")
    code, out, err = run_cli(monkeypatch, capsys, "demo", "-n", "1", "--video", str(f))
    assert code == 2 and "not a video" in _one_line(err)
    assert f.read_text() == "notes"


def test_demo_video_under_a_file(tmp_path, monkeypatch, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    code, out, err = run_cli(monkeypatch, capsys, "demo", "-n", "1", "--video", str(f / "d.mp4"))
    assert code == 2
    _one_line(err)


def test_demo_video_on_a_read_only_disk(tmp_path, monkeypatch, capsys):
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if (
        sys.platform != "linux"
        or os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mnt)], capture_output=True
        ).returncode
    ):
        mnt.chmod(0o500)  # without root a read-only folder stands in for the disk
        if os.geteuid() == 0:
            pytest.skip("root without mount: no read-only place to write to")
    try:
        for target in (mnt / "d.mp4", mnt / "sub" / "d.mp4"):
            code, out, err = run_cli(monkeypatch, capsys, "demo", "-n", "1", "--video", str(target))
            assert code == 2
            assert "Read-only" in _one_line(err) or "ermission" in err
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        mnt.chmod(0o700)


def test_demo_episode_count_is_bounded(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "demo", "-n", "100000", "--video", str(tmp_path / "d.mp4")
    )
    assert code == 2 and "n-episodes" in _one_line(err)
