"""``replay --rerun`` and ``view``: episodes logged with rerun-sdk into one recording (a
timeline per episode), saved to .rrd files that Rerun's own reader (and its ``rerun rrd
verify``) read back: the robot's geometry, joint and action series, the instruction, pinhole
cameras, a blueprint, in few chunks (issue 23, item 3); a full disk is one line (item 18)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.cli_helpers import run_cli

rr = pytest.importorskip("rerun")


def _ids(episodes):
    return {json.loads((p / "meta.json").read_text())["trace_id"]: p for p in episodes}


def _column(path: Path, entity: str, component: str) -> list:
    """Every value of one component of one entity, in time order, as Rerun reads it."""
    from rerun.chunk import RrdReader

    reader = RrdReader(path)
    values: list = []
    for entry in reader.recordings():
        for chunk in reader.stream(store=entry):
            batch = chunk.to_record_batch()
            if chunk.entity_path == entity and component in batch.schema.names:
                values += batch.column(component).to_pylist()
    return values


def _blueprint(path: Path) -> tuple[set[tuple[str, str]], list]:
    """The blueprint's views as (kind, origin) and the time panel's timeline."""
    from rerun.chunk import RrdReader

    reader = RrdReader(path)
    views, timeline = set(), []
    for entry in reader.blueprints():
        for chunk in reader.stream(store=entry):
            batch = chunk.to_record_batch()
            names = batch.schema.names
            if "ViewBlueprint:class_identifier" in names:
                kinds = batch.column("ViewBlueprint:class_identifier").to_pylist()
                origins = batch.column("ViewBlueprint:space_origin").to_pylist()
                views |= {(k[0], o[0]) for k, o in zip(kinds, origins, strict=True)}
            if "TimePanelBlueprint:timeline" in names:
                timeline += batch.column("TimePanelBlueprint:timeline").to_pylist()
    return views, timeline


def test_replay_rerun_saves_a_compact_rrd_that_reads_back(episodes, tmp_path, monkeypatch, capsys):
    from skillbridge.episodes import viewer
    from skillbridge.episodes.episode import load

    ep_path = episodes[1]  # the shorter one
    ep = load(ep_path)
    rrd = tmp_path / "ep.rrd"
    args = ["replay", str(ep_path), "--rerun", "--save", str(rrd), "--no-timeline", "--json"]
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert json.loads(out)["rerun"]["rrd"] == str(rrd)
    back = viewer.read_back(rrd)
    assert back.recordings == [ep.meta["trace_id"]] and back.blueprints == 1
    tl = ep_path.name  # the episode's own timeline
    n, steps = ep.n_states, ep.n_steps

    def rows(entity, kind):
        return back.count(tl, entity, kind)

    for cam in ("front", "wrist"):
        assert rows(f"/world/cameras/{cam}", "EncodedImage") == n
        assert rows(f"/world/cameras/{cam}", "Pinhole") == 1
    assert rows("/world/cameras/wrist", "Transform3D") == n  # it rides on the hand
    assert rows("/world/cameras/front", "Transform3D") == 1  # fixed: one pose
    for link in ("link1", "hand", "finger_left"):
        assert rows(f"/world/{link}", "Transform3D") == n
    assert rows("/world/table", "Transform3D") == 1
    for link in ("link2", "link3", "link4", "link5"):
        assert rows(f"/world/{link}/Capsules3D", "Capsules3D") == 1
    assert rows("/world/base/Cylinders3D", "Cylinders3D") == 1
    assert rows("/world/blue_block/Boxes3D", "Boxes3D") == 1
    assert rows("/robot/joints", "Scalars") == n and rows("/robot/joints", "SeriesLines") == 1
    assert rows("/robot/actions", "Scalars") == steps
    assert rows("/plan/subgoal_index", "Scalars") == steps
    assert rows("/planner/raw", "TextDocument") >= 1 and rows("/bridge/decisions", "TextLog") >= 1
    assert rows("/plan/subgoals", "TextLog") == sum(r["kind"] == "subgoal_start" for r in ep.trace)
    assert rows("/goal", "Scalars") == n and rows("/world_state", "Scalars") == n
    # the values are the episode's
    actions = np.array(_column(rrd, "/robot/actions", "Scalars:scalars"))
    assert np.array_equal(actions, ep.actions)
    assert _column(rrd, "/instruction", "TextDocument:text") == [[ep.meta["task"]]]
    names = _column(rrd, "/world_state", "SeriesLines:names")[0]
    assert "home" in names and any(x.startswith("on_table(") for x in names)
    # the layout: a 3D scene, each camera, plots, documents and the text log, over what is there
    views, timeline = _blueprint(rrd)
    kinds = {k for k, _ in views}
    assert {"3D", "2D", "TimeSeries", "TextDocument", "TextLog"} <= kinds
    assert ("2D", "/world/cameras/wrist") in views and ("TimeSeries", "/robot/joints") in views
    logged = set(back.rows[tl])
    for _, origin in views:
        assert origin == "/" or any(e == origin or e.startswith(origin + "/") for e in logged)
    assert timeline == [[tl]]
    # compact: a chunk per entity and kind of data (images in ~2 MiB chunks), not per row
    entities = sum(len(kinds) for per in back.rows.values() for kinds in per.values())
    assert back.chunks <= entities + 2, (back.chunks, entities)
    assert [p.name for p in tmp_path.iterdir()] == ["ep.rrd"]  # no temporary file left
    cli = Path(sys.executable).parent / "rerun"
    if cli.exists():
        p = subprocess.run(
            [str(cli), "rrd", "verify", str(rrd)], capture_output=True, text=True, timeout=120
        )
        assert p.returncode == 0, p.stderr[-2000:]


def test_view_saves_all_episodes_in_one_recording_a_timeline_each(
    runs_dir, episodes, tmp_path, monkeypatch, capsys
):
    from skillbridge.episodes import viewer
    from skillbridge.episodes.episode import load

    rrd = tmp_path / "all.rrd"
    code, out, err = run_cli(
        monkeypatch, capsys, "view", str(runs_dir), "--save", str(rrd), "--no-images", "--json"
    )
    assert code == 0, err
    got = json.loads(out)
    assert (got["episodes"], got["recordings"]) == (2, 1)
    back = viewer.read_back(rrd)
    assert len(back.recordings) == 1 and back.blueprints == 1
    assert set(back.rows) == {"", *(p.name for p in episodes)}
    for p in episodes:
        per = back.rows[p.name]
        assert not any("EncodedImage" in kinds or "Pinhole" in kinds for kinds in per.values())
        assert per["/world/link1"]["Transform3D"] == load(p).n_states
        assert "/planner/calls" in per and "/world/link2/Capsules3D" in per
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
    assert set(viewer.read_back(rrd).rows) == {"", episodes[0].name}


@contextlib.contextmanager
def _file_size_limit(limit: int):
    """Writes past ``limit`` bytes of any file fail in the kernel (EFBIG), as on a full
    disk, whoever writes (Python or the Rerun SDK's own threads)."""
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an error, not a signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
        signal.signal(signal.SIGXFSZ, handler)


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX file size limits")
@pytest.mark.parametrize("verb", ["replay", "view"])
def test_a_full_disk_is_one_line_and_no_file(verb, episodes, tmp_path, monkeypatch, capsys):
    target = tmp_path / "x.rrd"
    if verb == "replay":
        args = ["replay", str(episodes[1]), "--rerun", "--save", str(target), "--no-timeline"]
    else:
        args = ["view", str(episodes[1]), "--save", str(target)]
    args.append("--no-images")  # rendering is not what is tested
    with _file_size_limit(16 << 10):  # the recording is several times this
        code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "cannot write" in lines[0] and str(target) in lines[0], err
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temporary one


def test_an_unwritable_target_is_one_line(episodes, tmp_path, monkeypatch, capsys):
    """A folder the user may not write into (``/proc`` refuses new files even to root)."""
    target = Path("/proc/skillbridge-test.rrd")
    if sys.platform != "linux" or os.path.exists(target):
        pytest.skip("needs Linux's /proc")
    args = ["replay", str(episodes[1]), "--rerun", "--save", str(target), "--no-timeline"]
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "cannot write in /proc" in err and not target.exists()


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
        "no_images_without_rerun",
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
    elif case == "no_images_without_rerun":
        args = ["replay", str(eps[1]), "--no-images", "--no-timeline"]
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
