"""press_button(): press the articulated scene's push button once, flipping the light.

There is no scripted expert: the policy is learned by reinforcement learning from scratch
(``skills/config/press_button.yaml`` sets ``warm_start: none``), on the dense potential
below. The light flips when a press past ``scene.BUTTON_PRESS_DEPTH`` is released, so the
motion is: over the cap, down until the button gives, back up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from sim import scene
from sim.world import ButtonState, WorldState
from skills.base import (
    PRECONDITION,
    UNREACHABLE,
    Binding,
    Skill,
    SkillParams,
    Violation,
    grip_of,
    hand_full,
    in_workspace,
    opening_of,
    random_cubes,
    sample_arm_start,
    vel_of,
)

if TYPE_CHECKING:
    from sim.env import TabletopEnv

#: Height of the grip site above the cap's top (m) at which closed fingertips touch the cap
#: (measured: the button starts to give with the grip site 13 mm above it).
TOUCH_Z = 0.013
#: The button's travel (m): its depth is observed as a fraction of it.
BUTTON_TRAVEL = 0.01
#: After the press the grip site is lifted to this height above the cap (m).
RETREAT_Z = 0.06
#: Weights of the potential's terms: approach (per m), depth pressed (per full travel), and
#: the light flipped (its release). Pressing is worth less than the release, and lifting
#: off a fully pressed button costs less than the success bonus pays.
W_APPROACH = 1.0
W_DEPTH = 0.2
W_FLIPPED = 0.3
#: Scales that bring the observation to about unit range: a run without a warm start has no
#: demonstrations to take normalising statistics from, so the skill scales its own features.
POS_SCALE = 5.0
FINE_SCALE = 25.0
VEL_SCALE = 2.0

NO_BUTTON = "this scene has no button"


class PressButtonParams(SkillParams):
    pass


@dataclass
class ButtonBinding(Binding):
    """The light's state when the press started: success and the observation read the
    light relative to it (a press turns it on from off and off from on)."""

    light_at_start: bool = False


def flipped(obs: dict, b: Binding) -> float:
    start = getattr(b, "light_at_start", False)
    return float(bool(obs["articulation"][2] > 0.5) != bool(start))


def cap_of(b: Binding) -> np.ndarray:
    assert b.target_xyz is not None, "the binding has no button"
    return np.asarray(b.target_xyz, dtype=np.float64)


def _button(world: WorldState) -> ButtonState:
    assert world.button is not None, NO_BUTTON
    return world.button


class PressButton(Skill[PressButtonParams]):
    name = "press_button"
    description = "Press the push button on the cabinet once, which flips the lamp's light."
    Params = PressButtonParams
    precondition_text = (
        "the scene has a push button (the articulated scene)",
        "the gripper is empty (a held cube would be dropped)",
        "the button is within the arm's reach",
    )
    scene = "articulated"
    #: No scripted expert: trained by RL from scratch (``skills.train.has_expert``).
    has_expert: ClassVar[bool] = False
    step_budget = 80
    success_rests_on = ("light",)

    def preconditions(self, world: WorldState, params: PressButtonParams) -> list[Violation]:
        if world.button is None:
            return [
                Violation(
                    PRECONDITION,
                    NO_BUTTON,
                    "press_button needs the articulated scene (a cabinet with a button and a lamp)",
                )
            ]
        out = hand_full(world, "pressing would drop it")
        if not in_workspace(world.button.pos[:2]):
            out.append(Violation(UNREACHABLE, "the button is out of the arm's reach"))
        return out

    def effect(self, world: WorldState, params: PressButtonParams) -> WorldState:
        b = _button(world)
        x, y, top = b.pos
        return world.model_copy(
            update={
                "light_on": not world.light_on,
                "button": b.model_copy(update={"depth": 0.0, "pressed": False}),
                "grip_pos": (x, y, top + RETREAT_Z),
            }
        )

    def success(self, before: WorldState, after: WorldState, params: PressButtonParams) -> bool:
        """The light differs from the start and the button is up again (the light flips on
        the release, so a button still held down has not yet done its job)."""
        if before.light_on is None or after.light_on is None or after.button is None:
            return False
        return after.light_on != before.light_on and not after.button.pressed

    # a press cannot be made impossible by anything in the scene: ``doomed`` stays None

    retreat_steps = 6

    def retreat(self, obs: dict, b: Binding) -> np.ndarray | None:
        """Lift the fingers off the cap, so the next skill does not start on the button."""
        grip = grip_of(obs)
        top = cap_of(b)[2] + RETREAT_Z
        if grip[2] >= top - 0.005:
            return None
        return np.array([0.0, 0.0, 1.0, 1.0])

    # ------------------------------------------------------------------ execution side
    obs_dim = 15

    def bind(self, world: WorldState, params: PressButtonParams) -> ButtonBinding:
        x, y, top = _button(world).pos
        return ButtonBinding(
            target_kind="button",
            target_xyz=(float(x), float(y), float(top)),
            light_at_start=bool(world.light_on),
        )

    def observe(self, obs: dict, b: Binding) -> np.ndarray:
        grip = grip_of(obs)
        rel = cap_of(b) + np.array([0.0, 0.0, TOUCH_Z]) - grip
        return np.concatenate(
            [
                POS_SCALE * grip,
                VEL_SCALE * vel_of(obs),
                [opening_of(obs) / (2 * scene.FINGER_OPEN)],
                POS_SCALE * rel,
                np.clip(FINE_SCALE * rel, -1.0, 1.0),
                [obs["articulation"][1] / BUTTON_TRAVEL, flipped(obs, b)],
            ]
        )

    def expert(self, obs: dict, b: Binding) -> np.ndarray:
        raise NotImplementedError(
            "press_button has no scripted expert: its policy is learned by RL from scratch "
            "(skills/config/press_button.yaml, warm_start: none); evaluate the policy instead"
        )

    def potential(self, obs: dict, b: Binding) -> float:
        """Closer to the touch point above the cap (going below it is not penalised), then
        the depth pressed, then the light flipped: each phase pays on top of the last."""
        d = grip_of(obs) - (cap_of(b) + np.array([0.0, 0.0, TOUCH_Z]))
        d[2] = max(float(d[2]), 0.0)
        depth = float(np.clip(obs["articulation"][1] / BUTTON_TRAVEL, 0.0, 1.0))
        done = flipped(obs, b)
        return (
            -W_APPROACH * float(np.linalg.norm(d))
            + W_DEPTH * depth * (1.0 - done)
            + W_FLIPPED * done
        )

    def sample_start(self, env: TabletopEnv, rng: np.random.Generator) -> PressButtonParams | None:
        """Where the other skills leave the world: the arm at home or above the table (now
        and then still over the button after a press), open or closed fingers, cubes at
        random, the drawer shut, open or part way, the light on or off."""
        names = random_cubes(rng, env)
        u = rng.random()
        drawer = 0.0 if u < 0.4 else scene.DRAWER_TRAVEL if u < 0.7 else rng.uniform(0, 0.15)
        over_button = rng.random() < 0.1
        arm = sample_arm_start(rng)
        env.reset(
            seed=int(rng.integers(2**31)),
            options={
                "cubes": names,
                "arm": arm,
                "drawer": float(drawer),
                "light": bool(rng.random() < 0.5),
            },
        )
        w = env.world_state()
        if over_button and w.button is not None:  # where a press before this one left it
            off = rng.uniform([-0.03, -0.01, 0.04], [0.03, 0.03, 0.1])
            env.move_arm_to(np.asarray(w.button.pos) + off)
        if rng.random() < 0.4:  # push and close_drawer leave the fingers closed
            env.step_physics(np.array([0.0, 0.0, 0.0, 1.0]), control_steps=5)
        params = PressButtonParams()
        if self.preconditions(env.world_state(), params):
            return None
        return params
