"""A run whose pick turns the hand (a cube against a bin wall) records, loads and replays bit
for bit: the turn is a command taken from the recording, and what it leads to is checked."""

from __future__ import annotations

import numpy as np
import pytest

from sim import physics
from skillbridge.episodes import episode as E
from skillbridge.episodes import replay
from skillbridge.runner.records import RunConfig
from skillbridge.runner.runner import Runner

WALL = {"red_block": [0.0, 0.1605], "blue_block": [-0.1, -0.1]}


@pytest.fixture(scope="module")
def turned(tmp_path_factory):
    out = tmp_path_factory.mktemp("turned")
    cfg = RunConfig(
        task="put the red block in the green bin",
        llm="rules",
        route="rules",
        cubes=WALL,
        out_dir=out,
        policy_source="pretrained",
    )
    r = Runner(cfg).run()
    assert r.success, r.message
    return r, E.load(r.episode)


def test_the_pick_turned_the_hand_and_the_place_turned_it_back(turned):
    r, ep = turned
    quat = ep.states[:, physics.command_slice()]
    n_pick = r.subgoals[0]["steps"]
    assert np.allclose(quat[0], [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])
    assert (quat[:n_pick, 3] > 0.7).all()
    assert np.array_equal(quat[-1], [1.0, 0.0, 0.0, 0.0])


def test_replay_verifies_bit_for_bit(turned):
    r, ep = turned
    v = replay.verify(ep)
    assert v.ok, v.message
    assert v.checked == r.steps


def test_a_changed_turn_is_caught_by_what_follows(turned):
    ep = E.load(turned[0].episode)  # a copy of its own: this one is altered
    cmd = physics.command_slice()
    k = 5  # mid-pick: the hand is still turning
    ep.states[k, cmd] = [1.0, 0.0, 0.0, 0.0]
    v = replay.verify(ep)
    assert not v.ok and v.first_mismatch is not None and v.first_mismatch > k
