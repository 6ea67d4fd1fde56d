"""``skillbridge replay``: a recorded episode, bit-exact, or re-run with its seed."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from skillbridge.cli.common import exit_with
from skillbridge.errors import UserError, echo, safe
from skillbridge.errors import console as make_console


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)


def replay(
    episode: Path = typer.Argument(..., help="Episode folder (runs/<id>)."),
    video: Path = typer.Option(None, "--video", help="Render the episode to this mp4."),
    viewer: bool = typer.Option(
        False, "--viewer", help="Play it in MuJoCo's viewer (needs a display)."
    ),
    verify: bool = typer.Option(
        False, "--verify", help="Re-simulate and check every state bit for bit (exit 1 if not)."
    ),
    speed: float = typer.Option(1.0, "--speed", help="Playback speed for --video/--viewer."),
    timeline: bool = typer.Option(True, "--timeline/--no-timeline", help="Print the trace."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON result."),
    rerun: bool = typer.Option(False, "--rerun", help="Log it to the Rerun viewer."),
    save: Path = typer.Option(None, "--save", help="With --rerun: write FILE.rrd instead."),
    no_images: bool = typer.Option(False, "--no-images", help="With --rerun: log no images."),
):
    """Replay a recorded episode: the trace as a timeline, a video or the viewer, --verify."""
    from sim.video import VideoError, check_video_target
    from skillbridge.episodes import replay as rp
    from skillbridge.episodes.episode import EpisodeError, check_writable, load

    c = make_console(stderr=as_json, soft_wrap=True)
    try:
        speed = rp.check_speed(speed)
        ep = load(episode)
    except EpisodeError as e:
        raise UserError(str(e), 2) from None
    if video is not None:
        try:
            check_video_target(video)
            check_writable(video.parent)
        except (EpisodeError, VideoError) as e:
            raise UserError(str(e), 2) from None
    if rerun or save is not None:  # Rerun (issue 16): checked before anything is rendered
        from skillbridge.cli.export import check_rerun_args

        check_rerun_args(rerun, save)
    if no_images and not rerun:
        raise UserError("--no-images goes with --rerun")
    out: dict = {
        "episode": str(ep.path),
        "status": ep.meta.get("status"),
        "steps": ep.n_steps,
        "outcome": ep.result.get("status"),
    }
    if timeline and not as_json:
        rp.print_timeline(ep, c)
    code = 0
    try:
        if verify and ep.n_steps == 0:
            out["verify"] = {
                "ok": True,
                "steps": 0,
                "checked": 0,
                "message": "nothing to verify: the episode has no control steps",
            }
            c.print("verify: nothing to verify (the episode has no control steps)", highlight=False)
        elif verify:
            with c.status("re-simulating…"):
                v = rp.verify(ep)
            out["verify"] = v.to_dict()
            colour = "green" if v.ok else "red"
            c.print(
                f"[{colour}]verify: {safe(v.message)}[/{colour}] ({v.steps_per_s:.0f} steps/s)",
                highlight=False,
            )
            code = 0 if v.ok else 1
        if video is not None:
            with c.status(f"rendering {safe(video)}…"):
                frames = rp.render_video(ep, video, speed=speed)
            out["video"], out["video_frames"] = str(video), frames
            c.print(f"video: {safe(video)} ({frames} frames)", highlight=False)
        if viewer:
            rp.view(ep, speed=speed)
        if rerun:
            from skillbridge.cli.export import rerun_episodes
            from skillbridge.episodes.viewer import RerunOptions

            opts = RerunOptions(cameras=()) if no_images else None
            out["rerun"] = rerun_episodes([ep], save, c, opts)
    except EpisodeError as e:
        raise UserError(str(e), 2) from None
    if as_json:
        echo(json.dumps(out, indent=2))
    exit_with(code)
