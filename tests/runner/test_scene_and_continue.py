"""A run on the articulated scene records its scene and replays bit for bit; a run can start
from the state another ended in (tasks chained without reset)."""

from __future__ import annotations

import numpy as np
import pytest

from skillbridge.episodes import episode as E
from skillbridge.episodes import replay
from skillbridge.errors import UserError
from skillbridge.runner.records import RunConfig
from skillbridge.runner.runner import Runner


def _run(tmp_path, task, **kw):
    cfg = RunConfig(task=task, llm="rules", route="rules", out_dir=tmp_path, **kw)
    return Runner(cfg).run()


def test_articulated_run_records_its_scene_and_replays(tmp_path):
    r = _run(tmp_path, "put the red block in the green bin", scene="articulated", seed=1)
    assert r.success, r.message
    ep = E.load(r.episode)
    assert ep.meta["scene"]["name"] == "articulated"
    assert E.scene_name(ep.meta) == "articulated"
    v = replay.verify(ep)
    assert v.ok and v.model_hash_ok, v.message


def test_default_scene_meta_is_as_before(tmp_path):
    r = _run(tmp_path, "put the red block in the green bin", seed=1)
    meta = E.load(r.episode).meta
    assert set(meta["scene"]) == {"cubes", "env"}


def test_a_second_task_continues_from_the_first_ones_end(tmp_path):
    first = _run(tmp_path, "put the red block in the green bin", seed=2)
    assert first.success, first.message
    end = E.load(first.episode).final_state
    second = _run(tmp_path, "put the blue block in the red bin", seed=2, start_state=end)
    assert second.success, second.message
    ep = E.load(second.episode)
    assert np.array_equal(ep.initial_state, end)
    assert ep.meta["scene"]["continued"] is True
    red = next(o for o in second.world["objects"] if o["name"] == "red_block")
    assert red["in_bin"] == "green_bin"  # what the first task did is still there
    assert replay.verify(ep).ok


def test_unknown_scene_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="unknown scene 'kitchen'"):
        _run(tmp_path, "put the red block in the green bin", scene="kitchen")
