"""``skillbridge validate`` and ``skillbridge schema``: output and exit codes."""

from __future__ import annotations

import io
import json
import sys

import pytest

from skillbridge.cli import run
from tests.bridge.bridge_worlds import WORLDS

GOOD = json.dumps(
    [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]
)


def cli(monkeypatch, capsys, *args, stdin: str | None = None):
    monkeypatch.setattr(sys, "argv", ["skillbridge", *args])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = 0
    try:
        run()
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, " ".join(out.err.split())


@pytest.fixture
def world_file(tmp_path):
    p = tmp_path / "world.json"
    p.write_text(WORLDS["fresh"].model_dump_json())
    return str(p)


def test_accepted_exit_0(monkeypatch, capsys, tmp_path, world_file):
    f = tmp_path / "plan.txt"
    f.write_text("Plan:\n```json\n" + GOOD + "\n```")
    code, out, _ = cli(monkeypatch, capsys, "validate", str(f), "--world", world_file)
    assert code == 0 and "accepted" in out and "place" in out


def test_rejected_exit_1_json(monkeypatch, capsys, tmp_path, world_file):
    f = tmp_path / "plan.json"
    f.write_text(json.dumps([{"skill": "pick", "object": "red_blok"}]))
    code, out, _ = cli(monkeypatch, capsys, "validate", str(f), "--world", world_file, "--json")
    assert code == 1
    d = json.loads(out)
    assert d["decision"] == "rejected" and d["reasons"][0]["code"] == "hallucinated_object"


def test_rejected_human_output_names_alternatives(monkeypatch, capsys, world_file):
    code, out, _ = cli(
        monkeypatch,
        capsys,
        "validate",
        "-",
        "--world",
        world_file,
        stdin='{"skill": "grab", "object": "red_block"}',
    )
    assert code == 1 and "hallucinated_skill" in out and "'pick'" in out


def test_stdin_and_seed(monkeypatch, capsys):
    code, out, _ = cli(monkeypatch, capsys, "validate", "-", "--seed", "3", "--json", stdin=GOOD)
    assert code == 0 and json.loads(out)["accepted"]


@pytest.mark.parametrize(
    "args",
    [("validate", "/no/such/file.json"), ("validate", "-", "--world", "/no/such/world.json")],
)
def test_unusable_input_exit_2(monkeypatch, capsys, args):
    code, _, err = cli(monkeypatch, capsys, *args, stdin=GOOD)
    assert code == 2 and err.startswith("error:")


def test_bad_world_file_exit_2(monkeypatch, capsys, tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text('{"objects": 3}')
    code, _, err = cli(monkeypatch, capsys, "validate", "-", "--world", str(bad), stdin=GOOD)
    assert code == 2 and "not a world state" in err


def test_world_file_with_an_unknown_object_exit_2(monkeypatch, capsys, tmp_path):
    """An object no spec describes has no geometry to check a plan with: one line, exit 2."""
    w = WORLDS["fresh"].model_dump(mode="json")
    w["objects"][0]["name"] = "purple_block"
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps(w))
    code, _, err = cli(monkeypatch, capsys, "validate", "-", "--world", str(bad), stdin=GOOD)
    assert code == 2 and "no object 'purple_block'" in err and len(err.strip().splitlines()) == 1


def test_refusal_exit_1(monkeypatch, capsys, world_file):
    code, out, _ = cli(
        monkeypatch,
        capsys,
        "validate",
        "-",
        "--world",
        world_file,
        stdin='{"steps": [], "refuse": "no [purple] block"}',
    )
    assert code == 1 and "refused" in out and "[purple]" in out


def test_schema_verb(monkeypatch, capsys, world_file):
    from jsonschema import Draft202012Validator

    code, out, _ = cli(monkeypatch, capsys, "schema", "--world", world_file)
    assert code == 0
    Draft202012Validator.check_schema(json.loads(out))
