"""A safe stop from the rest pose (``home`` with nothing to do) is no failed ``home`` skill in
the eval's record and report (issue 23, item 18)."""

from __future__ import annotations

from skillbridge.evaluation.jobs import run_job
from skillbridge.evaluation.suite import Task

TASK = Task(
    id="gibberish",
    instruction="florp the zorble",
    category="pick_place",
    goal=("in(red_block, green_bin)",),
    scene={"cubes": ["red_block", "blue_block"]},
)


def test_safe_stop_from_home_is_not_a_failed_home_skill(tmp_path, monkeypatch):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from planner.hybrid import HybridPlanner
    from planner.llm import LLMProposer

    def from_spec(cls, spec=None, **kw):  # a model that never writes a plan
        model = GenericFakeChatModel(messages=iter([AIMessage(content="no idea")] * 20))
        llm = LLMProposer(model, name="fake", mode="text", sleep=lambda s: None)
        return HybridPlanner(llm, route="model")

    monkeypatch.setattr(HybridPlanner, "from_spec", classmethod(from_spec))
    job = {
        "task": TASK.model_dump(mode="json"),
        "seed": 0,
        "llm": None,
        "policy_source": "scripted",
        "max_replans": 0,
        "base_url": None,
        "episodes": str(tmp_path),
        "faults": False,
    }
    rec = run_job(job)
    assert rec["status"] == "safe_stop"
    homes = [s for s in rec["subgoals"] if s["skill"] == "home"]
    assert homes, rec["subgoals"]  # the safe stop ran home, from home
    assert all(s["success"] for s in homes), homes
    assert "home" not in (rec["cause"] or "")
