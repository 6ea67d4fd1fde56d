"""``SKILLBRIDGE_CONFIG`` naming a file that is not there (issue 23, item 18) is one line and
exit 2 on the verbs that read the config, not a config silently skipped."""

from __future__ import annotations

import json

import pytest

from tests.cli_helpers import run_cli
from tests.runner.common import TASK


@pytest.mark.parametrize("verb", ["plan", "run"])
@pytest.mark.parametrize("what", ["missing", "folder"])
def test_a_missing_named_config_is_one_line(verb, what, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    named = tmp_path / "skilbridge.yaml"  # the typo the user made
    if what == "folder":
        named.mkdir()
    (tmp_path / "skillbridge.yaml").write_text("llm: rules\n")  # would be used instead
    monkeypatch.setenv("SKILLBRIDGE_CONFIG", str(named))
    args = [verb, TASK] + (["--out", str(tmp_path / "runs")] if verb == "run" else [])
    code, out, err = run_cli(monkeypatch, capsys, *args)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert "SKILLBRIDGE_CONFIG" in lines[0] and str(named) in lines[0]
    assert not (tmp_path / "runs").exists()
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--json")
    assert code == 2 and "SKILLBRIDGE_CONFIG" in json.loads(out)["error"]


def test_a_named_config_that_exists_is_used(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    (tmp_path / "mine.yaml").write_text("llm: rules\n")
    monkeypatch.setenv("SKILLBRIDGE_CONFIG", str(tmp_path / "mine.yaml"))
    code, out, err = run_cli(monkeypatch, capsys, "plan", TASK, "--json")
    assert code == 0, err
    assert json.loads(out)["spec"] == "rules"
