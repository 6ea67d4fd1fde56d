"""``skillbridge.yaml`` (issue 10 D): every bad value, unknown key or hostile file is one line
with exit 2 on the verbs that read it, never a traceback or a silently ignored setting."""

from __future__ import annotations

import os

import pytest

from tests.cli_helpers import run_cli
from tests.runner.common import TASK


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("timeout: -5\n", "timeout"),
        ("llm: rules\ntimeout: -5\n", "timeout"),
        ("llm: {spec: 'openai:x', timeout: .inf}\n", "timeout"),
        ("llm: {spec: 'openai:x', timeout: true}\n", "timeout"),
        ("llm: {spec: 5}\n", "spec"),
        ("llm: {spec: rules, tmeout: 5}\n", "unknown key(s) tmeout"),
        ("llm: 5\n", "llm"),
        ("- a\n- b\n", "mapping"),
        ("llm: openai:x\nbase_url: [1]\n", "base_url"),
        ("llm: [" * 5000 + "]" * 5000 + "\n", "skillbridge.yaml"),
        ("llm: {spec: rules\n", "not valid YAML"),
        (b"\xff\xfe llm: rules\n", "skillbridge.yaml"),
    ],
)
@pytest.mark.parametrize("verb", ["plan", "run"])
def test_bad_config_file_is_one_line(text, needle, verb, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    monkeypatch.delenv("SKILLBRIDGE_CONFIG", raising=False)
    p = tmp_path / "skillbridge.yaml"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    args = [verb, TASK] + (["--out", str(tmp_path / "runs")] if verb == "run" else [])
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2
    assert needle in _one_line(err)


def test_a_fifo_config_file_does_not_hang(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    monkeypatch.delenv("SKILLBRIDGE_CONFIG", raising=False)
    os.mkfifo(tmp_path / "skillbridge.yaml")
    code, out, err = run_cli(monkeypatch, capsys, "plan", TASK)
    assert code == 2 and "FIFO" in _one_line(err)


def test_a_good_config_file_still_works(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    monkeypatch.delenv("SKILLBRIDGE_CONFIG", raising=False)
    (tmp_path / "skillbridge.yaml").write_text("llm: {spec: rules, timeout: 5}\n")
    code, out, err = run_cli(monkeypatch, capsys, "plan", TASK, "--json")
    assert code == 0, err
