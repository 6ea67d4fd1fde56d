"""CLI verbs of the skills package (filled in by the skills work)."""

import typer


def register(app: typer.Typer) -> None:
    """Add this group's verbs to the top-level app."""
