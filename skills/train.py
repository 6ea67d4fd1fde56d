"""Training a skill: DAgger behaviour-cloning warm start, then PPO fine-tuning.

From-scratch RL on manipulation does not fit a CPU session (FetchPickAndPlace needs ~230k
TQC+HER steps), so learning starts from the scripted experts: DAgger gives an actor that
already mostly works, and PPO (clipped, small learning rate, with the critic warmed up on
the warm-started actor's own returns) then improves it on the shaped reward. The shipped
policy is the PPO actor; the manifest records which aids were used.

Layout of a run folder (rl-baselines3-zoo's convention): ``<logdir>/<algo>/<skill>_<id>/``
with ``config.yml``, ``args.yml``, ``command.txt``, ``versions.json``, ``evaluations.json``,
``bc/`` (warm-start actor), ``checkpoint/`` (resumable PPO state), ``best/`` (best
evaluated policy, safetensors + manifest) and optional ``tensorboard/``.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import yaml
from torch import nn

from skills.bc import collect, fit, normaliser
from skills.evaluate import evaluate_policy
from skills.policy import MLPPolicy, load_policy, save_policy
from skills.registry import get
from skills.skill_env import SkillEnv

CONFIG_DIR = Path(__file__).resolve().parent / "config"
ALGOS = ("ppo",)


class TrainError(Exception):
    pass


def load_config(skill: str, path: str | Path | None = None) -> dict:
    path = Path(path) if path else CONFIG_DIR / f"{skill}.yaml"
    if not path.is_file():
        raise TrainError(f"{path}: config file not found")
    try:
        cfg = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise TrainError(f"{path}: invalid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(cfg, dict):
        raise TrainError(f"{path}: config must be a mapping")
    for key in ("net_arch", "dagger", "ppo", "timesteps", "eval"):
        if key not in cfg:
            raise TrainError(f"{path}: missing key {key!r}")
    return cfg


def versions() -> dict:
    import gymnasium
    import mujoco
    import stable_baselines3

    return {
        "python": platform.python_version(),
        "mujoco": mujoco.__version__,
        "gymnasium": gymnasium.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
    }


@dataclass
class Progress:
    """Callbacks the CLI plugs a progress bar into."""

    stage: Callable[[str, int], None] = lambda name, total: None
    advance: Callable[[int], None] = lambda n: None
    log: Callable[[str], None] = lambda msg: None


def _json_dump(path: Path, obj) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    os.replace(tmp, path)


def new_run_dir(logdir: Path, algo: str, skill: str) -> Path:
    base = logdir / algo
    base.mkdir(parents=True, exist_ok=True)
    ids = [int(p.name.rsplit("_", 1)[1]) for p in base.glob(f"{skill}_*") if p.name.rsplit("_", 1)[1].isdigit()]
    run = base / f"{skill}_{max(ids, default=0) + 1}"
    run.mkdir()
    return run


def latest_run_dir(logdir: Path, algo: str, skill: str) -> Path | None:
    runs = [p for p in (logdir / algo).glob(f"{skill}_*") if p.name.rsplit("_", 1)[1].isdigit()]
    return max(runs, key=lambda p: int(p.name.rsplit("_", 1)[1]), default=None)


# ---------------------------------------------------------------------- stage 1: DAgger
def warm_start(skill: str, cfg: dict, run: Path, seed: int, prog: Progress) -> tuple[MLPPolicy, dict]:
    done = run / "bc" / "manifest.json"
    if done.is_file():
        prog.log("warm start found, reusing bc/")
        return load_policy(run / "bc", skill)
    d = cfg["dagger"]
    env = SkillEnv(skill)
    rng = np.random.default_rng(seed)
    total = d["expert_episodes"] + d["iterations"] * d["student_episodes"]
    prog.stage("demonstrations + DAgger", total)
    t0 = time.time()
    X, Y, expert_rate = collect(env, d["expert_episodes"], rng, noise=d["noise"], progress=lambda _: prog.advance(1))
    mean, std = normaliser(X)
    policy = MLPPolicy(env.skill.obs_dim, 4, cfg["net_arch"], mean, std)
    history = []
    for it in range(d["iterations"]):
        loss = fit(policy, X, Y, d["epochs"], d["lr"], seed + it)
        X2, Y2, rate = collect(env, d["student_episodes"], rng, student=policy, beta=0.0,
                               progress=lambda _: prog.advance(1))
        history.append({"iteration": it, "loss": loss, "student_success": rate, "samples": len(X)})
        prog.log(f"DAgger {it + 1}/{d['iterations']}: loss {loss:.4f}, student success {rate:.2f}")
        X, Y = np.concatenate([X, X2]), np.concatenate([Y, Y2])
    loss = fit(policy, X, Y, d["epochs"], d["lr"], seed + 99)
    info = {
        "skill": skill, "algo": "bc", "samples": int(len(X)), "expert_success_noisy": expert_rate,
        "dagger": history, "final_loss": loss, "wall_time_s": round(time.time() - t0, 1),
    }
    save_policy(policy, run / "bc", info)
    return policy, info


# ---------------------------------------------------------------------- stage 2: PPO
def _extractor_cls():
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


def _make_ppo(skill: str, cfg: dict, bc: MLPPolicy, n_envs: int, seed: int, tb: Path | None):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    p = cfg["ppo"]
    venv = make_vec_env(lambda: SkillEnv(skill), n_envs=n_envs, seed=seed)
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=p["n_steps"],
        batch_size=p["batch_size"],
        n_epochs=p["n_epochs"],
        learning_rate=p["learning_rate"],
        clip_range=p["clip_range"],
        gamma=p["gamma"],
        gae_lambda=p["gae_lambda"],
        target_kl=p.get("target_kl"),
        seed=seed,
        verbose=0,
        device="cpu",
        tensorboard_log=str(tb) if tb else None,
        policy_kwargs=dict(
            net_arch=dict(pi=list(cfg["net_arch"]), vf=list(cfg["net_arch"])),
            activation_fn=nn.Tanh,
            log_std_init=p["log_std_init"],
            ortho_init=False,
            features_extractor_class=_extractor_cls(),
            features_extractor_kwargs=dict(mean=bc.obs_mean.tolist(), std=bc.obs_std.tolist()),
        ),
    )
    # the actor starts as the warm-started network
    pol = model.policy
    pol.mlp_extractor.policy_net.load_state_dict(bc.body.state_dict())
    pol.action_net.load_state_dict(bc.head.state_dict())
    return model


def _export(model, bc: MLPPolicy) -> MLPPolicy:
    pol = model.policy
    out = MLPPolicy(bc.obs_dim, bc.act_dim, bc.net_arch, bc.obs_mean, bc.obs_std)
    out.body.load_state_dict(pol.mlp_extractor.policy_net.state_dict())
    out.head.load_state_dict(pol.action_net.state_dict())
    return out.eval()


def _warm_up_critic(model, skill: str, cfg: dict, seed: int, prog: Progress) -> None:
    """Fit the value head to Monte-Carlo returns of the warm-started actor's own rollouts,
    so the first PPO updates follow real advantages rather than a random critic's noise."""
    episodes = cfg["ppo"].get("value_warmup_episodes", 0)
    if not episodes:
        return
    gamma = cfg["ppo"]["gamma"]
    env = SkillEnv(skill)
    pol = model.policy
    xs, rets = [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + 7919 * ep)
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
        v = pol.predict_values(X[idx])
        loss = ((v - R[idx]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    prog.log(f"critic warm-up on {len(X)} states: value loss {float(loss.detach()):.3f}")


def _save_checkpoint(model, run: Path, timesteps: int, best: float) -> None:
    ck = run / "checkpoint"
    ck.mkdir(exist_ok=True)
    from safetensors.torch import save_file

    # clone: the shared normaliser buffers alias each other, which safetensors refuses
    state = {k: v.detach().clone().contiguous() for k, v in model.policy.state_dict().items()}
    save_file(state, str(ck / ".policy.tmp"))
    torch.save(model.policy.optimizer.state_dict(), ck / ".optimizer.tmp")
    os.replace(ck / ".policy.tmp", ck / "policy.safetensors")
    os.replace(ck / ".optimizer.tmp", ck / "optimizer.pt")
    _json_dump(ck / "progress.json", {"timesteps": timesteps, "best_success": best})


def _load_checkpoint(model, run: Path) -> tuple[int, float]:
    ck = run / "checkpoint"
    if not (ck / "progress.json").is_file():
        return 0, -1.0
    from safetensors.torch import load_file

    model.policy.load_state_dict(load_file(str(ck / "policy.safetensors")))
    model.policy.optimizer.load_state_dict(torch.load(ck / "optimizer.pt", weights_only=True))
    prog = json.loads((ck / "progress.json").read_text())
    return int(prog["timesteps"]), float(prog["best_success"])


def train(
    skill: str,
    *,
    algo: str = "ppo",
    timesteps: int | None = None,
    seed: int = 0,
    n_envs: int = 4,
    logdir: str | Path = "logs",
    tensorboard: bool = False,
    config: str | Path | None = None,
    resume: bool = False,
    eval_episodes: int | None = None,
    prog: Progress | None = None,
    argv: list[str] | None = None,
) -> Path:
    """Train ``skill``; returns the run folder. ``best/`` holds the policy to ship."""
    prog = prog or Progress()
    get(skill)  # unknown skill -> KeyError with the known names
    if algo not in ALGOS:
        raise TrainError(f"algo {algo!r} is not supported; choose from {', '.join(ALGOS)}")
    cfg = load_config(skill, config)
    total = int(timesteps if timesteps is not None else cfg["timesteps"])
    n_eval = int(eval_episodes or cfg["eval"]["episodes"])
    logdir = Path(logdir)
    run = latest_run_dir(logdir, algo, skill) if resume else None
    if resume and run is None:
        raise TrainError(f"nothing to resume under {logdir / algo}/{skill}_*")
    if run is None:
        run = new_run_dir(logdir, algo, skill)
        (run / "config.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        args = {"skill": skill, "algo": algo, "timesteps": total, "seed": seed, "n_envs": n_envs}
        (run / "args.yml").write_text(yaml.safe_dump(args, sort_keys=False))
        (run / "command.txt").write_text(shlex.join(argv or sys.argv) + "\n")
        _json_dump(run / "versions.json", versions())
    prog.log(f"run folder: {run}")
    t_start = time.time()
    torch.manual_seed(seed)
    bc, bc_info = warm_start(skill, cfg, run, seed, prog)

    model = _make_ppo(skill, cfg, bc, n_envs, seed, run / "tensorboard" if tensorboard else None)
    done_steps, best = _load_checkpoint(model, run)
    evals_path = run / "evaluations.json"
    evals = json.loads(evals_path.read_text()) if evals_path.is_file() else []
    if done_steps == 0:
        _warm_up_critic(model, skill, cfg, seed, prog)
        r = evaluate_policy(skill, bc, n_eval, seed=10_000 + seed)
        evals.append({"timesteps": 0, "source": "warm start", **r})
        prog.log(f"warm-start actor: success {r['success_rate']:.2f} over {n_eval}")
        _json_dump(evals_path, evals)
    prog.stage("PPO fine-tuning", total)
    prog.advance(min(done_steps, total))
    freq = int(cfg["eval"]["freq"])
    while done_steps < total:
        chunk = min(freq, total - done_steps)
        before = model.num_timesteps
        model.learn(chunk, reset_num_timesteps=False, tb_log_name="ppo", progress_bar=False)
        done_steps += model.num_timesteps - before
        prog.advance(model.num_timesteps - before)
        actor = _export(model, bc)
        r = evaluate_policy(skill, actor, n_eval, seed=10_000 + seed)
        evals.append({"timesteps": done_steps, "source": "ppo", **r})
        _json_dump(evals_path, evals)
        prog.log(f"{done_steps} steps: success {r['success_rate']:.2f} over {n_eval}")
        if r["success_rate"] >= best:
            best = r["success_rate"]
            save_policy(
                actor,
                run / "best",
                {
                    "skill": skill,
                    "algo": "ppo",
                    "training_steps": done_steps,
                    "training_wall_time_s": round(time.time() - t_start + bc_info.get("wall_time_s", 0), 1),
                    "learning_aids": [
                        "DAgger behaviour-cloning warm start from the scripted expert",
                        "potential-based dense reward shaping",
                        "critic warm-up on warm-start rollouts",
                    ],
                    "warm_start": {k: bc_info.get(k) for k in ("samples", "final_loss", "dagger")},
                    "train_eval": r,
                    "seed": seed,
                    "versions": versions(),
                    "observation_space": {"shape": [bc.obs_dim], "dtype": "float32"},
                    "action_space": {"shape": [4], "low": -1.0, "high": 1.0},
                },
            )
        _save_checkpoint(model, run, done_steps, best)
    return run
