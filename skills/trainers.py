"""RL fine-tuning back ends: PPO (on-policy) and SAC/TQC (off-policy), from a warm start.

Each trainer wraps one stable-baselines3 model whose actor starts as the DAgger warm-start
network, and offers the same small interface to :func:`skills.train.train`: ``learn``,
``export`` (the actor as a plain :class:`~skills.policy.MLPPolicy`), and checkpoints that
never pickle (safetensors for weights, ``torch.load(weights_only=True)`` for optimiser
state, npz for the replay buffer).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from sim import util
from skills.policy import MLPPolicy
from skills.skill_env import SkillEnv

ON_POLICY = ("ppo",)
OFF_POLICY = ("sac", "tqc")


def _normaliser_cls():
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class FixedNormaliser(BaseFeaturesExtractor):
        """Input normalisation with statistics frozen from the demonstrations."""

        def __init__(self, observation_space, mean, std):
            super().__init__(observation_space, features_dim=int(observation_space.shape[0]))
            self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
            self.register_buffer("std", torch.tensor(std, dtype=torch.float32))

        def forward(self, obs):
            return (obs - self.mean) / self.std

    return FixedNormaliser


def _policy_kwargs(bc: MLPPolicy, **extra) -> dict:
    return dict(
        activation_fn=nn.Tanh,
        features_extractor_class=_normaliser_cls(),
        features_extractor_kwargs=dict(mean=bc.obs_mean.tolist(), std=bc.obs_std.tolist()),
        **extra,
    )


def _state(module: nn.Module) -> dict:
    # clone: shared normaliser buffers alias each other, which safetensors refuses
    return {k: v.detach().clone().contiguous() for k, v in module.state_dict().items()}


class Trainer:
    model = None
    optimizers: dict = {}

    def __init__(
        self, skill: str, cfg: dict, bc: MLPPolicy, n_envs: int, seed: int, tb: Path | None
    ):
        self.skill, self.cfg, self.bc, self.seed = skill, cfg, bc, seed

    @property
    def num_timesteps(self) -> int:
        return int(self.model.num_timesteps)

    def learn(self, steps: int) -> None:
        self.model.learn(
            steps, reset_num_timesteps=False, tb_log_name=self.name, progress_bar=False
        )

    def warm_up(self, prog) -> None:
        pass

    def save_checkpoint(self, ck: Path, progress: dict) -> None:
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
        if not (ck / "progress.json").is_file():
            return None
        self.model.policy.load_state_dict(load_file(str(ck / "policy.safetensors")))
        states = torch.load(ck / "optimizers.pt", weights_only=True)
        for k, o in self._optimizers().items():
            o.load_state_dict(states[k])
        progress = json.loads((ck / "progress.json").read_text())
        self.model.num_timesteps = int(progress["num_timesteps"])
        return progress

    def _optimizers(self) -> dict:
        raise NotImplementedError

    def export(self) -> MLPPolicy:
        raise NotImplementedError


def ppo_section(cfg: dict):
    """The config's ``ppo:`` section, typed (:class:`skills.train._PPO`)."""
    from skills.train import _PPO

    return _PPO.model_validate(cfg["ppo"])


def sac_section(cfg: dict):
    """The config's ``sac:`` section, typed, with the defaults of :class:`skills.train._SAC`
    (the one place they are written) filled in where the YAML leaves a key out."""
    from skills.train import _SAC

    return _SAC.model_validate(cfg.get("sac") or {})


# ---------------------------------------------------------------------- PPO
class PPOTrainer(Trainer):
    name = "ppo"

    def __init__(self, skill, cfg, bc, n_envs, seed, tb):
        super().__init__(skill, cfg, bc, n_envs, seed, tb)
        from stable_baselines3 import PPO
        from stable_baselines3.common.env_util import make_vec_env

        p = ppo_section(cfg)
        venv = make_vec_env(
            lambda: SkillEnv(skill, randomize=cfg.get("randomize")), n_envs=n_envs, seed=seed
        )
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

    def _optimizers(self) -> dict:
        return {"policy": self.model.policy.optimizer}

    def export(self) -> MLPPolicy:
        pol, bc = self.model.policy, self.bc
        out = MLPPolicy(bc.obs_dim, bc.act_dim, bc.net_arch, bc.obs_mean, bc.obs_std)
        out.body.load_state_dict(pol.mlp_extractor.policy_net.state_dict())
        out.head.load_state_dict(pol.action_net.state_dict())
        return out.eval()

    def warm_up(self, prog) -> None:
        """Fit the value head to Monte-Carlo returns of the warm-started actor's rollouts,
        so the first PPO updates follow real advantages rather than a random critic's noise."""
        episodes = ppo_section(self.cfg).value_warmup_episodes
        if not episodes:
            return
        gamma = self.cfg["ppo"]["gamma"]
        env = SkillEnv(self.skill, randomize=self.cfg.get("randomize"))
        pol = self.model.policy
        xs, rets = [], []
        for ep in range(episodes):
            obs, _ = env.reset(seed=self.seed + 7919 * ep)
            o_list, r_list, done = [], [], False
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
class OffPolicyTrainer(Trainer):
    """SAC or TQC whose replay buffer is seeded with warm-start rollouts and whose critic is
    fitted on them (actor frozen) before any actor update: a random critic's first
    gradients would otherwise undo the warm start."""

    def __init__(self, skill, cfg, bc, n_envs, seed, tb, algo: str = "sac"):
        super().__init__(skill, cfg, bc, n_envs, seed, tb)
        from stable_baselines3.common.env_util import make_vec_env

        self.name = algo
        if algo == "tqc":
            try:
                from sb3_contrib import TQC as Algo
            except ImportError:
                raise ImportError(
                    "--algo tqc needs sb3-contrib: pip install 'skillbridge[contrib]'"
                ) from None
        else:
            from stable_baselines3 import SAC as Algo
        p = sac_section(cfg)
        venv = make_vec_env(
            lambda: SkillEnv(skill, randomize=cfg.get("randomize")), n_envs=1, seed=seed
        )
        kwargs = dict(
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
        self.model = Algo("MlpPolicy", venv, **kwargs)
        actor = self.model.policy.actor
        actor.latent_pi.load_state_dict(bc.body.state_dict())
        actor.mu.load_state_dict(bc.head.state_dict())
        with torch.no_grad():  # start with a narrow, state-independent exploration noise
            actor.log_std.weight.zero_()
            actor.log_std.bias.fill_(p.log_std_init)

    def _optimizers(self) -> dict:
        m = self.model
        out = {"actor": m.actor.optimizer, "critic": m.critic.optimizer}
        if getattr(m, "ent_coef_optimizer", None) is not None:
            out["ent_coef"] = m.ent_coef_optimizer
        return out

    def export(self) -> MLPPolicy:
        actor, bc = self.model.policy.actor, self.bc
        out = MLPPolicy(bc.obs_dim, bc.act_dim, bc.net_arch, bc.obs_mean, bc.obs_std, squash=True)
        out.body.load_state_dict(actor.latent_pi.state_dict())
        out.head.load_state_dict(actor.mu.state_dict())
        return out.eval()

    def warm_up(self, prog) -> None:
        p = sac_section(self.cfg)
        episodes = p.demo_episodes
        env = SkillEnv(self.skill, randomize=self.cfg.get("randomize"))
        buf = self.model.replay_buffer
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

    def save_checkpoint(self, ck: Path, progress: dict) -> None:
        super().save_checkpoint(ck, progress)
        b = self.model.replay_buffer
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
        b = self.model.replay_buffer
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


def make_trainer(algo: str, skill: str, cfg: dict, bc: MLPPolicy, n_envs: int, seed: int, tb):
    if algo == "ppo":
        return PPOTrainer(skill, cfg, bc, n_envs, seed, tb)
    return OffPolicyTrainer(skill, cfg, bc, n_envs, seed, tb, algo=algo)
