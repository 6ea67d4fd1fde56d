"""CLI verb ``train-planner``: specialise the embedded language model to this robot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer

from skillbridge.errors import UserError, echo, safe


def register(app: typer.Typer) -> None:
    app.command("train-planner")(train_planner)


def train_planner(
    seed: int = typer.Option(0, "--seed", help="Corpus and initialisation seed."),
    corpus_size: int = typer.Option(
        5000,
        "-n",
        "--corpus-size",
        min=50,
        max=200_000,
        help="Generated (instruction, command) pairs.",
    ),
    epochs: float = typer.Option(
        2.0, "--epochs", min=0.01, max=50.0, help="Passes over the corpus."
    ),
    layers: int = typer.Option(
        10, "--layers", min=1, max=30, help="Top decoder layers that get an adapter."
    ),
    rank: int = typer.Option(16, "--rank", min=1, max=128, help="LoRA rank."),
    lr: float = typer.Option(1.5e-3, "--lr", min=1e-6, max=1e-1, help="Peak learning rate."),
    batch: int = typer.Option(16, "--batch", min=1, max=512, help="Examples per step."),
    eval_every: int = typer.Option(
        50, "--eval-every", min=1, help="Steps between held-out evaluations."
    ),
    logdir: Path = typer.Option(
        Path("logs/planner"), "-f", "--log-folder", help="Run folder parent."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the run with these settings."),
    install: bool = typer.Option(False, "--install", help="Make the result the shipped adapter."),
    threads: int = typer.Option(2, "--threads", min=1, max=256, help="torch threads."),
    profile: str = typer.Option(
        "base",
        "--profile",
        help="Corpus profile: base; lists (more multi-item instructions, a second stage); "
        "phrasing (shared destinations, bins as subjects, shorthand, bin references: a third "
        "stage); articulated (the articulated scene's drawer, light, button and towers, mixed "
        "with lists and phrasing samples: a fourth stage).",
    ),
    init: Path = typer.Option(
        None,
        "--init",
        help="Start from this adapter folder (a second stage; same --layers and --rank).",
    ),
):
    """Fine-tune the embedded planner model (LoRA on its top layers) on a generated corpus.

    Shows held-out exact-match accuracy as it goes, checkpoints every evaluation (rerun with
    --resume to continue), and writes the adapter as safetensors plus a manifest.
    """
    from planner.embedded.finetune import TuneConfig, Tuner, export
    from planner.errors import PlannerError

    init_file = _stage(profile, init, rank, layers)
    cfg = TuneConfig(
        seed=seed,
        corpus_size=corpus_size,
        epochs=epochs,
        layers=layers,
        rank=rank,
        lr=lr,
        batch=batch,
        eval_every=eval_every,
        threads=threads,
        profile=profile,
        init=init_file,
    )
    stage = "" if init is None else f"-{profile}-from-{Path(init).name}"
    run_dir = Path(logdir) / f"seed{seed}-n{corpus_size}-l{layers}-r{rank}{stage}"
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UserError(f"cannot write to {safe(str(run_dir))}: {e.strerror or e}", 2) from None
    if resume:
        saved = run_dir / "config.json"
        if saved.is_file() and json.loads(saved.read_text()) != _asdict(cfg):
            raise UserError(
                f"{safe(str(run_dir))} was started with other settings; "
                "resume with the same options",
                2,
            )
    elif (run_dir / "checkpoint").exists():
        raise UserError(
            f"{safe(str(run_dir))} already holds a run: add --resume to continue it "
            "or choose another -f",
            2,
        )
    from rich.progress import (
        BarColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from skillbridge.errors import console

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
    )
    tasks: dict[str, TaskID] = {}

    def on_progress(p, what: str) -> None:
        if what not in tasks:
            tasks[what] = bar.add_task(what, total=p.total or 1)
        desc = what
        if what == "training":
            held = "-" if p.held_out is None else f"{p.held_out:.3f}"
            desc = f"training  loss {p.loss:.3f}  held-out exact {held}"
        bar.update(tasks[what], completed=p.step, total=p.total or 1, description=desc)

    try:
        with bar:
            result = Tuner(cfg, run_dir, on_progress).run(resume=resume)
    except KeyboardInterrupt:
        raise UserError(
            f"interrupted; continue with --resume (run folder {safe(str(run_dir))})", 130
        ) from None
    except PlannerError as e:
        raise UserError(str(e), 2) from None
    out = export(result, cfg, run_dir / "export")
    _plot(result["history"], run_dir / "learning_curve.png")
    echo(
        f"held-out exact match {result['held_out_exact']:.3f} "
        f"(n={result['held_out_n']}), {result['steps']} steps, {result['wall_s']:.0f} s"
    )
    echo(f"adapter: {out}")
    if install:
        from planner.embedded.model import SHIPPED

        tmp = SHIPPED.with_name(SHIPPED.name + ".new")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(out, tmp)
        shutil.copy(run_dir / "learning_curve.png", tmp / "learning_curve.png")
        if SHIPPED.exists():
            shutil.rmtree(SHIPPED)
        tmp.rename(SHIPPED)
        echo(f"installed as the shipped adapter: {SHIPPED}")


def _stage(profile: str, init: Path | None, rank: int, layers: int) -> str | None:
    """The corpus profile checked, and the adapter file a second stage starts from."""
    from planner.corpus import PROFILES
    from planner.errors import PlannerError

    if profile not in PROFILES:
        raise UserError(f"--profile must be one of {', '.join(PROFILES)}, not {profile!r}", 2)
    if init is None:
        return None
    from planner.embedded.model import read_manifest

    try:
        m = read_manifest(init)
    except PlannerError as e:
        raise UserError(str(e), 2) from None
    if m.lora.rank != rank or m.lora.first_layer != 30 - layers:
        raise UserError(
            f"{safe(str(init))} has rank {m.lora.rank} on layers {m.lora.first_layer}-29; "
            "pass the same --rank and --layers",
            2,
        )
    return str(Path(init) / "adapter.safetensors")


def _asdict(cfg) -> dict:
    from dataclasses import asdict

    return json.loads(json.dumps(asdict(cfg)))


def _plot(history: list[dict], path: Path) -> None:
    """Held-out exact match and training loss against steps (nothing when no evaluation)."""
    if not history:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["step"] for h in history]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    (a,) = ax.plot(steps, [h["held_out"] for h in history], "o-", label="held-out exact match")
    ax.set_xlabel("step")
    ax.set_ylim(0, 1.02)
    ax2 = ax.twinx()
    (b,) = ax2.plot(steps, [h["loss"] for h in history], "s--", color="tab:red", label="train loss")
    ax2.set_ylabel("loss")
    ax.set_title("embedded planner fine-tuning")
    ax.legend(handles=[a, b], loc="center right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
