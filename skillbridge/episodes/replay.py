"""Replaying a recorded episode: video, viewer, timeline, exact re-simulation check.

- :func:`render_video` restores every recorded state and renders it to mp4 with the active
  subgoal burnt in as a caption (no physics is stepped: what you see is what was recorded);
- :func:`view` does the same in MuJoCo's interactive viewer where a display exists;
- :func:`verify` restores the *first* state only and re-simulates with the recorded actions,
  comparing every resulting state bit for bit with the recording;
- :func:`print_timeline` prints the trace (planner calls, bridge decisions, skills) in order.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from skillbridge.episodes.episode import (
    Episode,
    EpisodeError,
    format_subgoal,
    load,
    scene_name,
)
from skillbridge.errors import plain, safe


def _episode(ep: Episode | str | Path) -> Episode:
    return ep if isinstance(ep, Episode) else load(ep)


def _env(ep: Episode, width: int = 480, height: int = 360):
    import sim  # noqa: F401  (GL backend before rendering imports)
    from sim import physics
    from sim.env import TabletopEnv

    env = TabletopEnv(width=width, height=height, scene=scene_name(ep.meta))
    need = physics.state_size(env.model)
    if int(ep.meta["state_size"]) != need:
        env.close()
        raise EpisodeError(
            f"{ep.path}: recorded with a different scene model (state size "
            f"{ep.meta['state_size']}, this model has {need})"
        )
    return env


#: Playback speeds a video or the viewer accepts: slower than 0.1x repeats each state in 10+
#: frames (minutes of rendering for nothing), faster than 100x shows almost no state.
SPEED_RANGE = (0.1, 100.0)
#: At most this many video frames (20 minutes at 25 fps), whatever the episode and speed.
MAX_FRAMES = 30_000


def check_speed(speed: float) -> float:
    """``speed`` if it is in :data:`SPEED_RANGE`, else :class:`EpisodeError` (one line)."""
    lo, hi = SPEED_RANGE
    if not (isinstance(speed, (int, float)) and math.isfinite(speed) and lo <= speed <= hi):
        raise EpisodeError(f"--speed must be between {lo:g} and {hi:g}, not {speed!r}")
    return float(speed)


def frame_indices(n_states: int, speed: float) -> np.ndarray:
    """Which recorded states become video frames at ``speed`` (25 fps output): every
    ``speed``-th state, repeated when ``speed`` < 1. ``ceil(n_states / speed)`` frames."""
    speed = check_speed(speed)
    if n_states / speed > MAX_FRAMES:
        raise EpisodeError(
            f"the video would have {math.ceil(n_states / speed)} frames, more "
            f"than {MAX_FRAMES}; use a higher --speed"
        )
    count = max(1, math.ceil(n_states / speed - 1e-9)) if n_states else 0
    return np.minimum((np.arange(count) * speed).astype(np.int64), max(0, n_states - 1))


def _labels(ep: Episode) -> list[str]:
    """Caption of every state in :meth:`Episode.all_states` order."""
    names = ep.subgoal_labels()
    names.setdefault(-1, "settling, goal check")  # the steps after the last subgoal
    names.setdefault(-2, "stopping: the user interjected")  # runner.STOP_INDEX
    n = ep.n_steps
    out = []
    for k in range(n):
        i = int(ep.subgoals[k])
        out.append(plain(f"[{i + 1}] {names.get(i, f'subgoal {i}')}"))
    extra = ep.n_states - n
    if extra:
        res = ep.result
        end = res.get("status") or ("incomplete" if not ep.complete else "done")
        out.extend([plain(f"end: {end}") if n else "start"] * extra)
    return out


def render_video(
    ep: Episode | str | Path,
    out: str | Path,
    *,
    speed: float = 1.0,
    width: int = 480,
    height: int = 360,
    camera: str | None = None,
    on_frame=None,
) -> int:
    """Render the recorded states to ``out`` (mp4, written atomically); return frames."""
    from sim import scene
    from sim.video import VideoError, VideoWriter, check_video_target

    try:
        check_video_target(out)
    except VideoError as e:
        raise EpisodeError(str(e)) from None
    ep = _episode(ep)
    frames = iter_frames(ep, speed=speed, width=width, height=height, camera=camera)
    first = next(frames)  # an unrenderable episode fails here, before any file is opened
    n = len(frame_indices(ep.n_states, speed))
    fps = int(round(1.0 / scene.CONTROL_DT))
    try:
        with VideoWriter(out, fps=fps) as vw:
            for j, frame in enumerate(itertools.chain([first], frames)):
                vw.append(frame)
                if on_frame is not None:
                    on_frame(j + 1, n)
        return vw.frames
    except VideoError as e:
        raise EpisodeError(str(e)) from None
    finally:
        frames.close()


def iter_frames(
    ep: Episode | str | Path,
    *,
    speed: float = 1.0,
    width: int = 480,
    height: int = 360,
    camera: str | None = None,
    prefix: str = "",
):
    """The episode's captioned frames at ``speed`` (what :func:`render_video` writes; a
    chain of episodes is one video of several of these)."""
    from sim.video import caption

    ep = _episode(ep)
    states = ep.all_states()
    if not len(states):
        raise EpisodeError(f"{ep.path}: no recorded state to render")
    labels = _labels(ep)
    env = _env(ep, width, height)
    bars: dict[str, np.ndarray] = {}
    bar = max(18, height // 14)
    try:
        for k in frame_indices(len(states), speed):
            env.set_state(states[k])
            frame = env.render_rgb(camera)
            text = prefix + labels[k]
            if text not in bars:  # the caption only depends on its text: raster once
                bars[text] = caption(np.zeros_like(frame), text)[-bar:]
            frame = frame.copy()
            frame[-bar:] = bars[text]
            yield frame
    finally:
        env.close()


def has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def view(ep: Episode | str | Path, *, speed: float = 1.0) -> None:
    """Play the episode in MuJoCo's passive viewer (needs a display)."""
    ep = _episode(ep)
    if not has_display():
        raise EpisodeError(
            "--viewer needs a display (DISPLAY/WAYLAND_DISPLAY is not set); "
            "use --video PATH to render an mp4 instead"
        )
    speed = check_speed(speed)
    import mujoco.viewer

    from sim import scene

    env = _env(ep)
    states = ep.all_states()
    dt = scene.CONTROL_DT / speed
    try:
        with mujoco.viewer.launch_passive(env.model, env.data) as v:
            for s in states:
                if not v.is_running():
                    break
                t0 = time.perf_counter()
                env.set_state(s)
                v.sync()
                time.sleep(max(0.0, dt - (time.perf_counter() - t0)))
            while v.is_running():
                time.sleep(0.05)
    except Exception as e:  # noqa: BLE001 - GL/GLFW failures are environment problems
        if isinstance(e, EpisodeError):
            raise
        raise EpisodeError(f"cannot open the MuJoCo viewer: {e}".splitlines()[0]) from None
    finally:
        env.close()


@dataclass
class VerifyResult:
    ok: bool
    steps: int
    checked: int
    first_mismatch: int | None = None
    max_abs_diff: float = 0.0
    model_hash_ok: bool = True
    wall_s: float = 0.0
    message: str = ""

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s > 0 else float("inf")

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["steps_per_s"] = round(self.steps_per_s, 1)
        if not math.isfinite(self.max_abs_diff):  # NaN/inf are not JSON
            d["max_abs_diff"] = None
        return d


def verify(ep: Episode | str | Path) -> VerifyResult:
    """Re-simulate from the first recorded state with the recorded actions; compare every
    following state bit for bit (as integers, so NaNs and signed zeros count too).

    The hand's commanded turn (:func:`sim.physics.command_slice`) is a command a skill sets
    between steps, like an action: it is taken from the recorded row, and everything it
    leads to is checked."""
    from sim import physics

    ep = _episode(ep)
    ref = ep.all_states()
    n = ep.n_steps
    hash_ok = ep.meta.get("model_hash") == physics.model_hash(scene_name(ep.meta))
    env = _env(ep)
    # an injected fault (the runner's test hook moved a cube) is a state no action led to:
    # the re-simulation continues from the recorded state there
    jumps = {
        _int(r.get("step"), -1)
        for r in ep.trace
        if isinstance(r, dict) and r.get("kind") == "fault"
    }
    cmd = physics.command_slice(env.model)
    t0 = time.perf_counter()
    checked, first, worst = 0, None, 0.0
    try:
        env.set_state(ref[0] if len(ref) else ep.initial_state)
        for k in range(n):
            env.step_physics(ep.actions[k])
            if k + 1 >= len(ref):
                break  # incomplete episode: the state after the last action was not recorded
            if k + 1 in jumps:
                env.set_state(ref[k + 1])
                continue
            s = env.get_state()
            if not np.array_equal(s[cmd], ref[k + 1][cmd]):  # a skill turned the hand here
                env.data.mocap_quat[env.controller.mocap] = ref[k + 1][cmd]
                s = env.get_state()
            checked += 1
            if not np.array_equal(s.view(np.uint64), ref[k + 1].view(np.uint64)):
                first = k + 1
                differs = s.view(np.uint64) != ref[k + 1].view(np.uint64)
                with np.errstate(invalid="ignore"):
                    d = np.abs(s - ref[k + 1])[differs]
                # a NaN against a number is a difference, not 0 (nanmax skipped it)
                worst = math.nan if np.isnan(d).any() else float(d.max())
                break
    finally:
        env.close()
    wall = time.perf_counter() - t0
    if first is not None:
        msg = f"state {first} differs from the recording (max |diff| {worst:.3g})" + (
            "" if hash_ok else "; the episode was recorded with a different model/MuJoCo"
        )
    else:
        msg = f"all {checked} states match bit for bit"
        if not ep.complete:
            msg += " (incomplete episode: checked what was recorded)"
    return VerifyResult(first is None, n, checked, first, worst, hash_ok, wall, msg)


# ----------------------------------------------------------------------------- timeline
def _int(v, default: int = 0) -> int:
    """An edited trace field (``"step": "x"``, ``1e400``) must not break the timeline."""
    try:
        return int(v) if not isinstance(v, bool) else default
    except (TypeError, ValueError, OverflowError):
        return default


def _float(v, default: float = 0.0) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return default
    return f if math.isfinite(f) else default


def _subgoal(v) -> str:
    return format_subgoal(v) if isinstance(v, dict) else repr(v)


def _row_detail(r: dict) -> str:
    k = r.get("kind")
    if k == "planner_call":
        tok = f"{r.get('tokens_in', 0)}+{r.get('tokens_out', 0)} tok"
        lat = f"{1000 * _float(r.get('latency_s')):.0f} ms"
        raw = str(r.get("raw") or "").replace("\n", " ")
        return f"{r.get('proposer')}#{r.get('attempt')} {tok} {lat}: {raw[:80]}"
    if k == "bridge_decision":
        reasons = got if isinstance(got := r.get("reasons"), list) else []
        codes = (
            ", ".join(str(x.get("code", "?")) if isinstance(x, dict) else "?" for x in reasons)
            or "-"
        )
        return f"{r.get('decision')} {r.get('proposer')}#{r.get('attempt')} [{codes}]"
    if k == "plan":
        steps = got if isinstance(got := r.get("steps"), list) else []
        text = " → ".join(_subgoal(s) for s in steps)
        return f"{r.get('decision')} by {r.get('source')}: " + (
            text or (f"refused: {r.get('refusal')}" if r.get("refusal") else "(no steps)")
        )
    if k == "subgoal_start":
        return f"[{_int(r.get('index')) + 1}] {_subgoal(r.get('subgoal') or {})}"
    if k == "skill_outcome":
        ok = "success" if r.get("success") else f"FAILED ({r.get('reason')})"
        return f"[{_int(r.get('index')) + 1}] {r.get('skill')} {ok} in {r.get('steps')} steps"
    if k == "end":
        goal = format_goal(r.get("goal_evaluation"))
        return f"{r.get('status')}: {r.get('message')}" + (f"; goal: {goal}" if goal else "")
    if k == "goal_check":
        return ("met: " if r.get("met") else "UNMET: ") + format_goal(r.get("evaluation"))
    if k == "aborted":
        return str(r.get("reason"))
    return ", ".join(f"{a}={b}" for a, b in r.items() if a not in ("kind", "t", "step"))


def format_goal(evaluation) -> str:
    """``in(red_block, green_bin) met, home UNMET`` (a received trace is data: any shape)."""
    if not isinstance(evaluation, list):
        return ""
    return ", ".join(
        f"{e.get('predicate')} {'met' if e.get('met') else 'UNMET'}"
        for e in evaluation
        if isinstance(e, dict)
    )


def timeline_rows(ep: Episode) -> list[tuple[str, str, str, str]]:
    """(step, sim time, event, detail) per trace record, as plain text (not markup)."""
    dt = _float(ep.meta.get("control_dt"), 0.04) or 0.04
    rows = []
    for r in ep.trace:
        step = _int(r.get("step", 0) or 0)
        try:
            detail = _row_detail(r)
        except Exception:  # noqa: BLE001 - a received trace is data: show it, do not crash
            detail = repr(r)[:300]
        rows.append((str(step), f"{step * dt:.2f}", plain(r.get("kind")), plain(detail)))
    return rows


def print_timeline(ep: Episode, console=None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    c = console or Console()
    m = ep.meta
    res = ep.result
    planner = got if isinstance(got := m.get("planner"), dict) else {}
    c.print(
        f"[bold]{safe(m.get('task'))}[/bold]  seed {safe(m.get('seed'))}, planner "
        f"{safe(planner.get('spec'))}, policies {safe(m.get('policy_source'))}, "
        f"trace {safe(m.get('trace_id'))}",
        highlight=False,
    )
    status = m.get("status")
    colour = (
        "green" if res.get("status") == "success" else "yellow" if status != "complete" else "red"
    )
    c.print(
        f"[{colour}]{safe(status)}[/{colour}], outcome {safe(res.get('status', '?'))}; "
        f"{ep.n_steps} control steps "
        f"({ep.n_steps * (_float(m.get('control_dt'), 0.04) or 0.04):.2f} s simulated)",
        highlight=False,
    )
    for w in ep.warnings:
        c.print(f"[yellow]warning:[/yellow] {safe(w)}", highlight=False)
    if isinstance(res.get("goal"), list):
        c.print(
            f"goal ({safe(res.get('goal_source'))}): "
            f"{safe(', '.join(str(g) for g in res['goal']))}",
            highlight=False,
        )
        for e in res.get("goal_evaluation") or []:
            if isinstance(e, dict):
                mark = "[green]met[/green]  " if e.get("met") else "[red]unmet[/red]"
                c.print(f"  {mark} {safe(e.get('predicate'))}", highlight=False)
    t = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("step", "sim s", "event", "detail"):
        t.add_column(col, overflow="fold", no_wrap=col != "detail")
    style = {
        "skill_outcome": "cyan",
        "plan": "bold",
        "bridge_decision": "magenta",
        "end": "bold",
        "aborted": "red",
    }
    for row in timeline_rows(ep):  # Text, not str: a row is data, never markup
        t.add_row(*(Text(x) for x in row), style=style.get(row[2]))
    c.print(t)
