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

Not SB3's ``EvalCallback``/``CheckpointCallback``: the best policy here is the one with the
highest *success rate* of the exported actor on the skill's own success test (EvalCallback
ranks by mean reward), it is shipped as safetensors with a manifest (the callbacks write
``model.zip`` and pickled replay buffers, which we never load), and a checkpoint is taken
between ``learn`` calls, at a rollout boundary, with the progress it resumes from.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import yaml
from pydantic import ValidationError

from sim import util
from skills.bc import collect, fit, normaliser
from skills.evaluate import evaluate_policy
from skills.policy import MLPPolicy, PolicyError, first_error, load_policy, save_policy
from skills.registry import get
from skills.skill_env import SkillEnv, make_env, smoothing_of
from skills.train_config import TrainConfig
from skills.trainers import OFF_POLICY, ON_POLICY, Progress, Trainer, make_trainer

CONFIG_DIR = Path(__file__).resolve().parent / "config"
ALGOS = ON_POLICY + OFF_POLICY


class TrainError(Exception):
    """Bad training input or a damaged run folder: one line for the user."""


#: Environments stepped at once: each is a MuJoCo model in memory, so bound it.
MAX_ENVS = 64
#: A run folder is set up (config, args, versions written) before it gets its final name;
#: until then it is ``.<skill>_<n>.tmp<pid>`` and ``--resume`` never picks it.
SETUP_DONE = "args.yml"


def load_config(skill: str, path: str | Path | None = None) -> dict:
    from sim.safeio import MiB, UnsafeFile, read_regular

    path = Path(path) if path else CONFIG_DIR / f"{skill}.yaml"
    try:
        text = read_regular(path, MiB).decode("utf-8")
    except FileNotFoundError:
        raise TrainError(f"{path}: config file not found") from None
    except (UnsafeFile, UnicodeDecodeError) as e:
        raise TrainError(f"{path}: {str(e).splitlines()[0]}") from None
    except OSError as e:
        raise TrainError(f"{path}: cannot read the config file ({e.strerror or e})") from None
    from sim.safeyaml import YamlError, load

    try:
        cfg = load(text)
    except YamlError as e:
        raise TrainError(f"{path}: invalid YAML ({e})") from None
    if not isinstance(cfg, dict):
        raise TrainError(f"{path}: config must be a mapping")
    for key in ("net_arch", "dagger", "ppo", "timesteps", "eval"):
        if key not in cfg and not (key == "dagger" and cfg.get("warm_start") == "none"):
            raise TrainError(f"{path}: missing key {key!r}")
    try:
        TrainConfig.model_validate(cfg)
    except ValidationError as e:
        loc, msg, got = first_error(e, "config")
        raise TrainError(f"{path}: {loc}: {msg} (got {got!r:.60})") from None
    if cfg.get("warm_start") == "dagger" and not has_expert(skill):
        raise TrainError(f"{path}: warm_start: {skill} has no scripted expert; use none")
    from skills.perturb import BY_NAME

    for name in cfg.get("randomize") or {}:
        if skill not in BY_NAME[name].skills:
            raise TrainError(f"{path}: randomize: condition {name!r} does not apply to {skill}")
        if skill in BY_NAME[name].infeasible:
            raise TrainError(
                f"{path}: randomize: no controller can succeed at {skill} under {name!r}"
            )
    return cfg


def has_expert(skill: str) -> bool:
    """Whether ``skill`` has a scripted expert to warm-start from (a skill learned by RL
    from scratch says ``has_expert = False``)."""
    return get(skill).has_expert


def from_scratch(skill: str, cfg: dict) -> bool:
    """Whether the run skips the warm start (``warm_start: none``, or left out for a skill
    without an expert)."""
    mode = cfg.get("warm_start")
    return mode == "none" or (mode is None and not has_expert(skill))


def versions() -> dict:
    """The versions a training run records (keys as the libraries' module names)."""
    return util.library_versions(
        ("mujoco", "gymnasium", "stable-baselines3", "torch", "numpy"),
        keys={"stable-baselines3": "stable_baselines3"},
    )


def check_log_folder(logdir: Path, algo: str) -> Path:
    """``<logdir>/<algo>``, created and probed for writing, or :class:`TrainError`."""
    base = logdir / algo
    try:
        base.mkdir(parents=True, exist_ok=True)
        probe = base / f".probe-{os.getpid()}"
        probe.mkdir()
        probe.rmdir()
    except OSError as e:
        raise TrainError(f"log folder {base} is not writable: {e.strerror or e}") from None
    return base


def _run_ids(base: Path, skill: str) -> list[tuple[int, Path]]:
    out = []
    for p in base.glob(f"{skill}_*") if base.is_dir() else ():
        tail = p.name[len(skill) + 1 :]
        if tail.isdigit() and p.is_dir():
            out.append((int(tail), p))
    return out


def new_run_dir(logdir: Path, algo: str, skill: str, setup: Callable[[Path], None]) -> Path:
    """A new run folder ``<skill>_<n>``, populated by ``setup`` under a hidden temporary name
    and renamed into place only once that succeeded (a half-made folder never looks like a
    run, so ``--resume`` cannot pick it)."""
    base = check_log_folder(logdir, algo)
    tmp = base / f".{skill}.tmp{os.getpid()}"
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        setup(tmp)
        for _ in range(100):
            run = base / f"{skill}_{max((i for i, _ in _run_ids(base, skill)), default=0) + 1}"
            try:
                os.rename(tmp, run)  # fails if another run took the name meanwhile
                return run
            except OSError:
                if not run.exists():
                    raise
        raise TrainError(f"cannot find a free run folder name under {base}")
    except OSError as e:
        raise TrainError(f"cannot set up a run folder under {base}: {e.strerror or e}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def latest_run_dir(logdir: Path, algo: str, skill: str) -> Path | None:
    """The newest completely set-up run of ``skill`` (see :data:`SETUP_DONE`)."""
    runs = [(i, p) for i, p in _run_ids(logdir / algo, skill) if (p / SETUP_DONE).is_file()]
    return max(runs, default=(0, None))[1]


# ---------------------------------------------------------------------- stage 1: DAgger
def scratch_actor(skill: str, cfg: dict, squash: bool = False) -> tuple[MLPPolicy, dict]:
    """The randomly initialised actor RL starts from when ``warm_start`` is none (seeded by
    the caller's ``torch.manual_seed``). With no demonstrations there are no statistics to
    normalise by, so the normaliser is the identity: the skill scales its own features."""
    s = get(skill)
    d = s.obs_dim
    policy = MLPPolicy(d, 4, cfg["net_arch"], np.zeros(d), np.ones(d), squash=squash)
    return policy, {"skill": skill, "algo": "none", "samples": 0, "wall_time_s": 0.0}


def check_init(skill: str, cfg: dict, init: Path, squash: bool) -> tuple[MLPPolicy, dict]:
    """The ``--init`` policy, if training can continue it; else one line saying why."""
    if not (init / "manifest.json").is_file():
        raise TrainError(f"--init: {init} is not a policy folder (no manifest.json)")
    try:
        policy, m = load_policy(init, skill)
    except PolicyError as e:
        raise TrainError(f"--init: {e}") from None
    if list(policy.net_arch) != list(cfg["net_arch"]):
        raise TrainError(
            f"--init: {init} has layers {policy.net_arch}, the config asks for "
            f"{list(cfg['net_arch'])}"
        )
    if policy.squash != squash:
        kind = "an off-policy (squashed)" if policy.squash else "a PPO"
        raise TrainError(f"--init: {init} holds {kind} actor, which this --algo cannot continue")
    return policy, m


def init_actor(
    skill: str, cfg: dict, init: Path, run: Path, squash: bool = False
) -> tuple[MLPPolicy, dict]:
    """An earlier run's policy (a shipped one, say) as the actor RL starts from, instead of
    a new DAgger warm start: new conditions in ``randomize`` are then learnt on top of what
    it already does, in minutes rather than the hour a warm start and fine-tuning take. It
    is copied into the run's ``bc/``, so ``--resume`` and the manifest see it as the warm
    start; ``init`` in the manifest names where it came from."""
    policy, m = check_init(skill, cfg, init, squash)
    ws = m.get("warm_start") or {}
    # its learning curve travels along: a shipped folder holds it, a run's best/ sits in it
    curve = None
    for f in (init / "evaluations.json", init.parent / "evaluations.json"):
        if f.is_file():
            try:
                curve = [
                    [e["timesteps"], e["success_rate"], e["episodes"]]
                    for e in json.loads(f.read_text())
                ]
            except (ValueError, KeyError, TypeError):
                curve = None  # not ours: the manifest just goes without it
            break
    info = {
        "skill": skill,
        "algo": "init",
        "samples": ws.get("samples"),
        "final_loss": ws.get("final_loss"),
        "dagger": ws.get("dagger"),
        "init": {
            "from": str(init),
            "sha256": m["sha256"],
            **{k: m.get(k) for k in ("algo", "training_steps", "training_wall_time_s", "seed")},
            "learning_aids": m.get("learning_aids"),
            "randomize": m.get("randomize"),
            "init": m.get("init"),  # the chain of fine-tunings it came from, if any
            "curve": curve,  # [timesteps, success rate, episodes] of its own training
        },
        "wall_time_s": 0.0,
    }
    save_policy(policy, run / "bc", info)
    return policy, info


def warm_start(
    skill: str,
    cfg: dict,
    run: Path,
    seed: int,
    prog: Progress,
    squash: bool = False,
    init: Path | None = None,
) -> tuple[MLPPolicy, dict]:
    done = run / "bc" / "manifest.json"
    if done.is_file():
        prog.log("warm start found, reusing bc/")
        return load_policy(run / "bc", skill)
    if init is not None:
        prog.log(f"fine-tuning {init} (no new warm start)")
        return init_actor(skill, cfg, init, run, squash)
    if from_scratch(skill, cfg):
        return scratch_actor(skill, cfg, squash)
    d = cfg["dagger"]
    env = make_env(skill, cfg)
    rng = np.random.default_rng(seed)
    total = d["expert_episodes"] + d["iterations"] * d["student_episodes"]
    prog.stage("demonstrations + DAgger", total)
    t0 = time.time()
    X, Y, expert_rate = collect(
        env, d["expert_episodes"], rng, noise=d["noise"], progress=lambda _: prog.advance(1)
    )
    mean, std = normaliser(X)
    policy = MLPPolicy(env.skill.obs_dim, 4, cfg["net_arch"], mean, std, squash=squash)
    history = []
    for it in range(d["iterations"]):
        loss = fit(policy, X, Y, d["epochs"], d["lr"], seed + it)
        X2, Y2, rate = collect(
            env,
            d["student_episodes"],
            rng,
            student=policy,
            beta=0.0,
            progress=lambda _: prog.advance(1),
        )
        history.append({"iteration": it, "loss": loss, "student_success": rate, "samples": len(X)})
        prog.log(f"DAgger {it + 1}/{d['iterations']}: loss {loss:.4f}, student success {rate:.2f}")
        X, Y = np.concatenate([X, X2]), np.concatenate([Y, Y2])
    loss = fit(policy, X, Y, d["epochs"], d["lr"], seed + 99)
    info = {
        "skill": skill,
        "algo": "bc",
        "samples": int(len(X)),
        "expert_success_noisy": expert_rate,
        "dagger": history,
        "final_loss": loss,
        "wall_time_s": round(time.time() - t0, 1),
    }
    save_policy(policy, run / "bc", info)
    return policy, info


def train(  # noqa: C901 - argument checks, then one linear run
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
    init: str | Path | None = None,
) -> Path:
    """Train ``skill``; returns the run folder. ``best/`` holds the policy to ship. With
    ``init`` (a policy folder), RL continues from that policy instead of a new warm start."""
    prog = prog or Progress()
    get(skill)  # unknown skill -> KeyError with the known names
    if algo not in ALGOS:
        raise TrainError(f"algo {algo!r} is not supported; choose from {', '.join(ALGOS)}")
    if not 1 <= n_envs <= MAX_ENVS:
        raise TrainError(f"--n-envs must be between 1 and {MAX_ENVS}, not {n_envs}")
    if not 0 <= seed <= 2**32 - 1:
        raise TrainError(f"--seed must be between 0 and {2**32 - 1}, not {seed}")
    cfg = load_config(skill, config)  # everything is checked before a folder is made
    total = int(timesteps if timesteps is not None else cfg["timesteps"])
    if not 1 <= total <= 1_000_000_000:
        raise TrainError(f"--n-timesteps must be between 1 and 1e9, not {total}")
    n_eval = int(eval_episodes or cfg["eval"]["episodes"])
    init = Path(init) if init is not None else None
    if init is not None and not resume:
        check_init(skill, cfg, init, algo in OFF_POLICY)
    logdir = Path(logdir)
    run = latest_run_dir(logdir, algo, skill) if resume else None
    if resume and run is None:
        raise TrainError(f"nothing to resume under {logdir / algo}/{skill}_*")
    if run is None:
        if algo in OFF_POLICY:
            n_envs = 1  # off-policy: one env, one gradient step per env step
        args = {"skill": skill, "algo": algo, "timesteps": total, "seed": seed, "n_envs": n_envs}
        if init is not None:
            args["init"] = str(init)

        def setup(d: Path) -> None:
            (d / "config.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
            (d / "command.txt").write_text(shlex.join(argv or sys.argv) + "\n")
            util.atomic_write_json(d / "versions.json", versions())
            (d / SETUP_DONE).write_text(yaml.safe_dump(args, sort_keys=False))  # last

        run = new_run_dir(logdir, algo, skill, setup)
    prog.log(f"run folder: {run}")
    t_start = time.time()
    torch.manual_seed(seed)
    try:
        bc, bc_info = warm_start(skill, cfg, run, seed, prog, algo in OFF_POLICY, init)
    except PolicyError as e:
        raise TrainError(
            f"cannot resume: the warm start in {run / 'bc'} is damaged ({e}); "
            "start a new run without --resume"
        ) from None
    # the filter is part of the policy: the warm start or --init policy is trained (and
    # exported) with the config's, whatever it was executed with before
    bc.smoothing = smoothing_of(cfg)
    tb = run / "tensorboard" if tensorboard else None
    try:
        trainer = make_trainer(algo, skill, cfg, bc, n_envs, seed, tb)
    except ImportError as e:
        raise TrainError(str(e)) from None
    progress = _load_checkpoint(trainer, run / "checkpoint")
    done_steps = int(progress.get("timesteps", 0))
    best = float(progress.get("best_success", -1.0))
    wall_before = float(progress.get("wall_s", 0.0))
    evals_path = run / "evaluations.json"
    try:
        evals = json.loads(evals_path.read_text()) if evals_path.is_file() else []
        if not isinstance(evals, list):
            raise ValueError("not a list")
    except (ValueError, UnicodeDecodeError) as e:
        raise TrainError(f"cannot resume: {evals_path} is damaged ({e})".splitlines()[0]) from None
    continued = bc_info.get("algo") == "init"  # --init: an earlier policy, not a warm start
    scratch = from_scratch(skill, cfg) and not continued
    if done_steps == 0:
        if not scratch:  # no warm start to protect from a random critic
            trainer.warm_up(prog)
        r = evaluate_policy(skill, bc, n_eval, seed=10_000 + seed, env=_eval_env(skill, cfg))
        source = "initial actor" if scratch else ("init" if continued else "warm start")
        evals.append({"timesteps": 0, "source": source, **r})
        label = "initial actor" if scratch else "warm-start actor"
        prog.log(f"{label}: success {r['success_rate']:.2f} over {n_eval}")
        util.atomic_write_json(evals_path, evals)
    prog.stage(f"{algo.upper()} fine-tuning", total)
    prog.advance(min(done_steps, total))
    freq = int(cfg["eval"]["freq"])
    while done_steps < total:
        before = trainer.num_timesteps
        trainer.learn(min(freq, total - done_steps))
        done_steps += trainer.num_timesteps - before
        prog.advance(trainer.num_timesteps - before)
        actor = trainer.export()
        r = evaluate_policy(skill, actor, n_eval, seed=10_000 + seed, env=_eval_env(skill, cfg))
        evals.append({"timesteps": done_steps, "source": algo, **r})
        util.atomic_write_json(evals_path, evals)
        prog.log(f"{done_steps} steps: success {r['success_rate']:.2f} over {n_eval}")
        wall = wall_before + time.time() - t_start
        if r["success_rate"] >= best:
            best = r["success_rate"]
            m = _manifest(skill, algo, done_steps, wall, bc, bc_info, r, seed)
            if cfg.get("randomize"):
                m["learning_aids"].append(
                    "domain randomisation over skills/perturb.py conditions: "
                    + ", ".join(f"{k} {p:g}" for k, p in cfg["randomize"].items())
                )
                m["randomize"] = cfg["randomize"]
            if cfg.get("smoothing"):
                m["learning_aids"].append(
                    "smoothness: low-pass action filter in the loop, action-change reward cost"
                )
                m["smoothing"] = cfg["smoothing"]
            save_policy(actor, run / "best", m)
        trainer.save_checkpoint(
            run / "checkpoint", {"timesteps": done_steps, "best_success": best, "wall_s": wall}
        )
    return run


def _eval_env(skill: str, cfg: dict) -> SkillEnv:
    """The periodic evaluation's env: the training distribution, randomised or not, so the
    best checkpoint is the best on what the run trains for (the nominal figure is measured
    apart, with ``skillbridge eval-skill``)."""
    return make_env(skill, cfg)


def _load_checkpoint(trainer: Trainer, ck: Path) -> dict:
    """The resumable state of a run, or :class:`TrainError` naming the damaged checkpoint
    (safetensors, torch and JSON each raise their own types for a truncated file)."""
    if ck.exists():
        from sim.safeio import UnsafeFile, check_regular

        try:
            for f in ck.iterdir():
                if not f.name.startswith("."):
                    check_regular(f)  # a FIFO or a device would hang or never end
        except (UnsafeFile, OSError) as e:
            raise TrainError(f"cannot resume: {e}") from None
    try:
        progress = trainer.load_checkpoint(ck) or {}
        if not isinstance(progress, dict):
            raise ValueError("progress.json is not an object")
        for key in ("timesteps", "best_success", "wall_s"):
            v = progress.get(key, 0)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise ValueError(f"progress.json: {key} is not a number")
        if progress.get("timesteps", 0) < 0:
            raise ValueError("progress.json: negative timesteps")
    except Exception as e:  # noqa: BLE001 - any decoding failure is a damaged checkpoint
        msg = (str(e).strip().splitlines() or [""])[0][:160]
        raise TrainError(
            f"cannot resume: the checkpoint in {ck} is damaged "
            f"({type(e).__name__}{': ' + msg if msg else ''}); start a new run "
            "without --resume"
        ) from None
    return progress


def _manifest(
    skill: str,
    algo: str,
    steps: int,
    wall: float,
    bc: MLPPolicy,
    bc_info: dict,
    train_eval: dict,
    seed: int,
) -> dict:
    critic = (
        "critic warm-up on warm-start rollouts"
        if algo == "ppo"
        else ("replay buffer seeded with warm-start rollouts; critic fitted before actor updates")
    )
    if bc_info.get("init"):
        first = bc_info["init"]
        aids = [
            f"RL fine-tuning continued from policy {first['sha256'][:12]} ({first['from']}; "
            "its own training under init)",
            "potential-based dense reward shaping",
            critic,
        ]
    elif bc_info.get("algo") == "none":
        aids = [
            "none of the expert's: RL from a randomly initialised actor",
            "potential-based dense reward shaping",
        ]
    else:
        aids = [
            "DAgger behaviour-cloning warm start from the scripted expert",
            "potential-based dense reward shaping",
            critic,
        ]
    extra = {"init": bc_info["init"]} if bc_info.get("init") else {}
    return {
        "skill": skill,
        "algo": algo,
        "training_steps": steps,
        "training_wall_time_s": round(wall + bc_info.get("wall_time_s", 0), 1),
        "learning_aids": aids,
        "warm_start": {k: bc_info.get(k) for k in ("samples", "final_loss", "dagger")},
        "train_eval": train_eval,
        "seed": seed,
        "versions": versions(),
        "observation_space": {"shape": [bc.obs_dim], "dtype": "float32"},
        "action_space": {"shape": [4], "low": -1.0, "high": 1.0},
        **extra,
    }
