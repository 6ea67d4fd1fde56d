"""``skillbridge view``: recorded episodes in a viewer."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from skillbridge.cli.export import check_rerun_args, rerun_episodes
from skillbridge.errors import UserError, echo
from skillbridge.errors import console as make_console


def register(app: typer.Typer) -> None:
    app.command("view")(view)


def view(
    runs: list[Path] = typer.Argument(
        ..., help="Episode folders (runs/<id>) or folders of episodes (runs/)."
    ),
    save: Path = typer.Option(
        None, "--save", help="Write all episodes into FILE.rrd instead of opening the viewer."
    ),
    camera: list[str] = typer.Option(
        None, "--camera", help="Camera images to log (repeatable; default: front and wrist)."
    ),
    no_images: bool = typer.Option(False, "--no-images", help="Log no camera images."),
    size: str = typer.Option("320x240", "--size", help="Image WIDTHxHEIGHT (multiples of 8)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON result."),
):
    """Open many episodes in the Rerun viewer, in one recording with a timeline each (or save
    them to an .rrd)."""
    from skillbridge.episodes import lerobot_export as lx
    from skillbridge.episodes import viewer as vw
    from skillbridge.episodes.episode import EpisodeError

    c = make_console(stderr=True, soft_wrap=True)
    check_rerun_args(True, save)
    try:
        width, height = lx.parse_size(size)
        eps = vw.load_all(runs)
    except (lx.ExportError, EpisodeError) as e:
        raise UserError(str(e), 2) from None
    cams = () if no_images else tuple(camera or ("front", "wrist"))
    opts = vw.RerunOptions(cameras=cams, width=width, height=height)
    out = rerun_episodes(eps, save, c, opts)
    if as_json:
        echo(json.dumps(out, indent=2))
