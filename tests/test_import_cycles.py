"""No module of ``skills`` or ``sim`` imports, directly or through others, a module that
imports it back, and ``sim`` imports nothing of the layers above it.

A circle of imports makes the order of imports matter (a name used before its module has
finished loading), hides which module owns a concept, and forces lazy imports as patches.
Imports are read from the source, as import-graph tools read them: every import statement
counts, inside functions too (a lazy import is still a dependency), except those only for
type checkers (``if TYPE_CHECKING:``); ``from pkg import name`` is an import of the module
``pkg.name`` where there is one, else of ``pkg``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> dict[str, Path]:
    out = {}
    for f in (ROOT / package).rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


#: Every project module, by name.
PACKAGES = ("sim", "skills", "bridge", "planner", "skillbridge")
ALL = {m: f for p in PACKAGES for m, f in _modules(p).items()}


def _imports(name: str, path: Path) -> set[str]:
    """The project modules that module ``name`` imports."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    found.add(sub if sub in ALL else base)
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit([n for n in inner if isinstance(n, ast.stmt | ast.ExceptHandler)])
            if isinstance(node, ast.ExceptHandler):
                visit(node.body)

    visit(tree.body)
    return {m for m in found if m in ALL and m != name}


def _cycles(package: str) -> list[list[str]]:
    """Strongly connected groups of more than one module within ``package`` (Tarjan)."""
    mods = _modules(package)
    graph = {m: {d for d in _imports(m, f) if d in mods} for m, f in mods.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in graph:
        if v not in index:
            connect(v)
    return out


@pytest.mark.parametrize("package", ["skills", "sim"])
def test_no_import_cycles(package):
    assert _cycles(package) == []


def test_sim_imports_nothing_above_it():
    above = ("skills", "bridge", "planner", "skillbridge")
    bad = {
        m: sorted(d for d in _imports(m, f) if d.split(".")[0] in above)
        for m, f in _modules("sim").items()
    }
    assert {m: d for m, d in bad.items() if d} == {}


def test_the_check_sees_a_cycle(tmp_path, monkeypatch):
    """The reader finds a circle through a lazy import and ignores a TYPE_CHECKING one."""
    a = "from skills.b import x\n"
    b = "def f():\n    from skills.a import y\n"
    c = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from skills.a import z\n"
    (tmp_path / "skills").mkdir()
    for n, text in {"__init__": "", "a": a, "b": b, "c": c}.items():
        (tmp_path / "skills" / f"{n}.py").write_text(text)
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    monkeypatch.setattr(__import__(__name__, fromlist=["ALL"]), "ALL", _modules("skills"))
    assert _cycles("skills") == [["skills.a", "skills.b"]]
