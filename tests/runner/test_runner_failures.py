"""Refusals, planner failures, interrupted runs, bad input and damaged episodes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from skillbridge.episodes import episode as E
from skillbridge.episodes import replay
from skillbridge.runner.records import RunConfig
from skillbridge.runner.runner import Runner
from tests.cli_helpers import run_cli, sigint_default
from tests.runner.common import TASK

REPO = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- refusal
def test_impossible_task_is_refused_without_moving_the_arm(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "put the purple block in the green bin",
        "--out",
        str(tmp_path),
        "--json",
        "--policy-source",
        "scripted",
    )
    assert code == 1
    d = json.loads(out)
    assert d["status"] == "refused" and "purple" in d["refusal"]
    assert d["steps"] == 0 and d["subgoals"] == []
    ep = E.load(d["episode"])
    assert ep.complete and ep.n_steps == 0
    assert np.array_equal(ep.final_state, ep.initial_state)  # not one bit moved


# ----------------------------------------------------------------------------- fallback
def test_invalid_model_plans_fall_back_and_the_run_completes(tmp_path):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from planner.hybrid import HybridPlanner
    from planner.llm import LLMProposer
    from skills.runtime import SkillExecutor

    bad = [
        "Sure! First I will grab the red block.",  # no JSON
        '{"steps": [{"skill": "fly", "object": "red_block"}]}',  # unknown skill
        '{"steps": [{"skill": "pick", "object": "purple_block"}]}',  # unknown object
    ]
    model = FakeListChatModel(responses=bad * 4)
    llm = LLMProposer(model, name="fake:scripted", mode="text", retries=0)
    planner = HybridPlanner(llm, route="model", max_regenerations=2)
    cfg = RunConfig(task=TASK, seed=0, out_dir=tmp_path, policy_source="scripted")
    r = Runner(cfg, planner=planner, executor=SkillExecutor("scripted")).run()
    assert r.success, r.message
    assert r.plans[0]["decision"] == "fallback_accepted" and r.plans[0]["source"] == "rules"
    ep = E.load(r.episode)
    calls = [t for t in ep.trace if t["kind"] == "planner_call"]
    decisions = [t for t in ep.trace if t["kind"] == "bridge_decision"]
    assert [c["proposer"] for c in calls] == ["fake:scripted"] * 3 + ["rules"]
    assert [d["decision"] for d in decisions][:3] == ["rejected"] * 3
    assert all(d["reasons"] for d in decisions[:3])  # each rejection says why
    assert calls[0]["prompt"] and calls[0]["raw"] == bad[0]  # the prompt is kept
    assert replay.verify(ep).ok


# ----------------------------------------------------------------------------- interrupts
CHILD = textwrap.dedent(
    """
    import sys, time
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner
    from skills.runtime import SkillExecutor

    total = [0]

    class Slow(SkillExecutor):  # slow the skills down so the run can be killed mid-way
        def run(self, env, subgoal, on_step=None, max_steps=None):
            def cb(a):
                on_step(a)
                total[0] += 1
                if total[0] % 10 == 0:  # steps of the whole run, not of one subgoal
                    print("STEPS", total[0], flush=True)
                time.sleep(0.03)
            return super().run(env, subgoal, on_step=cb, max_steps=max_steps)

    def on_event(kind, d):
        if kind == "start":
            print("EPISODE", d["episode"], flush=True)

    cfg = RunConfig(task=sys.argv[1], seed=0, out_dir=sys.argv[2], policy_source="scripted")
    Runner(cfg, executor=Slow("scripted"), on_event=on_event).run()
    print("DONE", flush=True)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_run_leaves_a_readable_incomplete_episode(sig, tmp_path, monkeypatch, capsys):
    env = {**os.environ, "PYTHONPATH": str(REPO), "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    # three moves: far more steps than the 60 after which the run is killed, so a machine
    # slow to deliver the signal still finds the run going
    task = (
        f"{TASK}, then put the blue block in the red bin, then put the yellow block in the blue bin"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD, task, str(tmp_path)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    path, deadline = None, time.monotonic() + 60
    try:
        for line in p.stdout:
            if line.startswith("EPISODE"):
                path = Path(line.split(None, 1)[1].strip())
            if line.startswith("STEPS") and int(line.split()[1]) >= 60:
                break  # at least one time-based chunk flush has happened by now
            assert time.monotonic() < deadline and not line.startswith("DONE")
        p.send_signal(sig)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode != 0 and path is not None
    assert not list(tmp_path.glob(".*")) and not list(path.glob(".*"))
    ep = E.load(path)
    assert ep.meta["status"] == "incomplete" and not ep.complete
    assert ep.n_steps > 0 and ep.final_state is None
    if sig == signal.SIGINT:  # a clean shutdown flushes the buffer and says why
        assert ep.meta["result"]["error"] == "interrupted"
        assert ep.trace[-1]["kind"] == "aborted"
    v = replay.verify(ep)
    assert v.ok, v.message
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(path), "--verify")
    assert code == 0, err
    assert "incomplete" in out


# ----------------------------------------------------------------------------- bad input
def _one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "   "], "task is empty"),
        (["run", TASK, "--llm", "nosuch:model"], "unknown provider"),
        (["run", TASK, "--llm", "openai:"], "names no model"),
        (["run", TASK, "--cubes", "purple"], "unknown cube"),
        (["run", TASK, "--policy-source", "magic"], "policy source"),
    ],
)
def test_bad_run_input(args, needle, tmp_path, monkeypatch, capsys):
    out_dir = tmp_path / "runs"
    code, out, err = run_cli(monkeypatch, capsys, *args, "--out", str(out_dir))
    assert code == 2
    assert needle in _one_line(err)
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_unwritable_out_dir(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--out",
        str(blocker / "runs"),
        "--policy-source",
        "scripted",
    )
    assert code == 2 and "output folder" in _one_line(err)
    assert blocker.read_text() == "x" and list(tmp_path.iterdir()) == [blocker]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_read_only_out_dir(tmp_path, monkeypatch, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        code, out, err = run_cli(
            monkeypatch, capsys, "run", TASK, "--out", str(ro), "--policy-source", "scripted"
        )
    finally:
        ro.chmod(0o700)
    assert code == 2 and "not writable" in _one_line(err)
    assert not any(ro.iterdir())


def test_missing_episode(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in _one_line(err)


def test_not_an_episode(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(tmp_path))
    assert code == 2 and "not an episode" in _one_line(err)


def test_viewer_without_display(recorded, monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(replay.sys, "platform", "linux")
    code, out, err = run_cli(
        monkeypatch, capsys, "replay", str(recorded[1]), "--viewer", "--no-timeline"
    )
    assert code == 2 and "needs a display" in _one_line(err)


# ----------------------------------------------------------------------------- damage
def _meta(p: Path) -> dict:
    return json.loads((p / E.META).read_text())


def _damage_version(p: Path):
    m = _meta(p)
    m["version"] = 99
    (p / E.META).write_text(json.dumps(m))
    return "format version 99"


def _damage_truncate_chunk(p: Path):
    c = p / _meta(p)["chunks"][0]["file"]
    c.write_bytes(c.read_bytes()[:1000])
    return "sha256"


def _damage_flip_byte(p: Path):
    c = p / _meta(p)["chunks"][0]["file"]
    b = bytearray(c.read_bytes())
    b[len(b) // 2] ^= 0x01
    c.write_bytes(bytes(b))
    return "tampered"


def _damage_trace(p: Path):
    with open(p / E.TRACE, "a") as f:
        f.write('{"kind": "plan", "steps": [{"skill": "teleport"}]}\n')
    return "trace.jsonl"


def _damage_meta_truncated(p: Path):
    t = (p / E.META).read_text()
    (p / E.META).write_text(t[: len(t) // 2])
    return "not valid JSON"


def _damage_missing_final(p: Path):
    (p / E.FINAL).unlink()
    return "missing"


@pytest.mark.parametrize(
    "damage",
    [
        _damage_version,
        _damage_truncate_chunk,
        _damage_flip_byte,
        _damage_trace,
        _damage_meta_truncated,
        _damage_missing_final,
    ],
)
def test_damaged_episode_is_one_line(damage, episode_copy, monkeypatch, capsys):
    needle = damage(episode_copy)
    with pytest.raises(E.EpisodeError, match=needle.replace(".", r"\.")):
        E.load(episode_copy)
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy), "--verify")
    assert code == 2 and needle in _one_line(err)


def test_torn_trace_line_of_an_incomplete_episode_is_tolerated(episode_copy):
    m = _meta(episode_copy)
    m["status"] = "incomplete"
    (episode_copy / E.META).write_text(json.dumps(m))
    with open(episode_copy / E.TRACE, "a") as f:
        f.write('{"kind": "subgoal_st')
    ep = E.load(episode_copy)
    assert ep.warnings and ep.trace[-1]["kind"] == "end"


def test_missing_api_key(tmp_path, monkeypatch, capsys):
    pytest.importorskip("langchain_openai")
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--llm",
        "openai:gpt-4o-mini",
        "--out",
        str(tmp_path / "runs"),
        "--policy-source",
        "scripted",
    )
    assert code == 2 and "OPENAI_API_KEY" in _one_line(err)
    assert not (tmp_path / "runs").exists()
