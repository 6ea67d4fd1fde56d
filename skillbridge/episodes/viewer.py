"""Recorded episodes in the Rerun viewer (``rerun-sdk``, the optional extra ``rerun``).

All the episodes go into **one** recording (application ``skillbridge``; its id is the trace
id of a single episode), each episode on a timeline of its own named after its folder (the
control step is the time): pick an episode in the time panel to browse it. Everything is
sent column by column (``send_columns``: one chunk per entity and episode, images in chunks
of about :data:`IMAGE_CHUNK_BYTES`), so a file needs no ``rerun rrd optimize``. Entities:

- ``world/<body>/<Boxes3D|Capsules3D|Cylinders3D|Ellipsoids3D>``: the MJCF geoms of every
  body (:mod:`skillbridge.episodes.rerun_geometry`), once per episode, and ``world/<body>``
  the body's pose at every step (one pose for a body that never moves);
- ``world/cameras/<name>``: each rendered camera as a pinhole at its pose (the wrist camera
  moves with the hand), with its images (JPEG) at every recorded state;
- ``robot/joints`` (the six arm joints and the two fingers) and ``robot/actions`` (the grip
  site's commanded velocity and the gripper), as plotted series;
- ``instruction``: the task text; ``plan/subgoal_index`` (a series) and ``plan/subgoals``,
  ``plan/outcomes``, ``plan/plans``, ``planner/calls`` with ``planner/raw`` (the model's raw
  output), ``bridge/decisions`` with ``bridge/reasons``: the trace as a text log;
- ``world_state`` (a 0/1 series of every predicate that held at some step: ``held(x)``,
  ``in(x, bin)``, ``on(x, y)``, ``on_table(x)``, ``home``) and ``goal`` (each predicate of
  the episode's goal, met or not), computed from the recorded physics state with the same
  code the runner judges success with.

A blueprint lays it out: the 3D scene, the camera images, the plots, the instruction and the
text log. A saved file is assembled in memory and written once (temporary file + rename), so
a full disk or an unwritable folder is one line of error and never a half-written file.
Episodes are read with :func:`skillbridge.episodes.episode.load` (a hostile episode is one
line of error); trace text is shown as data, never interpreted.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from skillbridge.episodes.episode import Episode, EpisodeError

APP_ID = "skillbridge"
RRD_MAGIC = b"RRF"  # the first bytes of an .rrd file
#: Camera images are sent in chunks of about this many bytes (Rerun's object-store chunk size).
IMAGE_CHUNK_BYTES = 2 << 20
#: The names of an action's four numbers (``sim.scene.ACTION_DIM``).
ACTION_NAMES = ("grip site vx", "grip site vy", "grip site vz", "gripper")


class ViewerError(Exception):
    """Rerun is missing, the target is unusable, or the viewer cannot start (one line)."""


@dataclass
class RerunOptions:
    cameras: tuple[str, ...] = ("front", "wrist")
    width: int = 320
    height: int = 240
    jpeg_quality: int = 80


def rerun_module():
    try:
        import rerun as rr
    except ImportError:
        raise ViewerError(
            "the Rerun viewer needs rerun-sdk: pip install 'skillbridge[rerun]'"
        ) from None
    return rr


def check_save_target(path: Path) -> Path:
    """An ``.rrd`` path that can only replace an earlier recording."""
    path = Path(path)
    if path.suffix != ".rrd":
        raise ViewerError(f"--save {path}: give a file name ending in .rrd")
    if os.path.islink(path):
        raise ViewerError(f"--save {path} is a symbolic link; not replacing it")
    if path.exists():
        if not path.is_file():
            raise ViewerError(f"--save {path} exists and is not a regular file")
        with open(path, "rb") as f:
            head = f.read(3)
        if head and head != RRD_MAGIC:
            raise ViewerError(
                f"--save {path} exists and is not a Rerun recording; not replacing it"
            )
    if not path.parent.is_dir():
        raise ViewerError(f"--save {path}: folder {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK):
        raise ViewerError(f"--save {path}: folder {path.parent} is not writable")
    probe = path.parent / f".{path.name}.probe{os.getpid()}"
    try:  # os.access says yes to root, also where the file system refuses (/proc, read-only)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as e:
        raise ViewerError(f"--save {path}: cannot write in {path.parent}: {e.strerror}") from None
    return path


def _slug(rr, text: str) -> str:
    return rr.escape_entity_path_part(str(text))


def _send(rr, rec, path: str, timeline: str, steps, columns) -> None:
    index = rr.TimeColumn(timeline, sequence=np.asarray(steps, np.int64))
    rec.send_columns(path, indexes=[index], columns=columns)


def _series(rr, rec, path: str, timeline: str, values: np.ndarray, names) -> None:
    """``values`` (steps x series) as plotted series named ``names``, from step 0."""
    n, k = values.shape
    if not n or not k:
        return
    _send(rr, rec, path, timeline, [0], rr.SeriesLines.columns(names=list(names)).partition([k]))
    scalars = rr.Scalars.columns(scalars=values.astype(np.float64).ravel()).partition([k] * n)
    _send(rr, rec, path, timeline, np.arange(n), scalars)


def timelines(episodes: list[Episode]) -> list[str]:
    """One timeline name per episode: its folder name (``#2``, ... where two share one)."""
    out: list[str] = []
    for ep in episodes:
        name, i = ep.path.name, 1
        while name in out:
            i += 1
            name = f"{ep.path.name} #{i}"
        out.append(name)
    return out


# ----------------------------------------------------------------------------- trace
_TRACE_ENTITY = {
    "planner_call": "planner/calls",
    "bridge_decision": "bridge/decisions",
    "plan": "plan/plans",
    "subgoal_start": "plan/subgoals",
    "skill_outcome": "plan/outcomes",
}


def _level(r: dict) -> str:
    if r.get("kind") == "bridge_decision":
        return "INFO" if r.get("decision") == "accepted" else "WARN"
    if r.get("kind") == "skill_outcome":
        return "INFO" if r.get("success") else "WARN"
    if r.get("kind") in ("aborted", "fault", "goal_unmet", "stale"):
        return "WARN"
    return "INFO"


def _log_trace(rr, rec, ep: Episode, tl: str) -> None:
    """The instruction and the trace records, grouped into one text column per entity."""
    from skillbridge.episodes.replay import timeline_rows

    task = str(ep.meta.get("task") or "")
    logs: dict[str, tuple[list[int], list[str], list[str]]] = {
        "instruction": ([0], [f"instruction: {task}"], ["INFO"])
    }
    docs: dict[str, tuple[list[int], list[str]]] = {"instruction": ([0], [task])}
    for r, (step, _sim, kind, detail) in zip(ep.trace, timeline_rows(ep), strict=False):
        k = max(0, int(step))
        steps, texts, levels = logs.setdefault(_TRACE_ENTITY.get(kind, "events"), ([], [], []))
        steps.append(k)
        texts.append(f"{kind}: {detail}")
        levels.append(_level(r))
        if kind == "planner_call":
            path, doc = "planner/raw", str(r.get("raw") or "")
        elif kind == "bridge_decision":
            reasons = r.get("reasons") if isinstance(r.get("reasons"), list) else []
            path, doc = "bridge/reasons", json.dumps(reasons, indent=2, default=str)
        else:
            continue
        doc_steps, doc_texts = docs.setdefault(path, ([], []))
        doc_steps.append(k)
        doc_texts.append(doc)
    for path, (steps, texts, levels) in logs.items():
        _send(rr, rec, path, tl, steps, rr.TextLog.columns(text=texts, level=levels))
    for path, (steps, texts) in docs.items():
        media = ["text/plain"] * len(texts)
        _send(rr, rec, path, tl, steps, rr.TextDocument.columns(text=texts, media_type=media))


# ----------------------------------------------------------------------------- steps
def _facts(world) -> set[str]:
    from bridge import goals

    out = set()
    for o in world.objects:
        if o.held:
            out.add(f"held({o.name})")
        if o.in_bin:
            out.add(f"in({o.name}, {o.in_bin})")
        if o.on:
            out.add(f"on({o.name}, {o.on})")
        if o.on_table:
            out.add(f"on_table({o.name})")
    if goals.evaluate(["home"], world)[0]["met"]:
        out.add("home")
    return out


def _goal(ep: Episode) -> list[str]:
    res = ep.result
    goal = res.get("goal")
    if not isinstance(goal, list) or not all(isinstance(g, str) for g in goal):
        return []
    from bridge import goals

    try:
        goals.parse_goal(goal)
    except Exception:  # noqa: BLE001 - a received goal is data: show what parses, no crash
        return []
    return goal


@dataclass
class _Samples:
    """What every recorded state shows, gathered before anything is sent."""

    pos: np.ndarray  # (states, bodies, 3)
    quat: np.ndarray  # (states, bodies, 4) xyzw
    joints: np.ndarray  # (states, joints)
    cam_pos: dict[str, np.ndarray]
    cam_quat: dict[str, np.ndarray]
    images: dict[str, list[bytes]]
    facts: list[set[str]]
    goal: np.ndarray  # (states, goal predicates) 0/1


def _sample(rr, ep: Episode, env, bodies: list[int], joint_adr, opts, on_step) -> _Samples:
    from bridge import goals
    from skillbridge.episodes import rerun_geometry as geo

    m, d = env.model, env.data
    states = ep.all_states()
    n = len(states)
    goal = _goal(ep)
    cams = {c: m.camera(c).id for c in opts.cameras}
    out = _Samples(
        pos=np.zeros((n, len(bodies), 3)),
        quat=np.zeros((n, len(bodies), 4)),
        joints=np.zeros((n, len(joint_adr))),
        cam_pos={c: np.zeros((n, 3)) for c in cams},
        cam_quat={c: np.zeros((n, 4)) for c in cams},
        images={c: [] for c in cams},
        facts=[],
        goal=np.zeros((n, len(goal))),
    )
    for k, s in enumerate(states):
        env.set_state(s)
        out.pos[k] = d.xpos[bodies]
        out.quat[k] = d.xquat[bodies][:, [1, 2, 3, 0]]
        out.joints[k] = d.qpos[joint_adr]
        for c, cid in cams.items():
            out.cam_pos[c][k], out.cam_quat[c][k] = geo.camera_pose(d, cid)
            img = rr.Image(env.render_rgb(c)).compress(jpeg_quality=opts.jpeg_quality)
            out.images[c].append(img.blob.as_arrow_array()[0].values.to_numpy().tobytes())
        world = env.world_state()
        out.facts.append(_facts(world))
        for j, e in enumerate(goals.evaluate(goal, world) if goal else ()):
            out.goal[k, j] = 1.0 if e["met"] else 0.0
        if on_step is not None:
            on_step(1)
    return out


def _log_geometry(rr, rec, env, tl: str, shapes, samples: _Samples) -> None:
    from skillbridge.episodes import rerun_geometry as geo

    for i, (b, kinds) in enumerate(shapes.items()):
        path = f"world/{_slug(rr, geo.body_name(env.model, b))}"
        for sh in kinds:
            arch = getattr(rr, sh.kind)
            cols = [
                *arch.columns(**sh.fields).partition([sh.count]),
                *arch.columns(fill_mode=["solid"]),
            ]
            _send(rr, rec, f"{path}/{sh.kind}", tl, [0], cols)
        _log_poses(rr, rec, path, tl, samples.pos[:, i], samples.quat[:, i])


def _log_poses(rr, rec, path: str, tl: str, pos: np.ndarray, quat: np.ndarray) -> None:
    """Poses at every step, or the first one alone where nothing ever moves."""
    if not len(pos):
        return
    moves = bool(np.any(pos != pos[0]) or np.any(quat != quat[0]))
    n = len(pos) if moves else 1
    cols = rr.Transform3D.columns(translation=pos[:n], quaternion=quat[:n])
    _send(rr, rec, path, tl, np.arange(n), cols)


def _log_cameras(rr, rec, env, tl: str, samples: _Samples, opts: RerunOptions) -> None:
    from skillbridge.episodes import rerun_geometry as geo

    for c, blobs in samples.images.items():
        path = f"world/cameras/{_slug(rr, c)}"
        _log_poses(rr, rec, path, tl, samples.cam_pos[c], samples.cam_quat[c])
        fovy = float(env.model.cam_fovy[env.model.camera(c).id])
        pinhole = rr.Pinhole.columns(
            image_from_camera=[geo.intrinsics(fovy, opts.width, opts.height)],
            resolution=[[opts.width, opts.height]],
            camera_xyz=[rr.components.ViewCoordinates.RUB],
            image_plane_distance=[0.08],
        )
        _send(rr, rec, path, tl, [0], pinhole)
        start = 0
        while start < len(blobs):  # chunks of about IMAGE_CHUNK_BYTES
            end, size = start, 0
            while end < len(blobs) and (
                end == start or size + len(blobs[end]) <= IMAGE_CHUNK_BYTES
            ):
                size += len(blobs[end])
                end += 1
            cols = rr.EncodedImage.columns(
                blob=blobs[start:end], media_type=["image/jpeg"] * (end - start)
            )
            _send(rr, rec, path, tl, np.arange(start, end), cols)
            start = end


def log_episode(
    rec,
    ep: Episode,
    opts: RerunOptions | None = None,
    on_step: Callable[[int], None] | None = None,
    timeline: str | None = None,
) -> None:
    """Log one episode into the recording stream ``rec``, on the timeline ``timeline``
    (default: the episode's folder name)."""
    from sim import scene
    from skillbridge.episodes import rerun_geometry as geo
    from skillbridge.episodes.replay import _env

    rr = rerun_module()
    opts = opts or RerunOptions()
    tl = timeline or ep.path.name
    env = _env(ep, opts.width, opts.height)
    m = env.model
    known = [m.camera(i).name for i in range(m.ncam)]
    try:
        for c in opts.cameras:
            if c not in known:
                raise ViewerError(f"unknown camera {c!r}; the scene has {', '.join(known)}")
        shapes = geo.body_shapes(m)
        joint_names = [*scene.ARM_JOINTS, *scene.FINGER_JOINTS]
        joint_adr = [int(m.jnt_qposadr[m.joint(j).id]) for j in joint_names]
        samples = _sample(rr, ep, env, list(shapes), joint_adr, opts, on_step)
        _log_geometry(rr, rec, env, tl, shapes, samples)
        _log_cameras(rr, rec, env, tl, samples, opts)
    finally:
        env.close()
    _series(rr, rec, "robot/joints", tl, samples.joints, joint_names)
    a = ep.actions
    names = (
        ACTION_NAMES if a.shape[1] == len(ACTION_NAMES) else [f"a{i}" for i in range(a.shape[1])]
    )
    _series(rr, rec, "robot/actions", tl, a, names)
    _series(rr, rec, "plan/subgoal_index", tl, ep.subgoals.reshape(-1, 1), ["subgoal"])
    seen = sorted(set().union(*samples.facts)) if samples.facts else []
    held = np.array([[f in facts for f in seen] for facts in samples.facts], np.float64)
    _series(rr, rec, "world_state", tl, held.reshape(len(samples.facts), len(seen)), seen)
    _series(rr, rec, "goal", tl, samples.goal, _goal(ep))
    _log_trace(rr, rec, ep, tl)


def blueprint(cameras: tuple[str, ...], timeline: str | None, fps: float = 25.0):
    """The viewer's layout: the 3D scene and the text log on the left; the camera images,
    the plots and the documents (instruction, raw planner output, bridge reasons) on the
    right; the time panel on the first episode's timeline."""
    import rerun.blueprint as rrb

    rr = rerun_module()
    images = [rrb.Spatial2DView(name=c, origin=f"/world/cameras/{_slug(rr, c)}") for c in cameras]
    plots = rrb.Tabs(
        rrb.TimeSeriesView(name="joints", origin="/robot/joints"),
        rrb.TimeSeriesView(name="actions", origin="/robot/actions"),
        rrb.TimeSeriesView(name="goal", origin="/goal"),
        rrb.TimeSeriesView(name="world state", origin="/world_state"),
        rrb.TimeSeriesView(name="subgoal", origin="/plan/subgoal_index"),
    )
    docs = rrb.Tabs(
        rrb.TextDocumentView(name="instruction", origin="/instruction"),
        rrb.TextDocumentView(name="planner output", origin="/planner/raw"),
        rrb.TextDocumentView(name="bridge reasons", origin="/bridge/reasons"),
    )
    right = [rrb.Horizontal(*images)] if images else []
    left = rrb.Vertical(
        rrb.Spatial3DView(name="scene", origin="/world"),
        rrb.TextLogView(name="trace", origin="/"),
        row_shares=[3, 1],
    )
    return rrb.Blueprint(
        rrb.Horizontal(
            left,
            rrb.Vertical(*right, plots, docs, row_shares=[2, 2, 1][-len(right) - 2 :]),
            column_shares=[3, 2],
        ),
        rrb.TimePanel(timeline=timeline, fps=fps),
        collapse_panels=False,
    )


def _recording(rr, episodes: list[Episode]):
    """One recording for all episodes: a single episode's trace id, else one derived from
    all of them (the same episodes give the same id)."""
    ids = [
        ep.meta["trace_id"] if isinstance(ep.meta.get("trace_id"), str) else ep.path.name
        for ep in episodes
    ]
    rid = ids[0] if len(ids) == 1 else hashlib.sha256("\n".join(ids).encode()).hexdigest()[:32]
    return rr.RecordingStream(APP_ID, recording_id=rid)


def _log_all(rr, rec, episodes: list[Episode], opts: RerunOptions | None, on_step) -> None:
    opts = opts or RerunOptions()
    names = timelines(episodes)
    rec.send_recording_name(
        episodes[0].path.name if len(episodes) == 1 else f"{len(episodes)} episodes"
    )
    rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
    for ep, tl in zip(episodes, names, strict=True):
        log_episode(rec, ep, opts, on_step, timeline=tl)


def _fps(episodes: list[Episode]) -> float:
    from skillbridge.episodes.replay import _float

    dt = _float(episodes[0].meta.get("control_dt"), 0.04) if episodes else 0.04
    return 1.0 / dt if dt > 0 and math.isfinite(1.0 / dt) else 25.0


# ----------------------------------------------------------------------------- outputs
def save(
    episodes: list[Episode],
    target: Path,
    opts: RerunOptions | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Path:
    """Write the episodes as one recording into an ``.rrd`` file. The recording is
    assembled in memory and written once (temporary file + fsync + rename): a full disk or
    an unwritable folder is a :class:`ViewerError` and leaves no file behind."""
    from sim.util import atomic_path

    rr = rerun_module()
    target = check_save_target(target)
    opts = opts or RerunOptions()
    rec = _recording(rr, episodes)
    stream = rec.binary_stream()
    try:
        rec.send_blueprint(
            blueprint(opts.cameras, timelines(episodes)[0] if episodes else None, _fps(episodes))
        )
        _log_all(rr, rec, episodes, opts, on_step)
        data = stream.read()
    except RuntimeError as e:  # the SDK's encoder
        raise ViewerError(f"Rerun could not encode the recording: {e}".splitlines()[0]) from None
    finally:
        rec.disconnect()
    try:
        with atomic_path(target) as tmp:
            with open(tmp, "wb") as f:
                f.write(data or b"")
                f.flush()
                os.fsync(f.fileno())
            check_save_target(target)  # still nothing but an older recording there
    except OSError as e:
        raise ViewerError(f"cannot write {target}: {e.strerror or e}") from None
    return target


def spawn(
    episodes: list[Episode],
    opts: RerunOptions | None = None,
    on_step: Callable[[int], None] | None = None,
) -> None:
    """Open the Rerun viewer (needs a display) with the episodes in one recording."""
    from skillbridge.episodes.replay import has_display

    rr = rerun_module()
    if not has_display():
        raise ViewerError(
            "the Rerun viewer needs a display (DISPLAY/WAYLAND_DISPLAY is not "
            "set); use --save FILE.rrd and open it with 'rerun FILE.rrd'"
        )
    opts = opts or RerunOptions()
    rec = _recording(rr, episodes)
    bp = blueprint(opts.cameras, timelines(episodes)[0] if episodes else None, _fps(episodes))
    try:
        rec.spawn(default_blueprint=bp)
    except Exception as e:  # noqa: BLE001 - the viewer binary or its port
        raise ViewerError(f"cannot start the Rerun viewer: {e}".splitlines()[0]) from None
    _log_all(rr, rec, episodes, opts, on_step)
    rec.flush()


def load_all(paths: list[Path]) -> list[Episode]:
    """Episodes named by ``paths`` (episode folders or folders of episodes)."""
    from skillbridge.episodes.episode import load
    from skillbridge.episodes.lerobot_export import ExportError, find_episodes

    try:
        found = find_episodes(paths)
    except ExportError as e:
        raise EpisodeError(str(e)) from None
    return [load(p) for p in found]


@dataclass
class Contents:
    """What an .rrd file holds, chunk by chunk as written, read with Rerun's own reader."""

    recordings: list[str]
    blueprints: int
    chunks: int
    #: ``{timeline: {entity path: {archetype: rows}}}``; static rows under ``""``.
    rows: dict[str, dict[str, dict[str, int]]]

    def count(self, timeline: str, entity: str, archetype: str) -> int:
        return self.rows.get(timeline, {}).get(entity, {}).get(archetype, 0)


def read_back(path: Path) -> Contents:
    """The recordings, chunks and rows (per timeline, entity and archetype) of an .rrd."""
    rerun_module()
    from rerun.chunk import RrdReader

    reader = RrdReader(path)
    ids: list[str] = []
    chunks = 0
    rows: dict[str, dict[str, dict[str, int]]] = {}
    for entry in reader.recordings():
        ids.append(entry.recording_id)
        for chunk in reader.stream(store=entry):
            chunks += 1
            names = chunk.to_record_batch().schema.names
            tls = set(chunk.timeline_names)
            kinds = {n.split(":", 1)[0] for n in names if ":" in n and n not in tls}
            for tl in chunk.timeline_names or [""]:
                per = rows.setdefault(tl, {}).setdefault(chunk.entity_path, {})
                for kind in kinds:
                    per[kind] = per.get(kind, 0) + chunk.num_rows
    return Contents(ids, len(reader.blueprints()), chunks, rows)
