"""A full disk mid-run and a closed stdout pipe (issue 10 D): one line, and the episode stays
readable; a reader that goes away (``| head -1``) does not stop the run."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim import util as U
from skillbridge.episodes import episode as E
from tests.cli_helpers import run_cli
from tests.runner.common import TASK

REPO = Path(__file__).resolve().parents[2]
TWO_STEP = "put the red block in the green bin, then stack the blue block on the yellow block"


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("fail_after", [1, 3])
def test_disk_full_mid_run_is_one_line_and_leaves_an_incomplete_episode(
    tmp_path, monkeypatch, capsys, fail_after
):
    """Every write after the first ``fail_after`` chunk/meta writes fails with ENOSPC, as on a
    disk that just filled up (the episode folder itself was created fine)."""
    real = U.atomic_write_bytes
    created = {"done": False, "n": 0}
    orig_create = E.EpisodeWriter.create.__func__

    def create(cls, *a, **k):
        w = orig_create(cls, *a, **k)
        created["done"] = True
        return w

    def full(path, data, fsync=False):
        if created["done"]:
            created["n"] += 1
            if created["n"] > fail_after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, data, fsync)

    monkeypatch.setattr(E.EpisodeWriter, "create", classmethod(create))
    monkeypatch.setattr(U, "atomic_write_bytes", full)
    code, out, err = run_cli(
        monkeypatch, capsys, "run", TWO_STEP, "--out", str(tmp_path), "--policy-source", "scripted"
    )
    assert code == 1
    line = _one_line(err)
    assert "No space left on device" in line and "incomplete" in line
    ep = E.load(next(tmp_path.iterdir()))
    assert not ep.complete


def _can_mount_tmpfs(where: Path, size: str) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return r.returncode == 0


def test_a_real_full_disk_mid_run(tmp_path, monkeypatch, capsys):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not _can_mount_tmpfs(mnt, "64k"):
        pytest.skip("cannot mount a small tmpfs here (needs root on Linux)")
    try:
        code, out, err = run_cli(
            monkeypatch, capsys, "run", TWO_STEP, "--out", str(mnt), "--policy-source", "scripted"
        )
        assert code in (1, 2), err
        _one_line(err)
        eps = [p for p in mnt.iterdir() if not p.name.startswith(".")]
        if eps:  # the folder could be created: it is readable and incomplete
            assert not E.load(eps[0]).complete
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_a_closed_stdout_pipe_does_not_stop_the_run(tmp_path):
    """``skillbridge run ... | head -1``: the reader leaves after one line."""
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    p = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from skillbridge.cli import run; run()",
            "run",
            TWO_STEP,
            "--out",
            str(tmp_path),
            "--policy-source",
            "scripted",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    first = p.stdout.readline()
    p.stdout.close()  # like head -1
    _, err = p.communicate(timeout=300)
    assert b"task" in first
    assert p.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err
    ep = E.load(next(tmp_path.iterdir()))
    assert ep.complete and ep.n_steps > 0
    assert ep.meta["result"]["status"] == "success"


def test_a_closed_stdout_pipe_with_json_output(tmp_path):
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    p = subprocess.Popen(
        [sys.executable, "-c", "from skillbridge.cli import run; run()", "plan", TASK, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    p.stdout.close()
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err
