"""Talking to the robot in physics: a correction taken at the next control step, the arm
brought to rest, the replan's first motion, every turn in the episode, replay still bit
exact; and `skillbridge run --answer / --interject` from the command line. The scripted
experts stand in for the policies (as in the other runner tests)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from skillbridge.episodes.episode import load
from skillbridge.episodes.replay import print_timeline, verify
from skillbridge.runner.records import RunConfig
from skillbridge.runner.runner import STOP_INDEX, Runner
from tests.cli_helpers import run_cli
from tests.runner.common import SEED, TASK


def _run(tmp_path, **kw):
    cfg = RunConfig(task=TASK, seed=SEED, out_dir=tmp_path, policy_source="scripted", **kw)
    return Runner(cfg).prepare().run()


def test_a_correction_mid_carry_stops_the_arm_and_replans_from_the_world(tmp_path):
    r = _run(tmp_path, interjections=[(30, "no, the blue bin")])
    assert r.status == "success" and r.final_task == "put the red block in the blue bin"
    assert {e["predicate"] for e in r.goal_evaluation if e["met"]} == {"in(red_block, blue_bin)"}
    (ij,) = r.interjections
    assert ij["mode"] == "stopped" and ij["posted_step"] == ij["taken_step"] == 30
    assert ij["rest_step"] == 30 + ij["hold_steps"] and 1 <= ij["hold_steps"] <= 12
    # planning takes no sim time: the new plan moves as soon as the arm is at rest
    assert ij["resumed_step"] == ij["rest_step"]
    ep = load(r.episode)
    sg = np.asarray(ep.subgoals)
    old = {s["index"] for s in r.subgoals if s["plan"] == 0}
    assert (sg[30 : ij["rest_step"]] == STOP_INDEX).all()
    assert not np.isin(sg[30:], list(old)).any()  # the superseded plan commands nothing more
    kinds = [t.get("kind") for t in ep.trace]
    assert {"turn", "interjection", "resumed"} <= set(kinds)
    turns = [t for t in ep.trace if t.get("kind") == "turn"]
    assert [(t["role"], t["act"]) for t in turns] == [
        ("user", "task"),
        ("user", "message"),
        ("robot", "ack"),
    ]
    assert turns[1]["said_step"] == 30 and turns[1]["taken_step"] == 30
    assert ep.meta["result"]["interjections"] == 1
    v = verify(ep)
    assert v.ok, v.message  # the stop's hold steps are recorded actions like any other
    print_timeline(ep)  # the new records show in the timeline


def test_a_release_in_progress_is_finished_then_replanned(tmp_path, recorded):
    ep = load(recorded[1])
    place = next(s for s in recorded[0].subgoals if s["subgoal"]["skill"] == "place")
    span = range(place["start_step"], place["start_step"] + place["steps"])
    opening = next(k for k in span if ep.actions[k][-1] < 0)  # the gripper starts to open
    r = _run(tmp_path, interjections=[(opening, "put it in the blue bin instead")])
    (ij,) = r.interjections
    assert ij["mode"] == "finished" and ij["rest_step"] > ij["taken_step"]
    assert r.status == "success"
    assert r.world["objects"] and any(
        o["name"] == "red_block" and o["in_bin"] == "blue_bin" for o in r.world["objects"]
    )
    assert r.subgoals[1]["success"]  # the release was finished into the green bin first


def test_said_while_the_goal_settles_is_taken_at_once(tmp_path, recorded):
    settle = next(k for k, i in enumerate(load(recorded[1]).subgoals) if i == -1)
    r = _run(tmp_path, interjections=[(settle + 2, "put it in the blue bin instead")])
    (ij,) = r.interjections
    assert ij["mode"] == "idle" and ij["taken_step"] == settle + 2
    assert ij["resumed_step"] - ij["posted_step"] <= 1  # the settling ends for it
    assert r.status == "success" and r.final_task == "put the red block in the blue bin"


def test_stop_leaves_the_arm_at_rest_and_the_run_stopped(tmp_path):
    r = _run(tmp_path, interjections=[(8, "stop!")])
    assert r.status == "stopped" and r.steps == r.interjections[0]["rest_step"]
    assert r.subgoals[-1]["interrupted"] and r.exit_code == 0
    assert verify(r.episode).ok


def test_run_cli_answers_in_advance(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "put the block in the green bin",
        "--llm",
        "rules",
        "--policy-source",
        "scripted",
        "--out",
        str(tmp_path),
        "--json",
        "--answer",
        "um",
        "--answer",
        "the red one",
    )
    d = json.loads(out)
    assert code == 0 and d["status"] == "success", err
    assert d["final_task"] == "put the red block in the green bin"
    assert [t["kind"] for t in d["turns"]][:5] == [
        "task",
        "question",
        "answer",
        "question",
        "answer",
    ]


def test_run_cli_without_a_terminal_or_answer_exits_3_with_the_question(
    tmp_path, monkeypatch, capsys
):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "put the block in the green bin",
        "--llm",
        "rules",
        "--out",
        str(tmp_path),
        "--json",
    )
    d = json.loads(out)
    assert code == 3 and d["status"] == "clarify" and d["subgoals"] == []
    assert d["question"] == "Which block: red, green, blue or yellow?"


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--interject", "soon:stop"),
        ("--interject", "12"),
        ("--interject", "3: "),
        ("--interject", "-3:stop"),
        ("--interject", "5:" + "x" * 2001),
        ("--answer", " "),
    ],
)
def test_run_cli_bad_dialogue_flags_are_one_line(tmp_path, monkeypatch, capsys, flag, value):
    code, out, err = run_cli(
        monkeypatch, capsys, "run", TASK, "--llm", "rules", "--out", str(tmp_path), flag, value
    )
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.iterdir())  # no episode was started


def test_run_on_a_terminal_asks_and_reads_the_answer(tmp_path):
    """stdin a terminal (a pseudo-terminal here): the question is asked on it and the
    answer read; with --json the prompt goes to stderr and stdout stays one document."""
    import os
    import subprocess
    import sys

    master, slave = os.openpty()
    try:
        os.write(master, b"the first one\n")
        p = subprocess.run(
            [sys.executable, "-m", "skillbridge.cli", "run", "put the block in the green bin"]
            + ["--llm", "rules", "--policy-source", "scripted", "--out", str(tmp_path), "--json"],
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert p.returncode == 0, p.stderr
    assert "robot asks:" in p.stderr and "Which block" in p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "success" and d["final_task"] == "put the red block in the green bin"


def test_a_post_from_another_thread_is_taken_and_traced_from_the_run(tmp_path):
    """The service's case: the utterance comes from another thread (here started and
    joined inside a step hook, so the step it arrives at is known)."""
    import threading

    from planner.conversation import Conversation

    conv = Conversation()

    def from_elsewhere(step):
        if step == 10:
            t = threading.Thread(target=conv.post, args=("stop",))
            t.start()
            t.join()

    conv.add_step_hook(from_elsewhere)
    cfg = RunConfig(task=TASK, seed=SEED, out_dir=tmp_path, policy_source="scripted")
    r = Runner(cfg, conversation=conv).prepare().run()
    assert r.status == "stopped" and r.interjections[0]["taken_step"] == 10
    trace = load(r.episode).trace
    assert [t["act"] for t in trace if t.get("kind") == "turn"] == ["task", "message", "stopped"]
