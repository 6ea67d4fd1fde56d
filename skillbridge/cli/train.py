"""``skillbridge train``: train one skill (several seeds, optionally on Ray)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from skillbridge.cli.common import SEED_MAX, check_skill, console, progress_bar, skill_names
from skillbridge.errors import UserError, safe
from skillbridge.multiseed import is_int


def register(app: typer.Typer) -> None:
    app.command("train", cls=_train_command())(train)


def _ray_address(token: str) -> bool:
    """Whether the token after ``--ray`` is its ADDRESS (not an option, not the SKILL)."""
    return not token.startswith("-") and token not in skill_names()


def rewrite_train_args(args: list[str]) -> list[str]:
    """``--seeds 0 1 2`` -> ``--seeds=0 --seeds=1 --seeds=2`` (click options take one value
    each; negative numbers are kept for the range check), and a bare ``--ray`` (last, before
    an option or before the SKILL) -> ``--ray=local``."""
    from skillbridge.ray_cluster import LOCAL

    out: list[str] = []
    in_seeds = False
    for i, a in enumerate(args):
        if a == "--":
            out += args[i:]
            break
        if in_seeds and is_int(a):
            out.append(f"--seeds={a}")
            continue
        in_seeds = a == "--seeds"
        if a == "--ray" and (i + 1 == len(args) or not _ray_address(args[i + 1])):
            a = f"--ray={LOCAL}"
        if not in_seeds:
            out.append(a)
    return out


def _train_command():
    from typer.core import TyperCommand

    class TrainCommand(TyperCommand):
        def parse_args(self, ctx, args):
            return super().parse_args(ctx, rewrite_train_args(args))

    return TrainCommand


def train(
    skill: str = typer.Argument(..., help="Skill to train (pick, place, push, home)."),
    algo: str = typer.Option("ppo", "--algo", help="RL algorithm for fine-tuning."),
    timesteps: int = typer.Option(
        None, "-n", "--n-timesteps", min=1, help="RL steps (default: config)."
    ),
    seed: int = typer.Option(None, "--seed", help="Random seed (default 0)."),
    seeds: list[int] = typer.Option(
        None,
        "--seeds",
        metavar="SEED...",
        help="Train these seeds in parallel (one run folder each) and report the mean and "
        "spread of their final success.",
    ),
    n_jobs: int = typer.Option(
        None, "--n-jobs", help="With --seeds: worker processes (default: min(seeds, CPUs))."
    ),
    ray: str = typer.Option(
        None,
        "--ray",
        metavar="[ADDRESS]",
        help="With --seeds: each seed a Ray task on the cluster at ADDRESS, or on a local "
        "one when no ADDRESS is given.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="With --seeds: print the summary as JSON (progress on stderr)."
    ),
    n_envs: int = typer.Option(4, "--n-envs", min=1, help="Environments stepped per rollout."),
    logdir: Path = typer.Option(Path("logs"), "-f", "--log-folder", help="Log folder."),
    tensorboard: bool = typer.Option(False, "--tensorboard", help="Write tensorboard logs."),
    config: Path = typer.Option(
        None, "--config", "-c", help="Hyperparameter YAML (default: skills/config/SKILL.yaml)."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the latest run of this skill."),
    init: Path = typer.Option(
        None,
        "--init",
        help="Fine-tune this policy folder (e.g. skills/pretrained/place) instead of a new "
        "DAgger warm start.",
    ),
    install: bool = typer.Option(
        False, "--install", help="Copy the best policy into skills/pretrained/."
    ),
    threads: int = typer.Option(
        1, "--threads", min=1, help="torch threads (1 is fastest unless idle)."
    ),
):
    """Train a skill: DAgger warm start from the scripted expert, then PPO; resumable.

    With --seeds: one run per seed, in parallel; exit 1 if a seed's run failed."""
    check_skill(skill)
    if seeds:
        if seed is not None:
            raise UserError("--seed and --seeds exclude each other: give one of them")
        kwargs = {
            "algo": algo,
            "timesteps": timesteps,
            "n_envs": n_envs,
            "logdir": logdir,
            "tensorboard": tensorboard,
            "config": config,
            "init": init,
        }
        _train_seeds(skill, seeds, n_jobs, ray, as_json, install, resume, threads, kwargs)
        return
    for given, name in ((n_jobs, "--n-jobs"), (ray, "--ray"), (as_json or None, "--json")):
        if given is not None:
            raise UserError(f"{name} only goes with --seeds")
    seed = 0 if seed is None else seed
    import torch

    import sim  # noqa: F401
    from skills.train import TrainError
    from skills.train import train as run_training
    from skills.trainers import Progress as Hooks

    torch.set_num_threads(threads)
    if tensorboard:
        try:
            import tensorboard as _  # noqa: F401
        except ImportError:
            raise UserError(
                "--tensorboard needs tensorboard: pip install 'skillbridge[tensorboard]'"
            ) from None
    with progress_bar() as bar:
        current = {"task": None}

        def stage(name, total):
            if current["task"] is not None:
                bar.update(current["task"], completed=bar.tasks[current["task"]].total)
            current["task"] = bar.add_task(name, total=total)

        hooks = Hooks(
            stage=stage,
            advance=lambda n: (
                bar.advance(current["task"], n) if current["task"] is not None else None
            ),
            log=lambda m: bar.console.print(f"[dim]{m}"),
        )
        try:
            run = run_training(
                skill,
                algo=algo,
                timesteps=timesteps,
                seed=seed,
                n_envs=n_envs,
                logdir=logdir,
                tensorboard=tensorboard,
                config=config,
                resume=resume,
                init=init,
                prog=hooks,
                argv=["skillbridge", *sys.argv[1:]],
            )
        except (TrainError, PermissionError) as e:
            raise UserError(str(e)) from None
    best = run / "best"
    if not (best / "manifest.json").is_file():
        raise UserError(f"training finished without an evaluated policy in {best}", code=1)
    console.print(f"best policy: [bold]{best}[/bold]")
    if install:
        _install(skill, run)


def _install(skill: str, run: Path) -> None:
    from skills.policy import install

    console.print(f"installed into {install(skill, run)}")


def _train_seeds(  # noqa: C901 - option checks, then one run
    skill: str,
    seeds: list[int],
    n_jobs: int | None,
    ray: str | None,
    as_json: bool,
    install: bool,
    resume: bool,
    threads: int,
    kwargs: dict,
) -> None:
    """``train SKILL --seeds ...``: see :mod:`skillbridge.multiseed`."""
    import importlib.util

    for s in seeds:
        if not 0 <= s <= SEED_MAX:
            raise UserError(f"--seeds must be between 0 and {SEED_MAX}, not {s}")
    if len(set(seeds)) < len(seeds):
        dup = next(s for s in seeds if seeds.count(s) > 1)
        raise UserError(f"--seeds: seed {dup} is given twice")
    if install and len(seeds) > 1:
        raise UserError(
            "--install with several --seeds: which seed's policy would be installed? Copy "
            "the chosen run's best/ policy, or train that seed alone with --seed S --install"
        )
    if resume:
        raise UserError("--resume continues one run: use it with --seed, not --seeds")
    if n_jobs is not None and not 1 <= n_jobs <= 64:
        raise UserError("--n-jobs must be between 1 and 64")
    if ray is not None:
        if importlib.util.find_spec("ray") is None:
            raise UserError("train --ray needs Ray: pip install 'skillbridge[ray]'")
        from skillbridge.ray_cluster import check

        check(ray)
    if kwargs["tensorboard"] and importlib.util.find_spec("tensorboard") is None:
        raise UserError("--tensorboard needs tensorboard: pip install 'skillbridge[tensorboard]'")
    from skills.train import ALGOS, TrainError, check_log_folder, load_config

    try:  # what every seed would fail on is one line now, not one per seed later
        if kwargs["algo"] not in ALGOS:
            raise TrainError(f"algo {kwargs['algo']!r} is not supported; choose from {ALGOS}")
        load_config(skill, kwargs["config"])
        check_log_folder(kwargs["logdir"], kwargs["algo"])
    except TrainError as e:
        raise UserError(str(e)) from None
    from skillbridge import multiseed

    jobs = n_jobs or min(len(seeds), os.cpu_count() or 1)
    argv = ["skillbridge", *sys.argv[1:]]
    out = Console(stderr=True) if as_json else console
    with progress_bar(out) as bar:
        task = bar.add_task(f"train {skill}: {len(seeds)} seeds", total=len(seeds))

        def done(r: dict) -> None:
            bar.advance(task)
            what = (
                f"success {r['success_rate']:.3f} ({safe(r['run'])})"
                if r["status"] == "ok"
                else f"[red]failed[/red]: {safe(r['error'])}"
            )
            bar.console.print(f"seed {r['seed']}: {what}, {r['wall_s']:.0f} s")

        summary = multiseed.train_seeds(
            skill,
            seeds,
            kwargs,
            n_jobs=jobs,
            threads=threads,
            ray=ray,
            command=lambda s: multiseed.seed_command(argv, s, _ray_address),
            done=done,
        )
    if install and not summary["failed"]:
        _install(skill, Path(summary["runs"][0]["run"]))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        _seeds_table(summary)
    if summary["failed"]:
        raise typer.Exit(1)


def _seeds_table(summary: dict) -> None:
    t = Table(title=f"{summary['skill']}: final evaluation success over seeds")
    for col in ("seed", "final success", "episodes", "best", "run folder", "wall s"):
        t.add_column(col)
    for r in summary["runs"]:
        if r["status"] == "ok":
            t.add_row(
                str(r["seed"]),
                f"{r['success_rate']:.3f}",
                str(r["episodes"]),
                f"{r['best_success_rate']:.3f}",
                safe(r["run"]),
                f"{r['wall_s']:.0f}",
            )
        else:
            t.add_row(str(r["seed"]), "[red]failed", "", "", safe(r["error"]), f"{r['wall_s']:.0f}")
    console.print(t)
    f = summary["final_success"]
    if f["n"]:
        std = "-" if f["std"] is None else f"{f['std']:.3f}"
        console.print(
            f"final success over {f['n']} seed(s): mean {f['mean']:.3f} ± {std} (std), "
            f"min {f['min']:.3f}, max {f['max']:.3f}"
        )
    if summary["failed"]:
        console.print(f"[red]failed seeds: {', '.join(map(str, summary['failed']))}")
    if summary["summary_file"]:
        console.print(f"summary: {safe(summary['summary_file'])}")
    else:
        console.print(f"[red]{safe(summary['summary_error'])}")
