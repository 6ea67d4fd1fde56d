"""CLI verb ``export``: recorded episodes as a dataset other tools read (LeRobot v3.0)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from skillbridge.errors import UserError, echo, safe
from skillbridge.errors import console as make_console

FORMATS = ("lerobot",)


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    runs: list[Path] = typer.Argument(
        ..., help="Episode folders (runs/<id>) or folders of episodes (runs/)."
    ),
    fmt: str = typer.Option("lerobot", "--format", help="Dataset format: lerobot (v3.0)."),
    out: Path = typer.Option(..., "--out", help="Dataset folder to create."),
    camera: list[str] = typer.Option(
        None,
        "--camera",
        help="Camera rendered to an mp4 per frame (repeatable; default: front and wrist).",
    ),
    no_video: bool = typer.Option(False, "--no-video", help="Only the numeric columns."),
    size: str = typer.Option("480x360", "--size", help="Video WIDTHxHEIGHT (multiples of 8)."),
    dtype: str = typer.Option(
        "float32",
        "--dtype",
        help="float32 (LeRobot's convention) or float64 (bit-identical to the episode).",
    ),
    include_incomplete: bool = typer.Option(
        False, "--include-incomplete", help="Also export episodes a kill left incomplete."
    ),
    force: bool = typer.Option(False, "--force", help="Replace an earlier export at --out."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON result."),
):
    """Export recorded episodes as a LeRobotDataset (parquet frames, mp4 per camera, meta/)."""
    from skillbridge import lerobot_export as lx

    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r} is not supported; use one of: {', '.join(FORMATS)}")
    c = make_console(stderr=True, soft_wrap=True)
    try:
        width, height = lx.parse_size(size)
        cameras = () if no_video else tuple(camera or ("front", "wrist"))
        opts = lx.ExportOptions(
            cameras=cameras,
            width=width,
            height=height,
            dtype=dtype,
            include_incomplete=include_incomplete,
            force=force,
        )
        result = _run(lx, runs, out, opts, c)
    except lx.ExportError as e:
        raise UserError(str(e), 2) from None
    for s in result.skipped:
        c.print(f"[yellow]skipped:[/yellow] {safe(s)}", highlight=False)
    if as_json:
        echo(json.dumps(result.to_dict(), indent=2))
        return
    per = result.wall_s / max(1, result.episodes)
    c.print(
        f"[green]exported[/green] {result.episodes} episodes, {result.frames} frames, "
        f"{result.tasks} tasks to {safe(result.out)} (LeRobotDataset {lx.CODEBASE_VERSION}; "
        f"{result.wall_s:.1f} s, {per:.1f} s per episode)",
        highlight=False,
    )


def _run(lx, runs, out, opts, c):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=c,
        transient=True,
    ) as bar:
        task = bar.add_task("exporting frames", total=None)
        return lx.export_lerobot(
            runs,
            out,
            opts,
            on_start=lambda total: bar.update(task, total=total),
            on_frame=lambda n: bar.advance(task, n),
        )
