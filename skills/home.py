"""home(): open the gripper and return to the rest pose (also the safe stop)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim import scene, scenes, scripted
from sim.objects import spec as object_spec
from sim.world import WorldState
from skills.base import (
    NO_EFFECT,
    Binding,
    Skill,
    SkillParams,
    Violation,
    cube_yaw,
    grip_of,
    moved,
    opening_of,
    proprio_features,
    random_cubes,
    replace_object,
    run_expert_until,
    sample_arm_start,
)

if TYPE_CHECKING:
    from sim.env import TabletopEnv

HOME_TOLERANCE = 0.03  # m


class HomeParams(SkillParams):
    pass


def at_home(world: WorldState) -> bool:
    return float(np.linalg.norm(np.asarray(world.grip_pos) - scene.HOME_POS)) <= HOME_TOLERANCE


class Home(Skill):
    name = "home"
    description = (
        "Open the gripper (releasing anything held) and move the arm to its rest pose "
        "above the table."
    )
    aliases = ("go_home", "reset", "stop", "retract", "rest", "open_gripper")
    perturbations = (
        *("nominal", "obs_noise_2mm", "obs_noise_5mm", "action_noise", "obs_noise_8mm"),
        *("action_noise_strong", "obs_latency"),
    )
    Params = HomeParams
    precondition_text = ("none; a held cube is dropped where the gripper is",)
    step_budget = 60

    # home takes no parameters: ``params`` is typed as the base's, which it never reads
    def preconditions(self, world: WorldState, params: SkillParams) -> list[Violation]:
        if world.held_object is None and at_home(world):
            return [Violation(NO_EFFECT, "the arm is already at home with the gripper open")]
        return []

    def effect(self, world: WorldState, params: SkillParams) -> WorldState:
        w = world.model_copy(update={"grip_pos": tuple(float(v) for v in scene.HOME_POS)})
        if world.held_object is None:
            return w
        o = world.object(world.held_object)
        assert o is not None  # the held cube is one of the world's
        in_bin = next(
            (
                b.name
                for b in world.bins
                if abs(o.pos[0] - b.pos[0]) < b.inner_half
                and abs(o.pos[1] - b.pos[1]) < b.inner_half
            ),
            None,
        )
        rest = (o.pos[0], o.pos[1], object_spec(o.name).half_height)
        new = moved(o, in_bin=in_bin, on_table=in_bin is None, pos=rest)
        return replace_object(w, new, held=None)

    def success(self, before: WorldState, after: WorldState, params: SkillParams) -> bool:
        return after.held_object is None and at_home(after)

    # ------------------------------------------------------------------ execution side
    obs_dim = 10

    def bind(self, world: WorldState, params: SkillParams) -> Binding:
        x, y, z = (float(v) for v in scene.HOME_POS)
        return Binding(target_kind="home", target_xyz=(x, y, z))

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        return np.concatenate([*proprio_features(obs), scene.HOME_POS - grip_of(obs)])

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        return scripted.home_action(grip_of(obs), opening_of(obs))

    def potential(self, obs: dict, b: Binding) -> float:
        open_frac = opening_of(obs) / (2 * scene.FINGER_OPEN)
        return -float(np.linalg.norm(grip_of(obs) - scene.HOME_POS)) + 0.1 * open_frac

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> HomeParams | None:
        """Wherever a skill may end: anywhere above the table, sometimes holding a cube."""
        names = random_cubes(rng, env)
        arm = sample_arm_start(rng)
        if arm is None:
            arm = np.array([*rng.uniform([-0.2, -0.28], [0.2, 0.28]), rng.uniform(0.05, 0.25)])
        env.reset(seed=int(rng.integers(2**31)), options={"cubes": names, "arm": arm})
        if rng.random() < 0.3:
            held = scenes.row(names[0])

            def act(obs: dict) -> np.ndarray:
                return scripted.pick_action(
                    grip_of(obs), opening_of(obs), obs["object_pos"][held], cube_yaw(obs, held)
                )

            def done(obs: dict) -> bool:
                g, c = grip_of(obs), obs["object_pos"][held]
                return (
                    scripted.is_grasped(g, opening_of(obs), c, cube_yaw(obs, held)) and c[2] > 0.08
                )

            run_expert_until(env, act, done, 80)
        if self.preconditions(env.world_state(), HomeParams()):
            return None
        return HomeParams()
