"""Input files that are not regular files (issue 10 C, found by tests/test_cli_property.py):
a FIFO hung ``validate``, ``schema --world`` and ``eval --suite``; ``/dev/zero`` never ends.
Each is one line with exit 2."""

from __future__ import annotations

import os

import pytest

from tests.cli_helpers import run_cli


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "f.yaml"
    os.mkfifo(p)
    return str(p)


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{p}"],
        ["validate", "-", "--world", "{p}"],
        ["schema", "--world", "{p}"],
        ["eval", "--suite", "{p}", "--seeds", "1"],
    ],
)
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_special_files_are_one_line(argv, kind, fifo, tmp_path, monkeypatch, capsys):
    import io
    import sys

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"steps": []}')))
    path = fifo if kind == "fifo" else "/dev/zero"
    code, out, err = run_cli(monkeypatch, capsys, *[a.format(p=path) for a in argv])
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert ("FIFO" if kind == "fifo" else "device") in lines[0]
