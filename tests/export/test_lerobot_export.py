"""``skillbridge export --format lerobot``: LeRobotDataset v3.0, lossless, checked against the
documented schema with pyarrow (and with LeRobot's own loader where it is installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.cli_helpers import run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SMALL = ("--size", "64x48", "--camera", "front")


@pytest.fixture(scope="module")
def exported(runs_dir, tmp_path_factory):
    """The two episodes exported with float64 columns and one small camera."""
    from skillbridge.episodes import lerobot_export as lx

    out = tmp_path_factory.mktemp("ds") / "dataset"
    opts = lx.ExportOptions(cameras=("front",), width=64, height=48, dtype="float64")
    res = lx.export_lerobot([runs_dir], out, opts)
    return res, out


def _data(out: Path):
    files = sorted((out / "data").glob("chunk-*/file-*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files])


def _episodes(out: Path):
    return pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()


def _reference(ep):
    """observation.state / environment_state read back independently: the recorded state
    restored in the env, qpos taken by joint name."""
    from sim import scene
    from sim.env import TabletopEnv

    env = TabletopEnv(width=64, height=48)
    m = env.model
    arm = [m.jnt_qposadr[m.joint(j).id] for j in (*scene.ARM_JOINTS, *scene.FINGER_JOINTS)]
    cubes = [m.jnt_qposadr[m.joint(f"{c}_joint").id] for c in scene.CUBE_NAMES]
    states, envs = [], []
    try:
        for s in ep.states:
            env.set_state(s)
            q = env.data.qpos
            states.append(q[arm].copy())
            envs.append(np.concatenate([q[a : a + 7] for a in cubes]))
    finally:
        env.close()
    return np.array(states), np.array(envs)


def test_round_trip_is_bit_exact_in_float64(exported, episodes):
    from skillbridge.episodes.episode import load

    res, out = exported
    assert res.episodes == 2 and res.frames == _data(out).num_rows
    data = _data(out)
    eps = _episodes(out)
    for i, path in enumerate(episodes):
        ep = load(path)
        row = eps[i]
        assert row["skillbridge/episode"] == path.name and row["length"] == ep.n_steps
        sl = slice(row["dataset_from_index"], row["dataset_to_index"])
        cols = {k: data.column(k).to_pylist()[sl] for k in data.column_names}
        state, env_state = _reference(ep)
        for got, want in (
            (cols["observation.state"], state),
            (cols["observation.environment_state"], env_state),
            (cols["action"], ep.actions),
        ):
            got = np.array(got, np.float64)
            assert got.shape == want.shape
            assert np.array_equal(got.view(np.uint64), want.view(np.uint64))  # bit for bit
        assert cols["subgoal_index"] == ep.subgoals.tolist()
        assert cols["frame_index"] == list(range(ep.n_steps))
        assert cols["episode_index"] == [i] * ep.n_steps
        assert cols["index"] == list(range(sl.start, sl.stop))
        np.testing.assert_array_equal(
            np.array(cols["timestamp"], np.float32), (np.arange(ep.n_steps) / 25).astype(np.float32)
        )
        tasks = pq.read_table(out / "meta/tasks.parquet").to_pylist()
        task_of = {t["task_index"]: t["task"] for t in tasks}
        assert {task_of[t] for t in cols["task_index"]} == {ep.meta["task"]} == set(row["tasks"])


def test_float32_is_the_episode_rounded_once(runs_dir, episodes, tmp_path):
    from skillbridge.episodes import lerobot_export as lx
    from skillbridge.episodes.episode import load

    out = tmp_path / "ds32"
    lx.export_lerobot([episodes[0]], out, lx.ExportOptions(cameras=()))
    data = _data(out)
    ep = load(episodes[0])
    assert data.schema.field("action").type == pa.list_(pa.float32(), 4)
    got = np.array(data.column("action").to_pylist(), np.float32)
    assert np.array_equal(got, ep.actions.astype(np.float32))
    state, _ = _reference(ep)
    assert np.array_equal(
        np.array(data.column("observation.state").to_pylist(), np.float32), state.astype(np.float32)
    )
    info = json.loads((out / "meta/info.json").read_text())
    assert info["video_path"] is None and not (out / "videos").exists()


def test_layout_matches_the_documented_v3_schema(exported):
    """meta/info.json, the data, episodes and tasks parquet files and meta/stats.json as
    LeRobotDataset v3.0 documents them."""
    import imageio_ffmpeg

    res, out = exported
    info = json.loads((out / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == 25
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["video_path"] == (
        "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    )
    for key in ("robot_type", "chunks_size", "data_files_size_in_mb", "video_files_size_in_mb"):
        assert key in info
    assert info["total_episodes"] == 2 and info["total_tasks"] == 2
    assert info["splits"] == {"train": "0:2"}
    feats = info["features"]
    for k in ("timestamp", "frame_index", "episode_index", "index", "task_index"):
        assert feats[k]["shape"] == [1]
    assert feats["observation.state"]["shape"] == [8]
    assert feats["observation.state"]["names"][:2] == ["j1_base_yaw", "j2_shoulder"]
    assert feats["observation.environment_state"]["shape"] == [28]
    assert feats["action"]["shape"] == [4]
    cam = feats["observation.images.front"]
    assert cam["dtype"] == "video" and cam["shape"] == [48, 64, 3]
    assert cam["names"] == ["height", "width", "channels"]
    assert cam["info"]["video.codec"] == "h264" and cam["info"]["video.fps"] == 25
    assert cam["info"]["is_depth_map"] is False and "video.is_depth_map" not in cam["info"]
    # data: one column per non-video feature, with its dtype and shape
    data = _data(out)
    assert info["total_frames"] == data.num_rows
    want_cols = {k for k, f in feats.items() if f["dtype"] != "video"}
    assert set(data.column_names) == want_cols
    for name, f in feats.items():
        if f["dtype"] == "video":
            continue
        t = data.schema.field(name).type
        if f["shape"] == [1]:
            assert t == pa.from_numpy_dtype(np.dtype(f["dtype"]))
        else:
            assert pa.types.is_fixed_size_list(t) and t.list_size == f["shape"][0]
            assert t.value_type == pa.from_numpy_dtype(np.dtype(f["dtype"]))
    # episodes: contiguous frame ranges, video segments that tile the mp4
    eps = _episodes(out)
    end, t = 0, 0.0
    for i, e in enumerate(eps):
        assert e["episode_index"] == i and e["dataset_from_index"] == end
        assert e["dataset_to_index"] - e["dataset_from_index"] == e["length"]
        assert e["data/chunk_index"] == 0 and e["data/file_index"] == 0
        assert e["meta/episodes/chunk_index"] == 0 and e["meta/episodes/file_index"] == 0
        v = "videos/observation.images.front"
        assert e[f"{v}/from_timestamp"] == pytest.approx(t)
        assert e[f"{v}/to_timestamp"] == pytest.approx(t + e["length"] / 25)
        for stat in ("min", "max", "mean", "std", "count", "q01", "q50", "q99"):
            assert f"stats/observation.state/{stat}" in e
        assert np.array(e["stats/observation.images.front/mean"]).shape == (3, 1, 1)
        end, t = e["dataset_to_index"], e[f"{v}/to_timestamp"]
    assert end == info["total_frames"]
    mp4 = out / info["video_path"].format(
        video_key="observation.images.front", chunk_index=0, file_index=0
    )
    frames, _ = imageio_ffmpeg.count_frames_and_secs(str(mp4))
    assert frames == info["total_frames"]
    # tasks: the task text is the (pandas) index, as LeRobot reads it
    tasks = pq.read_table(out / "meta/tasks.parquet")
    assert json.loads(tasks.schema.metadata[b"pandas"])["index_columns"] == ["task"]
    assert tasks.column("task_index").to_pylist() == [0, 1]
    # stats: every feature, the image ones per channel in [0, 1]
    stats = json.loads((out / "meta/stats.json").read_text())
    assert set(stats) == set(feats)
    assert stats["observation.state"]["count"] == [info["total_frames"]]
    img = np.array(stats["observation.images.front"]["mean"])
    assert img.shape == (3, 1, 1) and 0 < img.min() and img.max() < 1
    for f in stats.values():
        assert {"min", "max", "mean", "std", "count", "q01", "q10", "q50", "q90", "q99"} <= set(f)


def test_cli_exports_and_replaces_only_with_force(runs_dir, tmp_path, monkeypatch, capsys):
    out = tmp_path / "ds"
    code, so, err = run_cli(
        monkeypatch, capsys, "export", str(runs_dir), "--out", str(out), *SMALL, "--json"
    )
    assert code == 0, err
    assert json.loads(so)["episodes"] == 2
    code, _, err = run_cli(
        monkeypatch, capsys, "export", str(runs_dir), "--out", str(out), "--no-video"
    )
    assert code == 2 and "not empty" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(
        monkeypatch, capsys, "export", str(runs_dir), "--out", str(out), "--no-video", "--force"
    )
    assert code == 0, err
    assert not (out / "videos").exists()  # replaced whole
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no temporary folder left


def _bad_chunk(runs: Path) -> None:
    ep = sorted(p for p in runs.iterdir() if p.is_dir())[1]
    chunk = sorted(ep.glob("states-*.npz"))[0]
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "not_episode",
        "out_is_file",
        "force_on_folder",
        "size",
        "camera",
        "format",
        "dtype",
        "tampered",
        "symlink",
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(case, runs_copy, tmp_path, monkeypatch, capsys):
    out = tmp_path / "ds"
    args = [str(runs_copy), "--out", str(out), *SMALL]
    if case == "missing":
        args[0] = str(tmp_path / "nope")
    elif case == "not_episode":
        (tmp_path / "empty").mkdir()
        args[0] = str(tmp_path / "empty")
    elif case == "out_is_file":
        out.write_text("x")
    elif case == "force_on_folder":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
        args.append("--force")
    elif case == "size":
        args += ["--size", "65x48"]
    elif case == "camera":
        args += ["--camera", "ceiling"]
    elif case == "format":
        args += ["--format", "hdf5"]
    elif case == "dtype":
        args += ["--dtype", "int8"]
    elif case == "tampered":
        _bad_chunk(runs_copy)
    elif case == "symlink":
        (tmp_path / "elsewhere").mkdir()
        out.symlink_to(tmp_path / "elsewhere")
    before = sorted(p.name for p in tmp_path.iterdir())
    code, so, err = run_cli(monkeypatch, capsys, "export", *args)
    assert code == 2, (so, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no dataset, no temp folder
    if case == "force_on_folder":
        assert (out / "notes.txt").read_text() == "mine"


def test_incomplete_and_empty_episodes_are_skipped_with_a_reason(
    runs_copy, tmp_path, monkeypatch, capsys
):
    ep = sorted(p for p in runs_copy.iterdir() if p.is_dir())[0]
    meta = json.loads((ep / "meta.json").read_text())
    meta["status"] = "incomplete"
    (ep / "meta.json").write_text(json.dumps(meta))
    out = tmp_path / "ds"
    code, so, err = run_cli(
        monkeypatch, capsys, "export", str(runs_copy), "--out", str(out), "--no-video", "--json"
    )
    assert code == 0, err
    assert json.loads(so)["episodes"] == 1 and "incomplete" in err
    code, so, err = run_cli(
        monkeypatch,
        capsys,
        "export",
        str(ep),
        "--out",
        str(out) + "2",
        "--no-video",
        "--json",
        "--include-incomplete",
    )
    assert code == 0 and json.loads(so)["episodes"] == 1


LEROBOT_CHECK = r"""
import importlib.util, sys, types
if importlib.util.find_spec("lerobot") is not None:
    pkg = "lerobot"
elif importlib.util.find_spec("ledataset") is not None:  # pip install lerobot-dataset
    pkg = "ledataset"
else:
    print("SKIP no lerobot"); sys.exit(0)
try:
    import torchvision  # noqa: F401
except RuntimeError:  # a PyPI torchvision beside a local CPU torch: its C ops do not load
    sys.modules["torchvision._meta_registrations"] = types.ModuleType("stub")
import importlib
lds = importlib.import_module(pkg + ".datasets.lerobot_dataset")
import torchvision
if importlib.util.find_spec("torchcodec") is None and not hasattr(torchvision.io, "VideoReader"):
    # no decoder of lerobot's works here: decode with PyAV, nearest frame within tolerance
    import av, numpy as np, torch

    def decode(path, timestamps, tolerance_s, backend=None):
        with av.open(str(path)) as c:
            s = c.streams.video[0]
            fr = [(float(f.pts * s.time_base), f.to_ndarray(format="rgb24")) for f in c.decode(s)]
        ts = np.array([t for t, _ in fr])
        out = []
        for q in timestamps:
            i = int(np.argmin(abs(ts - q)))
            assert abs(ts[i] - q) <= tolerance_s, (q, ts[i])
            out.append(torch.from_numpy(fr[i][1]).permute(2, 0, 1).float() / 255)
        return torch.stack(out)

    lds.decode_video_frames = decode
root, n = sys.argv[1], int(sys.argv[2])
ds = lds.LeRobotDataset("local/skillbridge", root=root)
assert ds.num_episodes == 2 and len(ds) == n, (ds.num_episodes, len(ds))
for i in (0, n - 1):
    item = ds[i]
    assert tuple(item["observation.state"].shape) == (8,), item["observation.state"].shape
    assert tuple(item["observation.images.front"].shape) == (3, 48, 64)
    assert item["task"], item
print("OK", pkg, len(ds), sorted(k for k in item if not k.startswith("observation.images")))
"""


@pytest.mark.slow
def test_lerobot_loads_the_export(exported, tmp_path):
    """LeRobot's own loader, where the package is installed: the interpreter of
    $LEROBOT_PYTHON (a separate environment: lerobot pins its own torch), else this one."""
    res, out = exported
    py = os.environ.get("LEROBOT_PYTHON", sys.executable)
    env = dict(
        os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_HOME=str(tmp_path / "hf")
    )
    p = subprocess.run(
        [py, "-c", LEROBOT_CHECK, str(out), str(res.frames)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    if p.stdout.startswith("SKIP"):
        pytest.skip(f"lerobot is not installed for {py}")
    assert p.returncode == 0 and p.stdout.startswith("OK"), p.stdout + p.stderr[-3000:]


def test_rerun_lerobot_reader_opens_the_export(exported):
    """A second, independent reader of the v3 format: Rerun's own LeRobot importer (videos
    skipped: it transcodes them with an ffmpeg on PATH)."""
    exp = pytest.importorskip("rerun.experimental")
    res, out = exported
    reader = exp.LeRobotReader(out)
    assert str(reader.version) == "v3" and list(reader.episodes()) == [0, 1]
    lengths = [e["length"] for e in _episodes(out)]
    for ep, n in zip(reader.episodes(), lengths, strict=True):
        rows: dict[str, int] = {}
        for chunk in reader.stream(ep, video_mode="skip"):
            if not chunk.is_static:
                rows[chunk.entity_path] = rows.get(chunk.entity_path, 0) + chunk.num_rows
        for name in ("/observation.state", "/observation.environment_state", "/action", "/task"):
            assert rows[name] == n, (name, rows)


def test_an_episode_of_another_scene_model_is_exported_with_a_warning(
    runs_copy, tmp_path, monkeypatch, capsys
):
    ep = sorted(p for p in runs_copy.iterdir() if p.is_dir())[0]
    meta = json.loads((ep / "meta.json").read_text())
    meta["model_hash"] = "0" * 64
    (ep / "meta.json").write_text(json.dumps(meta))
    code, so, err = run_cli(
        monkeypatch,
        capsys,
        "export",
        str(runs_copy),
        "--out",
        str(tmp_path / "ds"),
        "--no-video",
        "--json",
    )
    assert code == 0, err
    assert "1 of 2 episodes were recorded with another scene model" in err
    assert json.loads(so)["warnings"]


def _keyframes(mp4: Path) -> tuple[int, list[int]]:
    """(frames, indices of the keyframes) of an mp4, from ffmpeg's showinfo filter."""
    import re

    import imageio_ffmpeg

    p = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-nostats", "-i", str(mp4)]
        + ["-vf", "showinfo", "-f", "null", "-"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    frames = re.findall(r"\bn:\s*(\d+).*?\biskey:([01])", p.stderr)
    return len(frames), [int(n) for n, key in frames if key == "1"]


def test_videos_have_a_keyframe_every_few_frames(exported):
    """A loader seeks to random frames: with x264's default GOP (250) a file of 150 frames
    had one keyframe and every fetch decoded from the start."""
    from skillbridge.episodes import lerobot_export as lx

    res, out = exported
    mp4 = out / res.videos[0]
    n, keys = _keyframes(mp4)
    assert n == res.frames and keys[0] == 0
    gaps = np.diff([*keys, n])
    assert gaps.max() <= lx.VIDEO_GOP, gaps  # no frame is more than GOP-1 from a keyframe


def test_articulated_episodes_export(articulated_dir, tmp_path, monkeypatch, capsys):
    """The articulated scene's longer state is read with its own model; the drawer, button
    and light end observation.environment_state."""
    from skillbridge.episodes.episode import load

    out = tmp_path / "ds"
    code, so, err = run_cli(
        monkeypatch,
        capsys,
        "export",
        str(articulated_dir),
        "--out",
        str(out),
        "--no-video",
        "--json",
    )
    assert code == 0, err  # was: TypeError state size should equal mj_stateSize
    assert not json.loads(so)["warnings"]  # the articulated model's hash, not the tabletop's
    info = json.loads((out / "meta/info.json").read_text())
    feat = info["features"]["observation.environment_state"]
    assert feat["shape"] == [31]
    assert feat["names"][-3:] == ["drawer.opening", "button.depth", "light.on"]
    env_state = np.array(_data(out).column("observation.environment_state").to_pylist())
    ep = load(next(p for p in articulated_dir.iterdir() if p.is_dir()))
    assert env_state.shape == (ep.n_steps, 31)
    assert env_state[0, 28] < 0.01 < 0.12 < env_state[-1, 28]  # the drawer opens
