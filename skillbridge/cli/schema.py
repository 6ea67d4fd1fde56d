"""``skillbridge schema``: the JSON Schema of plans for a scene."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from skillbridge.cli.common import scene_world


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_cmd)


def schema_cmd(
    seed: int = typer.Option(0, "--seed", help="Scene seed whose names fill the enums."),
    world_file: Path = typer.Option(None, "--world", help="Use a saved world-state JSON."),
    max_steps: int = typer.Option(12, "--max-steps", min=1, max=100, help="Step limit."),
):
    """Print the scene's plan JSON Schema (draft 2020-12)."""
    from bridge import plan_schema

    typer.echo(json.dumps(plan_schema(scene_world(seed, world_file), max_steps), indent=2))
