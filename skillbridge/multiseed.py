"""``skillbridge train SKILL --seeds 0 1 2 [--ray [ADDRESS]]``: one skill trained on several
seeds at once, and the mean and spread of their final evaluation success (the
rl-baselines3-zoo habit of never trusting one seed).

Each seed is a normal :func:`skills.train.train` run in its own run folder
(``<logdir>/<algo>/<skill>_<n>/``), in a spawned worker process (at most ``n_jobs`` at once)
or, with ``--ray``, as a Ray task on a cluster (a local one without an ADDRESS). A seed whose
run fails is reported as failed with its one-line reason; the others still report. The
summary is written atomically to ``<logdir>/seeds_summary.json``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The training function a seed runs (``module:name``); tests point it at a stand-in.
TRAIN_FN = "skills.train:train"
SUMMARY = "seeds_summary.json"
#: How often a worker checks that the CLI that started it is still there.
PARENT_POLL_S = 2.0

Done = Callable[[dict], None]


def one_line(e: BaseException) -> str:
    """The first line of an error; prefixed by its type unless it is a message meant for the
    user (``TrainError``)."""
    text = (str(e).strip().splitlines() or [""])[0][:300]
    if type(e).__name__ == "TrainError" and text:
        return text
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _final(run: Path) -> dict:
    """The last evaluation of a finished run (its ``evaluations.json``)."""
    import json

    path = run / "evaluations.json"
    try:
        evals = json.loads(path.read_text(encoding="utf-8"))
        last = evals[-1]
        return {
            "success_rate": float(last["success_rate"]),
            "episodes": int(last["episodes"]),
            "timesteps": int(last["timesteps"]),
            "best_success_rate": max(float(e["success_rate"]) for e in evals[1:] or evals),
        }
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        raise RuntimeError(f"no final evaluation in {path} ({type(e).__name__})") from None


def train_seed(spec: dict) -> dict:
    """One seed's training run, in whatever process runs it; never raises."""
    t0 = time.time()
    seed = spec["seed"]
    try:
        import torch

        import sim  # noqa: F401 - registers the env

        torch.set_num_threads(spec.get("threads", 1))
        mod, _, name = spec.get("train_fn", TRAIN_FN).partition(":")
        fn = getattr(importlib.import_module(mod), name)
        run = Path(fn(spec["skill"], seed=seed, **spec["kwargs"]))
        if not (run / "best" / "manifest.json").is_file():
            raise RuntimeError(f"training finished without an evaluated policy in {run / 'best'}")
        out = {"seed": seed, "status": "ok", "run": str(run), **_final(run)}
    except Exception as e:  # noqa: BLE001 - a failed seed is a result, not a crash
        out = {"seed": seed, "status": "failed", "error": one_line(e)}
    out["wall_s"] = round(time.time() - t0, 1)
    return out


def _child(conn, spec: dict, parent: int) -> None:
    """A worker process: quiet stdout (it belongs to ``--json``), no Ctrl-C traceback (the
    CLI stops its workers), gone when the CLI is."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(2, 1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()
    conn.send(train_seed(spec))
    conn.close()


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored while a worker is spawned (it inherits SIG_IGN through exec)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _stop(procs) -> None:
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
            p.join(timeout=2)


def run_local(specs: list[dict], n_jobs: int, done: Done) -> None:
    """Each spec in its own spawned process, at most ``n_jobs`` at a time; a process that
    dies (``kill -9``, the OOM killer) fails its seed only."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")
    queue = list(specs)
    running: dict[Any, tuple[Any, Any, dict, float]] = {}  # sentinel -> process, conn, ...
    try:
        while queue or running:
            while queue and len(running) < n_jobs:
                spec = queue.pop(0)
                recv, send = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_child, args=(send, spec, os.getpid()), daemon=True)
                with _sigint_ignored():  # a Ctrl-C while it starts is no traceback there
                    p.start()
                send.close()
                running[p.sentinel] = (p, recv, spec, time.time())
            for sentinel in wait(list(running), timeout=0.5):
                p, recv, spec, t0 = running.pop(sentinel)
                p.join()
                try:
                    res = recv.recv() if recv.poll() else None
                except (EOFError, OSError):
                    res = None
                recv.close()
                done(res or _died(spec["seed"], p.exitcode, t0))
    except BaseException:
        _stop([r[0] for r in running.values()])
        raise


def _died(seed: int, exitcode, t0: float) -> dict:
    how = f"signal {-exitcode}" if exitcode is not None and exitcode < 0 else f"exit {exitcode}"
    return _failed(seed, f"worker process died ({how})", t0)


def _failed(seed: int, error: str, t0: float) -> dict:
    return {"seed": seed, "status": "failed", "error": error, "wall_s": round(time.time() - t0, 1)}


def run_ray(specs: list[dict], address: str, n_jobs: int, threads: int, done: Done) -> None:
    """Each spec as a Ray task on the cluster at ``address`` (``local``: one started here
    with ``n_jobs * threads`` CPUs and stopped at the end)."""
    from skillbridge import ray_cluster

    ray = ray_cluster.ray_module()
    # Ray's driver prints cluster events on stdout, which belongs to --json
    with contextlib.redirect_stdout(sys.stderr):
        started = ray_cluster.start(address, n_jobs * threads)
        try:
            task = ray.remote(num_cpus=threads, max_retries=0)(train_seed)
            t0 = time.time()
            refs = {task.remote(s): s for s in specs}
            while refs:
                ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.5)
                for ref in ready:
                    spec = refs.pop(ref)
                    try:
                        done(ray.get(ref))
                    except Exception as e:  # noqa: BLE001 - the worker, not the training
                        done(_failed(spec["seed"], f"Ray task failed: {one_line(e)}", t0))
        finally:
            if started:
                ray.shutdown()


def summarise(results: list[dict]) -> dict:
    """Mean, sample standard deviation, min and max of the final success over the seeds that
    finished (``std`` is None with fewer than two)."""
    rates = [r["success_rate"] for r in results if r.get("status") == "ok"]
    if not rates:
        return {"n": 0, "mean": None, "std": None, "min": None, "max": None}
    return {
        "n": len(rates),
        "mean": statistics.fmean(rates),
        "std": statistics.stdev(rates) if len(rates) > 1 else None,
        "min": min(rates),
        "max": max(rates),
    }


def train_seeds(
    skill: str,
    seeds: list[int],
    kwargs: dict,
    *,
    n_jobs: int,
    threads: int = 1,
    ray: str | None = None,
    train_fn: str | None = None,
    command: Callable[[int], list[str]] | None = None,
    done: Done | None = None,
) -> dict:
    """Train ``skill`` once per seed; the summary (also written to
        ``<logdir>/seeds_summary.json``). ``kwargs`` go to the training function (``logdir``,
        ``algo``, ``config``...), ``command(seed)`` is the command line a seed's run folder
    records, ``done`` sees each seed's result as it arrives."""
    from sim.util import atomic_write_json

    t0 = time.time()
    results: list[dict] = []

    def finish(res: dict) -> None:
        results.append(res)
        if done:
            done(res)

    fn = train_fn or TRAIN_FN
    specs: list[dict[str, Any]] = [
        {
            "skill": skill,
            "seed": s,
            "kwargs": {**kwargs, **({"argv": command(s)} if command else {})},
            "threads": threads,
            "train_fn": fn,
        }
        for s in seeds
    ]
    if ray is not None:
        if ray == "local":  # Ray's workers do not share the driver's working directory
            for spec in specs:
                spec["kwargs"]["logdir"] = Path(kwargs.get("logdir", "logs")).resolve()
                if kwargs.get("init") is not None:
                    spec["kwargs"]["init"] = Path(kwargs["init"]).resolve()
        run_ray(specs, ray, n_jobs, threads, finish)
    else:
        run_local(specs, n_jobs, finish)
    results.sort(key=lambda r: seeds.index(r["seed"]))
    summary = {
        "skill": skill,
        "algo": kwargs.get("algo", "ppo"),
        "seeds": list(seeds),
        "runner": f"ray {ray}" if ray is not None else f"processes ({n_jobs})",
        "final_success": summarise(results),
        "failed": [r["seed"] for r in results if r["status"] != "ok"],
        "runs": results,
        "wall_s": round(time.time() - t0, 1),
    }
    path = Path(kwargs.get("logdir", "logs")) / SUMMARY
    try:
        atomic_write_json(path, summary)
        summary["summary_file"] = str(path)
    except OSError as e:  # the results are still printed
        summary["summary_file"] = None
        summary["summary_error"] = f"cannot write {path}: {e.strerror or e}"
    return summary


def seed_command(argv: list[str], seed: int, is_address: Callable[[str], bool]) -> list[str]:
    """The single-seed command that reproduces one seed's run: ``argv`` without
    ``--seeds``, ``--n-jobs``, ``--ray [ADDRESS]`` and ``--json``, with ``--seed SEED``."""
    out: list[str] = []
    skip = None
    for i, a in enumerate(argv):
        if skip == "seeds" and is_int(a):
            continue
        if skip == "value" or (skip == "ray" and is_address(a)):
            skip = None
            continue
        skip = None
        if a == "--":
            out += argv[i:]
            break
        name = a.partition("=")[0]
        if name in ("--seeds", "--n-jobs", "--ray", "--json"):
            if "=" not in a:
                skip = {"--seeds": "seeds", "--n-jobs": "value", "--ray": "ray"}.get(name)
            continue
        out.append(a)
    return [*out, "--seed", str(seed)]


def is_int(text: str) -> bool:
    """A (possibly signed) integer literal, as a token on a command line."""
    return text.lstrip("-+").isdigit()
