"""CLI verbs of the skill library: ``train``, ``eval-skill``, ``skills``."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from skillbridge.errors import UserError, safe

console = Console()


def register(app: typer.Typer) -> None:
    app.command("train", cls=_train_command())(train)
    app.command("eval-skill")(eval_skill)
    app.command("skills")(skills)


def _check_skill(skill: str, allow_chain: bool = False) -> None:
    from skills.chain import CHAIN
    from skills.registry import names

    valid = names() + ([CHAIN] if allow_chain else [])
    if skill not in valid:
        raise UserError(f"unknown skill {skill!r}; choose from {', '.join(valid)}")


#: Seeds are numpy/gymnasium seeds: non-negative and, to stay portable, 32-bit.
SEED_MAX = 2**32 - 1


def _is_int(text: str) -> bool:
    return text.lstrip("-+").isdigit()


def _skill_names() -> tuple[str, ...]:
    from skills.registry import names

    return tuple(names())


def _ray_address(token: str) -> bool:
    """Whether the token after ``--ray`` is its ADDRESS (not an option, not the SKILL)."""
    return not token.startswith("-") and token not in _skill_names()


def rewrite_train_args(args: list[str]) -> list[str]:
    """``--seeds 0 1 2`` -> ``--seeds=0 --seeds=1 --seeds=2`` (click options take one value
    each; negative numbers are kept for the range check), and a bare ``--ray`` (last, before
    an option or before the SKILL) -> ``--ray=local``."""
    from skillbridge.ray_eval import LOCAL

    out: list[str] = []
    in_seeds = False
    for i, a in enumerate(args):
        if a == "--":
            out += args[i:]
            break
        if in_seeds and _is_int(a):
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


def _bar(on: Console | None = None) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=on or console,
        transient=False,
    )


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
    install: bool = typer.Option(
        False, "--install", help="Copy the best policy into skills/pretrained/."
    ),
    threads: int = typer.Option(
        1, "--threads", min=1, help="torch threads (1 is fastest unless idle)."
    ),
):
    """Train a skill: DAgger warm start from the scripted expert, then PPO; resumable.

    With --seeds: one run per seed, in parallel; exit 1 if a seed's run failed."""
    _check_skill(skill)
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
        }
        _train_seeds(skill, seeds, n_jobs, ray, as_json, install, resume, threads, kwargs)
        return
    for given, name in ((n_jobs, "--n-jobs"), (ray, "--ray"), (as_json or None, "--json")):
        if given is not None:
            raise UserError(f"{name} only goes with --seeds")
    seed = 0 if seed is None else seed
    import torch

    import sim  # noqa: F401
    from skills.train import Progress as Hooks
    from skills.train import TrainError
    from skills.train import train as run_training

    torch.set_num_threads(threads)
    if tensorboard:
        try:
            import tensorboard as _  # noqa: F401
        except ImportError:
            raise UserError(
                "--tensorboard needs tensorboard: pip install 'skillbridge[tensorboard]'"
            ) from None
    with _bar() as bar:
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
    """Copy ``run``'s best policy (and its learning curve) into skills/pretrained/."""
    best = run / "best"
    from skills.policy import pretrained_dir

    dest = pretrained_dir(skill)
    tmp = dest.with_name(f".{skill}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(best, tmp)
    # the learning curve travels with the policy: steps and wall time to reach the bar
    if (run / "evaluations.json").is_file():
        shutil.copy2(run / "evaluations.json", tmp / "evaluations.json")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    console.print(f"installed into {dest}")


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
        from skillbridge.ray_eval import check

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
    with _bar(out) as bar:
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


def eval_skill(
    skill: str = typer.Argument(..., help="Skill to evaluate, or 'pick-place' for the chain."),
    episodes: int = typer.Option(200, "-n", "--n-episodes", min=1, help="Episodes."),
    seed: int = typer.Option(0, "--seed", help="Seed of the start states."),
    policy_dir: Path = typer.Option(
        None,
        "--policy",
        "-f",
        help="Policy folder (default: pretrained); with pick-place --split, a folder "
        "holding pick/ and place/.",
    ),
    expert: bool = typer.Option(False, "--expert", help="Evaluate the scripted expert instead."),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object (progress goes to stderr)."
    ),
    record: bool = typer.Option(
        False, "--record", help="Store the result in the policy's manifest."
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="With --record: overwrite an evaluation the manifest already records.",
    ),
    split: str = typer.Option(
        None,
        "--split",
        metavar="SPLIT",
        help="nominal, perturbed or all: each condition of the perturbation split "
        "(skills/perturb.py), policy and scripted expert paired on the same starts; "
        "-n episodes per condition.",
    ),
):
    """Success rate (95% Wilson interval) of a skill from its chained start distribution."""
    _check_skill(skill, allow_chain=True)
    from skills.chain import CHAIN

    if split is not None:
        _check_split(split, expert, record)
        _eval_split(skill, split, episodes, seed, policy_dir, as_json)
        return

    if skill == CHAIN and policy_dir is not None:
        raise UserError(
            f"-f/--policy does not apply to {CHAIN}: it chains the installed pick "
            "and place policies"
        )
    if expert and policy_dir is not None:
        raise UserError(
            "-f/--policy and --expert exclude each other (the expert has no policy folder)"
        )
    if record and (skill == CHAIN or expert):
        raise UserError(
            f"--record stores a policy's result in its manifest; "
            f"{'the expert' if expert else CHAIN} has none"
        )
    if replace and not record:
        raise UserError("--replace only goes with --record")
    import torch

    import sim  # noqa: F401
    from skills.chain import CHAIN, evaluate_chain
    from skills.evaluate import evaluate_policy, expert_policy
    from skills.policy import PolicyError, load_policy, pretrained_dir
    from skills.runtime import SkillExecutor

    torch.set_num_threads(1)
    directory = policy_dir or (None if skill == CHAIN else pretrained_dir(skill))
    try:
        if skill == CHAIN:
            ex = SkillExecutor("scripted" if expert else "pretrained")
            ex.policy("pick") if not expert else None
            ex.policy("place") if not expert else None
        elif expert:
            policy = expert_policy
        else:
            policy, manifest = load_policy(directory, skill)
    except PolicyError as e:
        raise UserError(str(e)) from None
    previous = _recorded(Path(directory) / "manifest.json", skill, replace) if record else None
    # stdout carries the result only (one JSON object with --json): progress goes to stderr
    with _bar(Console(stderr=True) if as_json else None) as bar:
        task = bar.add_task(f"eval {skill}", total=episodes)
        hook = lambda ep, ok: bar.advance(task)  # noqa: E731
        if skill == CHAIN:
            result = evaluate_chain(ex, episodes, seed=seed, progress=hook)
        else:
            result = evaluate_policy(skill, policy, episodes, seed=seed, progress=hook)
    if record and skill != CHAIN and not expert:
        path = Path(directory) / "manifest.json"
        m = json.loads(path.read_text())
        where = f" -f {policy_dir}" if policy_dir is not None else ""
        m["evaluation"] = {
            **result,
            "seed": seed,
            "command": f"skillbridge eval-skill {skill} -n {episodes} --seed {seed}{where}",
        }
        from sim.util import atomic_write_json

        try:
            atomic_write_json(path, m)
        except OSError as e:
            raise UserError(f"cannot record the result in {path}: {e.strerror or e}", 1) from None
        if previous:
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"replaced the recorded evaluation in {safe(str(path))}: {safe(previous)} -> "
                f"{_figure(result, seed)}"
            )
    if as_json:
        typer.echo(json.dumps(result))
    else:
        lo, hi = result["ci95"]
        console.print(
            f"{skill}: success {result['success_rate']:.3f} over {episodes} episodes "
            f"(95% CI {lo:.3f}-{hi:.3f}), mean steps {result['mean_steps']}"
        )
        for kind, r in result.get("by_target", {}).items():
            console.print(
                f"  target {kind}: {r['success_rate']:.3f} over {r['episodes']} "
                f"(95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f})"
            )


def _check_split(split: str, expert: bool, record: bool) -> None:
    from skills.perturb import SPLITS

    if split not in SPLITS:
        raise UserError(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    if expert:
        raise UserError(
            "--split already reports the scripted expert beside the policy: drop --expert"
        )
    if record:
        raise UserError("--record stores the nominal figure: run it without --split")


def _eval_split(
    skill: str, split: str, episodes: int, seed: int, policy_dir: Path | None, as_json: bool
) -> None:
    """``eval-skill SKILL --split ...``: a table of conditions, policy beside expert. For
    the pick-place chain, ``-f DIR`` is a folder holding ``pick/`` and ``place/``."""
    import torch

    import sim  # noqa: F401
    from skills import perturb
    from skills.chain import CHAIN
    from skills.policy import PolicyError, load_policy, pretrained_dir
    from skills.registry import get
    from skills.runtime import SkillExecutor

    torch.set_num_threads(1)
    try:
        if skill == CHAIN:
            pols = {
                k: load_policy(Path(policy_dir) / k if policy_dir else pretrained_dir(k), k)[0]
                for k in ("pick", "place")
            }
            actors = {
                "policy": SkillExecutor("pretrained", policies=pols),
                "expert": SkillExecutor("scripted"),
            }
            conds = perturb.chain_conditions(split)
        else:
            policy, _ = load_policy(policy_dir or pretrained_dir(skill), skill)
            s = get(skill)
            actors = {"policy": perturb.policy_actor(s, policy), "expert": perturb.expert_actor(s)}
            conds = perturb.conditions_for(skill, split)
    except PolicyError as e:
        raise UserError(str(e)) from None
    with _bar(Console(stderr=True) if as_json else None) as bar:
        task = bar.add_task(f"eval {skill} ({split})", total=episodes * len(conds))
        hook = lambda c, ep: bar.advance(task)  # noqa: E731
        if skill == CHAIN:
            result = perturb.evaluate_chain_split(split, actors, episodes, seed, progress=hook)
        else:
            result = perturb.evaluate_split(skill, split, actors, episodes, seed, progress=hook)
    if as_json:
        typer.echo(json.dumps(result))
        return
    t = Table(title=f"{skill}: {split} split, {episodes} episodes per condition, seed {seed}")
    for col in ("condition", "policy (95% CI)", "expert (95% CI)", "only pol/exp", "aborted"):
        t.add_column(col)
    for r in result["conditions"]:
        p, e, pr = r["policy"], r["expert"], r["paired"]
        name = r["condition"] + ("" if r["feasible"] else " (infeasible)")
        ab = "-" if not p["aborted"] else f"{p['aborted']} @ step {p['mean_abort_steps']}"
        t.add_row(
            name,
            f"{p['successes']}/{p['episodes']} ({p['ci95'][0]:.2f}-{p['ci95'][1]:.2f})",
            f"{e['successes']}/{e['episodes']} ({e['ci95'][0]:.2f}-{e['ci95'][1]:.2f})",
            f"{pr['policy_only']}/{pr['expert_only']}",
            ab,
        )
    console.print(t)


def _figure(ev: dict, seed) -> str:
    rate = ev.get("success_rate")
    rate = f"{rate:.3f}" if isinstance(rate, (int, float)) else "?"
    return f"success {rate} (n={ev.get('episodes', '?')}, seed {seed})"


def _recorded(path: Path, skill: str, replace: bool) -> str | None:
    """The evaluation ``path`` already records, as text, checked before any episode runs: a
    --record must not clobber the shipped figures unasked, nor fail after the work."""
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UserError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    if not os.access(path.parent, os.W_OK):
        raise UserError(f"--record: cannot write to {path.parent}")
    ev = m.get("evaluation") if isinstance(m, dict) else None
    if not isinstance(ev, dict) or not ev:
        return None
    old = _figure(ev, ev.get("seed", "?"))
    if not replace:
        raise UserError(
            f"the manifest of {skill} ({path}) already records {old}; add --replace to overwrite it"
        )
    return old


def skills(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """The skill catalogue: parameters, preconditions, shipped success rate."""
    from skills.policy import PolicyError, load_manifest, pretrained_dir
    from skills.registry import catalogue

    rows = []
    for entry in catalogue():
        try:
            m = load_manifest(pretrained_dir(entry["skill"]))
            ev = m.get("evaluation") or {}
            shipped = {
                "success_rate": ev.get("success_rate"),
                "episodes": ev.get("episodes"),
                "ci95": ev.get("ci95"),
                "training_steps": m.get("training_steps"),
            }
        except PolicyError:
            shipped = None
        rows.append({**entry, "pretrained": shipped})
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    t = Table(title="skills")
    for col in ("skill", "parameters", "preconditions", "shipped success"):
        t.add_column(col)
    for r in rows:
        params = ", ".join(f"{k}: {v['domain']}" for k, v in r["parameters"].items()) or "-"
        s = r["pretrained"]
        if s is None:
            succ = "[red]no policy"
        elif s["success_rate"] is None:
            succ = "not evaluated"
        else:
            lo, hi = s["ci95"]
            succ = f"{s['success_rate']:.3f} (n={s['episodes']}, CI {lo:.2f}-{hi:.2f})"
        t.add_row(r["skill"], params, "\n".join(r["preconditions"]), succ)
    console.print(t)
