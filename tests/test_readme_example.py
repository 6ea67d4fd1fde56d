"""The Python example of the README (and of docs/GETTING_STARTED.md, which shows its output)
is code that runs: the fast test checks that every name it imports and every result field it
reads exists; the slow one runs it and compares what it prints with what the page says."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _blocks(page: str, lang: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def _example() -> str:
    (code,) = _blocks("README.md", "python")
    return code


def _defined(module: str) -> set[str]:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}


def _fields(module: str, cls: str) -> set[str]:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    return {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)}  # type: ignore[union-attr]


def test_the_readme_and_getting_started_show_the_same_example():
    assert _example() in _blocks("docs/GETTING_STARTED.md", "python")


def test_the_example_names_exist():
    tree = ast.parse(_example())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.module
            for alias in node.names:
                assert alias.name in _defined(node.module), (node.module, alias.name)
    config = [
        kw.arg
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "RunConfig"
        for kw in n.keywords
    ]
    assert set(config) <= _fields("skillbridge.runner.records", "RunConfig"), config
    read = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "result"
    }
    assert read and read <= _fields("skillbridge.runner.records", "RunResult"), read


@pytest.mark.slow
def test_the_example_runs_and_prints_what_the_page_says(tmp_path):
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    out = subprocess.run(
        [sys.executable, "-c", _example()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (shown,) = _blocks("docs/GETTING_STARTED.md", "text")
    got, want = out.stdout.strip().splitlines(), shown.strip().splitlines()
    assert got[:-1] == want[:-1]
    assert got[-1].startswith("runs/") and (tmp_path / got[-1] / "meta.json").is_file()
