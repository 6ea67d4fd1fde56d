"""``skillbridge export``: recorded episodes as a LeRobot or Minari dataset."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from skillbridge.cli.common import progress_bar
from skillbridge.errors import UserError, echo, safe
from skillbridge.errors import console as make_console


def register(app: typer.Typer) -> None:
    app.command("export")(export)


FORMATS = ("lerobot", "minari")


def export(
    runs: list[Path] = typer.Argument(
        ..., help="Episode folders (runs/<id>) or folders of episodes (runs/)."
    ),
    fmt: str = typer.Option(
        "lerobot", "--format", help="Dataset format: lerobot (v3.0) or minari."
    ),
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
    dataset_id: str = typer.Option(
        "skillbridge/tabletop-v0", "--dataset-id", help="The Minari dataset's id."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON result."),
):
    """Export recorded episodes as a LeRobotDataset (parquet frames, mp4 per camera, meta/)
    or, with --format minari, as a Minari dataset (--out is then a Minari datasets root)."""
    from skillbridge.episodes import lerobot_export as lx

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
        if fmt == "minari":
            from skillbridge.episodes.minari_export import export_minari

            result = export_minari(runs, out, dataset_id=dataset_id, force=force)
        else:
            result = _run(lx, runs, out, opts, c)
    except lx.ExportError as e:
        raise UserError(str(e), 2) from None
    except KeyboardInterrupt:
        # typer would exit 130 with a bare newline; an export is published whole or not at all
        raise UserError("interrupted; nothing half-written is left", 130) from None
    for s in result.skipped:
        c.print(f"[yellow]skipped:[/yellow] {safe(s)}", highlight=False)
    for w in result.warnings:
        c.print(f"[yellow]warning:[/yellow] {safe(w)}", highlight=False)
    if as_json:
        echo(json.dumps(result.to_dict(), indent=2))
        return
    per = result.wall_s / max(1, result.episodes)
    kind = f"Minari {dataset_id}" if fmt == "minari" else f"LeRobotDataset {lx.CODEBASE_VERSION}"
    c.print(
        f"[green]exported[/green] {result.episodes} episodes, {result.frames} frames, "
        f"{result.tasks} tasks to {safe(result.out)} ({kind}; "
        f"{result.wall_s:.1f} s, {per:.1f} s per episode)",
        highlight=False,
    )


def _run(lx, runs, out, opts, c):
    with progress_bar(c, transient=True) as bar:
        task = bar.add_task("exporting frames", total=None)
        return lx.export_lerobot(
            runs,
            out,
            opts,
            on_start=lambda total: bar.update(task, total=total),
            on_frame=lambda n: bar.advance(task, n),
        )


# ----------------------------------------------------------------------------- Rerun
def check_rerun_args(rerun: bool, save: Path | None) -> None:
    """``replay --rerun [--save FILE.rrd]``: checked before anything is rendered."""
    from skillbridge.episodes import viewer as vw

    if save is not None and not rerun:
        raise UserError("--save FILE.rrd goes with --rerun")
    try:
        vw.rerun_module()
        if save is not None:
            vw.check_save_target(save)
    except vw.ViewerError as e:
        raise UserError(str(e), 2) from None


def rerun_episodes(eps: list, save: Path | None, c, opts=None) -> dict:
    """Log episodes to Rerun (a file with ``save``, else the viewer); the JSON part."""
    from skillbridge.episodes import viewer as vw

    total = sum(e.n_states for e in eps)
    try:
        with progress_bar(c, transient=True) as bar:
            task = bar.add_task("logging to Rerun", total=total)

            def step(n: int) -> None:
                bar.advance(task, n)

            if save is not None:
                vw.save(eps, save, opts, on_step=step)
            else:
                vw.spawn(eps, opts, on_step=step)
    except vw.ViewerError as e:
        raise UserError(str(e), 2) from None
    if save is not None:
        size = save.stat().st_size
        c.print(
            f"rerun: {safe(save)} ({len(eps)} episodes in one recording, {size / 1e6:.1f} MB); "
            f"open it with: rerun {safe(save)}",
            highlight=False,
        )
        return {"rrd": str(save), "recordings": 1, "episodes": len(eps), "bytes": size}
    c.print(f"rerun: {len(eps)} episodes sent to the viewer in one recording", highlight=False)
    return {"recordings": 1, "episodes": len(eps)}
