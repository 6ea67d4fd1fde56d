"""Recorded episodes in the Rerun viewer (``rerun-sdk``, the optional extra ``rerun``).

One Rerun recording per episode (application ``skillbridge``, recording id the episode's
trace id), on two timelines, ``step`` (control step) and ``sim_time``:

- ``cameras/<name>``: every recorded state rendered by MuJoCo (JPEG-compressed);
- ``world/arm/<link>`` and ``world/cubes/<cube>``: each body's pose as a 3D transform (a box
  for every cube, the arm's skeleton as a line strip); ``world/bins/<bin>`` once, static;
- ``plan/subgoal_index`` (a series) and ``plan/subgoals``, ``plan/outcomes``, ``plan/plans``:
  the subgoal timeline;
- ``planner/calls`` with ``planner/raw`` (the model's raw output) and ``bridge/decisions``
  with ``bridge/reasons``: every planner call and what the bridge decided;
- ``world_state/<fact>`` (0/1 series of every predicate that held at some step: ``held(x)``,
  ``in(x, bin)``, ``on(x, y)``, ``on_table(x)``, ``home``) and ``goal/<predicate>`` (each
  predicate of the episode's goal, met or not, at every step), computed from the recorded
  physics state with the same code the runner judges success with.

Episodes are read with :func:`skillbridge.episodes.episode.load` (a hostile episode is one line of
error); trace text is shown as data, never interpreted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillbridge.episodes.episode import Episode, EpisodeError

APP_ID = "skillbridge"
CUBE_RGB = {
    "red": (220, 50, 47),
    "green": (60, 170, 60),
    "blue": (50, 100, 220),
    "yellow": (230, 200, 40),
}
RRD_MAGIC = b"RRF"  # the first bytes of an .rrd file


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
    return path


def _slug(rr, text: str) -> str:
    return rr.escape_entity_path_part(str(text))


# ----------------------------------------------------------------------------- static
def _bodies(model, root: str) -> list[int]:
    """``root`` and every body below it, in tree order."""
    top = model.body(root).id
    out = [top]
    for b in range(top + 1, model.nbody):
        if int(model.body_parentid[b]) in out:
            out.append(b)
    return out


def _log_static(rr, rec, env) -> None:
    from sim import scene

    m = env.model
    rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
    env.set_state(env.get_state())
    for name in scene.BIN_NAMES:
        pos = env.data.xpos[m.body(name).id]
        rgb = CUBE_RGB.get(scene.cube_color(name), (128, 128, 128))
        h = scene.BIN_WALL_HEIGHT / 2
        rec.log(
            f"world/bins/{name}",
            rr.Boxes3D(
                centers=[[pos[0], pos[1], h]],
                half_sizes=[[scene.BIN_INNER_HALF] * 2 + [h]],
                colors=[rgb],
                labels=[name],
            ),
            static=True,
        )
    for name in scene.CUBE_NAMES:
        rgb = CUBE_RGB.get(scene.cube_color(name), (128, 128, 128))
        rec.log(
            f"world/cubes/{name}",
            rr.Boxes3D(half_sizes=[[scene.CUBE_HALF] * 3], colors=[rgb], fill_mode="solid"),
            static=True,
        )


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


def _log_trace(rr, rec, ep: Episode, dt: float) -> None:
    from skillbridge.episodes.replay import timeline_rows

    for r, (step, _sim, kind, detail) in zip(ep.trace, timeline_rows(ep), strict=False):
        k = int(step)
        rec.set_time("step", sequence=k)
        rec.set_time("sim_time", duration=k * dt)
        rec.log(_TRACE_ENTITY.get(kind, "events"), rr.TextLog(f"{kind}: {detail}", level=_level(r)))
        if kind == "planner_call":
            rec.log(
                "planner/raw", rr.TextDocument(str(r.get("raw") or ""), media_type="text/plain")
            )
        elif kind == "bridge_decision":
            reasons = r.get("reasons") if isinstance(r.get("reasons"), list) else []
            rec.log(
                "bridge/reasons",
                rr.TextDocument(
                    json.dumps(reasons, indent=2, default=str), media_type="text/plain"
                ),
            )


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


def _log_pose(rr, rec, path: str, pos, quat) -> None:
    w, x, y, z = (float(v) for v in quat)
    rec.log(
        path,
        rr.Transform3D(
            translation=[float(v) for v in pos], quaternion=rr.Quaternion(xyzw=[x, y, z, w])
        ),
    )


def _log_state(rr, rec, env, arm: list[int], cubes: list[int]) -> None:
    m, d = env.model, env.data
    for b in arm:
        _log_pose(rr, rec, f"world/arm/{m.body(b).name}", d.xpos[b], d.xquat[b])
    for b in cubes:
        _log_pose(rr, rec, f"world/cubes/{m.body(b).name}", d.xpos[b], d.xquat[b])
    chain = [d.xpos[b].tolist() for b in arm if m.body(b).name not in ("finger_right",)]
    rec.log("world/arm/skeleton", rr.LineStrips3D([chain], colors=[(90, 90, 90)]))


def _log_steps(
    rr, rec, ep: Episode, env, opts: RerunOptions, dt: float, on_step: Callable[[int], None] | None
) -> None:
    from bridge import goals
    from sim import scene

    m = env.model
    arm = _bodies(m, "base")
    cubes = [m.body(n).id for n in scene.CUBE_NAMES]
    goal = _goal(ep)
    facts_at: list[set[str]] = []
    states = ep.all_states()
    for k, s in enumerate(states):
        env.set_state(s)
        rec.set_time("step", sequence=k)
        rec.set_time("sim_time", duration=k * dt)
        _log_state(rr, rec, env, arm, cubes)
        if k < ep.n_steps:
            rec.log("plan/subgoal_index", rr.Scalars(float(ep.subgoals[k])))
        for cam in opts.cameras:
            img = rr.Image(env.render_rgb(cam)).compress(jpeg_quality=opts.jpeg_quality)
            rec.log(f"cameras/{cam}", img)
        world = env.world_state()
        facts_at.append(_facts(world))
        for e in goals.evaluate(goal, world) if goal else ():
            rec.log(f"goal/{_slug(rr, e['predicate'])}", rr.Scalars(1.0 if e["met"] else 0.0))
        if on_step is not None:
            on_step(1)
    seen = sorted(set().union(*facts_at)) if facts_at else []
    for k, facts in enumerate(facts_at):  # every fact that ever held, as a 0/1 series
        rec.set_time("step", sequence=k)
        rec.set_time("sim_time", duration=k * dt)
        for f in seen:
            rec.log(f"world_state/{_slug(rr, f)}", rr.Scalars(1.0 if f in facts else 0.0))


def log_episode(
    rec, ep: Episode, opts: RerunOptions | None = None, on_step: Callable[[int], None] | None = None
) -> None:
    """Log one episode into the recording stream ``rec``."""
    from skillbridge.episodes.replay import _env

    rr = rerun_module()
    opts = opts or RerunOptions()
    dt = float(ep.meta.get("control_dt") or 0.04)
    env = _env(ep, opts.width, opts.height)
    known = [env.model.camera(i).name for i in range(env.model.ncam)]
    try:
        for c in opts.cameras:
            if c not in known:
                raise ViewerError(f"unknown camera {c!r}; the scene has {', '.join(known)}")
        rec.send_recording_name(ep.path.name)
        _log_static(rr, rec, env)
        _log_trace(rr, rec, ep, dt)
        _log_steps(rr, rec, ep, env, opts, dt, on_step)
    finally:
        env.close()


def _recording(rr, ep: Episode):
    rid = ep.meta.get("trace_id") if isinstance(ep.meta.get("trace_id"), str) else None
    return rr.RecordingStream(APP_ID, recording_id=rid or ep.path.name)


# ----------------------------------------------------------------------------- outputs
def _rerun_cli() -> str:
    here = Path(sys.executable).parent / "rerun"
    cli = str(here) if here.exists() else shutil.which("rerun")
    if not cli:
        raise ViewerError("the 'rerun' command of rerun-sdk is not on PATH")
    return cli


def save(
    episodes: list[Episode],
    target: Path,
    opts: RerunOptions | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Path:
    """Write the episodes as recordings into one ``.rrd`` file (temp file + rename); with
    several episodes, one recording each, merged with ``rerun rrd merge``."""
    rr = rerun_module()
    target = check_save_target(target)
    tmpdir = target.parent / f".{target.name}.tmp{os.getpid()}"
    shutil.rmtree(tmpdir, ignore_errors=True)
    try:
        tmpdir.mkdir()
        parts = []
        for i, ep in enumerate(episodes):
            part = tmpdir / f"{i:05d}.rrd"
            rec = _recording(rr, ep)
            rec.save(part)
            log_episode(rec, ep, opts, on_step)
            rec.flush()
            rec.disconnect()
            parts.append(part)
        merged = parts[0] if len(parts) == 1 else _merge(parts, tmpdir / "merged.rrd")
        check_save_target(target)  # still nothing but an older recording there
        os.replace(merged, target)
    except OSError as e:
        raise ViewerError(f"cannot write {target}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return target


def _merge(parts: list[Path], out: Path) -> Path:
    cmd = [_rerun_cli(), "rrd", "merge", *map(str, parts), "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or not out.exists():
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:200]
        raise ViewerError(f"rerun rrd merge failed: {tail}")
    return out


def spawn(
    episodes: list[Episode],
    opts: RerunOptions | None = None,
    on_step: Callable[[int], None] | None = None,
) -> None:
    """Open the Rerun viewer (needs a display) with one recording per episode."""
    from skillbridge.episodes.replay import has_display

    rr = rerun_module()
    if not has_display():
        raise ViewerError(
            "the Rerun viewer needs a display (DISPLAY/WAYLAND_DISPLAY is not "
            "set); use --save FILE.rrd and open it with 'rerun FILE.rrd'"
        )
    for i, ep in enumerate(episodes):
        rec = _recording(rr, ep)
        try:
            if i == 0:
                rec.spawn()
            else:
                rec.connect_grpc()
        except Exception as e:  # noqa: BLE001 - the viewer binary or its port
            raise ViewerError(f"cannot start the Rerun viewer: {e}".splitlines()[0]) from None
        log_episode(rec, ep, opts, on_step)
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


def read_back(path: Path) -> dict[str, dict[str, int]]:
    """``{recording_id: {entity_path: rows}}`` of an .rrd file, read with Rerun's reader."""
    rerun_module()
    from rerun.chunk import RrdReader

    reader = RrdReader(path)
    out: dict[str, dict[str, int]] = {}
    for entry in reader.recordings():
        rows: dict[str, int] = {}
        for chunk in reader.stream(store=entry).collect().stream():
            rows[chunk.entity_path] = rows.get(chunk.entity_path, 0) + chunk.num_rows
        out[entry.recording_id] = rows
    return out
