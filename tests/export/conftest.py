"""Fixtures of the export and viewer tests: two short recorded episodes (scripted skills)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TASKS = ("put the red block in the green bin", "push the blue block to the table center")


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory) -> Path:
    """A folder of two successful scripted episodes (different tasks and seeds)."""
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    out = tmp_path_factory.mktemp("runs")
    for seed, task in enumerate(TASKS):
        r = Runner(RunConfig(task=task, seed=seed, out_dir=out, policy_source="scripted")).run()
        assert r.status == "success", r.message
    return out


@pytest.fixture(scope="session")
def episodes(runs_dir) -> list[Path]:
    return sorted(p for p in runs_dir.iterdir() if (p / "meta.json").exists())


@pytest.fixture
def runs_copy(runs_dir, tmp_path) -> Path:
    dst = tmp_path / "runs"
    shutil.copytree(runs_dir, dst)
    return dst


@pytest.fixture(scope="session")
def articulated_dir(tmp_path_factory) -> Path:
    """A folder of one successful scripted episode in the articulated scene (the drawer
    opened: its state vector is longer than the tabletop's)."""
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    out = tmp_path_factory.mktemp("articulated")
    cfg = RunConfig(
        task="open the drawer", seed=1, out_dir=out, policy_source="scripted", scene="articulated"
    )
    r = Runner(cfg).run()
    assert r.status == "success", r.message
    return out
