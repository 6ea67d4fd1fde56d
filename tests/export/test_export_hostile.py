"""``skillbridge export`` against hostile inputs and interruptions: ``--force`` replaces only
what the export wrote; forged meta.json values and states are one line (exit 2), never a
traceback or a non-JSON stats.json; Ctrl-C is one line (exit 130) with nothing left
half-written; a ``kill -9``'s hidden temporary folder is removed by the next export; and
``replay --verify`` reports a NaN difference as NaN, not 0."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.cli_helpers import run_cli

pytest.importorskip("pyarrow")


def _episode_dirs(runs: Path) -> list[Path]:
    return sorted(p for p in runs.iterdir() if p.is_dir() and (p / "meta.json").exists())


def _edit_meta(ep: Path, **fields) -> None:
    meta = json.loads((ep / "meta.json").read_text())
    meta.update(fields)
    (ep / "meta.json").write_text(json.dumps(meta))


def _forge_state(ep: Path, step: int, column: int, value: float) -> None:
    """Write ``value`` into the recorded state ``step``, re-signing the chunk in meta.json
    (what a forger does: the sha256 only catches accidents)."""
    from sim import util

    meta = json.loads((ep / "meta.json").read_text())
    chunk = meta["chunks"][0]
    with np.load(ep / chunk["file"], allow_pickle=False) as z:
        arrays = {k: z[k].copy() for k in z.files}
    arrays["state"][step, column] = value
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    (ep / chunk["file"]).write_bytes(buf.getvalue())
    chunk["sha256"] = util.sha256_bytes(buf.getvalue())
    (ep / "meta.json").write_text(json.dumps(meta))


def _one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _export(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    return run_cli(monkeypatch, capsys, "export", *args)


# ----------------------------------------------------------------------------- --force
def test_force_keeps_what_the_export_did_not_write(runs_dir, tmp_path, monkeypatch, capsys):
    """An earlier dataset in ``ds`` with the user's notes and the episodes themselves inside:
    ``--force`` replaced the whole folder (notes and episodes gone)."""
    ds = tmp_path / "ds"
    code, _, err = _export(monkeypatch, capsys, str(runs_dir), "--out", str(ds), "--no-video")
    assert code == 0, err
    (ds / "notes.txt").write_text("mine")
    shutil.copytree(runs_dir, ds / "runs")
    code, so, err = _export(
        monkeypatch, capsys, str(ds / "runs"), "--out", str(ds), "--no-video", "--force", "--json"
    )
    assert code == 0, err
    assert json.loads(so)["episodes"] == 2
    assert (ds / "notes.txt").read_text() == "mine"
    from skillbridge.episodes.episode import load

    assert [load(p).n_steps for p in _episode_dirs(ds / "runs")] == [
        load(p).n_steps for p in _episode_dirs(runs_dir)
    ]
    assert json.loads((ds / "meta/info.json").read_text())["total_episodes"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no temporary folder left


def test_force_refuses_a_user_file_inside_the_dataset(runs_dir, tmp_path, monkeypatch, capsys):
    ds = tmp_path / "ds"
    code, _, err = _export(monkeypatch, capsys, str(runs_dir), "--out", str(ds), "--no-video")
    assert code == 0, err
    (ds / "meta" / "mine.txt").write_text("keep")
    code, _, err = _export(
        monkeypatch, capsys, str(runs_dir), "--out", str(ds), "--no-video", "--force"
    )
    assert code == 2 and "meta/mine.txt" in _one_line(err)
    assert (ds / "meta" / "mine.txt").read_text() == "keep"
    assert (ds / "meta" / "info.json").is_file()  # the earlier export is untouched


def test_minari_force_keeps_other_datasets_and_files(runs_dir, tmp_path, monkeypatch, capsys):
    minari = pytest.importorskip("minari")
    root, other = tmp_path / "root", tmp_path / "other"
    args = ["--format", "minari"]
    code, _, err = _export(monkeypatch, capsys, str(runs_dir), "--out", str(root), *args)
    assert code == 0, err
    code, _, err = _export(
        monkeypatch, capsys, str(runs_dir), "--out", str(other), *args, "--dataset-id", "mine/b-v0"
    )
    assert code == 0, err
    (other / "mine").rename(root / "mine")  # another dataset in the same datasets root
    (root / "readme.txt").write_text("mine")
    shutil.copytree(runs_dir, root / "runs")
    first = _episode_dirs(root / "runs")[0]
    code, _, err = _export(monkeypatch, capsys, str(first), "--out", str(root), *args, "--force")
    assert code == 0, err
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    assert minari.load_dataset("skillbridge/tabletop-v0").total_episodes == 1  # replaced
    assert minari.load_dataset("mine/b-v0").total_episodes == 2  # kept
    assert (root / "readme.txt").read_text() == "mine"
    assert len(_episode_dirs(root / "runs")) == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_minari_force_refuses_a_user_file_inside_the_dataset(
    runs_dir, tmp_path, monkeypatch, capsys
):
    pytest.importorskip("minari")
    root = tmp_path / "root"
    args = [str(runs_dir), "--out", str(root), "--format", "minari"]
    code, _, err = _export(monkeypatch, capsys, *args)
    assert code == 0, err
    mine = root / "skillbridge" / "tabletop-v0" / "notes.txt"
    mine.write_text("keep")
    code, _, err = _export(monkeypatch, capsys, *args, "--force")
    assert code == 2 and "notes.txt" in _one_line(err)
    assert mine.read_text() == "keep"


# ----------------------------------------------------------------------------- forged input
FORGED = {
    "control_dt_null": dict(control_dt=None),
    "control_dt_tiny": dict(control_dt=1e-300),
    "seed_huge": dict(seed=10**30),
    "cubes_bad": dict(scene={"cubes": {"nope": None}, "env": "TabletopEnv"}),
}


@pytest.mark.parametrize("fmt", ["lerobot", "minari"])
@pytest.mark.parametrize("case", [*FORGED, "nan_state", "huge_state"])
def test_forged_episodes_are_one_line(case, fmt, runs_copy, tmp_path, monkeypatch, capsys):
    if fmt == "minari":
        pytest.importorskip("minari")
    ep = _episode_dirs(runs_copy)[0]
    if case in FORGED:
        _edit_meta(ep, **FORGED[case])
    elif case == "nan_state":
        _forge_state(ep, 3, 0, float("nan"))
    else:  # finite, but past MuJoCo's limit; the statistics would overflow to Infinity
        for k in range(1, 6):
            _forge_state(ep, k, 1, 1.7e308)
    out = tmp_path / "ds"
    code, so, err = _export(
        monkeypatch, capsys, str(runs_copy), "--out", str(out), "--format", fmt, "--no-video"
    )
    if fmt == "minari" and case.startswith("control_dt"):
        assert code == 0, err  # Minari has no frame rate: the period is not used
        return
    if fmt == "lerobot" and case == "cubes_bad":
        assert code == 0, err  # LeRobot's columns do not depend on the reset options
        return
    assert code == 2, (so, err)
    line = _one_line(err)
    assert ep.name in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]  # nothing written


def test_replay_verify_reports_a_nan_difference(runs_copy, monkeypatch, capsys):
    """A NaN in a recorded state was reported as ``max |diff| 0``: nanmax skipped it."""
    ep = _episode_dirs(runs_copy)[0]
    _forge_state(ep, 5, 0, float("nan"))
    code, so, err = run_cli(monkeypatch, capsys, "replay", str(ep), "--verify", "--json")
    assert code == 1, err
    v = json.loads(so)["verify"]  # still JSON: no bare NaN
    assert v["first_mismatch"] == 5 and v["max_abs_diff"] is None
    assert "max |diff| nan" in v["message"]


# ----------------------------------------------------------------------------- interruptions
@pytest.mark.parametrize("fmt", ["lerobot", "minari"])
def test_ctrl_c_is_one_line_and_leaves_nothing(fmt, runs_dir, tmp_path, monkeypatch, capsys):
    """Ctrl-C while the export writes: typer printed a bare newline (exit 130)."""
    from skillbridge.episodes import lerobot_export as lx

    if fmt == "minari":
        minari = pytest.importorskip("minari")

        def interrupt(*a, **k):
            raise KeyboardInterrupt

        monkeypatch.setattr(minari, "create_dataset_from_buffers", interrupt)
        extra = ["--format", "minari"]
    else:
        real = lx._VideoStream.append
        count = {"n": 0}

        def append(self, frame):
            count["n"] += 1
            if count["n"] == 5:
                raise KeyboardInterrupt
            real(self, frame)

        monkeypatch.setattr(lx._VideoStream, "append", append)
        extra = ["--size", "64x48", "--camera", "front"]
    out = tmp_path / "ds"
    code, so, err = _export(monkeypatch, capsys, str(runs_dir), "--out", str(out), *extra)
    assert code == 130 and "interrupted" in _one_line(err), err
    assert list(tmp_path.iterdir()) == []  # no dataset, no hidden temporary folder


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("fmt", ["lerobot", "minari"])
def test_a_killed_exports_temp_folder_is_removed_later(
    fmt, runs_dir, tmp_path, monkeypatch, capsys
):
    if fmt == "minari":
        pytest.importorskip("minari")
    stale = tmp_path / f".ds.tmp{_dead_pid()}"  # what kill -9 leaves
    (stale / "data").mkdir(parents=True)
    (stale / "data" / "part.parquet").write_bytes(b"x" * 1000)
    live = tmp_path / f".ds.tmp{1}"  # pid 1 is alive: an export still running
    live.mkdir()
    code, _, err = _export(
        monkeypatch,
        capsys,
        str(runs_dir),
        "--out",
        str(tmp_path / "ds"),
        "--format",
        fmt,
        "--no-video",
    )
    assert code == 0, err
    assert not stale.exists() and live.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ds.tmp1", "ds"]
