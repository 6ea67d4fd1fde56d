"""The few-shot examples in the prompt are kept apart from every instruction we test or
evaluate on (issue 11 item 10): an example that is also a test instruction hands the model
the answer and makes the measured success rate a measure of copying."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge import validate
from planner.prompting import examples
from tests.planner.planner_worlds import make_world

ROOT = Path(__file__).resolve().parents[2]
#: Where test and evaluation instructions live: the tests, the task suites, and any
#: instruction corpus shipped in the planner package.
SOURCES = (
    "tests/**/*.py",
    "tests/**/*.yaml",
    "tests/**/*.json",
    "skillbridge/tasks/*.yaml",
    "planner/*.py",
    "planner/**/*.yaml",
    "planner/**/*.json",
    "scripts/*.py",
)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _corpus() -> dict[Path, str]:
    me = Path(__file__).resolve()
    files = {p.resolve() for pattern in SOURCES for p in ROOT.glob(pattern)}
    files.discard(me)
    files.discard((ROOT / "planner/prompts/examples.json").resolve())
    return {p: _norm(p.read_text(encoding="utf-8", errors="replace")) for p in files}


def test_examples_are_not_test_or_eval_instructions():
    corpus = _corpus()
    assert any(p.parent.name == "tasks" for p in corpus)  # the scan sees the suites
    for ex in examples():
        task = _norm(ex["task"])
        hits = [str(p.relative_to(ROOT)) for p, text in corpus.items() if task in text]
        assert not hits, f"few-shot example {ex['task']!r} also appears in {hits}"


@pytest.mark.parametrize("i", range(4))
def test_examples_pass_the_bridge(i):
    """An example the bridge would reject teaches the model a wrong answer."""
    ex = examples()[i]
    res = validate(ex["plan"], make_world())
    if "refuse" in ex["plan"]:
        assert res.refusal
    else:
        assert res.accepted, res.reasons
