"""Help texts reach the terminal through rich markup, where ``[x, y]`` is a tag and vanishes
(issue 23, item 18: ``run --help`` showed the ``--cubes`` pose forms as ``( |  | )``). Every
verb's help and option help must print as written."""

from __future__ import annotations

import re

import pytest
import typer

from skillbridge import cli
from tests.cli_helpers import run_cli

COMMANDS = typer.main.get_command(cli.app).commands  # type: ignore[attr-defined]


def _flat(text: str) -> str:
    """Rendered help as one line: box borders gone, runs of space one space."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text)).strip()


def test_a_new_verb_with_brackets_in_its_help_prints_them(monkeypatch, capsys):
    """Any verb, present or future: its texts are escaped when the CLI is set up."""

    def bracketed(
        pose: str = typer.Option("", "--pose", help="A pose: [x, y] | [x, y, yaw] | [bold]b[/]."),
    ):
        """Takes [x, y] poses; [red]not red[/red]."""

    cli.app.command("bracketed")(bracketed)
    try:
        cli._literal_help()
        cli._literal_help()  # twice is once (the CLI may be set up again)
        code, out, _ = run_cli(monkeypatch, capsys, "bracketed", "--help")
    finally:
        cli.app.registered_commands.pop()
    shown = _flat(out)
    assert code == 0
    assert "A pose: [x, y] | [x, y, yaw] | [bold]b[/]." in shown, shown
    assert "Takes [x, y] poses; [red]not red[/red]." in shown, shown


@pytest.mark.parametrize("verb", ["run", "plan"])
def test_the_cubes_forms_print_literally(verb, monkeypatch, capsys):
    monkeypatch.setenv("TERMINAL_WIDTH", "160")
    code, out, _ = run_cli(monkeypatch, capsys, verb, "--help")
    assert code == 0
    shown = _flat(out)
    cubes = next(p.help for p in COMMANDS[verb].params if "--cubes" in p.opts)
    assert _flat(cubes) in shown
    for form in ("red@green_bin", "blue@red", '"red": [0.1, 0.05]', "x, y, z, yaw"):
        assert form in shown, form
