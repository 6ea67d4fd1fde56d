"""CLI verbs of the bridge: ``validate`` (debug a model's output) and ``schema``.

``validate`` exits 0 when the plan is accepted, 1 when it is rejected (or refused), and 2
when the input itself is unusable (missing file, unreadable world file).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add this group's verbs to the top-level app."""
    app.command("validate")(validate_cmd)
    app.command("schema")(schema_cmd)


def _world(seed: int, world_file: Path | None):
    from skillbridge.errors import UserError

    if world_file is not None:
        from pydantic import ValidationError

        from sim.safeio import MiB, UnsafeFile, read_regular
        from sim.world import WorldState

        try:  # a regular file only: a FIFO would hang, /dev/zero would never end
            return WorldState.model_validate_json(read_regular(world_file, 16 * MiB))
        except UnsafeFile as e:
            raise UserError(f"world file {e}", 2) from None
        except OSError as e:
            raise UserError(f"cannot read world file {world_file}: {e.strerror}", 2) from None
        except (ValidationError, ValueError) as e:
            first = str(e).splitlines()[0]
            raise UserError(f"{world_file} is not a world state: {first}", 2) from None
    import sim  # noqa: F401  (sets MUJOCO_GL before mujoco loads)
    from sim.env import TabletopEnv

    env = TabletopEnv()
    try:
        env.reset(seed=seed)
        return env.world_state()
    finally:
        env.close()


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
    world = _world(seed, world_file)
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


def schema_cmd(
    seed: int = typer.Option(0, "--seed", help="Scene seed whose names fill the enums."),
    world_file: Path = typer.Option(None, "--world", help="Use a saved world-state JSON."),
    max_steps: int = typer.Option(12, "--max-steps", min=1, max=100, help="Step limit."),
):
    """Print the scene's plan JSON Schema (draft 2020-12)."""
    from bridge import plan_schema

    typer.echo(json.dumps(plan_schema(_world(seed, world_file), max_steps), indent=2))
