"""A ``--json`` command line gets one JSON document on stdout even when it is wrong (issue 23,
item 18): a usage error (unknown option, missing argument, bad value) or a refused input is
``{"error": ..., "exit_code": N}`` there, beside the usual one line on stderr."""

from __future__ import annotations

import json

import pytest
import typer

from skillbridge import cli
from tests.cli_helpers import run_cli


def _json_verbs() -> list[str]:
    group = typer.main.get_command(cli.app)
    return sorted(
        name
        for name, cmd in group.commands.items()  # type: ignore[attr-defined]
        if any("--json" in getattr(p, "opts", ()) for p in cmd.params)
    )


def test_the_json_verbs_are_found():
    verbs = _json_verbs()
    assert {"plan", "run", "replay", "eval", "skills", "validate"} <= set(verbs), verbs


def _one_document(out: str) -> dict:
    doc = json.loads(out)  # the whole of stdout is one document
    assert isinstance(doc, dict)
    return doc


@pytest.mark.parametrize("verb", _json_verbs())
def test_an_unknown_option_is_a_json_document(verb, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, verb, "--json", "--no-such-option")
    assert code == 2
    doc = _one_document(out)
    assert doc["exit_code"] == 2 and "--no-such-option" in doc["error"]
    assert len(err.strip().splitlines()) == 1 and "--no-such-option" in err


def test_a_missing_argument_and_a_bad_value_are_json_documents(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "plan", "--json")
    assert code == 2 and "Missing argument" in _one_document(out)["error"]
    code, out, _ = run_cli(monkeypatch, capsys, "plan", "go", "--json", "--seed", "-1")
    assert code == 2 and "--seed" in _one_document(out)["error"]


def test_a_refused_input_is_a_json_document(monkeypatch, capsys, tmp_path):
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(tmp_path / "nothing"), "--json")
    assert code == 2
    doc = _one_document(out)
    assert doc == {"error": doc["error"], "exit_code": 2} and "does not exist" in doc["error"]
    assert "does not exist" in err


def test_without_json_stdout_stays_empty(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "plan", "go", "--no-such-option")
    assert code == 2 and out == "" and "--no-such-option" in err


def test_an_error_after_the_result_adds_no_second_document(monkeypatch, capsys):
    """A verb that printed its JSON and then failed (``run --json`` whose video failed)
    leaves stdout its one document."""

    def printed_then_failed(as_json: bool = typer.Option(False, "--json")):
        typer.echo(json.dumps({"result": 1}))
        raise cli.UserError("the run finished but the video failed: disk full", 1)

    cli.app.command("printed-then-failed")(printed_then_failed)
    try:
        code, out, err = run_cli(monkeypatch, capsys, "printed-then-failed", "--json")
    finally:
        cli.app.registered_commands.pop()
    assert code == 1 and _one_document(out) == {"result": 1} and "video failed" in err


def test_the_benchmark_page_reads_an_error_document_as_not_measured():
    """scripts/make_benchmarks.py parses a section's stdout: the error document of a
    refused command is no measurement."""
    import sys

    from tests.scripts import load_script

    mb = load_script("make_benchmarks")
    cmd = [sys.executable, "-c", "from skillbridge.cli import run; run()", "skills", "--json", "-x"]
    data, err, _ = mb.run_json(cmd, 120)
    assert data is None and err.startswith("exit 2:") and "-x" in err
