"""scripts/plot_learning.py: training curves as a PNG, the earlier stage of a fine-tuned
policy included, and a one-line error for a folder without a curve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scripts import load_script


def _module():
    return load_script("plot_learning")


def _run(tmp_path: Path, init_curve=None) -> Path:
    run = tmp_path / "pick_1"
    (run / "best").mkdir(parents=True)
    evals = [
        {"timesteps": t, "success_rate": r, "episodes": 50} for t, r in ((0, 0.8), (8192, 0.9))
    ]
    (run / "evaluations.json").write_text(json.dumps(evals))
    m = {"skill": "pick", **({"init": {"curve": init_curve}} if init_curve else {})}
    (run / "best" / "manifest.json").write_text(json.dumps(m))
    return run


def test_a_fine_tuned_run_shows_both_stages(tmp_path):
    pl = _module()
    run = _run(tmp_path, init_curve=[[0, 0.5, 50], [4096, 0.98, 50]])
    series = pl.curves(run)
    assert [len(pts) for _, _, pts in series] == [2, 2]
    assert "before" in series[0][1] and "--init" in series[1][1]
    assert [p[1] for p in series[1][2]] == [0.8, 0.9]
    assert len(pl.curves(run, with_init=False)) == 1
    out = tmp_path / "c.png"
    assert pl.main([str(run), "-o", str(out), "--with-init"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp.png"))


def test_a_plain_run_has_one_curve_and_bad_input_is_one_line(tmp_path):
    pl = _module()
    assert len(pl.curves(_run(tmp_path))) == 1
    with pytest.raises(SystemExit, match="evaluations.json not found"):
        pl.main([str(tmp_path / "nothing"), "-o", str(tmp_path / "x.png")])
    with pytest.raises(SystemExit, match="must end in .png"):
        pl.main([str(tmp_path / "pick_1"), "-o", str(tmp_path / "x.jpg")])
    assert not (tmp_path / "x.png").exists()
