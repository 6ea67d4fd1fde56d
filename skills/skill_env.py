"""A skill as a gymnasium environment: start states, goal observation, shaped reward.

Starts come from the skill's *chained* start distribution (where the other skills leave the
world), so a policy is trained on the states it will meet in a plan, not only clean resets.
Reward is potential-based shaping (which preserves the optimal policy) plus a success bonus
and a small time cost; the episode terminates on the skill's own success test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sim import scene
from sim.env import TabletopEnv
from skills.base import Smoothing, arm_motion, from_world, smoothed, to_world
from skills.border import clear_of_border
from skills.registry import get

if TYPE_CHECKING:
    from skills.base import SkillParams
    from skills.perturb import Condition, Event, PerturbedEnv, Sensing

SHAPING_SCALE = 10.0
SUCCESS_BONUS = 5.0
TIME_COST = 0.01


class SkillEnv(gym.Env[np.ndarray, np.ndarray]):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 25}

    def __init__(
        self,
        skill: str,
        render_mode: str | None = None,
        expert_actions: bool = False,
        randomize: dict[str, float] | None = None,
        scene_name: str | None = None,
        smoothing: Smoothing | None = None,
        action_change_cost: float = 0.0,
        jerk_cost: float = 0.0,
        step_cost: float = 0.0,
    ) -> None:
        self.skill = get(skill)
        # another scene than the skill's own: do the tabletop skills keep their rates with
        # the articulated scene's cabinet, drawer and button beside the table?
        self.sim = TabletopEnv(render_mode=render_mode, scene=scene_name or self.skill.scene)
        # domain randomisation: {condition of skills/perturb.py: probability per episode};
        # the rest of the episodes are nominal
        self._nominal = self.sim
        self._randomize = dict(randomize or {})
        self._sims: dict[str, PerturbedEnv] = {}
        self._cond: Condition | None = None
        self._event: Event | None = None
        self._sensing: Sensing | None = None
        if self._randomize:
            from skills.perturb import BY_NAME, PerturbedEnv

            self._sims = {k: PerturbedEnv(BY_NAME[k]) for k in self._randomize}
        self.render_mode = render_mode
        d = self.skill.obs_dim
        self.observation_space = spaces.Box(-np.inf, np.inf, (d,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (scene.ACTION_DIM,), np.float32)
        self.expert_actions = expert_actions
        #: Smoothness (``smoothing`` in the skill's config): how the policy's actions are
        #: smoothed (``skills.base.smoothed``, the same as at run time, so the policy learns
        #: with its own lag), and a CAPS-style temporal term: the reward pays
        #: ``action_change_cost`` times the squared change of the applied motion per step.
        self.smoothing = smoothing or Smoothing()
        self.action_change_cost = float(action_change_cost)
        #: ... and ``jerk_cost`` times the squared jerk of the grip site itself (its third
        #: difference over the last four positions, in units of a full-speed reversal per
        #: step, ``MAX_EE_SPEED / dt**2``): what the filter cannot smooth, the jolt of a
        #: contact the policy drives into, is the policy's to soften.
        self.jerk_cost = float(jerk_cost)
        #: ... and ``step_cost`` more per step than ``TIME_COST`` (a filtered policy that
        #: lags is paid to be as quick as it can: the time per subgoal is a target too).
        self.step_cost = float(step_cost)
        self._grip: list[np.ndarray] = []
        self._motion = np.zeros(3)
        self._rng: np.random.Generator | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if self._rng is None or seed is not None:
            self._rng = np.random.default_rng(self.np_random.integers(2**63))
        self._pick_condition()
        for _ in range(100):
            params = self._sample_start()
            if params is not None:
                break
        else:
            raise RuntimeError(f"could not sample a start state for {self.skill.name}")
        self.params = params
        self.before = self.sim.world_state()
        self.binding = self.skill.bind(self.before, params)
        self.skill.start(self.sim, self.binding)
        self._event = None
        if self._cond is not None and self._cond.event is not None:  # a disturbance episode
            from skills.perturb import Event

            cube = self.binding.cube
            target = getattr(params, "target", None)
            self._event = Event(
                self._cond.event,
                None if cube is None else self.sim.object_names[cube],
                target if isinstance(target, str) else None,
                self._rng,
            )
        self.steps = 0
        raw = self.sim.observe()
        self._phi = self.skill.potential(raw, self.binding)
        self._motion = arm_motion(raw)  # what the arm is doing: the filter's first state
        self._grip = [np.array(raw["proprio"][:3])]
        self._raw = raw  # the observation the next action is taken on
        self._sensing = None
        if self._cond is not None:  # what the policy sees and sends; rewards, labels are true
            from skills.perturb import Sensing

            self._sensing = Sensing(self._cond, self._generator)
        return self._observe(raw), self._info(raw, False)

    def _pick_condition(self) -> None:
        self.sim, self._cond = self._nominal, None
        if not self._randomize:
            return
        u, acc = self._generator.random(), 0.0
        for name, p in self._randomize.items():
            acc += p
            if u < acc:
                sim = self._sims[name]
                self.sim, self._cond = sim, sim.cond
                return

    @property
    def _generator(self) -> np.random.Generator:
        """The episodes' generator, which the first :meth:`reset` makes."""
        assert self._rng is not None, "reset() first"
        return self._rng

    def _sample_start(self) -> SkillParams | None:
        if self._cond is None or self._cond.name == "nominal":
            return self.skill.sample_start(self.sim, self._generator)
        from skills.perturb import PerturbedEnv, sample_start

        assert isinstance(self.sim, PerturbedEnv)  # _pick_condition chose it with _cond
        start = sample_start(self.skill, self.sim, self._generator)
        return None if start is None else start[0]

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        action = self.skill.shield(np.asarray(action, dtype=np.float64))
        smooth = (
            self.smoothing.active
            or self.action_change_cost > 0
            or self.jerk_cost > 0
            or self.step_cost > 0
        )
        if smooth:  # the smoothing and the cost on the applied motion, in world axes
            b = self.binding
            world = smoothed(to_world(action, b), self._raw, b, self.smoothing)
            change = float(np.sum((world[:3] - self._motion) ** 2))
            self._motion = np.array(world[:3], dtype=np.float64)
            if self.smoothing.active:
                action = from_world(world, b)
        if self._sensing is not None:
            action = self._sensing.send(action)
        if self._event is not None:
            sim = cast("PerturbedEnv", self.sim)  # an event comes with its condition's env
            self._event.before_step(sim, self.steps + 1, self.sim.observe(), self.binding)
            action = self._event.gripper(action)
        self.sim.step_physics(to_world(action, self.binding))  # a turned grasp's frame
        self.steps += 1
        raw = self.sim.observe()
        self._raw = raw
        success = self.skill.success(self.before, self.sim.world_state(), self.params)
        if success and self.sim.perception is not None:  # from images: clear of the border
            success = clear_of_border(self.sim, self.skill, self.binding, self.before, self.params)
        phi = self.skill.potential(raw, self.binding)
        shaping = SHAPING_SCALE * (phi - self._phi)
        bonus = SUCCESS_BONUS if success else 0.0
        cost = -self.action_change_cost * change - self.step_cost if smooth else 0.0
        if self.jerk_cost > 0:
            self._grip = [*self._grip[-3:], np.array(raw["proprio"][:3])]
            if len(self._grip) == 4:
                p0, p1, p2, p3 = self._grip
                unit = scene.MAX_EE_SPEED * scene.CONTROL_DT  # m per step at full speed
                j = float(np.sum(((p3 - 3 * p2 + 3 * p1 - p0) / unit) ** 2))
                cost -= self.jerk_cost * j
        reward = shaping - TIME_COST + bonus + cost
        self._phi = phi
        truncated = not success and self.steps >= self.skill.step_budget
        info = self._info(raw, success)
        # the reward's terms, Gymnasium-style (they sum to the reward)
        info["reward_terms"] = {"shaping": float(shaping), "time": -TIME_COST, "success": bonus}
        if smooth:
            info["reward_terms"]["smoothness"] = cost
        return self._observe(raw), float(reward), bool(success), truncated, info

    def expert_action(self) -> np.ndarray:
        return self.skill.expert(self.sim.observe(), self.binding).astype(np.float32)

    def _observe(self, raw: dict) -> np.ndarray:
        if self._sensing is not None:  # the policy's view only
            raw = self._sensing.see(raw)
        return self.skill.observe(raw, self.binding).astype(np.float32)

    def _info(self, raw: dict, success: bool) -> dict[str, Any]:
        info: dict[str, Any] = {"is_success": success}
        if self.expert_actions:
            info["expert_action"] = self.skill.expert(raw, self.binding).astype(np.float32)
        return info

    def render(self) -> np.ndarray:
        return self.sim.render_rgb()

    def close(self) -> None:
        self._nominal.close()
        for e in self._sims.values():
            e.close()


def make_env(skill: str, cfg: dict) -> SkillEnv:
    """The training env of a skill's config: its domain randomisation and its smoothing."""
    sm = cfg.get("smoothing") or {}
    return SkillEnv(
        skill,
        randomize=cfg.get("randomize"),
        smoothing=smoothing_of(cfg),
        action_change_cost=float(sm.get("action_change_cost", 0.0)),
        jerk_cost=float(sm.get("jerk_cost", 0.0)),
        step_cost=float(sm.get("step_cost", 0.0)),
    )


def smoothing_of(cfg: dict) -> Smoothing:
    """The action smoothing a skill's config trains (and ships) its policy with."""
    sm = cfg.get("smoothing") or {}
    return Smoothing(
        float(sm.get("action_filter", 0.0)),
        float(sm.get("action_rate", 0.0)),
        float(sm.get("grip_filter", 0.0)),
    )


def register_skill_envs() -> None:
    from skills.registry import names

    for n in names():
        env_id = f"skillbridge/Skill-{n}-v0"
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="skills.skill_env:SkillEnv", kwargs={"skill": n})
