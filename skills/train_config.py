"""A skill's training configuration, typed and bounded (``skills/config/<skill>.yaml``).

Its own module so that the trainers (:mod:`skills.trainers`) read their sections' types
without importing the training loop (:mod:`skills.train`) that drives them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Dagger(_Strict):
    expert_episodes: int = Field(ge=1, le=100_000)
    noise: float = Field(ge=0, le=5)
    iterations: int = Field(ge=0, le=100)
    student_episodes: int = Field(ge=0, le=100_000)
    epochs: int = Field(ge=1, le=10_000)
    lr: float = Field(gt=0, le=1)


class _PPO(_Strict):
    n_steps: int = Field(ge=2, le=1_000_000)
    batch_size: int = Field(ge=2, le=1_000_000)
    n_epochs: int = Field(ge=1, le=1000)
    learning_rate: float = Field(gt=0, le=1)
    clip_range: float = Field(gt=0, le=1)
    gamma: float = Field(gt=0, le=1)
    gae_lambda: float = Field(ge=0, le=1)
    target_kl: float | None = Field(default=None, gt=0, le=10)
    log_std_init: float = Field(ge=-20, le=5)
    value_warmup_episodes: int = Field(default=0, ge=0, le=100_000)


class _SAC(_Strict):
    learning_rate: float = Field(default=3e-4, gt=0, le=1)
    buffer_size: int = Field(default=200_000, ge=1, le=10_000_000)
    batch_size: int = Field(default=256, ge=1, le=1_000_000)
    gamma: float = Field(default=0.98, gt=0, le=1)
    tau: float = Field(default=0.005, gt=0, le=1)
    train_freq: int = Field(default=1, ge=1, le=100_000)
    gradient_steps: int = Field(default=1, ge=-1, le=100_000)
    ent_coef: float = Field(default=0.005, ge=0, le=10)
    log_std_init: float = Field(default=-1.6, ge=-20, le=5)
    demo_episodes: int = Field(default=30, ge=0, le=100_000)
    critic_warmup_steps: int = Field(default=500, ge=0, le=10_000_000)


class _Smoothing(_Strict):
    #: The low-pass filter the policy is trained and executed with (``skills.base.smoothed``).
    action_filter: float = Field(default=0.0, ge=0, le=0.95)
    #: The most the applied motion may change per step and axis (0: no limit).
    action_rate: float = Field(default=0.0, ge=0, le=2)
    #: The low-pass filter on the gripper command.
    grip_filter: float = Field(default=0.0, ge=0, le=0.95)
    #: Reward cost per squared change of the applied motion from one step to the next.
    action_change_cost: float = Field(default=0.0, ge=0, le=10)
    #: Reward cost per squared jerk of the grip site (see ``SkillEnv``).
    jerk_cost: float = Field(default=0.0, ge=0, le=10)
    #: Reward cost per step on top of the usual time cost, so that a policy slowed by the
    #: filter's lag is paid to win the time back.
    step_cost: float = Field(default=0.0, ge=0, le=1)


class _Eval(_Strict):
    episodes: int = Field(ge=1, le=100_000)
    freq: int = Field(ge=1, le=100_000_000)


class TrainConfig(_Strict):
    """A skill's hyperparameters (``skills/config/<skill>.yaml`` or ``-c FILE``), typed and
    bounded, so a bad value is one line naming it before any run folder exists rather than
    a traceback from deep inside stable-baselines3 minutes later."""

    net_arch: list[int] = Field(min_length=1, max_length=8)
    #: ``dagger``: behaviour cloning from the scripted expert first; ``none``: RL from a
    #: randomly initialised actor (no expert, no demonstrations). Left out: ``dagger``
    #: where the skill has a scripted expert, ``none`` where it has not.
    warm_start: Literal["dagger", "none"] | None = None
    dagger: _Dagger | None = None
    ppo: _PPO
    timesteps: int = Field(ge=1, le=1_000_000_000)
    eval: _Eval
    sac: _SAC | None = None
    #: Domain randomisation: {condition of skills/perturb.py: probability of an episode
    #: under it}; the remaining probability is the nominal start distribution. A mid-skill
    #: event makes a disturbance episode.
    randomize: dict[str, float] | None = None
    #: Smooth motion (issue 27): an action filter in the loop and a CAPS-style temporal
    #: reward term; left out, a policy is trained and executed without either.
    smoothing: _Smoothing | None = None

    @field_validator("randomize")
    @classmethod
    def _conditions(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        from skills.perturb import BY_NAME

        for name, p in (v or {}).items():
            c = BY_NAME.get(name)
            if c is None:
                raise ValueError(f"unknown condition {name!r}; choose from {', '.join(BY_NAME)}")
            if not 0 <= p <= 1:
                raise ValueError(f"probability of {name!r} must be in [0, 1]")
        if sum((v or {}).values()) > 1 + 1e-9:
            raise ValueError("the probabilities sum to more than 1")
        return v

    @model_validator(mode="after")
    def _warm_start(self) -> TrainConfig:
        if self.dagger is None and self.warm_start != "none":
            raise ValueError("dagger: required unless warm_start is none")
        return self

    @field_validator("net_arch")
    @classmethod
    def _layers(cls, v: list[int]) -> list[int]:
        if any(not 1 <= h <= 4096 for h in v):
            raise ValueError("net_arch layer sizes must be 1-4096")
        return v
