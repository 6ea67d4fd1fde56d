"""CLI verbs of the planner package (filled in by the planner work)."""

import typer


def register(app: typer.Typer) -> None:
    """Add this group's verbs to the top-level app."""
