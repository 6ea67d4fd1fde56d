"""Fixtures of the runner tests: one recorded pick-and-place episode shared by many tests.

The scripted experts stand in for the pretrained policies (same executor interface), so the
tests exercise the runner, the recorder and replay without depending on trained weights.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.runner.common import SEED, TASK


@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    """(RunResult, episode path) of a successful scripted pick-and-place, seed 0."""
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    out = tmp_path_factory.mktemp("runs")
    r = Runner(RunConfig(task=TASK, seed=SEED, out_dir=out, policy_source="scripted")).run()
    return r, Path(r.episode)


@pytest.fixture
def episode_copy(recorded, tmp_path):
    """A private copy of the recorded episode, free to damage."""
    dst = tmp_path / "ep"
    shutil.copytree(recorded[1], dst)
    return dst
