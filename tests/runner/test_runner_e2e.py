"""End to end: plan, execute, record, replay bit-exactly, render a decodable video."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from skillbridge.episodes import episode as E
from skillbridge.episodes import replay
from skillbridge.runner.records import RunConfig
from skillbridge.runner.runner import SETTLE_INDEX, SETTLE_S, Runner
from tests.cli_helpers import run_cli
from tests.runner.common import SEED, TASK


def test_pick_and_place_succeeds(recorded):
    r, path = recorded
    assert r.success and r.exit_code == 0
    assert [s["subgoal"]["skill"] for s in r.subgoals] == ["pick", "place"]
    assert all(s["success"] for s in r.subgoals)
    assert r.accepted_plan == [
        {"skill": "pick", "object": "red_block"},
        {"skill": "place", "target": "green_bin"},
    ]
    red = next(o for o in r.world["objects"] if o["name"] == "red_block")
    assert red["in_bin"] == "green_bin"
    # the subgoals' steps, then the settling before the goal check (recorded too)
    settle = math.ceil(SETTLE_S / 0.04 - 1e-9)
    assert r.steps == sum(s["steps"] for s in r.subgoals) + settle
    assert r.goal == ["in(red_block, green_bin)"] and r.goal_source == "plan"
    assert r.goal_evaluation == [{"predicate": "in(red_block, green_bin)", "met": True}]
    assert r.sim_time_s == pytest.approx(r.steps * 0.04)
    for k in ("planning", "bridge", "policy", "physics", "world", "recording", "run_s"):
        assert r.timings[k] >= 0
    json.dumps(r.to_dict())  # machine-readable as is


def test_episode_on_disk(recorded):
    r, path = recorded
    ep = E.load(path)
    m = ep.meta
    assert m["format"] == E.FORMAT and m["version"] == E.VERSION
    assert m["status"] == "complete" and m["task"] == TASK and m["seed"] == SEED
    assert m["trace_id"] == r.trace_id and len(m["model_hash"]) == 64
    assert m["planner"]["spec"] == "rules" and m["policy_source"] == "scripted"
    assert "mujoco" in m["versions"] and "numpy" in m["versions"]
    assert ep.states.shape == (r.steps, m["state_size"]) and ep.states.dtype == np.float64
    assert ep.actions.shape == (r.steps, 4)
    # the active subgoal index: 0 during pick, 1 during place
    n_pick, n_place = r.subgoals[0]["steps"], r.subgoals[1]["steps"]
    assert (ep.subgoals[:n_pick] == 0).all()
    assert (ep.subgoals[n_pick : n_pick + n_place] == 1).all()
    assert (ep.subgoals[n_pick + n_place :] == SETTLE_INDEX).all()  # settling, goal check
    res = m["result"]
    assert res["goal"] == ["in(red_block, green_bin)"] and res["goal_met"] is True
    assert res["goal_evaluation"] == [{"predicate": "in(red_block, green_bin)", "met": True}]
    kinds = [t["kind"] for t in ep.trace]
    for k in ("planner_call", "bridge_decision", "plan", "subgoal_start", "skill_outcome", "end"):
        assert k in kinds
    events = [json.loads(x) for x in (path / E.EVENTS).read_text().splitlines()]
    assert {e["trace_id"] for e in events} == {r.trace_id}
    assert {"planner_call", "bridge_decision", "skill_result"} <= {e["event"] for e in events}
    assert not list(path.glob(".*")), "temporary files left behind"


def test_replay_verify_bit_exact(recorded):
    v = replay.verify(recorded[1])
    assert v.ok, v.message
    assert v.checked == recorded[0].steps and v.first_mismatch is None


def test_verify_detects_a_changed_action(episode_copy):
    ep = E.load(episode_copy)
    ep.actions[40, :3] = 0.123 if ep.actions[40, 0] != 0.123 else -0.123
    v = replay.verify(ep)
    assert not v.ok and v.first_mismatch is not None and v.first_mismatch >= 41


def test_same_seed_same_episode(recorded, tmp_path):
    r = Runner(RunConfig(task=TASK, seed=SEED, out_dir=tmp_path, policy_source="scripted")).run()
    a, b = E.load(recorded[1]), E.load(r.episode)
    assert np.array_equal(a.states, b.states) and np.array_equal(a.actions, b.actions)
    assert np.array_equal(a.final_state, b.final_state)


def test_video_is_decodable_with_expected_frames(recorded, tmp_path):
    import imageio.v2 as imageio

    ep = E.load(recorded[1])
    out = tmp_path / "v.mp4"
    speed = 4.0
    frames = replay.render_video(ep, out, speed=speed, width=160, height=120)
    n_states = ep.n_steps + 1
    assert frames == int(np.ceil(n_states / speed)) == len(replay.frame_indices(n_states, speed))
    with imageio.get_reader(out) as rd:
        decoded = [f for f in rd]
    assert len(decoded) == frames
    assert decoded[0].shape == (120, 160, 3)
    assert not list(tmp_path.glob(".*")), "temporary video left behind"


def test_cli_replay_verify_and_timeline(recorded, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(recorded[1]), "--verify")
    assert code == 0, err
    assert "match bit for bit" in out and "skill_outcome" in out and "planner_call" in out


def test_cli_run_json(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--seed",
        "0",
        "--out",
        str(tmp_path),
        "--json",
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["success"] is True and d["task"] == TASK and d["seed"] == 0
    assert d["planner"] == "rules" and len(d["subgoals"]) == 2
    assert d["accepted_plan"][0] == {"skill": "pick", "object": "red_block"}
    assert set(d["tokens"]) == {"in", "out", "calls"}
    assert "physics" in d["timings"] and d["final_world"]["objects"]
    assert E.load(d["episode"]).complete


def test_product_default_is_pretrained():
    assert RunConfig(task="x").policy_source == "pretrained"
