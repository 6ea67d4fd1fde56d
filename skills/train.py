"""Training a skill: DAgger behaviour-cloning warm start, then RL fine-tuning (PPO/SAC/TQC).

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

from skills.bc import collect, fit, normaliser
from skills.evaluate import evaluate_policy
from skills.policy import MLPPolicy, load_policy, save_policy
from skills.registry import get
from skills.skill_env import SkillEnv
from skills.trainers import OFF_POLICY, ON_POLICY, make_trainer

CONFIG_DIR = Path(__file__).resolve().parent / "config"
ALGOS = ON_POLICY + OFF_POLICY


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
def warm_start(
    skill: str, cfg: dict, run: Path, seed: int, prog: Progress, squash: bool = False
) -> tuple[MLPPolicy, dict]:
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
    policy = MLPPolicy(env.skill.obs_dim, 4, cfg["net_arch"], mean, std, squash=squash)
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
        if algo in OFF_POLICY:
            n_envs = 1  # off-policy: one env, one gradient step per env step
        args = {"skill": skill, "algo": algo, "timesteps": total, "seed": seed, "n_envs": n_envs}
        (run / "args.yml").write_text(yaml.safe_dump(args, sort_keys=False))
        (run / "command.txt").write_text(shlex.join(argv or sys.argv) + "\n")
        _json_dump(run / "versions.json", versions())
    prog.log(f"run folder: {run}")
    t_start = time.time()
    torch.manual_seed(seed)
    bc, bc_info = warm_start(skill, cfg, run, seed, prog, squash=algo in OFF_POLICY)
    tb = run / "tensorboard" if tensorboard else None
    try:
        trainer = make_trainer(algo, skill, cfg, bc, n_envs, seed, tb)
    except ImportError as e:
        raise TrainError(str(e)) from None
    progress = trainer.load_checkpoint(run / "checkpoint") or {}
    done_steps = int(progress.get("timesteps", 0))
    best = float(progress.get("best_success", -1.0))
    wall_before = float(progress.get("wall_s", 0.0))
    evals_path = run / "evaluations.json"
    evals = json.loads(evals_path.read_text()) if evals_path.is_file() else []
    if done_steps == 0:
        trainer.warm_up(prog)
        r = evaluate_policy(skill, bc, n_eval, seed=10_000 + seed)
        evals.append({"timesteps": 0, "source": "warm start", **r})
        prog.log(f"warm-start actor: success {r['success_rate']:.2f} over {n_eval}")
        _json_dump(evals_path, evals)
    prog.stage(f"{algo.upper()} fine-tuning", total)
    prog.advance(min(done_steps, total))
    freq = int(cfg["eval"]["freq"])
    while done_steps < total:
        before = trainer.num_timesteps
        trainer.learn(min(freq, total - done_steps))
        done_steps += trainer.num_timesteps - before
        prog.advance(trainer.num_timesteps - before)
        actor = trainer.export()
        r = evaluate_policy(skill, actor, n_eval, seed=10_000 + seed)
        evals.append({"timesteps": done_steps, "source": algo, **r})
        _json_dump(evals_path, evals)
        prog.log(f"{done_steps} steps: success {r['success_rate']:.2f} over {n_eval}")
        wall = wall_before + time.time() - t_start
        if r["success_rate"] >= best:
            best = r["success_rate"]
            save_policy(actor, run / "best", _manifest(skill, algo, done_steps, wall, bc, bc_info, r, seed))
        trainer.save_checkpoint(
            run / "checkpoint", {"timesteps": done_steps, "best_success": best, "wall_s": wall}
        )
    return run


def _manifest(skill, algo, steps, wall, bc, bc_info, train_eval, seed) -> dict:
    critic = "critic warm-up on warm-start rollouts" if algo == "ppo" else (
        "replay buffer seeded with warm-start rollouts; critic fitted before actor updates"
    )
    return {
        "skill": skill,
        "algo": algo,
        "training_steps": steps,
        "training_wall_time_s": round(wall + bc_info.get("wall_time_s", 0), 1),
        "learning_aids": [
            "DAgger behaviour-cloning warm start from the scripted expert",
            "potential-based dense reward shaping",
            critic,
        ],
        "warm_start": {k: bc_info.get(k) for k in ("samples", "final_loss", "dagger")},
        "train_eval": train_eval,
        "seed": seed,
        "versions": versions(),
        "observation_space": {"shape": [bc.obs_dim], "dtype": "float32"},
        "action_space": {"shape": [4], "low": -1.0, "high": 1.0},
    }
