"""``eval`` trusts no claim: false success claims, recovery from injected faults (real
physics), and a stated goal other than the task's counted as a planning failure."""

from __future__ import annotations

import json

from skillbridge.evaluation.jobs import run_job
from skillbridge.evaluation.report import claims
from skillbridge.evaluation.suite import Task
from tests.cli_helpers import run_cli

TASK = Task(
    id="red-green",
    instruction="put the red block in the green bin",
    category="pick_place",
    goal=("in(red_block, green_bin)", "not held(*)"),
    scene={"cubes": ["red_block", "blue_block"]},
)


def _job(tmp_path, *, faults=False, source="scripted", seed=0):
    return {
        "task": TASK.model_dump(mode="json"),
        "seed": seed,
        "llm": None,
        "policy_source": source,
        "max_replans": 2,
        "base_url": None,
        "episodes": str(tmp_path),
        "faults": faults,
    }


def test_fault_in_an_episode_is_recovered_and_counted(tmp_path):
    rec = run_job(_job(tmp_path, faults=True, source="pretrained"))
    assert rec["fault"]["fault"] == "teleport" and rec["fault"]["cube"] == "red_block"
    assert rec["recovered"] is True and rec["repaired_by_replan"] is True
    assert rec["claimed_success"] is True and rec["false_success"] is False
    assert rec["goal_replans"] == 1 and rec["run_goal_met"] is True
    c = claims([rec])
    assert c["faults_injected"] == 1 and c["recovery"]["successes"] == 1
    assert c["repaired_by_replan"] == 1 and c["false_success_claims"] == 0


def test_claims_count_a_success_the_world_contradicts():
    base = {"refuse": False, "task": "t", "seed": 0, "episode": "e", "fault": None}
    recs = [
        {**base, "claimed_success": True, "false_success": True, "unmet_final": ["x"]},
        {**base, "claimed_success": True, "false_success": False, "unmet_final": []},
        {
            **base,
            "claimed_success": False,
            "false_success": False,
            "unmet_final": ["x"],
            "fault": {"fault": "topple"},
            "recovered": False,
        },
    ]
    c = claims(recs)
    assert c["claimed_success"] == 2 and c["false_success_claims"] == 1
    assert c["false_success_episodes"][0]["unmet"] == ["x"]
    assert c["faults_injected"] == 1 and c["recovery"]["successes"] == 0
    assert c["faults_by_kind"] == {"topple": 1}


def test_a_model_stating_a_goal_other_than_the_instruction_fails_planning(tmp_path, monkeypatch):
    """The steps do the task, but the stated goal ('nothing held') is not the instruction's:
    the run would be judged against the wrong goal, so eval counts a planning failure."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from planner.hybrid import HybridPlanner
    from planner.llm import LLMProposer

    plan = {
        "steps": [
            {"skill": "pick", "object": "red_block"},
            {"skill": "place", "target": "green_bin"},
        ],
        "goal": ["not held(*)"],
    }

    def from_spec(cls, spec=None, **kw):
        model = GenericFakeChatModel(messages=iter([AIMessage(content=json.dumps(plan))] * 4))
        llm = LLMProposer(model, name="fake", mode="text", sleep=lambda s: None)
        return HybridPlanner(llm, route="model")

    monkeypatch.setattr(HybridPlanner, "from_spec", classmethod(from_spec))
    rec = run_job(_job(tmp_path))
    assert rec["goal_mismatch"] == ["missing in(red_block, green_bin)"]
    assert rec["planning"] is False
    assert claims([rec])["wrong_goal"] == 1


def test_eval_faults_cli_reports_recovery_and_claims(monkeypatch, capsys, tmp_path):
    suite = tmp_path / "one.yaml"
    suite.write_text(
        "suite: one\ntasks:\n  - id: red-green\n    instruction: put the red block in the "
        "green bin\n    category: pick_place\n    scene: {cubes: [red_block, blue_block]}\n"
        "    goal:\n      - in(red_block, green_bin)\n"
    )
    out = tmp_path / "rep"
    code, stdout, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(suite),
        "--seeds",
        "1",
        "--workers",
        "1",
        "--out",
        str(out),
        "--json",
        "--faults",
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    s = json.loads(stdout)
    assert s["config"]["faults"] is True
    assert s["claims"]["faults_injected"] == 1 and s["claims"]["false_success_claims"] == 0
    assert s["claims"]["recovery"]["rate"] == 1.0
    md = (out / "report.md").read_text()
    assert "false success claims" in md and "recovery from an injected fault" in md


def test_a_plan_moving_the_cube_to_leave_is_no_success_claim(tmp_path, monkeypatch):
    """Issue 23, item 8: for "leave the green cube where it is and put the rest in the green
    bin" the embedded model's command moved the green cube too, its plan stated a goal
    with green in the bin, the run met that goal and claimed success: a false success
    claim on every seed (with --faults or without). The cube the instruction leaves alone
    must not be moved by a model's plan, so the run claims nothing."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from planner.hybrid import HybridPlanner
    from planner.llm import LLMProposer

    moves = [
        s
        for c in ("green", "red", "blue")
        for s in (
            {"skill": "pick", "object": f"{c}_block"},
            {"skill": "place", "target": "green_bin"},
        )
    ]
    plan = {"steps": moves, "goal": [f"in({c}_block, green_bin)" for c in ("green", "red", "blue")]}

    def from_spec(cls, spec=None, **kw):
        # the whole plan, then (after the fault moved green out of the bin) green back in
        replies = [plan] + [{"steps": moves[:2], "goal": plan["goal"][:1]}] * 20
        model = GenericFakeChatModel(
            messages=iter([AIMessage(content=json.dumps(r)) for r in replies])
        )
        llm = LLMProposer(model, name="fake", mode="text", sleep=lambda s: None)
        # the model alone: the rules read this request right, and would plan it as their
        # fallback once the model's plans were rejected
        return HybridPlanner(llm, route="model", rules_fallback=False)

    monkeypatch.setattr(HybridPlanner, "from_spec", classmethod(from_spec))
    task = Task(
        id="exc-leave-green",
        instruction="leave the green cube where it is and put the rest in the green bin",
        category="exclusions",
        goal=("in(red_block, green_bin)", "in(blue_block, green_bin)", "on_table(green_block)"),
        scene={"cubes": ["red_block", "green_block", "blue_block"]},
    )
    job = {**_job(tmp_path), "task": task.model_dump(mode="json"), "faults": True}
    rec = run_job(job)
    assert rec["false_success"] is False, rec
    assert rec["claimed_success"] is False
    assert not any(s["skill"] == "pick" for s in rec["subgoals"])  # green never moved
