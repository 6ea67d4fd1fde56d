"""CLI verb ``eval``: a task suite on K seeds in W worker processes, with a report."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import typer

from skillbridge.errors import UserError

EXIT_INPUT = 2


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_suite)


def _select(suite, only: str | None):
    """Keep the tasks whose id or category matches one of the comma-separated patterns."""
    if not only:
        return suite
    pats = [p.strip() for p in only.split(",") if p.strip()]
    keep = [t for t in suite.tasks
            if any(fnmatch.fnmatchcase(t.id, p) or t.category == p for p in pats)]
    if not keep:
        raise UserError(f"--only {only!r} matches no task of the suite (ids or categories, "
                        f"globs allowed; categories: {', '.join(suite.by_category())})",
                        EXIT_INPUT)
    suite.tasks = keep
    return suite


def eval_suite(
    suite: Path = typer.Option(None, "--suite", help="Suite YAML file or folder of them "
                               "(default: the shipped tasks/)."),
    llm: str = typer.Option(None, "--llm", help="Planner: PROVIDER:MODEL or rules; default: "
                            "$SKILLBRIDGE_LLM, the config file, else rules."),
    seeds: int = typer.Option(3, "--seeds", help="Seeds per task (scene layouts 0..K-1)."),
    workers: int = typer.Option(2, "--workers", help="Worker processes."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON, no progress."),
    out: Path = typer.Option(None, "--out", help="Report folder (default: runs/eval-<time>)."),
    only: str = typer.Option(None, "--only", help="Comma-separated task ids, globs or "
                             "categories to run (default: all)."),
    seed_base: int = typer.Option(0, "--seed-base", help="First seed."),
    max_replans: int = typer.Option(2, "--max-replans", help="Replans per episode."),
    base_url: str = typer.Option(None, "--base-url", help="Base URL of an OpenAI-compatible "
                                 "server."),
    policy_source: str = typer.Option(
        "pretrained", "--policy-source", hidden=True,
        help="pretrained (shipped policies) or scripted (the experts; debugging aid).",
    ),
):
    """Run a task suite: planning, execution and refusal success with 95% intervals."""
    from skillbridge import evaluation as ev
    from skillbridge.suite import DEFAULT_SUITE, SuiteError, load_suite

    if seeds < 1 or seeds > 1000:
        raise UserError("--seeds must be between 1 and 1000", EXIT_INPUT)
    if workers < 1 or workers > 64:
        raise UserError("--workers must be between 1 and 64", EXIT_INPUT)
    if max_replans < 0:
        raise UserError("--max-replans must be >= 0", EXIT_INPUT)
    try:
        s = load_suite(suite)
    except SuiteError as e:
        raise UserError(str(e), EXIT_INPUT) from None
    s = _select(s, only)
    planner_spec = _check_planner(llm, base_url)
    from skillbridge.runner import make_executor

    make_executor(policy_source)  # a missing or damaged policy is one line, before any work
    out = out or ev.default_out()
    _check_out(out)
    cfg = ev.EvalConfig(
        suite_path=str(suite if suite is not None else DEFAULT_SUITE),
        llm=llm, planner=planner_spec, seeds=seeds, seed_base=seed_base, workers=workers, out=out,
        policy_source=policy_source, max_replans=max_replans, base_url=base_url,
        command=ev.command_line(),
    )
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True)
    total = len(s.tasks) * seeds
    if as_json:
        report = ev.evaluate(s, cfg)
    else:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        console.print(f"[bold]eval[/bold] {s.name}: {len(s.tasks)} tasks × {seeds} seeds = "
                      f"{total} episodes on {workers} worker(s) → {out}", highlight=False)
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                      MofNCompleteColumn(), TextColumn("{task.fields[tally]}"),
                      TimeElapsedColumn(), TimeRemainingColumn(), console=console) as bar:
            tally = {"ok": 0, "fail": 0}
            tid = bar.add_task("episodes", total=total, tally="")

            def progress(rec: dict, done: int, n: int) -> None:
                ok = rec["refusal_ok"] if rec["refuse"] else rec["execution"]
                tally["ok" if ok else "fail"] += 1
                if not ok:
                    bar.console.print(f"  [red]✗[/red] {rec['task']} seed {rec['seed']}: "
                                      f"{rec['cause']}", highlight=False)
                bar.update(tid, completed=done,
                           tally=f"[green]{tally['ok']} ok[/green] [red]{tally['fail']} "
                                 f"failed[/red]")

            report = ev.evaluate(s, cfg, progress)
    summary = _summary(report)
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        _print_summary(console, report)


def _check_planner(llm: str | None, base_url: str | None) -> str:
    """The planner's spec as resolved (argument, environment, config file, else rules)."""
    from planner.errors import PlannerError
    from planner.hybrid import HybridPlanner

    try:
        return HybridPlanner.from_spec(llm, base_url=base_url).spec
    except PlannerError as e:
        raise UserError(str(e).splitlines()[0], EXIT_INPUT) from None


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; give a folder", EXIT_INPUT)
    if out.exists() and (out / "report.json").exists():
        raise UserError(f"--out {out} already holds a report; choose a new folder", EXIT_INPUT)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UserError(f"cannot write to --out {out}: {e.strerror or e}", EXIT_INPUT) from None


def _summary(report: dict) -> dict:
    keys = ("suite", "config", "episodes", "wall_s", "overall", "targets", "by_category",
            "failures", "tokens", "files")
    return {k: report.get(k) for k in keys}


def _print_summary(console, report: dict) -> None:
    from rich.table import Table

    from skillbridge.evaluation import _pct

    t = Table(show_header=True, header_style="bold")
    for col in ("category", "planning", "execution", "refusal"):
        t.add_column(col)
    for cat, r in report["by_category"].items():
        t.add_row(cat, _pct(r["planning"]), _pct(r["execution"]), _pct(r["refusal"]))
    o = report["overall"]
    t.add_row("[bold]all[/bold]", _pct(o["planning"]), _pct(o["execution"]), _pct(o["refusal"]))
    console.print(t)
    for k, v in report["targets"].items():
        mark = "[green]met[/green]" if v["met"] else "[red]not met[/red]"
        console.print(f"{k}: {v['measured']} (target ≥ {v['target']}) {mark}", highlight=False)
    causes = report["failures"]["by_cause"]
    if causes:
        console.print("failures: " + ", ".join(f"{k} ×{v}" for k, v in causes.items()),
                      highlight=False)
    console.print(f"report: {report['files']['md']}", highlight=False)
