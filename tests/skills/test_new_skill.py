"""A skill written and registered inside this test, with no other file edited: it gets its
subgoal schema, bridge validation, a rules-planner command, ``eval-skill`` and a link in a
chain of skills, which is what "one file plus one registration" promises
(docs/ADDING_A_SKILL.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from bridge import validate
from bridge.schema import plan_schema
from planner.rules import RulesPlanner
from sim import scene
from sim.env import TabletopEnv
from sim.world import WorldState
from skills import registry
from skills.base import (
    PRECONDITION,
    Binding,
    Skill,
    SkillParams,
    Violation,
    grip_of,
    hand_full,
)
from skills.runtime import SkillExecutor

RAISE = 0.05  # m


class RaiseParams(SkillParams):
    pass


class RaiseHand(Skill[RaiseParams]):
    """raise_hand(): lift the empty hand 5 cm straight up."""

    name = "raise_hand"
    description = "Lift the empty hand 5 cm straight up."
    Params = RaiseParams
    precondition_text = ("the gripper is empty", "there is room above the hand")
    commands = ("raise your hand", "hand up")
    step_budget = 40
    obs_dim = 3

    def preconditions(self, world: WorldState, params: SkillParams) -> list[Violation]:
        held = hand_full(world)
        if held:
            return held
        if world.grip_pos[2] + RAISE > scene.WORKSPACE_HIGH[2]:
            return [Violation(PRECONDITION, "there is no room above the hand")]
        return []

    def effect(self, world: WorldState, params: SkillParams) -> WorldState:
        x, y, z = world.grip_pos
        return world.model_copy(update={"grip_pos": (x, y, z + RAISE)})

    def success(self, before: WorldState, after: WorldState, params: SkillParams) -> bool:
        return after.grip_pos[2] >= before.grip_pos[2] + RAISE - 0.01

    def bind(self, world: WorldState, params: SkillParams) -> Binding:
        x, y, z = world.grip_pos
        return Binding(target_kind="point", target_xyz=(x, y, z + RAISE))

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        return np.asarray(b.target_xyz) - grip_of(obs)

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        d = self.observe(obs, b) / (scene.MAX_EE_SPEED * scene.CONTROL_DT)
        return np.array([*np.clip(d, -1.0, 1.0), -1.0])

    def potential(self, obs: dict, b: Binding) -> float:
        return -float(np.linalg.norm(self.observe(obs, b)))

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> RaiseParams | None:
        arm = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), rng.uniform(0.08, 0.15)])
        env.reset(seed=int(rng.integers(2**31)), options={"arm": arm})
        return RaiseParams()


@pytest.fixture
def raise_hand():
    registry.register(RaiseHand)
    yield registry.get("raise_hand")
    registry.unregister("raise_hand")


@pytest.fixture(scope="module")
def world() -> WorldState:
    env = TabletopEnv()
    env.reset(seed=3)
    w = env.world_state()
    env.close()
    return w


def test_the_registered_skill_has_a_subgoal_schema(raise_hand, world):
    steps = plan_schema(world)["$defs"]
    assert "raise_hand" in steps
    assert steps["raise_hand"]["properties"]["skill"]["const"] == "raise_hand"
    registry.unregister("raise_hand")
    assert "raise_hand" not in plan_schema(world)["$defs"]  # gone with its registration


def test_the_bridge_validates_it_by_its_own_preconditions(raise_hand, world):
    ok = validate('[{"skill": "raise_hand"}]', world)
    assert ok.accepted, ok.codes
    assert ok.predicted is not None
    assert ok.predicted.grip_pos[2] == pytest.approx(world.grip_pos[2] + RAISE)
    # after a pick the hand is full: its own precondition refuses it, with the reason
    held = validate('[{"skill": "pick", "object": "red_block"}, {"skill": "raise_hand"}]', world)
    assert not held.accepted
    assert held.reasons[0].path == "/steps/1"
    assert held.reasons[0].code == "precondition_violated"
    # and its parameters are its own: an extra key is refused like any skill's
    extra = validate('[{"skill": "raise_hand", "object": "red_block"}]', world)
    assert not extra.accepted


def test_the_rules_planner_plans_it_from_its_commands(raise_hand, world):
    r = RulesPlanner().parse("Please raise your hand!", world)
    assert r.confident and r.steps == [{"skill": "raise_hand"}]
    assert RulesPlanner().parse("hand up", world).steps == [{"skill": "raise_hand"}]
    registry.unregister("raise_hand")
    assert RulesPlanner().parse("hand up", world).steps != [{"skill": "raise_hand"}]


def test_eval_skill_runs_it(raise_hand):
    from skillbridge.cli import app

    res = CliRunner().invoke(app, ["eval-skill", "raise_hand", "--expert", "-n", "5", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["episodes"] == 5
    assert out["success_rate"] == 1.0


def test_it_is_a_link_in_a_chain_of_skills(raise_hand):
    env = TabletopEnv()
    env.reset(seed=5, options={"cubes": ["red_block", "blue_block"]})
    ex = SkillExecutor("scripted")
    first = ex.run(env, {"skill": "pick", "object": "red_block"})
    second = ex.run(env, {"skill": "place", "target": "green_bin"})
    before = env.world_state().grip_pos[2]
    third = ex.run(env, {"skill": "raise_hand"})
    assert first.success and second.success and third.success
    assert env.world_state().grip_pos[2] >= before + RAISE - 0.01
    env.close()
