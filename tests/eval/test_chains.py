"""Chains of five instructions run without reset: sampled so that each is doable where the
previous ones leave the world, run back to back, scored by the completed length."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bridge.goals import goal_holds
from sim.env import TabletopEnv
from skillbridge.evaluation import chains as C
from tests.cli_helpers import run_cli


@pytest.fixture(scope="module")
def start():
    env = TabletopEnv()
    state, world = C.start_world(env, 3, np.random.default_rng(0))
    env.close()
    return state, world


def test_candidates_leave_out_what_already_holds(start):
    _, w = start
    cands = C.candidates(w)
    assert cands and all(not goal_holds(i.goal, w) for i in cands)
    assert {i.kind for i in cands} == {"bin", "stack", "push"}  # no drawer on this scene


def test_a_sampled_chain_is_doable_in_sequence(start):
    _, w = start
    chain = C.sample_chain(w, np.random.default_rng(1))
    assert chain is not None and len(chain) == C.CHAIN_LENGTH
    for inst in chain:
        nxt = C.doable(inst, w)
        assert nxt is not None, inst.text
        assert goal_holds(inst.goal, nxt) and not goal_holds(inst.goal, w)
        w = nxt
    # same generator state, same chain
    again = C.sample_chain(start[1], np.random.default_rng(1))
    assert [i.text for i in again] == [i.text for i in chain]


def _chain(done: int) -> C.ChainResult:
    links = [C.LinkResult(f"t{k}", [], True, "success") for k in range(done)]
    if done < 5:
        links.append(C.LinkResult("t", ["in(red_block, red_bin)"], False, "failed", "failed"))
    return C.ChainResult(0, 0, [], links)


def test_summary_counts_tasks_in_a_row():
    s = C.summarise([_chain(5), _chain(3), _chain(0)])
    assert s["average_completed"] == pytest.approx(8 / 3, abs=1e-4)
    assert [a["successes"] for a in s["success_at"]] == [2, 2, 2, 1, 1]
    assert s["completed_histogram"] == {"0": 1, "1": 0, "2": 0, "3": 1, "4": 0, "5": 1}
    assert s["failure_causes"] == {"failed": 2}


def test_cli_runs_chains_and_writes_a_report(tmp_path, monkeypatch, capsys):
    out = tmp_path / "ch"
    code, stdout, _ = run_cli(
        monkeypatch, capsys, "eval", "--chains", "2", "--llm", "rules", "--json", "--out", str(out)
    )
    summary = json.loads(stdout)
    assert summary["chains"] == 2 and 0 <= summary["average_completed"] <= 5
    assert code == (0 if summary["average_completed"] >= C.TARGET else 1)
    doc = json.loads((out / "chains.json").read_text())
    assert doc["format"] == C.REPORT_FORMAT and len(doc["chains"]) == 2
    first = doc["chains"][0]
    assert len(first["instructions"]) == 5 and first["links"]
    assert first["links"][0]["episode"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--chains", "0"], "--chains must be between 1 and 10000"),
        (["--chains", "2", "--only", "stacking"], "--chains runs no suite; drop --only"),
        (["--chains", "2", "--scene", "kitchen"], "--scene must be one of"),
    ],
)
def test_bad_chain_options_are_one_line_errors(tmp_path, monkeypatch, capsys, args, message):
    code, _, err = run_cli(monkeypatch, capsys, "eval", *args, "--out", str(tmp_path / "o"))
    assert code == 2 and message in err and "Traceback" not in err


def test_chain_video_and_picture(tmp_path, monkeypatch, capsys):
    import imageio.v2 as imageio

    out = tmp_path / "v"
    run_cli(
        monkeypatch, capsys, "eval", "--chains", "1", "--llm", "rules", "--video", "--out", str(out)
    )
    doc = json.loads((out / "chains.json").read_text())
    links = doc["chains"][0]["links"]
    strip = imageio.imread(out / "chain-0000.png")
    assert strip.shape[0] == 180 and strip.shape[1] == 240 * len(links)
    with imageio.get_reader(out / "chain-0000.mp4") as rd:
        assert sum(1 for _ in rd) > 10 * len(links)
