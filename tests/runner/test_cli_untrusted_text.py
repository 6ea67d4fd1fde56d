"""Untrusted text on the terminal and hostile CLI input (issue 10 D, E): rich markup and
escape sequences in paths, tasks, planner specs and model replies are printed as text, never
interpreted; bad --cubes and --seed values are one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.runner.common import TASK

REFUSAL = "there is no [/red] block"


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def _fake_planner(reply: str):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from planner.hybrid import HybridPlanner
    from planner.llm import LLMProposer

    llm = LLMProposer(
        FakeListChatModel(responses=[reply] * 10), name="fake:[/x]", mode="text", retries=0
    )
    return HybridPlanner(llm, route="model", max_regenerations=0)


@pytest.fixture
def markup_model(monkeypatch):
    """Every planner built from a spec is a model that refuses with markup in its reason."""
    from planner.hybrid import HybridPlanner

    monkeypatch.setattr(
        HybridPlanner,
        "from_spec",
        classmethod(
            lambda cls, *a, **k: _fake_planner(json.dumps({"steps": [], "refuse": REFUSAL}))
        ),
    )


def test_markup_in_the_out_path_is_printed_as_text(tmp_path, monkeypatch, capsys):
    out_dir = tmp_path / "[/x]" / "[bold]runs"
    code, out, err = run_cli(
        monkeypatch, capsys, "run", TASK, "--out", str(out_dir), "--policy-source", "scripted"
    )
    assert code == 0, err
    assert "[/x]" in out and "[bold]runs" in out
    ep = next(out_dir.iterdir())
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(ep), "--verify")
    assert code == 0, err
    assert "Traceback" not in err


def test_markup_in_the_llm_spec_is_one_line(monkeypatch, capsys, tmp_path):
    for verb in (["run", TASK, "--out", str(tmp_path)], ["plan", TASK]):
        code, out, err = run_cli(monkeypatch, capsys, *verb, "--llm", "[/x]:y")
        assert code == 2
        assert "[/x]" in _one_line(err)


def test_a_model_refusal_with_markup_in_run_plan_and_replay(
    markup_model, tmp_path, monkeypatch, capsys
):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--out",
        str(tmp_path),
        "--llm",
        "openai:x",
        "--policy-source",
        "scripted",
    )
    assert code == 1, err
    assert REFUSAL in out and "Traceback" not in err
    code, out, err = run_cli(monkeypatch, capsys, "plan", TASK, "--llm", "openai:x")
    assert code == 1, err
    assert REFUSAL in out and "Traceback" not in err
    ep = next(tmp_path.iterdir())
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(ep))
    assert code == 0, err
    assert "[/red]" in out


def test_brackets_do_not_vanish_from_error_messages(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "run", TASK, "--out", str(tmp_path), "--cubes", '{"red_block": "here"}'
    )
    assert code == 2
    assert "[x, y]" in _one_line(err)


def test_terminal_escapes_in_the_task_are_made_harmless(tmp_path, monkeypatch, capsys):
    task = "put the red block in the green bin \x1b]0;pwned\x07\x1b[2J"
    code, out, err = run_cli(
        monkeypatch, capsys, "run", task, "--out", str(tmp_path), "--policy-source", "scripted"
    )
    assert "\x1b]0;" not in out + err and "\x1b[2J" not in out + err
    assert "\\x1b" in out
    code, out, err = run_cli(
        monkeypatch, capsys, "run", "\x1b[2J", "--out", str(tmp_path), "--bogus\x1b[2J"
    )
    assert code == 2 and "\x1b" not in err


@pytest.mark.parametrize("verb", ["run", "plan"])
@pytest.mark.parametrize(
    "cubes, needle",
    [
        ('{"red_block": null, "red_block": [0.1, 0.0]}', "twice"),
        ('{"red": null, "red_block": null}', "twice"),
        ("[]", "no cube"),
        ("{}", "no cube"),
        (",", "no cube"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ('{"a":' * 3000 + "1" + "}" * 3000, "longer than"),
        ("[1, 2]", "cube names"),
    ],
)
def test_bad_cubes_are_one_line(verb, cubes, needle, tmp_path, monkeypatch, capsys):
    args = [verb, TASK, "--cubes", cubes] + (
        ["--out", str(tmp_path / "r")] if verb == "run" else []
    )
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2
    assert needle in _one_line(err)
    assert not (tmp_path / "r").exists()


def test_plan_takes_the_cube_forms_run_takes(monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "plan", TASK, "--json", "--cubes", '["red", "green"]'
    )
    assert code == 0, err
    code, out, err = run_cli(
        monkeypatch, capsys, "plan", TASK, "--json", "--cubes", '{"red_block": [0.05, -0.1]}'
    )
    assert code == 0, err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", TASK, "--seed", "-1"],
        ["plan", TASK, "--seed", "-1"],
        ["demo", "--seed", "-1"],
        ["train", "pick", "--seed", "-1"],
        ["eval-skill", "pick", "--seed", "-1"],
        ["eval", "--seed-base", "-1"],
        ["validate", "-", "--seed", "-1"],
        ["schema", "--seed", "-1"],
        ["schema", "--seed", str(2**64)],
    ],
)
def test_negative_seed_is_one_line_on_every_verb(argv, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, *argv)
    assert code == 2
    assert "--seed" in _one_line(err)


def test_verify_of_a_zero_step_episode_says_nothing_to_verify(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "put the purple block in the green bin",
        "--out",
        str(tmp_path),
        "--json",
        "--policy-source",
        "scripted",
    )
    assert code == 1
    ep = json.loads(out)["episode"]
    code, out, err = run_cli(monkeypatch, capsys, "replay", ep, "--verify", "--no-timeline")
    assert code == 0, err
    assert "nothing to verify" in out and "all 0 states" not in out
    code, out, err = run_cli(monkeypatch, capsys, "replay", ep, "--verify", "--json")
    assert json.loads(out)["verify"]["checked"] == 0


def test_go_home_when_home_is_nothing_to_do(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "go home",
        "--out",
        str(tmp_path),
        "--json",
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["status"] == "success" and "nothing to do" in d["message"]
    assert Path(d["episode"]).is_dir()


def test_terminal_escapes_do_not_reach_the_terminal_through_log_lines(
    tmp_path, monkeypatch, capsys
):
    task = "put the red block in the green bin \x1b]0;pwned\x07"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        task,
        "--out",
        str(tmp_path),
        "--policy-source",
        "scripted",
        "--log-level",
        "debug",
    )
    assert code in (0, 1), err
    assert "Traceback" not in err and "INFO" in err
    assert "\x1b]0;" not in out + err
