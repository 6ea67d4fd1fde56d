"""Load a file of ``scripts/`` as a module (they are programs, not a package), for the tests
that call their functions directly."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py``, freshly executed."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
