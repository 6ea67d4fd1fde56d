"""``skillbridge validate``: a plan checked by the bridge against a scene."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from skillbridge.cli.common import scene_world


def register(app: typer.Typer) -> None:
    app.command("validate")(validate_cmd)


def _read(source: str) -> str:
    from skillbridge.errors import UserError

    if source == "-":
        data = sys.stdin.buffer.read()
        name = "stdin"
    else:
        from sim.safeio import MiB, UnsafeFile, read_regular

        try:  # a regular file only: a FIFO would hang, /dev/zero would never end
            data = read_regular(Path(source), 16 * MiB)
        except FileNotFoundError:
            raise UserError(f"no such file: {source}", 2) from None
        except UnsafeFile as e:
            raise UserError(str(e), 2) from None
        except OSError as e:
            raise UserError(f"cannot read {source}: {e.strerror}", 2) from None
        name = source
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{name} is not UTF-8 text", 2) from None


def validate_cmd(
    source: str = typer.Argument(..., metavar="FILE|-", help="Raw planner output; - reads stdin."),
    seed: int = typer.Option(0, "--seed", help="Scene seed the plan is checked against."),
    world_file: Path = typer.Option(
        None, "--world", help="Check against a saved world-state JSON instead of a seed."
    ),
    max_steps: int = typer.Option(12, "--max-steps", min=1, max=100, help="Step limit."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
):
    """Validate raw planner output against a scene and print the decision with its reasons."""
    from bridge import validate

    text = _read(source)
    world = scene_world(seed, world_file)
    res = validate(text, world, max_steps=max_steps)
    if as_json:
        out = res.to_dict()
        out["decision"] = _decision(res)
        typer.echo(json.dumps(out, indent=2))
    else:
        _print_human(res)
    sys.exit(0 if res.accepted else 1)


def _decision(res) -> str:
    return "accepted" if res.accepted else ("refused" if res.refused else "rejected")


def _print_human(res) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    if res.accepted:
        console.print(f"[bold green]accepted[/] {len(res.plan)} step(s)")
        for i, step in enumerate(res.plan_json()):
            args = ", ".join(f"{k}={json.dumps(v)}" for k, v in step.items() if k != "skill")
            console.print(f"  {i}. {step['skill']}({args})", highlight=False)
        return
    if res.refused:
        console.print(f"[bold yellow]refused[/]: {escape(res.refusal)}", highlight=False)
        return
    console.print(f"[bold red]rejected[/] ({len(res.reasons)} reason(s))")
    for r in res.reasons:
        where = f" [dim]at[/] [cyan]{escape(r.path)}[/]" if r.path else ""
        console.print(f"  [bold]{r.code}[/]{where}: {escape(r.message)}", highlight=False)
        if r.hint:
            console.print(f"    [dim]hint:[/] {escape(r.hint)}", highlight=False)
