"""Success is the goal, checked from physics: faults injected into the real simulation
through the runner's test hook (skillbridge.runner.faults), detected, replanned or reported."""

from __future__ import annotations

import json

from skillbridge.episodes import episode as E
from skillbridge.episodes import replay
from skillbridge.runner.faults import Displace
from skillbridge.runner.records import RunConfig
from skillbridge.runner.runner import Runner
from tests.cli_helpers import run_cli


def _run(tmp_path, task, *, seed=0, fault=None, max_replans=2, source="pretrained"):
    cfg = RunConfig(
        task=task, seed=seed, out_dir=tmp_path, policy_source=source, max_replans=max_replans
    )
    return Runner(cfg, fault=fault).run()


def test_cube_teleported_out_of_its_bin_is_detected_replanned_and_the_goal_met(tmp_path):
    r = _run(tmp_path, "put the red block in the green bin", fault=Displace(seed=1))
    assert [f["fault"] for f in r.faults] == ["teleport"]
    assert r.faults[0]["cube"] == "red_block" and r.faults[0]["was"] == "in green_bin"
    assert r.status == "success" and r.exit_code == 0, r.message
    assert r.goal_replans == 1 and r.replans == 1
    assert r.goal_evaluation == [{"predicate": "in(red_block, green_bin)", "met": True}]
    skills = [s["subgoal"]["skill"] for s in r.subgoals]
    assert skills == ["pick", "place", "pick", "place"]
    ep = E.load(r.episode)
    kinds = [t["kind"] for t in ep.trace]
    assert "fault" in kinds and kinds.count("goal_check") == 2
    first = next(t for t in ep.trace if t["kind"] == "goal_check")
    assert first["met"] is False
    assert ep.meta["result"]["goal_met"] is True and ep.meta["result"]["goal_replans"] == 1
    v = replay.verify(ep)  # resyncs at the injected jump, exact everywhere else
    assert v.ok, v.message


def test_fault_left_unrepaired_is_reported_unmet_never_success(tmp_path):
    r = _run(
        tmp_path,
        "put the red block in the green bin",
        fault=Displace(seed=1),
        max_replans=0,
        source="scripted",
    )
    assert r.status == "failed" and r.exit_code == 1
    assert "goal unmet" in r.message and "in(red_block, green_bin)" in r.message
    assert r.goal_met is False
    assert r.goal_evaluation == [{"predicate": "in(red_block, green_bin)", "met": False}]


def test_toppled_stack_is_detected_and_repaired_or_reported(tmp_path):
    task = "stack the red block on the blue block, then push the yellow block to the table center"
    r = _run(tmp_path, task, seed=12, fault=Displace(seed=3))
    assert [f["fault"] for f in r.faults] == ["topple"]
    assert r.goal_replans >= 1  # detected: the first goal check found on(...) unmet
    assert r.success == bool(r.goal_met)  # success only with the goal met in physics
    if r.success:
        assert {"predicate": "on(red_block, blue_block)", "met": True} in r.goal_evaluation


def test_go_home_when_home_is_nothing_to_do(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "go home",
        "--out",
        str(tmp_path),
        "--json",
        "--policy-source",
        "scripted",
    )
    d = json.loads(out)
    assert code == 0, err
    assert d["status"] == "success" and d["message"].startswith("nothing to do")
    assert d["subgoals"] == [] and d["goal"] == ["home"] and d["goal_met"] is True


def test_run_prints_each_predicate_and_replay_shows_goal(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "put the red block in the green bin",
        "--out",
        str(tmp_path),
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    assert "goal" in out and "met" in out and "in(red_block, green_bin)" in out
    ep = next(p for p in tmp_path.iterdir() if p.is_dir())
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(ep))
    assert code == 0, err
    assert "goal (plan): in(red_block, green_bin)" in out
    assert "goal_check" in out and "met" in out
