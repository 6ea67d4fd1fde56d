"""RL fine-tuning back ends: PPO (on-policy) and SAC/TQC (off-policy), from a warm start.

Each trainer wraps one stable-baselines3 model whose actor starts as the DAgger warm-start
network, and offers the same small interface to :func:`skills.train.train`: ``learn``,
``export`` (the actor as a plain :class:`~skills.policy.MLPPolicy`), and checkpoints that
never pickle (safetensors for weights, ``torch.load(weights_only=True)`` for optimiser
state, npz for the replay buffer).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from sim import util
from skills.policy import MLPPolicy
from skills.skill_env import make_env

if TYPE_CHECKING:  # stable-baselines3 is imported only once a trainer is built
    from gymnasium import spaces
    from sb3_contrib import TQC
    from stable_baselines3 import PPO, SAC
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.buffers import ReplayBuffer

    from skills.train_config import _PPO, _SAC

ON_POLICY = ("ppo",)
OFF_POLICY = ("sac", "tqc")


@dataclass
class Progress:
    """Callbacks the CLI plugs a progress bar into."""

    stage: Callable[[str, int], None] = lambda name, total: None
    advance: Callable[[int], None] = lambda n: None
    log: Callable[[str], None] = lambda msg: None


def _normaliser_cls() -> type[nn.Module]:
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class FixedNormaliser(BaseFeaturesExtractor):
        """Input normalisation with statistics frozen from the demonstrations."""

        mean: torch.Tensor
        std: torch.Tensor

        def __init__(
            self, observation_space: spaces.Box, mean: list[float], std: list[float]
        ) -> None:
            super().__init__(observation_space, features_dim=int(observation_space.shape[0]))
            self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
            self.register_buffer("std", torch.tensor(std, dtype=torch.float32))

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return (obs - self.mean) / self.std

    return FixedNormaliser


def _policy_kwargs(bc: MLPPolicy, **extra: Any) -> dict[str, Any]:
    return dict(
        activation_fn=nn.Tanh,
        features_extractor_class=_normaliser_cls(),
        features_extractor_kwargs=dict(mean=bc.obs_mean.tolist(), std=bc.obs_std.tolist()),
        **extra,
    )


def _state(module: nn.Module) -> dict[str, torch.Tensor]:
    # clone: shared normaliser buffers alias each other, which safetensors refuses
    return {k: v.detach().clone().contiguous() for k, v in module.state_dict().items()}


class Trainer(ABC):
    """One stable-baselines3 model fine-tuned from a warm-start actor.

    :func:`skills.train.train` drives every algorithm through this interface alone, so the
    training loop, its evaluations and its checkpoints are written once. A subclass builds
    ``model`` (and sets ``name``) in its constructor, says which optimisers a checkpoint
    must carry, and how its actor becomes a plain :class:`~skills.policy.MLPPolicy`.
    """

    #: The algorithm's name: the ``--algo`` value and the tensorboard run name.
    name: str
    #: The stable-baselines3 model being fine-tuned, built by the subclass.
    model: BaseAlgorithm

    def __init__(
        self, skill: str, cfg: dict, bc: MLPPolicy, n_envs: int, seed: int, tb: Path | None
    ) -> None:
        """
        :param skill: name of the skill in :mod:`skills.registry`
        :param cfg: the skill's validated training config (:func:`skills.train.load_config`)
        :param bc: the DAgger warm-start actor the model's actor is initialised from
        :param n_envs: number of environments stepped at once (on-policy only)
        :param seed: seed of the model, its environments and the warm-up rollouts
        :param tb: tensorboard log folder, or None for no tensorboard logging
        """
        self.skill, self.cfg, self.bc, self.seed = skill, cfg, bc, seed

    @property
    def num_timesteps(self) -> int:
        """
        :return: environment steps the model has taken so far, over every call to
            :meth:`learn` and across a resumed checkpoint
        """
        return int(self.model.num_timesteps)

    def learn(self, steps: int) -> None:
        """Continue training without resetting the step counter, so evaluations between
        calls and a resumed run all count steps from the start of the run.

        :param steps: number of environment steps to train for
        """
        self.model.learn(
            steps, reset_num_timesteps=False, tb_log_name=self.name, progress_bar=False
        )

    @abstractmethod
    def warm_up(self, prog: Progress) -> None:
        """Prepare the critic on the warm-start actor's own rollouts before the first update
        (once per run, never on resume): a random critic's first gradients would otherwise
        undo the warm start.

        :param prog: progress callbacks; a warm-up reports what it did through ``prog.log``
        """

    def save_checkpoint(self, ck: Path, progress: dict) -> None:
        """Write a resumable checkpoint: the policy's weights, the optimisers' state and
        ``progress.json``. Nothing is pickled.

        :param ck: checkpoint folder (created if missing)
        :param progress: the training loop's own state (JSON-serialisable), stored with the
            model's step count
        """
        ck.mkdir(exist_ok=True)
        # both written before either is renamed into place (the policy first)
        with (
            util.atomic_path(ck / "optimizers.pt") as tmp_o,
            util.atomic_path(ck / "policy.safetensors") as tmp_p,
        ):
            save_file(_state(self.model.policy), str(tmp_p))
            torch.save({k: o.state_dict() for k, o in self._optimizers().items()}, tmp_o)
        util.atomic_write_json(
            ck / "progress.json", {**progress, "num_timesteps": self.num_timesteps}, indent=None
        )

    def load_checkpoint(self, ck: Path) -> dict | None:
        """Restore what :meth:`save_checkpoint` wrote.

        :param ck: checkpoint folder
        :return: the ``progress`` saved with it, or None when there is no checkpoint yet
        """
        if not (ck / "progress.json").is_file():
            return None
        self.model.policy.load_state_dict(load_file(str(ck / "policy.safetensors")))
        states = torch.load(ck / "optimizers.pt", weights_only=True)
        for k, o in self._optimizers().items():
            o.load_state_dict(states[k])
        progress = json.loads((ck / "progress.json").read_text())
        self.model.num_timesteps = int(progress["num_timesteps"])
        return progress

    @abstractmethod
    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        """
        :return: every optimiser whose state a checkpoint must carry, by a stable key
        """

    @abstractmethod
    def export(self) -> MLPPolicy:
        """The current actor, detached from stable-baselines3, so that it can be evaluated
        and shipped as safetensors without the algorithm.

        :return: a copy of the actor in evaluation mode
        """


def ppo_section(cfg: dict) -> _PPO:
    """The config's ``ppo:`` section, typed (:class:`skills.train_config._PPO`)."""
    from skills.train_config import _PPO

    return _PPO.model_validate(cfg["ppo"])


def sac_section(cfg: dict) -> _SAC:
    """The config's ``sac:`` section, typed, with the defaults of :class:`skills.train_config._SAC`
    (the one place they are written) filled in where the YAML leaves a key out."""
    from skills.train_config import _SAC

    return _SAC.model_validate(cfg.get("sac") or {})


# ---------------------------------------------------------------------- PPO
class PPOTrainer(Trainer):
    name = "ppo"
    model: PPO

    def __init__(
        self, skill: str, cfg: dict, bc: MLPPolicy, n_envs: int, seed: int, tb: Path | None
    ) -> None:
        super().__init__(skill, cfg, bc, n_envs, seed, tb)
        from stable_baselines3 import PPO
        from stable_baselines3.common.env_util import make_vec_env

        p = ppo_section(cfg)
        venv = make_vec_env(lambda: make_env(skill, cfg), n_envs=n_envs, seed=seed)
        self.model = PPO(
            "MlpPolicy",
            venv,
            n_steps=p.n_steps,
            batch_size=p.batch_size,
            n_epochs=p.n_epochs,
            learning_rate=p.learning_rate,
            clip_range=p.clip_range,
            gamma=p.gamma,
            gae_lambda=p.gae_lambda,
            target_kl=p.target_kl,
            seed=seed,
            verbose=0,
            device="cpu",
            tensorboard_log=str(tb) if tb else None,
            policy_kwargs=_policy_kwargs(
                bc,
                net_arch=dict(pi=list(cfg["net_arch"]), vf=list(cfg["net_arch"])),
                log_std_init=p.log_std_init,
                ortho_init=False,
            ),
        )
        pol = self.model.policy
        pol.mlp_extractor.policy_net.load_state_dict(bc.body.state_dict())
        pol.action_net.load_state_dict(bc.head.state_dict())

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"policy": self.model.policy.optimizer}

    def export(self) -> MLPPolicy:
        pol = self.model.policy
        return _exported(self.bc, pol.mlp_extractor.policy_net, pol.action_net)

    def warm_up(self, prog: Progress) -> None:
        """Fit the value head to Monte-Carlo returns of the warm-started actor's rollouts,
        so the first PPO updates follow real advantages rather than a random critic's noise."""
        episodes = ppo_section(self.cfg).value_warmup_episodes
        if not episodes:
            return
        gamma = self.cfg["ppo"]["gamma"]
        env = make_env(self.skill, self.cfg)
        pol = self.model.policy
        xs: list[np.ndarray] = []
        rets: list[float] = []
        for ep in range(episodes):
            obs, _ = env.reset(seed=self.seed + 7919 * ep)
            o_list: list[np.ndarray] = []
            r_list: list[float] = []
            done = False
            while not done:
                with torch.no_grad():
                    a, _, _ = pol(torch.as_tensor(obs).unsqueeze(0))
                o_list.append(obs)
                obs, r, term, trunc, _ = env.step(np.clip(a[0].numpy(), -1, 1))
                r_list.append(r)
                done = term or trunc
            g, out = 0.0, []
            for r in reversed(r_list):
                g = r + gamma * g
                out.append(g)
            xs += o_list
            rets += out[::-1]
        X = torch.as_tensor(np.asarray(xs, np.float32))
        R = torch.as_tensor(np.asarray(rets, np.float32)).unsqueeze(1)
        params = list(pol.mlp_extractor.value_net.parameters()) + list(pol.value_net.parameters())
        opt = torch.optim.Adam(params, lr=1e-3)
        for _ in range(200):
            idx = torch.randint(0, len(X), (256,))
            loss = ((pol.predict_values(X[idx]) - R[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        prog.log(f"critic warm-up on {len(X)} states: value loss {float(loss.detach()):.3f}")


# ---------------------------------------------------------------------- SAC / TQC
def _off_policy_class(algo: str) -> type[SAC] | type[TQC]:
    if algo != "tqc":
        from stable_baselines3 import SAC

        return SAC
    try:
        from sb3_contrib import TQC
    except ImportError:
        raise ImportError(
            "--algo tqc needs sb3-contrib: pip install 'skillbridge[contrib]'"
        ) from None
    return TQC


class OffPolicyTrainer(Trainer):
    """SAC or TQC whose replay buffer is seeded with warm-start rollouts and whose critic is
    fitted on them (actor frozen) before any actor update: a random critic's first
    gradients would otherwise undo the warm start."""

    model: SAC | TQC

    def __init__(
        self,
        skill: str,
        cfg: dict,
        bc: MLPPolicy,
        n_envs: int,
        seed: int,
        tb: Path | None,
        algo: str = "sac",
    ) -> None:
        super().__init__(skill, cfg, bc, n_envs, seed, tb)
        from stable_baselines3.common.env_util import make_vec_env

        self.name = algo
        algo_cls = _off_policy_class(algo)
        p = sac_section(cfg)
        venv = make_vec_env(lambda: make_env(skill, cfg), n_envs=1, seed=seed)
        kwargs: dict[str, Any] = dict(
            learning_rate=p.learning_rate,
            buffer_size=p.buffer_size,
            batch_size=p.batch_size,
            gamma=p.gamma,
            tau=p.tau,
            train_freq=p.train_freq,
            gradient_steps=p.gradient_steps,
            learning_starts=0,
            ent_coef=p.ent_coef,
            seed=seed,
            verbose=0,
            device="cpu",
            tensorboard_log=str(tb) if tb else None,
            policy_kwargs=_policy_kwargs(
                bc,
                net_arch=dict(pi=list(cfg["net_arch"]), qf=list(cfg["net_arch"])),
                log_std_init=p.log_std_init,
            ),
        )
        self.model = algo_cls("MlpPolicy", venv, **kwargs)
        actor = self.model.policy.actor
        actor.latent_pi.load_state_dict(bc.body.state_dict())
        actor.mu.load_state_dict(bc.head.state_dict())
        # without gSDE the log-std head is a linear layer (stable-baselines3 types it as
        # gSDE's parameter)
        log_std = cast(nn.Linear, actor.log_std)
        with torch.no_grad():  # start with a narrow, state-independent exploration noise
            log_std.weight.zero_()
            log_std.bias.fill_(p.log_std_init)

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        m = self.model
        out = {"actor": m.actor.optimizer, "critic": m.critic.optimizer}
        ent_coef = getattr(m, "ent_coef_optimizer", None)  # None with a fixed ent_coef
        if ent_coef is not None:
            out["ent_coef"] = ent_coef
        return out

    def export(self) -> MLPPolicy:
        actor = self.model.policy.actor
        return _exported(self.bc, actor.latent_pi, actor.mu, squash=True)

    def warm_up(self, prog: Progress) -> None:
        p = sac_section(self.cfg)
        episodes = p.demo_episodes
        env = make_env(self.skill, self.cfg)
        buf = self._replay_buffer()
        rng = np.random.default_rng(self.seed)
        n = 0
        for ep in range(episodes):
            obs, _ = env.reset(seed=self.seed + 7919 * ep)
            done = False
            while not done:
                a = self.bc.act(obs).astype(np.float32)
                a[:3] = np.clip(a[:3] + rng.normal(0, 0.1, 3), -1, 1)
                nxt, r, term, trunc, info = env.step(a)
                buf.add(
                    obs[None],
                    nxt[None],
                    a[None],
                    np.array([r]),
                    np.array([term]),
                    [{"TimeLimit.truncated": trunc and not term}],
                )
                obs, done, n = nxt, term or trunc, n + 1
        steps = p.critic_warmup_steps
        actor_opt = self.model.actor.optimizer
        saved = [g["lr"] for g in actor_opt.param_groups]
        for g in actor_opt.param_groups:
            g["lr"] = 0.0  # critic only: the actor keeps its warm start
        self.model._setup_learn(0, None, reset_num_timesteps=False)
        self.model.train(gradient_steps=steps, batch_size=self.model.batch_size)
        for g, lr in zip(actor_opt.param_groups, saved, strict=False):
            g["lr"] = lr
        prog.log(
            f"replay buffer seeded with {n} warm-start transitions; critic fitted ({steps} steps)"
        )
        self.model.policy.set_training_mode(False)

    def _replay_buffer(self) -> ReplayBuffer:
        buf = self.model.replay_buffer
        assert buf is not None  # built with the model
        return buf

    def save_checkpoint(self, ck: Path, progress: dict) -> None:
        super().save_checkpoint(ck, progress)
        b = self._replay_buffer()
        size = b.buffer_size if b.full else b.pos
        with util.atomic_path(ck / "replay.npz", suffix=".npz") as tmp:
            np.savez(
                tmp,
                observations=b.observations[:size],
                next_observations=b.next_observations[:size],
                actions=b.actions[:size],
                rewards=b.rewards[:size],
                dones=b.dones[:size],
                timeouts=b.timeouts[:size],
                pos=b.pos,
                full=b.full,
            )

    def load_checkpoint(self, ck: Path) -> dict | None:
        progress = super().load_checkpoint(ck)
        if progress is None or not (ck / "replay.npz").is_file():
            return progress
        b = self._replay_buffer()
        with np.load(ck / "replay.npz", allow_pickle=False) as z:
            size = len(z["actions"])
            for k in (
                "observations",
                "next_observations",
                "actions",
                "rewards",
                "dones",
                "timeouts",
            ):
                getattr(b, k)[:size] = z[k]
            b.pos, b.full = int(z["pos"]), bool(z["full"])
        return progress


def make_trainer(
    algo: str, skill: str, cfg: dict, bc: MLPPolicy, n_envs: int, seed: int, tb: Path | None
) -> Trainer:
    if algo == "ppo":
        return PPOTrainer(skill, cfg, bc, n_envs, seed, tb)
    return OffPolicyTrainer(skill, cfg, bc, n_envs, seed, tb, algo=algo)


def _exported(bc, body: torch.nn.Module, head: torch.nn.Module, squash: bool = False) -> MLPPolicy:
    """The shipped policy: ``bc``'s shapes, normalisation and smoothing with the trained
    ``body`` and ``head`` weights (one place for PPO's and SAC's export)."""
    out = MLPPolicy(
        bc.obs_dim,
        bc.act_dim,
        bc.net_arch,
        bc.obs_mean,
        bc.obs_std,
        squash=squash,
        smoothing=bc.smoothing,
    )
    out.body.load_state_dict(body.state_dict())
    out.head.load_state_dict(head.state_dict())
    return out.eval()
