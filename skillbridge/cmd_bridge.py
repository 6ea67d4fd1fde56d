"""CLI verbs of the bridge package (filled in by the bridge work)."""

import typer


def register(app: typer.Typer) -> None:
    """Add this group's verbs to the top-level app."""
