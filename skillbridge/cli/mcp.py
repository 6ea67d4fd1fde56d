"""``skillbridge mcp``: the robot as an MCP server over stdio (tools for agents)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from skillbridge.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)


def mcp(
    llm: str = typer.Option(
        None, "--llm", help="Planner (as `run --llm`; default: $SKILLBRIDGE_LLM, else rules)."
    ),
    seed: int = typer.Option(0, "--seed", help="Scene seed."),
    cubes: str = typer.Option(None, "--cubes", help="Cubes present, e.g. red,blue."),
    runs: Path = typer.Option(Path("runs"), "--runs", help="Folder of the episodes."),
    policy_source: str = typer.Option("pretrained", "--policy-source", hidden=True),
):
    """Serve the robot's tools (observe_scene, plan_task, run_task, answer, stop) over MCP
    on stdin/stdout; run_task executes only a plan id that plan_task validated."""
    try:
        import mcp as _sdk  # noqa: F401
    except ImportError:
        raise UserError("mcp needs the MCP SDK: pip install 'skillbridge[serve]'", 2) from None
    os.environ.setdefault("MUJOCO_GL", "egl")
    from planner.errors import PlannerError
    from skillbridge.agents.mcp import build_server
    from skillbridge.agents.robot import Robot
    from skillbridge.cli.common import parse_cubes

    try:
        robot = Robot(
            llm=llm or os.environ.get("SKILLBRIDGE_LLM") or "rules",
            seed=seed,
            cubes=parse_cubes(cubes),
            runs=runs,
            policy_source=policy_source,
        )
    except PlannerError as e:
        raise UserError(str(e).splitlines()[0], 2) from None
    except ValueError as e:
        raise UserError(str(e), 2) from None
    build_server(robot).run("stdio")
