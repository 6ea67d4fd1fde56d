"""`plan` and `run` on utterances that are not commands: documented kinds and exit codes,
and nothing executed (the real CLI in a subprocess, real MuJoCo for `run`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBRIDGE_")}
    env.setdefault("MUJOCO_GL", "egl")
    return subprocess.run(
        [sys.executable, "-c", "from skillbridge.cli import run; run()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )


@pytest.mark.parametrize(
    "task, kind, code",
    [
        ("is the red block in the green bin?", "answer", 0),
        ("put the block in the bin", "clarify", 3),
        ("stop", "stop", 0),
        ("put the red block on itself", "refuse", 1),
        ("don't put the red block in the green bin", "answer", 0),
    ],
)
def test_plan_json_documents_the_kind_and_exits_accordingly(task, kind, code, tmp_path):
    p = _cli("plan", task, "--llm", "rules", "--json", cwd=tmp_path)
    assert p.returncode == code, p.stderr
    d = json.loads(p.stdout)
    assert d["kind"] == kind
    assert d["steps"] == []
    assert d["understanding"]["kind"] == kind


def _run(task: str, tmp_path) -> subprocess.CompletedProcess:
    return _cli(
        "run", task, "--llm", "rules", "--json", "--out", str(tmp_path / "runs"), cwd=tmp_path
    )


def test_run_never_executes_a_question_or_a_clarify(tmp_path):
    p = _run("is the red block in the green bin?", tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "answered" and d["kind"] == "answer"
    assert d["subgoals"] == [] and d["steps"] == 0
    assert d["answer"].startswith(("Yes", "No"))
    p = _run("put the block in the bin", tmp_path)
    assert p.returncode == 3, p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "clarify" and d["subgoals"] == []
    assert "Which block" in d["question"]
    trace = [json.loads(line) for line in open(os.path.join(d["episode"], "trace.jsonl"))]
    plans = [r for r in trace if r.get("kind") == "plan"]
    assert plans and plans[0]["utterance"] == "clarify"
    assert plans[0]["understanding"]["candidates"]
