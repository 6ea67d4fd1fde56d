"""Recorded episodes as a LeRobotDataset (codebase version v3.0), for robot-learning users.

Layout written (the one LeRobot's own writer produces, checked against its source)::

    meta/info.json                              codebase_version "v3.0", fps, features, paths
    meta/stats.json                             per feature: min, max, mean, std, count, q01..q99
    meta/tasks.parquet                          task text (the pandas index) -> task_index
    meta/episodes/chunk-000/file-000.parquet    one row per episode: length, tasks, where its
                                                frames and video segments are, its stats
    data/chunk-000/file-000.parquet             one row per frame (episodes back to back)
    videos/observation.images.<cam>/chunk-000/file-000.mp4   episodes back to back, h264

One frame per control step k of an episode: ``observation.state`` (the six arm joint angles
and the two finger positions, from the recorded physics state before action k),
``observation.environment_state`` (every cube's position and orientation quaternion, from
the same state; in the articulated scene then the drawer's opening, the button's depth and
the light, as the env observes them), ``action`` (the recorded action k),
``observation.images.<cam>`` (the state rendered by MuJoCo, as ``replay --video`` does),
``timestamp`` (k / fps), ``frame_index`` (k), ``episode_index``, ``index`` (global),
``task_index`` (the task text in meta/tasks.parquet) and ``subgoal_index`` (the active
subgoal, -1 while settling). The state after the last action has no action and is not a
frame.

Values are read from the recorded states and actions, nothing is re-simulated: with
``dtype="float64"`` every value is bit-identical to the episode; the default ``float32``
(LeRobot's convention, what its policies expect) is the same values rounded once.

The videos are h264 with a keyframe every :data:`VIDEO_GOP` frames, as LeRobot encodes its
own: a training loader seeks to random frames, and with one keyframe per file each fetch
decodes from the start (``scripts/bench_lerobot_video.py`` measures it).

The dataset is assembled in a hidden temporary folder beside ``out`` and moved into place
only when complete, so an error or Ctrl-C never leaves a half-written dataset; ``--force``
replaces only what an earlier export wrote (``meta/``, ``data/``, ``videos/``), see
:mod:`skillbridge.episodes.export_common`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skillbridge.episodes.episode import META, Episode, EpisodeError
from skillbridge.episodes.export_common import (
    ExportError,
    check_owned,
    check_state_size,
    check_target,
    find_episodes,
    publish,
    scene_of,
    temp_dir,
    usable,
)

if TYPE_CHECKING:
    from sim.video import VideoWriter

CODEBASE_VERSION = "v3.0"
ROBOT_TYPE = "skillbridge_tabletop_arm"
CHUNKS_SIZE = 1000  # files per chunk folder
DATA_FILES_SIZE_IN_MB = 100
VIDEO_FILES_SIZE_IN_MB = 500
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
TASKS_PATH = "meta/tasks.parquet"
QUANTILES = {"q01": 0.01, "q10": 0.10, "q50": 0.50, "q90": 0.90, "q99": 0.99}
POSE = ("x", "y", "z", "qw", "qx", "qy", "qz")
INDEX_FEATURES = ("timestamp", "frame_index", "episode_index", "index", "task_index")
#: Image sizes: imageio-ffmpeg pads frames to multiples of 8, so other sizes are refused.
SIZE_RANGE = (16, 1920)
STATS_FRAMES = 100  # frames per episode and camera sampled for the image statistics
#: A keyframe every this many frames (ffmpeg ``-g``; LeRobot's own encoder uses 2).
VIDEO_GOP = 2
#: Control rates a dataset can declare (LeRobot's fps is an integer).
FPS_RANGE = (1, 1000)
#: What the export writes into ``--out``, and the files those entries may hold: anything
#: else found there on ``--force`` is not ours and stops the export.
OWNED = ("meta", "data", "videos")
OWN_FILES = re.compile(
    r"meta/(?:info\.json|stats\.json|tasks\.parquet|episodes/chunk-\d{3,}/file-\d{3,}\.parquet)"
    r"|data/chunk-\d{3,}/file-\d{3,}\.parquet"
    r"|videos/[^/]+/chunk-\d{3,}/file-\d{3,}\.mp4"
)
__all__ = ["ExportError", "export_lerobot", "find_episodes", "parse_size", "usable"]


@dataclass
class ExportOptions:
    cameras: tuple[str, ...] = ("front", "wrist")
    width: int = 480
    height: int = 360
    dtype: str = "float32"  # or "float64": bit-identical to the episode
    include_incomplete: bool = False
    force: bool = False


@dataclass
class ExportResult:
    out: Path
    episodes: int
    frames: int
    tasks: int
    skipped: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    videos: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fmt: str = f"lerobot {CODEBASE_VERSION}"

    def to_dict(self) -> dict:
        return {
            "out": str(self.out),
            "format": self.fmt,
            "episodes": self.episodes,
            "frames": self.frames,
            "tasks": self.tasks,
            "skipped": self.skipped,
            "wall_s": round(self.wall_s, 3),
            "videos": self.videos,
            "warnings": self.warnings,
        }


# ----------------------------------------------------------------------------- inputs
def parse_size(text: str) -> tuple[int, int]:
    """``"480x360"`` -> (480, 360); both multiples of 8 within :data:`SIZE_RANGE`."""
    try:
        w, h = (int(x) for x in str(text).lower().split("x"))
    except ValueError:
        raise ExportError(f"--size {text!r}: give WIDTHxHEIGHT, e.g. 480x360") from None
    lo, hi = SIZE_RANGE
    for v in (w, h):
        if not lo <= v <= hi or v % 8:
            raise ExportError(
                f"--size {text!r}: width and height must be multiples of 8 between {lo} and {hi}"
            )
    return w, h


def check_out(out: Path, force: bool) -> None:
    """Refuse an output that would replace something other than an earlier export, or
    whose ``meta/``, ``data/``, ``videos/`` hold files the export did not write."""
    earlier = (out / "meta" / "info.json").is_file() and not os.path.lexists(out / META)
    check_target(out, force, earlier, "is not a LeRobot dataset")
    if out.is_dir() and not os.path.islink(out):
        check_owned(out, OWNED, OWN_FILES)


# ----------------------------------------------------------------------------- frames
@dataclass
class Layout:
    """Where the exported quantities sit in MuJoCo's qpos (by joint name, so a change of
    the scene's joint order cannot shift a column)."""

    state_names: list[str]
    state_qadr: np.ndarray
    env_names: list[str]
    env_qadr: np.ndarray
    #: The articulated scene's drawer, button and light (``sim.env.Articulation``), whose
    #: observation ends ``observation.environment_state``; None on the tabletop.
    articulation: Any = None

    @classmethod
    def of(cls, model, scene_name: str | None = None) -> Layout:
        from sim import scene
        from sim.env import Articulation

        joints = [*scene.ARM_JOINTS, *scene.FINGER_JOINTS]
        state_qadr = [int(model.jnt_qposadr[model.joint(j).id]) for j in joints]
        env_names, env_qadr = [], []
        for cube in scene.CUBE_NAMES:
            a = int(model.jnt_qposadr[model.joint(f"{cube}_joint").id])
            env_names += [f"{cube}.{c}" for c in POSE]
            env_qadr += list(range(a, a + 7))
        art = None
        if (scene_name or scene.DEFAULT_SCENE) != scene.DEFAULT_SCENE:
            art = Articulation(model)
            env_names += ["drawer.opening", "button.depth", "light.on"]
        return cls(joints, np.array(state_qadr), env_names, np.array(env_qadr), art)

    def columns(self, model, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``observation.state`` and ``observation.environment_state`` of each recorded
        full state, float64 (restored with mj_setState: nothing stepped or recomputed)."""
        import mujoco

        from sim import physics

        data = mujoco.MjData(model)
        arm = np.empty((len(states), len(self.state_names)), np.float64)
        env = np.empty((len(states), len(self.env_names)), np.float64)
        n_cubes = len(self.env_qadr)
        for k, s in enumerate(states):
            mujoco.mj_setState(model, data, s, physics.STATE_SPEC)
            arm[k] = data.qpos[self.state_qadr]
            env[k, :n_cubes] = data.qpos[self.env_qadr]
            if self.articulation is not None:
                env[k, n_cubes:] = self.articulation.observe(data)
        return arm, env


def episode_columns(ep: Episode, model, layout: Layout, dtype: str) -> dict[str, np.ndarray]:
    """The per-frame numeric columns of one episode (before the dataset-wide indices)."""
    n = ep.n_steps
    arm, env = layout.columns(model, ep.states)
    fps = fps_of(ep)
    return {
        "observation.state": arm.astype(dtype),
        "observation.environment_state": env.astype(dtype),
        "action": ep.actions.astype(dtype),
        "timestamp": (np.arange(n) / fps).astype(np.float32),
        "frame_index": np.arange(n, dtype=np.int64),
        "subgoal_index": ep.subgoals.astype(np.int64),
    }


def fps_of(ep: Episode) -> int:
    """The episode's frame rate: 1 / control_dt, which must be an integer in
    :data:`FPS_RANGE` (a forged ``null`` or ``1e-300`` is one line, not a 300-digit fps)."""
    dt = ep.meta.get("control_dt", 0.04)
    lo, hi = FPS_RANGE
    if (
        isinstance(dt, bool)
        or not isinstance(dt, (int, float))
        or not math.isfinite(dt)
        or not 1.0 / hi <= dt <= 1.0 / lo
    ):
        raise ExportError(
            f"{ep.path}: meta.json control_dt {str(dt)[:40]} is not a control period of "
            f"{1 / hi:g} to {1 / lo:g} s (tampered?)"
        )
    fps = round(1.0 / float(dt))
    if abs(fps * float(dt) - 1.0) > 1e-9:
        raise ExportError(
            f"{ep.path}: control_dt {dt} is not 1/integer; LeRobot needs an integer fps"
        )
    return fps


# ----------------------------------------------------------------------------- stats
def feature_stats(x: np.ndarray) -> dict[str, np.ndarray]:
    """min/max/mean/std/count and quantiles over axis 0 (per dimension)."""
    x = np.asarray(x, np.float64).reshape(len(x), -1)
    out = {
        "min": x.min(0),
        "max": x.max(0),
        "mean": x.mean(0),
        "std": x.std(0),
        "count": np.array([len(x)]),
    }
    for k, q in QUANTILES.items():
        out[k] = np.quantile(x, q, axis=0)
    return out


def image_stats(pixels: np.ndarray, frames: int) -> dict[str, np.ndarray]:
    """Per-channel stats of uint8 pixels ``(N, 3)`` scaled to [0, 1], shaped (3, 1, 1) as
    LeRobot stores them; ``count`` is the number of frames sampled."""
    s = feature_stats(pixels.astype(np.float64) / 255.0)
    return {k: (v if k == "count" else v.reshape(3, 1, 1)) for k, v in s.items()} | {
        "count": np.array([frames])
    }


def _jsonable(stats: dict[str, dict[str, np.ndarray]]) -> dict:
    return {f: {k: np.asarray(v).tolist() for k, v in s.items()} for f, s in stats.items()}


# ----------------------------------------------------------------------------- writing
class _Rollover:
    """chunk/file indices of a growing sequence of files (LeRobot's arithmetic: up to
    CHUNKS_SIZE files per chunk folder)."""

    def __init__(self):
        self.chunk, self.file = 0, 0

    def next(self) -> None:
        self.file += 1
        if self.file == CHUNKS_SIZE:
            self.chunk, self.file = self.chunk + 1, 0


class _VideoStream:
    """Episodes of one camera, back to back in mp4 files that roll over past the size."""

    def __init__(self, root: Path, key: str, fps: int):
        self.root, self.key, self.fps = root, key, fps
        self.pos = _Rollover()
        self.writer: VideoWriter | None = None
        self.frames_in_file = 0
        self.files: list[str] = []

    def _open(self):
        from sim.video import VideoWriter

        rel = VIDEO_PATH.format(
            video_key=self.key, chunk_index=self.pos.chunk, file_index=self.pos.file
        )
        self.writer = VideoWriter(self.root / rel, fps=self.fps, gop=VIDEO_GOP)
        self.files.append(rel)
        self.frames_in_file = 0

    def begin_episode(self) -> dict:
        if (
            self.writer is not None
            and os.path.getsize(self.writer._tmp) > VIDEO_FILES_SIZE_IN_MB * 1024 * 1024
        ):
            self.close()
            self.pos.next()
        if self.writer is None:
            self._open()
        return {
            f"videos/{self.key}/chunk_index": self.pos.chunk,
            f"videos/{self.key}/file_index": self.pos.file,
            f"videos/{self.key}/from_timestamp": self.frames_in_file / self.fps,
        }

    def append(self, frame: np.ndarray) -> None:
        assert self.writer is not None, "append() after begin_episode()"
        self.writer.append(frame)
        self.frames_in_file += 1

    def end_episode(self) -> dict:
        return {f"videos/{self.key}/to_timestamp": self.frames_in_file / self.fps}

    def close(self) -> None:
        if self.writer is not None:
            w, self.writer = self.writer, None
            w.close()

    def abort(self) -> None:
        if self.writer is not None:
            w, self.writer = self.writer, None
            w.abort()


def _vector_type(pa, dtype: str, n: int):
    return pa.list_(pa.float64() if dtype == "float64" else pa.float32(), n)


class _DataWriter:
    """Frames into data/chunk-*/file-*.parquet, rolling over past the size."""

    def __init__(self, root: Path, schema):
        self.root, self.schema = root, schema
        self.pos = _Rollover()
        self.writer: Any = None  # a pyarrow ParquetWriter while a file is open
        self.bytes = 0

    def write(self, table) -> dict:
        import pyarrow.parquet as pq

        if self.writer is not None and self.bytes > DATA_FILES_SIZE_IN_MB * 1024 * 1024:
            self.writer.close()
            self.writer = None
            self.pos.next()
        if self.writer is None:
            path = self.root / DATA_PATH.format(
                chunk_index=self.pos.chunk, file_index=self.pos.file
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = pq.ParquetWriter(path, self.schema)
            self.bytes = 0
        self.writer.write_table(table)
        self.bytes += table.nbytes
        return {"data/chunk_index": self.pos.chunk, "data/file_index": self.pos.file}

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError(
            "--format lerobot needs pyarrow: pip install 'skillbridge[export]'"
        ) from None
    return pa, pq


def features_of(layout: Layout, opts: ExportOptions, fps: int) -> dict:
    vec = opts.dtype
    feats: dict[str, dict] = {
        "observation.state": {
            "dtype": vec,
            "shape": [len(layout.state_names)],
            "names": list(layout.state_names),
        },
        "observation.environment_state": {
            "dtype": vec,
            "shape": [len(layout.env_names)],
            "names": list(layout.env_names),
        },
        "action": {"dtype": vec, "shape": [4], "names": ["dx", "dy", "dz", "grip"]},
    }
    for cam in opts.cameras:
        feats[f"observation.images.{cam}"] = {
            "dtype": "video",
            "shape": [opts.height, opts.width, 3],
            "names": ["height", "width", "channels"],
            "info": {
                "video.height": opts.height,
                "video.width": opts.width,
                "video.codec": "h264",
                "video.pix_fmt": "yuv420p",
                "is_depth_map": False,
                "video.fps": fps,
                "video.channels": 3,
                "has_audio": False,
            },
        }
    feats["timestamp"] = {"dtype": "float32", "shape": [1], "names": None}
    for k in ("frame_index", "episode_index", "index", "task_index", "subgoal_index"):
        feats[k] = {"dtype": "int64", "shape": [1], "names": None}
    return feats


def data_schema(pa, feats: dict):
    fields = []
    for name, ft in feats.items():
        if ft["dtype"] == "video":
            continue
        if ft["shape"] == [1]:
            fields.append(pa.field(name, pa.from_numpy_dtype(np.dtype(ft["dtype"]))))
        else:
            fields.append(pa.field(name, _vector_type(pa, ft["dtype"], ft["shape"][0])))
    return pa.schema(fields)


def _table(pa, schema, cols: dict[str, np.ndarray]):
    arrays = []
    for f in schema:
        v = cols[f.name]
        if pa.types.is_fixed_size_list(f.type):
            flat = pa.array(np.ascontiguousarray(v).reshape(-1), type=f.type.value_type)
            arrays.append(pa.FixedSizeListArray.from_arrays(flat, f.type.list_size))
        else:
            arrays.append(pa.array(v, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def write_tasks(pa, pq, path: Path, tasks: dict[str, int]) -> None:
    """meta/tasks.parquet as pandas writes it (LeRobot reads it with pandas: the task text
    is the index, ``task_index`` the column), without needing pandas here."""
    names = sorted(tasks, key=tasks.__getitem__)
    table = pa.table(
        {
            "task_index": pa.array([tasks[t] for t in names], pa.int64()),
            "task": pa.array(names, pa.string()),
        }
    )
    pandas_meta = {
        "index_columns": ["task"],
        "column_indexes": [
            {
                "name": None,
                "field_name": None,
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": {"encoding": "UTF-8"},
            }
        ],
        "columns": [
            {
                "name": "task_index",
                "field_name": "task_index",
                "pandas_type": "int64",
                "numpy_type": "int64",
                "metadata": None,
            },
            {
                "name": "task",
                "field_name": "task",
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": None,
            },
        ],
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": "2.2.3",
    }
    table = table.replace_schema_metadata({"pandas": json.dumps(pandas_meta)})
    pq.write_table(table, path)


def write_episodes(pa, pq, path: Path, rows: list[dict]) -> None:
    """meta/episodes/...parquet: one row per episode; list columns for tasks and stats."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cols: dict[str, list] = {}
    for r in rows:
        for k in r:
            cols.setdefault(k, [])
    for r in rows:
        for k in cols:
            cols[k].append(r.get(k))
    pq.write_table(pa.table({k: pa.array(v) for k, v in cols.items()}), path)


# ----------------------------------------------------------------------------- export
@dataclass
class _State:
    root: Path
    opts: ExportOptions
    pa: object
    schema: object
    data: _DataWriter
    videos: dict[str, _VideoStream]
    tasks: dict[str, int] = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)
    columns: dict[str, list[np.ndarray]] = field(default_factory=dict)
    image_samples: dict[str, list[np.ndarray]] = field(default_factory=dict)
    frames: int = 0


def _render(ep: Episode, st: _State, on_frame: Callable[[int], None] | None) -> dict:
    """Render every frame state of ``ep`` into the camera streams; returns the episode's
    video columns and image stats."""
    from skillbridge.episodes.replay import _env

    out: dict = {}
    if not st.opts.cameras:
        return out
    n = ep.n_steps
    take = set(np.linspace(0, n - 1, min(n, STATS_FRAMES)).round().astype(int).tolist())
    env = _env(ep, st.opts.width, st.opts.height)
    try:
        for cam in st.opts.cameras:
            key = f"observation.images.{cam}"
            stream = st.videos[key]
            out.update(stream.begin_episode())
            sampled = []
            for k in range(n):
                env.set_state(ep.states[k])
                frame = env.render_rgb(cam)
                stream.append(frame)
                if k in take:  # every 4th pixel each way is plenty for channel statistics
                    sampled.append(frame[::4, ::4].reshape(-1, 3))
                if on_frame is not None:
                    on_frame(1)
            out.update(stream.end_episode())
            pix = np.concatenate(sampled)
            st.image_samples.setdefault(key, []).append(pix)
            for stat, v in image_stats(pix, len(sampled)).items():
                out[f"stats/{key}/{stat}"] = v.tolist()
    finally:
        env.close()
    return out


def _add_episode(ep: Episode, st: _State, model, layout: Layout, on_frame) -> None:
    ep_index = len(st.rows)
    task = str(ep.meta.get("task", ""))
    task_index = st.tasks.setdefault(task, len(st.tasks))
    n = ep.n_steps
    cols = episode_columns(ep, model, layout, st.opts.dtype)
    cols["episode_index"] = np.full(n, ep_index, np.int64)
    cols["index"] = np.arange(st.frames, st.frames + n, dtype=np.int64)
    cols["task_index"] = np.full(n, task_index, np.int64)
    row: dict = {"episode_index": ep_index, "tasks": [task], "length": n}
    row.update(st.data.write(_table(st.pa, st.schema, cols)))
    row.update({"dataset_from_index": st.frames, "dataset_to_index": st.frames + n})
    row.update(_render(ep, st, on_frame))
    for name, v in cols.items():
        st.columns.setdefault(name, []).append(v)
        for k, s in feature_stats(v).items():
            row[f"stats/{name}/{k}"] = s.tolist()
    res = ep.result
    row.update(
        {
            "meta/episodes/chunk_index": 0,
            "meta/episodes/file_index": 0,
            "skillbridge/episode": ep.path.name,
            "skillbridge/status": ep.meta.get("status"),
            "skillbridge/outcome": str(res.get("status")),
            "skillbridge/seed": ep.meta.get("seed"),
            "skillbridge/trace_id": ep.meta.get("trace_id"),
        }
    )
    st.rows.append(row)
    st.frames += n


def _global_stats(st: _State) -> dict:
    stats = {name: feature_stats(np.concatenate(parts)) for name, parts in st.columns.items()}
    for key, parts in st.image_samples.items():
        frames = sum(int(r[f"stats/{key}/count"][0]) for r in st.rows)
        stats[key] = image_stats(np.concatenate(parts), frames)
    return stats


def export_lerobot(
    paths: Iterable[str | Path],
    out: str | Path,
    opts: ExportOptions | None = None,
    *,
    on_start: Callable[[int], None] | None = None,
    on_frame: Callable[[int], None] | None = None,
) -> ExportResult:
    """Export the episodes under ``paths`` to a LeRobotDataset v3.0 folder ``out``."""
    opts = opts or ExportOptions()
    t0 = time.perf_counter()
    out = Path(out)
    if opts.dtype not in ("float32", "float64"):
        raise ExportError(f"--dtype must be float32 or float64, not {opts.dtype!r}")
    pa, pq = _pyarrow()
    check_out(out, opts.force)
    eps, skipped = usable(
        find_episodes(paths),
        lambda ep: (
            None
            if ep.complete or opts.include_incomplete
            else "incomplete episode (--include-incomplete exports it)"
        ),
    )
    if not eps:
        raise ExportError("nothing to export: " + "; ".join(skipped or ["no episode"]))
    fps = {fps_of(e) for e in eps}
    if len(fps) > 1:
        raise ExportError(
            f"the episodes have different control rates {sorted(fps)}; a LeRobot "
            "dataset has one fps"
        )
    from sim import physics

    scene = scene_of(eps)
    model = physics.load_model(scene)
    for e in eps:
        check_state_size(e, model)
    _check_cameras(model, opts.cameras)
    here = physics.model_hash(scene)
    other = sum(e.meta.get("model_hash") != here for e in eps)
    warnings = (
        [
            f"{other} of {len(eps)} episodes were recorded with another scene model or MuJoCo "
            "version; their states are read with this one's joint layout"
        ]
        if other
        else []
    )
    layout = Layout.of(model, scene)
    fps_value = fps.pop()
    feats = features_of(layout, opts, fps_value)
    tmp = temp_dir(out)
    schema = data_schema(pa, feats)
    st = _State(
        root=tmp,
        opts=opts,
        pa=pa,
        schema=schema,
        data=_DataWriter(tmp, schema),
        videos={
            f"observation.images.{c}": _VideoStream(tmp, f"observation.images.{c}", fps_value)
            for c in opts.cameras
        },
    )
    if on_start is not None:
        on_start(sum(e.n_steps for e in eps) * max(1, len(opts.cameras)))
    try:
        for ep in eps:
            _add_episode(ep, st, model, layout, on_frame if opts.cameras else None)
            if on_frame is not None and not opts.cameras:
                on_frame(ep.n_steps)
        st.data.close()
        for v in st.videos.values():
            v.close()
        _write_meta(pa, pq, st, feats, fps_value)
        publish(tmp, out, OWNED, lambda: check_out(out, opts.force))
    except BaseException as e:
        with contextlib.suppress(Exception):
            st.data.close()
        for v in st.videos.values():
            v.abort()
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, EpisodeError):
            raise ExportError(str(e)) from None
        if isinstance(e, OSError):
            raise ExportError(f"cannot write {out}: {e.strerror or e}") from None
        raise
    return ExportResult(
        out,
        len(st.rows),
        st.frames,
        len(st.tasks),
        skipped,
        time.perf_counter() - t0,
        [f for v in st.videos.values() for f in v.files],
        warnings,
    )


def _check_cameras(model, cameras: tuple[str, ...]) -> None:
    known = [model.camera(i).name for i in range(model.ncam)]
    for c in cameras:
        if c not in known:
            raise ExportError(f"unknown camera {c!r}; the scene has {', '.join(known)}")
    if len(set(cameras)) != len(cameras):
        raise ExportError("a camera is named twice")


def _write_meta(pa, pq, st: _State, feats: dict, fps: int) -> None:
    root = st.root
    (root / "meta").mkdir(exist_ok=True)
    write_episodes(pa, pq, root / EPISODES_PATH.format(chunk_index=0, file_index=0), st.rows)
    write_tasks(pa, pq, root / TASKS_PATH, st.tasks)
    try:  # finite inputs can still overflow (a forged 1e308 state): never write NaN/Infinity
        stats = json.dumps(_jsonable(_global_stats(st)), indent=4, allow_nan=False)
    except ValueError:
        raise ExportError(
            "the statistics of the episodes are not finite (values near the float limit; tampered?)"
        ) from None
    (root / "meta" / "stats.json").write_text(stats + "\n")
    info = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": ROBOT_TYPE,
        "total_episodes": len(st.rows),
        "total_frames": st.frames,
        "total_tasks": len(st.tasks),
        "chunks_size": CHUNKS_SIZE,
        "data_files_size_in_mb": DATA_FILES_SIZE_IN_MB,
        "video_files_size_in_mb": VIDEO_FILES_SIZE_IN_MB,
        "fps": fps,
        "splits": {"train": f"0:{len(st.rows)}"},
        "data_path": DATA_PATH,
        "video_path": VIDEO_PATH if st.opts.cameras else None,
        "features": feats,
    }
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=4) + "\n")
