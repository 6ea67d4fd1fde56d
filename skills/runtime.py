"""Executing one accepted subgoal with its skill policy in the simulator.

This is the only place a policy touches the physics on behalf of a plan. The runner calls
:meth:`SkillExecutor.run` for each subgoal the bridge accepted; the outcome carries the
skill's own success test on the world state before and after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sim.env import TabletopEnv
from sim.world import WorldState
from skills.base import Binding, Skill, SkillParams, smoothed
from skills.border import clear_of_border
from skills.policy import MLPPolicy, PolicyError, load_policy, pretrained_dir
from skills.registry import get

#: Policy sources: the shipped neural policies, or the scripted experts (a baseline and a
#: debugging aid; never the default).
SOURCES = ("pretrained", "scripted")
#: Prefix of the reason of a subgoal stopped early by the skill's ``doomed`` test.
IMPOSSIBLE = "impossible: "


@dataclass
class SkillOutcome:
    skill: str
    params: dict
    success: bool
    steps: int
    before: WorldState
    after: WorldState
    reason: str | None = None
    violations: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "skill": self.skill,
            "params": self.params,
            "success": self.success,
            "steps": self.steps,
            "reason": self.reason,
            "violations": self.violations,
        }


def load_pretrained(skill: str) -> MLPPolicy:
    d = pretrained_dir(skill)
    if not (d / "manifest.json").is_file():
        raise PolicyError(
            f"{d}: no pretrained policy for skill {skill!r}; "
            f"train one with `skillbridge train {skill}`"
        )
    policy, _ = load_policy(d, skill)
    return policy


class SkillExecutor:
    """Runs subgoals with per-skill policies (loaded once, lazily)."""

    def __init__(
        self, source: str = "pretrained", policies: dict[str, MLPPolicy] | None = None
    ) -> None:
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}")
        self.source = source
        self._policies = dict(policies or {})

    def policy(self, skill: str) -> MLPPolicy:
        if skill not in self._policies:
            self._policies[skill] = load_pretrained(skill)
        return self._policies[skill]

    def run(
        self,
        env: TabletopEnv,
        subgoal: dict,
        on_step: Callable[[np.ndarray], None] | None = None,
        max_steps: int | None = None,
    ) -> SkillOutcome:
        """Execute ``subgoal`` ({"skill": ..., **params}) until its success test or budget.

        ``on_step(action)`` is called just before each control step is applied, so a
        recorder can store the pre-step state with the action that follows it.
        """
        name = subgoal["skill"]
        skill = get(name)
        params = skill.Params(**{k: v for k, v in subgoal.items() if k != "skill"})
        before = env.world_state()
        violations = skill.preconditions(before, params)
        pdict = params.model_dump(mode="json")
        if violations:
            return SkillOutcome(
                name,
                pdict,
                False,
                0,
                before,
                before,
                "precondition failed at execution time",
                [v.__dict__ for v in violations],
            )
        binding = skill.bind(before, params)
        # the scripted source is the experts; a skill learned by RL alone has only its policy
        scripted = self.source == "scripted" and skill.has_expert
        policy = None if scripted else self.policy(name)
        budget = max_steps or skill.step_budget
        after = before
        skill.start(env, binding)
        for step in range(1, budget + 1):
            action = skill.act(env.observe(), binding, policy)
            if on_step is not None:
                on_step(action)
            env.step_physics(action)
            after = env.world_state()
            if skill.success(before, after, params) and clear_of_border(
                env, skill, binding, before, params
            ):
                return self._retreat(env, skill, binding, params, before, step, on_step, policy)
            why = skill.doomed(before, after, params, binding)
            if why is not None:  # stop now: the runner replans at once
                return SkillOutcome(name, pdict, False, step, before, after, f"{IMPOSSIBLE}{why}")
        return SkillOutcome(name, pdict, False, budget, before, after, "step budget exhausted")

    @staticmethod
    def _retreat(
        env: TabletopEnv,
        skill: Skill,
        binding: Binding,
        params: SkillParams,
        before: WorldState,
        steps: int,
        on_step: Callable[[np.ndarray], None] | None,
        policy: MLPPolicy | None = None,
    ) -> SkillOutcome:
        """After success, the skill's scripted retreat (recorded like any step); the
        outcome is the success test on the world the next skill starts from. A filtered
        policy's retreat goes through the same filter, continuing its state, so the
        scripted motion does not reverse the policy's last one at full speed."""
        for _ in range(skill.retreat_steps):
            obs = env.observe()
            action = skill.retreat(obs, binding)
            if action is None:
                break
            if policy is not None:
                action = smoothed(action, obs, binding, policy.smoothing)
            if on_step is not None:
                on_step(action)
            env.step_physics(action)
            steps += 1
        after = env.world_state()
        ok = skill.success(before, after, params)
        pdict = params.model_dump(mode="json")
        return SkillOutcome(
            skill.name, pdict, ok, steps, before, after, None if ok else "undone by the retreat"
        )
