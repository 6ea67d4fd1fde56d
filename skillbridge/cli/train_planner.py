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
    lock = _claim(run_dir)  # held until the process ends, however it ends
    if resume:
        _check_saved_config(run_dir, _asdict(cfg))
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
    lock.close()
    echo(
        f"held-out exact match {result['held_out_exact']:.3f} "
        f"(n={result['held_out_n']}), {result['steps']} steps, {result['wall_s']:.0f} s"
    )
    echo(f"adapter: {out}")
    if install:
        from planner.embedded.model import SHIPPED

        try:
            install_adapter(out, run_dir / "learning_curve.png", SHIPPED)
        except OSError as e:
            raise UserError(
                f"could not install the adapter into {safe(str(SHIPPED))} "
                f"({e.strerror or e}); the previous one is unchanged",
                1,
            ) from None
        echo(f"installed as the shipped adapter: {SHIPPED}")


def _claim(run_dir: Path):
    """Lock ``run_dir`` for this run: two runs in one folder would overwrite each other's
    checkpoints and caches. The open file is the lock; the OS drops it when the process dies."""
    import fcntl
    import os

    try:
        lock = open(run_dir / ".lock", "a+", encoding="utf-8")  # noqa: SIM115 - held open
    except OSError as e:
        raise UserError(f"cannot write to {safe(str(run_dir))}: {e.strerror or e}", 2) from None
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.seek(0)
        holder = lock.read().strip()[:20]
        lock.close()
        raise UserError(
            f"{safe(str(run_dir))} is in use by another train-planner"
            f"{f' (pid {safe(holder)})' if holder else ''}; wait for it or choose another -f",
            2,
        ) from None
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))
    lock.flush()
    return lock


def _check_saved_config(run_dir: Path, want: dict) -> None:
    """--resume continues only a run started with these very settings."""
    saved = run_dir / "config.json"
    if not saved.exists():
        return
    try:
        got = json.loads(saved.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UserError(
            f"cannot resume: {safe(str(saved))} is damaged ({type(e).__name__}); "
            f"delete {safe(str(run_dir))} to start the run over",
            2,
        ) from None
    if got != want:
        raise UserError(
            f"{safe(str(run_dir))} was started with other settings; resume with the same options",
            2,
        )


def install_adapter(export_dir: Path, curve: Path, shipped: Path) -> None:
    """Make ``export_dir`` the shipped adapter so that ``shipped`` is, at every instant, a
    complete adapter (the old one or the new one): a crash mid-install never leaves the
    planner without one, falling back to the rules. The copy is made beside ``shipped``,
    then the two folders are exchanged in one rename (Linux's RENAME_EXCHANGE)."""
    new = shipped.with_name(shipped.name + ".new")
    shutil.rmtree(new, ignore_errors=True)
    shutil.copytree(export_dir, new)
    if curve.is_file():
        shutil.copy(curve, new / "learning_curve.png")
    if shipped.exists() and _exchange(new, shipped):
        shutil.rmtree(new, ignore_errors=True)  # now the previous adapter
        return
    if shipped.exists():
        # no atomic exchange here: the previous adapter stays beside, complete, until the
        # new one is in place
        old = shipped.with_name(shipped.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        shipped.rename(old)
        new.rename(shipped)
        shutil.rmtree(old, ignore_errors=True)
    else:
        new.rename(shipped)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False where the system cannot (not Linux, old kernel or
    a file system without RENAME_EXCHANGE)."""
    import ctypes
    import os
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    c_int, c_path = ctypes.c_int, ctypes.c_char_p
    renameat2.argtypes = [c_int, c_path, c_int, c_path, ctypes.c_uint]
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(rc == 0)


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
