"""CLI verb ``eval``: a task suite on K seeds in W worker processes, with a report."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import typer

from skillbridge.cli.common import SEED_MAX
from skillbridge.errors import UserError, safe

EXIT_INPUT = 2


def register(app: typer.Typer) -> None:
    from skillbridge.ray_cluster import command_class  # a bare --ray: a local Ray cluster

    app.command("eval", cls=command_class())(eval_suite)


def _select(suite, only: str | None):
    """Keep the tasks whose id or category matches one of the comma-separated patterns."""
    if not only:
        return suite
    pats = [p.strip() for p in only.split(",") if p.strip()]
    keep = [
        t for t in suite.tasks if any(fnmatch.fnmatchcase(t.id, p) or t.category == p for p in pats)
    ]
    if not keep:
        raise UserError(
            f"--only {only!r} matches no task of the suite (ids or categories, "
            f"globs allowed; categories: {', '.join(suite.by_category())})",
            EXIT_INPUT,
        )
    suite.tasks = keep
    return suite


def eval_suite(
    suite: Path = typer.Option(
        None,
        "--suite",
        help="Suite YAML file or folder of them (default: the shipped skillbridge/tasks/).",
    ),
    llm: str = typer.Option(
        None,
        "--llm",
        help="Planner: PROVIDER:MODEL or rules; default: $SKILLBRIDGE_LLM, the config "
        "file, else the embedded model where it is installed, else rules.",
    ),
    route: str = typer.Option(
        "hybrid", "--route", help="hybrid (rules first, the model when unsure), rules, or model."
    ),
    seeds: int = typer.Option(3, "--seeds", help="Seeds per task (scene layouts 0..K-1)."),
    workers: int = typer.Option(2, "--workers", help="Worker processes."),
    ray: str = typer.Option(
        None,
        "--ray",
        metavar="[ADDRESS]",
        help="Run the episodes as Ray tasks on the cluster at ADDRESS (ray://host:10001, "
        "host:6379, auto), or on a local one when no ADDRESS is given; --workers Ray workers.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON, no progress."),
    out: Path = typer.Option(None, "--out", help="Report folder (default: runs/eval-<time>)."),
    only: str = typer.Option(
        None, "--only", help="Comma-separated task ids, globs or categories to run (default: all)."
    ),
    seed_base: int = typer.Option(0, "--seed-base", help="First seed (>= 0)."),
    max_replans: int = typer.Option(2, "--max-replans", help="Replans per episode."),
    faults: bool = typer.Option(
        False,
        "--faults",
        help="Inject one seeded fault per episode "
        "(after the first place or push, that cube is moved off its "
        "target) and report recovery.",
    ),
    base_url: str = typer.Option(
        None, "--base-url", help="Base URL of an OpenAI-compatible server."
    ),
    resume: Path = typer.Option(
        None,
        "--resume",
        metavar="DIR",
        help="Continue the interrupted eval in DIR with its suite and "
        "settings (only --workers and --json may be given with it).",
    ),
    policy_source: str = typer.Option(
        "pretrained",
        "--policy-source",
        hidden=True,
        help="pretrained (shipped policies) or scripted (the experts; debugging aid).",
    ),
    chains: int = typer.Option(
        None,
        "--chains",
        help="Instead of the suite: N chains of 5 instructions run back to back without "
        "reset (CALVIN's protocol); reports the average completed length.",
    ),
    scene: str = typer.Option(
        None, "--scene", help="Scene of --chains: tabletop (default), articulated or mixed."
    ),
    video: bool = typer.Option(
        False,
        "--video",
        help="With --chains: a video of the first chain (chain-0000.mp4) and a picture of "
        "the world after each of its links (chain-0000.png) in the report folder.",
    ),
    perception: str = typer.Option(
        "state",
        "--perception",
        help="What the robot acts on: state (the simulator's poses) or camera (estimated "
        "from RGB-D images); success is still judged on the simulator's truth, and a run "
        "that claimed success with its goal unmet counts as a false success claim.",
    ),
):
    """Run a task suite: planning, execution and refusal success with 95% intervals.

    Exit status:
      0    every episode ran and every target with episodes is met
      1    a target is missed, a run claimed success with its goal unmet,
           an episode ended in an error, or episodes are missing (workers lost)
      2    unusable input (suite, options, --out in use by another eval)
      130  interrupted (Ctrl-C or SIGTERM): the partial report is kept;
           continue it with --resume DIR"""
    from skillbridge.evaluation import run as ev
    from skillbridge.evaluation.config import EvalConfig
    from skillbridge.evaluation.state import ResumeError, read_state
    from skillbridge.evaluation.suite import DEFAULT_SUITE, SuiteError, load_suite

    if perception not in ("state", "camera"):
        raise UserError(f"--perception must be state or camera, not {perception!r}", EXIT_INPUT)
    if chains is not None:
        conflicting = [
            name
            for name, value in (
                ("--suite", suite),
                ("--only", only),
                ("--resume", resume),
                ("--ray", ray),
                ("--faults", faults or None),
            )
            if value is not None
        ]
        if conflicting:
            raise UserError(f"--chains runs no suite; drop {', '.join(conflicting)}", EXIT_INPUT)
        _eval_chains(
            video,
            chains,
            seed_base,
            scene or "tabletop",
            llm,
            route,
            base_url,
            out,
            as_json,
            policy_source,
            max_replans,
            perception,
        )
        return

    _check_suite_options(scene, video, seeds, seed_base, workers, ray, max_replans)
    if resume is not None:
        given = [
            name
            for name, value, default in (
                ("--suite", suite, None),
                ("--llm", llm, None),
                ("--seeds", seeds, 3),
                ("--only", only, None),
                ("--seed-base", seed_base, 0),
                ("--max-replans", max_replans, 2),
                ("--base-url", base_url, None),
                ("--faults", faults, False),
                ("--route", route, "hybrid"),
                ("--policy-source", policy_source, "pretrained"),
                ("--perception", perception, "state"),
            )
            if value != default
        ]
        if out is not None and Path(out) != Path(resume):
            given.insert(0, "--out")
        if given:
            raise UserError(
                f"--resume continues with the settings of the interrupted eval; "
                f"drop {', '.join(given)}",
                EXIT_INPUT,
            )
        out = resume
        lock = _claim_out(out, resume=True)
        try:
            s, cfg = read_state(out)
            cfg.workers, cfg.ray = workers, ray
            from skillbridge.runner.executor import make_executor

            make_executor(cfg.policy_source)
        except ResumeError as e:
            lock.close()
            raise UserError(str(e), EXIT_INPUT) from None
        except BaseException:
            lock.close()
            raise
    else:
        try:
            s = load_suite(suite)
        except SuiteError as e:
            raise UserError(str(e), EXIT_INPUT) from None
        s = _select(s, only)
        from planner.hybrid import ROUTES

        if route not in ROUTES:
            raise UserError(
                f"--route must be one of {', '.join(ROUTES)}, not {route!r}", EXIT_INPUT
            )
        planner_spec = _check_planner(llm, base_url)
        from skillbridge.runner.executor import make_executor

        make_executor(policy_source)  # a missing or damaged policy is one line, before any work
        out = out or ev.default_out()
        lock = _claim_out(out, resume=False)
        cfg = EvalConfig(
            suite_path=str(suite if suite is not None else DEFAULT_SUITE),
            llm=llm,
            planner=planner_spec,
            seeds=seeds,
            seed_base=seed_base,
            workers=workers,
            out=out,
            policy_source=policy_source,
            max_replans=max_replans,
            base_url=base_url,
            command=ev.command_line(),
            faults=faults,
            route=route,
            ray=ray,
            perception=perception,
        )
    try:
        report = _run(s, cfg, as_json, resume is not None)
    finally:
        lock.close()
    raise typer.Exit(exit_code(report))


def _check_suite_options(
    scene: str | None,
    video: bool,
    seeds: int,
    seed_base: int,
    workers: int,
    ray: str | None,
    max_replans: int,
) -> None:
    """The options of a suite eval, each bad one a line before any work."""
    chain_only = [name for name, v in (("--scene", scene), ("--video", video or None)) if v]
    if chain_only:  # a suite's tasks name their own scenes; only a chain is filmed
        raise UserError(
            f"{' and '.join(chain_only)} go{'es' if len(chain_only) == 1 else ''} with "
            "--chains N (a suite's tasks name their own scenes)",
            EXIT_INPUT,
        )
    if seeds < 1 or seeds > 1000:
        raise UserError("--seeds must be between 1 and 1000", EXIT_INPUT)
    if seed_base < 0 or seed_base + seeds - 1 > SEED_MAX:
        raise UserError(
            f"--seed-base must be between 0 and {SEED_MAX - seeds + 1} "
            f"(seeds are non-negative 32-bit numbers), not {seed_base}",
            EXIT_INPUT,
        )
    if workers < 1 or workers > 64:
        raise UserError("--workers must be between 1 and 64", EXIT_INPUT)
    if ray is not None:  # Ray (issue 16): installed, before any work
        from skillbridge.ray_cluster import check

        check(ray)
    if max_replans < 0:
        raise UserError("--max-replans must be >= 0", EXIT_INPUT)


def exit_code(report: dict) -> int:
    """0 when the suite passed, 1 when it did not (see ``eval --help``): a CI job can gate on it."""
    missed = any(v.get("met") is False for v in report["targets"].values())
    errors = any(r.get("cause") == "error" for r in report.get("results") or [])
    # a run that claims success with the goal unmet in the world is never acceptable
    false_claims = (report.get("claims") or {}).get("false_success_claims", 0) > 0
    return 1 if missed or errors or false_claims or report.get("complete") is False else 0


def _run(s, cfg, as_json: bool, resuming: bool) -> dict:
    from rich.console import Console

    from skillbridge.evaluation import run as ev
    from skillbridge.evaluation.record import EvalRecord

    console = Console(stderr=True, soft_wrap=True)
    out = cfg.out
    total = len(s.tasks) * cfg.seeds
    try:
        if as_json:
            report = ev.evaluate(s, cfg, resume=resuming)
        else:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            verb = "resuming" if resuming else "eval"
            console.print(
                f"[bold]{verb}[/bold] {safe(s.name)}: {len(s.tasks)} tasks × "
                f"{cfg.seeds} seeds = {total} episodes on "
                f"{cfg.workers} {'Ray ' if cfg.ray else ''}worker(s) → "
                f"{safe(str(out))}",
                highlight=False,
            )
            with Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[tally]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
            ) as bar:
                tally = {"ok": 0, "fail": 0}
                tid = bar.add_task("episodes", total=total, tally="")

                def progress(rec: EvalRecord, done: int, n: int) -> None:
                    ok = rec["refusal_ok"] if rec["refuse"] else rec["execution"]
                    tally["ok" if ok else "fail"] += 1
                    if not ok:
                        bar.console.print(
                            f"  [red]✗[/red] {safe(str(rec['task']))} seed "
                            f"{rec['seed']}: {safe(str(rec['cause']))}",
                            highlight=False,
                        )
                    bar.update(
                        tid,
                        completed=done,
                        tally=f"[green]{tally['ok']} ok[/green] [red]{tally['fail']} failed[/red]",
                    )

                report = ev.evaluate(s, cfg, progress, resume=resuming)
    except ev.EvalInterrupted as e:
        r = e.report
        if as_json:
            typer.echo(json.dumps(_summary(r), indent=2))
        done = r["episodes"]
        console.print(
            f"interrupted: {done} of {done + len(r['missing'])} episodes done; "
            f"partial report {safe(r['files']['md'])}; continue with: skillbridge "
            f"eval --resume {safe(str(out))}",
            highlight=False,
        )
        raise typer.Exit(130) from None
    except ev.EvalAbandoned as e:
        r = e.report
        if as_json:
            typer.echo(json.dumps(_summary(r), indent=2))
        done = r["episodes"]
        console.print(
            f"error: {safe(e.why)}; {done} of {done + len(r['missing'])} episodes done; "
            f"partial report {safe(r['files']['md'])}; continue with: skillbridge "
            f"eval --resume {safe(str(out))}",
            highlight=False,
        )
        raise typer.Exit(1) from None
    except OSError as e:  # a full disk, a folder removed under us: the episodes so far are
        # in results.jsonl, line by line, and --resume continues from them
        raise UserError(
            f"cannot write the report in {out}: {e.strerror or e}; the finished "
            f"episodes are kept, continue with: skillbridge eval --resume {out}",
            1,
        ) from None
    if as_json:
        typer.echo(json.dumps(_summary(report), indent=2))
    else:
        _print_summary(console, report)
    return report


def _eval_chains(
    video: bool,
    n: int,
    seed_base: int,
    scene: str,
    llm: str | None,
    route: str,
    base_url: str | None,
    out: Path | None,
    as_json: bool,
    policy_source: str,
    max_replans: int,
    perception: str = "state",
) -> None:
    """``eval --chains N``: sample, run and report chains; exit 1 below the issue's 4.7."""
    from rich.table import Table

    from planner.hybrid import ROUTES
    from sim.scene import SCENE_NAMES
    from skillbridge.cli.common import progress_bar
    from skillbridge.errors import console as make_console
    from skillbridge.evaluation import chains as C
    from skillbridge.evaluation import run as ev

    if not 1 <= n <= 10_000:
        raise UserError("--chains must be between 1 and 10000", EXIT_INPUT)
    if scene not in SCENE_NAMES:
        raise UserError(
            f"--scene must be one of {', '.join(SCENE_NAMES)}, not {scene!r}", EXIT_INPUT
        )
    if route not in ROUTES:
        raise UserError(f"--route must be one of {', '.join(ROUTES)}, not {route!r}", EXIT_INPUT)
    _check_planner(llm, base_url)
    from skillbridge.runner.executor import make_executor

    make_executor(policy_source)
    out = out or ev.default_out()
    lock = _claim_out(out, resume=False)
    console = make_console(stderr=True)
    first_chain: C.ChainResult | None = None
    try:
        with progress_bar(console, transient=True) as bar:
            task = bar.add_task("chains", total=n, visible=not as_json)

            def step(i: int, res: C.ChainResult) -> None:
                nonlocal first_chain
                first_chain = first_chain or res
                bar.update(task, advance=1, description=f"chains (last: {res.completed}/5)")

            summary = C.evaluate_chains(
                n,
                out=out,
                seed_base=seed_base,
                scene_name=scene,
                llm=llm,
                route=route,
                base_url=base_url,
                policy_source=policy_source,
                max_replans=max_replans,
                progress=step,
                perception=perception,
            )
    finally:
        lock.close()
    out_console = make_console(stderr=as_json)
    if as_json:
        print(json.dumps(summary))
    else:
        t = Table(title=f"{n} chains of {summary['length']} on the {scene} scene")
        t.add_column("position")
        t.add_column("tasks in a row done [95% CI]")
        for a in summary["success_at"]:
            t.add_row(
                str(a["position"]), f"{a['rate']:.3f} [{a['ci95'][0]:.3f}, {a['ci95'][1]:.3f}]"
            )
        out_console.print(t)
        out_console.print(
            f"average completed length: {summary['average_completed']} of {summary['length']}"
        )
        if summary["failure_causes"]:
            causes = ", ".join(f"{k} x{v}" for k, v in summary["failure_causes"].items())
            out_console.print(f"failures: {causes}")
        out_console.print(f"report: {safe(str(out / 'chains.json'))}")
    if video and first_chain is not None:
        mp4, png = out / "chain-0000.mp4", out / "chain-0000.png"
        C.chain_video(first_chain, mp4, strip=png)
        if not as_json:
            out_console.print(f"video: {safe(str(mp4))}  picture: {safe(str(png))}")
    if summary["average_completed"] is None or summary["average_completed"] < C.TARGET:
        raise typer.Exit(1)


def _check_planner(llm: str | None, base_url: str | None) -> str:
    """The planner's spec as resolved (argument, environment, config file, else rules)."""
    from planner.errors import PlannerError
    from planner.hybrid import HybridPlanner

    try:
        spec = HybridPlanner.from_spec(llm, base_url=base_url).spec
        from planner.backends import probe, resolve_spec

        # a server that is down would fail every model-route task: refuse before any work
        down = probe(resolve_spec(llm, base_url=base_url))
    except PlannerError as e:
        raise UserError(str(e).splitlines()[0], EXIT_INPUT) from None
    if down is not None:
        raise UserError(f"the planner {spec} is unreachable ({down})", EXIT_INPUT)
    return spec


class _OutLock:
    """The open ``.eval.lock`` of an eval: the lock lasts as long as it is open (the OS drops
    it when the process dies, however it dies); :meth:`close` also removes the file, so a
    finished or interrupted eval leaves no lock file behind."""

    def __init__(self, path: Path, f) -> None:
        self.path, self.f = path, f

    def close(self) -> None:
        import os

        if self.f.closed:
            return
        try:  # only our own file: another eval may have made a new one after an unlink
            if os.path.samestat(os.fstat(self.f.fileno()), os.lstat(self.path)):
                self.path.unlink()
        except OSError:
            pass
        self.f.close()


def _claim_out(out: Path, resume: bool) -> _OutLock:
    """Lock ``out`` for this eval (two evals into one folder would overwrite each other's
    report) and check it can take one. Returns the held lock: the lock lasts as long as
    it is open, and the OS drops it when the process dies, however it dies."""
    import fcntl
    import os

    from skillbridge.evaluation.state import STATE_FILE

    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; give a folder", EXIT_INPUT)
    if resume and not out.is_dir():
        raise UserError(f"--resume {out}: no such folder", EXIT_INPUT)
    path = out / ".eval.lock"
    for _ in range(10):
        try:
            out.mkdir(parents=True, exist_ok=True)
            f = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held open
        except OSError as e:
            raise UserError(f"cannot write to --out {out}: {e.strerror or e}", EXIT_INPUT) from None
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip()[:20]
            f.close()
            raise UserError(
                f"{out} is in use by another eval{f' (pid {holder})' if holder else ''}"
                f"; wait for it or choose another --out",
                EXIT_INPUT,
            ) from None
        try:  # the eval that held it may have removed it meanwhile: lock the new one
            if os.path.samestat(os.fstat(f.fileno()), os.lstat(path)):
                break
        except OSError:
            pass
        f.close()
    else:
        raise UserError(f"cannot lock --out {out}: {path} keeps changing", EXIT_INPUT)
    f.seek(0)
    f.truncate()
    f.write(str(os.getpid()))
    f.flush()
    lock = _OutLock(path, f)
    if not resume:
        if (out / "report.json").exists():
            lock.close()
            raise UserError(
                f"--out {out} already holds a report; choose a new folder "
                f"(or continue an incomplete one with --resume {out})",
                EXIT_INPUT,
            )
        if (out / STATE_FILE).exists():
            lock.close()
            raise UserError(
                f"--out {out} holds an unfinished eval; continue it with "
                f"--resume {out} or choose a new folder",
                EXIT_INPUT,
            )
    try:
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        lock.close()
        raise UserError(f"cannot write to --out {out}: {e.strerror or e}", EXIT_INPUT) from None
    return lock


def _summary(report: dict) -> dict:
    keys = (
        "suite",
        "config",
        "episodes",
        "complete",
        "missing",
        "infrastructure",
        "wall_s",
        "overall",
        "claims",
        "targets",
        "by_category",
        "failures",
        "tokens",
        "files",
    )
    return {k: report.get(k) for k in keys}


def _print_summary(console, report: dict) -> None:
    from rich.table import Table

    from skillbridge.evaluation.pages import pct

    t = Table(show_header=True, header_style="bold")
    for col in ("category", "planning", "execution", "refusal"):
        t.add_column(col)
    for cat, r in report["by_category"].items():
        t.add_row(safe(cat), pct(r["planning"]), pct(r["execution"]), pct(r["refusal"]))
    o = report["overall"]
    t.add_row("[bold]all[/bold]", pct(o["planning"]), pct(o["execution"]), pct(o["refusal"]))
    console.print(t)
    for k, v in report["targets"].items():
        mark = (
            "n/a"
            if v["met"] is None
            else "[green]met[/green]"
            if v["met"]
            else "[red]not met[/red]"
        )
        console.print(f"{k}: {v['measured']} (target ≥ {v['target']}) {mark}", highlight=False)
    cl = report.get("claims") or {}
    if cl:
        colour = "green" if cl["false_success_claims"] == 0 else "red"
        console.print(
            f"false success claims: [{colour}]{cl['false_success_claims']}[/{colour}] "
            f"of {cl['claimed_success']} runs that claimed success",
            highlight=False,
        )
        if cl["faults_injected"]:
            console.print(
                f"recovery from injected faults: {pct(cl['recovery'])}; repaired by "
                f"a replan: {cl['repaired_by_replan']}",
                highlight=False,
            )
    causes = report["failures"]["by_cause"]
    if causes:
        console.print(
            "failures: " + safe(", ".join(f"{k} ×{v}" for k, v in causes.items())), highlight=False
        )
    missing = report.get("missing") or []
    if missing:
        console.print(
            f"[red]incomplete[/red]: {len(missing)} episode(s) lost with their "
            f"worker; rerun them with: skillbridge eval --resume "
            f"{safe(str(Path(report['files']['md']).parent))}",
            highlight=False,
        )
    console.print(f"report: {safe(report['files']['md'])}", highlight=False)
