"""`skillbridge train-planner` for real, tiny: it trains, exports an adapter the loader
accepts, and refuses to start over a run without --resume."""

from __future__ import annotations

import json

import pytest

from planner.embedded import model as em
from tests.cli_helpers import run_cli

# the real 135M model: about a minute on two cores (the run folder's own behaviour is tested
# fast on a tiny model in test_train_planner_folder.py)
pytestmark = [
    pytest.mark.skipif(not em.available(), reason="embedded model not installed"),
    pytest.mark.slow,
]


def test_tiny_run_exports_a_loadable_adapter(monkeypatch, capsys, tmp_path):
    args = (
        "train-planner",
        "-n",
        "60",
        "--epochs",
        "0.2",
        "--layers",
        "2",
        "--eval-every",
        "1",
        "--threads",
        "1",
        "-f",
        str(tmp_path),
    )
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    export = next(tmp_path.glob("*/export"))
    m = em.read_manifest(export)
    assert m.lora.first_layer == 28 and m.corpus["size"] == 60  # type: ignore[attr-defined]
    from sim.util import sha256_file

    assert sha256_file(export / "adapter.safetensors") == m.adapter_sha256
    assert json.loads((export / "manifest.json").read_text())["eval"]["history"]
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and "--resume" in err
