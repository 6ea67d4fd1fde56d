"""Planning success is judged symbolically: the plan's effects, from the initial world."""

from __future__ import annotations

import pytest

from skillbridge.evaluation.jobs import simulate_plan
from skillbridge.evaluation.record import cause as _cause
from skillbridge.evaluation.report import rate
from skillbridge.evaluation.suite import load_suite, parse_literal


@pytest.fixture(scope="module")
def world():
    from sim.env import TabletopEnv

    env = TabletopEnv()
    env.reset(seed=0, options={"cubes": ["red_block", "blue_block"]})
    w = env.world_state()
    env.close()
    return w


def test_simulate_plan_applies_effects(world):
    plan = [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "blue_block"}]
    after = simulate_plan(world, plan)
    assert parse_literal("on(red_block, blue_block)").holds(after)
    assert parse_literal("not held(*)").holds(after)
    assert not parse_literal("on(red_block, blue_block)").holds(world)


def test_simulate_plan_rejects_impossible_steps(world):
    assert simulate_plan(world, [{"skill": "place", "target": "red_bin"}]) is None
    assert simulate_plan(world, []) == world


def test_rate_has_wilson_interval():
    r = rate(9, 10)
    assert r["rate"] == 0.9 and r["episodes"] == 10
    assert r["ci95"][0] < 0.9 < r["ci95"][1]
    assert rate(0, 0)["rate"] is None


def test_failure_causes():
    base = {
        "first_refused": False,
        "refused": False,
        "plan": [{"skill": "home"}],
        "planning": True,
        "subgoals": [],
        "status": "success",
    }
    assert _cause({**base, "first_refused": True, "refused": True}) == "false_refusal"
    assert _cause({**base, "plan": [], "status": "safe_stop"}) == "no_plan:safe_stop"
    assert _cause({**base, "planning": False}) == "wrong_plan"
    assert _cause(
        {
            **base,
            "subgoals": [{"skill": "pick", "success": True}, {"skill": "place", "success": False}],
        }
    ) == ("skill_failed:place")
    assert _cause({**base, "refused": True}) == "refused_on_replan"
    assert _cause(base) == "goal_not_met"


def test_shipped_refusals_are_refused_by_the_rules_planner():
    """The refusal target is 1.0: every must-refuse task is declined on the first plan."""
    from planner.hybrid import HybridPlanner
    from sim.env import TabletopEnv

    env = TabletopEnv()
    planner = HybridPlanner.from_spec("rules")
    for t in load_suite().by_category()["refuse"]:
        env.reset(seed=0, options=t.scene.reset_options())
        out = planner.plan(t.instruction, env.world_state())
        assert out.decision == "refused" and out.refusal, t.id
    env.close()


def test_shipped_tasks_are_planned_by_the_rules_planner():
    """Planning success without physics: for every task that should run, the rules planner's
    accepted plan (seed 0) achieves the goal by the skills' symbolic effects. The
    free-language categories (typos, synonyms, ...) are meant for a language-model planner
    and are exempt here."""
    from planner.hybrid import HybridPlanner
    from sim.env import TabletopEnv
    from skillbridge.evaluation.suite import FREE_LANGUAGE_CATEGORIES

    envs: dict[str, TabletopEnv] = {}
    planner = HybridPlanner.from_spec("rules")
    failed = []
    for t in load_suite().tasks:
        if t.refuse or t.category in FREE_LANGUAGE_CATEGORIES:
            continue
        env = envs.setdefault(t.scene.model, TabletopEnv(scene=t.scene.model))
        env.reset(seed=0, options=t.scene.reset_options())
        world = env.world_state()
        out = planner.plan(t.instruction, world)
        after = simulate_plan(world, out.steps()) if out.steps() else None
        if after is None or not t.achieved(after):
            failed.append((t.id, out.decision, out.refusal))
    for env in envs.values():
        env.close()
    assert not failed, failed
