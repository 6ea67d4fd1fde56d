"""``replay --rerun`` and ``view``: episodes logged with rerun-sdk, saved to .rrd files that
Rerun's own reader (and its ``rerun rrd verify``) read back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

rr = pytest.importorskip("rerun")


def _ids(episodes):
    return {json.loads((p / "meta.json").read_text())["trace_id"]: p for p in episodes}


def test_replay_rerun_saves_an_rrd_that_reads_back(episodes, tmp_path, monkeypatch, capsys):
    from skillbridge.episodes import viewer
    from skillbridge.episodes.episode import load

    ep_path = episodes[1]  # the shorter one
    ep = load(ep_path)
    rrd = tmp_path / "ep.rrd"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "replay",
        str(ep_path),
        "--rerun",
        "--save",
        str(rrd),
        "--no-timeline",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["rerun"]["rrd"] == str(rrd)
    back = viewer.read_back(rrd)
    assert list(back) == [ep.meta["trace_id"]]
    rows = back[ep.meta["trace_id"]]
    n = len(ep.all_states())
    for cam in ("front", "wrist"):
        assert rows[f"/cameras/{cam}"] == n
    for link in ("link1", "hand", "finger_left"):
        assert rows[f"/world/arm/{link}"] == n
    assert rows["/world/cubes/blue_block"] == n + 1  # the static box, then a pose per step
    assert rows["/plan/subgoal_index"] == ep.n_steps
    assert rows["/planner/raw"] >= 1 and rows["/bridge/decisions"] >= 1
    assert rows["/plan/subgoals"] == sum(r["kind"] == "subgoal_start" for r in ep.trace)
    goal = [k for k in rows if k.startswith("/goal/")]
    assert goal and all(rows[k] == n for k in goal)
    assert any(k.startswith("/world_state/on_table") for k in rows)
    assert [p.name for p in tmp_path.iterdir()] == ["ep.rrd"]  # no temporary file left
    cli = Path(sys.executable).parent / "rerun"
    if cli.exists():
        p = subprocess.run(
            [str(cli), "rrd", "verify", str(rrd)], capture_output=True, text=True, timeout=120
        )
        assert p.returncode == 0, p.stderr[-2000:]


def test_view_saves_one_recording_per_episode(runs_dir, episodes, tmp_path, monkeypatch, capsys):
    from skillbridge.episodes import viewer

    rrd = tmp_path / "all.rrd"
    code, out, err = run_cli(
        monkeypatch, capsys, "view", str(runs_dir), "--save", str(rrd), "--no-images", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["recordings"] == 2
    back = viewer.read_back(rrd)
    assert set(back) == set(_ids(episodes))
    for rows in back.values():
        assert not any(k.startswith("/cameras") for k in rows)
        assert rows["/world/arm/link1"] > 10 and "/planner/calls" in rows
    # a second run replaces the earlier recording
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "view",
        str(runs_dir / episodes[0].name),
        "--save",
        str(rrd),
        "--no-images",
    )
    assert code == 0, err
    assert len(viewer.read_back(rrd)) == 1


@pytest.mark.parametrize(
    "case",
    [
        "save_without_rerun",
        "not_rrd_name",
        "replaces_other_file",
        "missing_folder",
        "no_display",
        "tampered",
        "camera",
        "view_not_episode",
    ],
)
def test_bad_rerun_input_is_one_line(case, runs_copy, tmp_path, monkeypatch, capsys):
    eps = sorted(p for p in runs_copy.iterdir() if p.is_dir())
    target = tmp_path / "x.rrd"
    args = ["replay", str(eps[1]), "--rerun", "--save", str(target), "--no-timeline"]
    if case == "save_without_rerun":
        args.remove("--rerun")
    elif case == "not_rrd_name":
        args[-2] = str(tmp_path / "x.txt")
    elif case == "replaces_other_file":
        target.write_text("my notes")
    elif case == "missing_folder":
        args[-2] = str(tmp_path / "nope" / "x.rrd")
    elif case == "no_display":
        monkeypatch.delenv("DISPLAY", raising=False)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        monkeypatch.setattr(sys, "platform", "linux")
        args = ["replay", str(eps[1]), "--rerun", "--no-timeline"]
    elif case == "tampered":
        (eps[1] / "meta.json").write_text("{not json")
    elif case == "camera":
        args = ["view", str(eps[1]), "--save", str(target), "--camera", "ceiling"]
    elif case == "view_not_episode":
        (tmp_path / "empty").mkdir()
        args = ["view", str(tmp_path / "empty"), "--save", str(target)]
    before = {p.name: p.stat().st_size for p in tmp_path.iterdir()}
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    if case == "replaces_other_file":
        assert target.read_text() == "my notes"
    if case == "view_not_episode":
        before.pop("empty")
        (tmp_path / "empty").rmdir()
    assert {p.name: p.stat().st_size for p in tmp_path.iterdir()} == before
