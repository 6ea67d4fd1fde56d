#!/usr/bin/env python
"""Benchmark of the end-to-end runner and of replay.

Runs a full task (plan, bridge, skills, physics, recording) several times and reports the
real-time factor (simulated seconds per wall second of the run, video excluded) with where
the wall time went, then replays the recorded episode without rendering: exact
re-simulation (``replay --verify``) and state restoration, both in control steps per second.

    python scripts/bench_run.py            # a table
    python scripts/bench_run.py --json     # one JSON object

Policies: the shipped pretrained ones; where they are not installed yet, the scripted experts
(same executor interface), and the output says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("MUJOCO_GL", "egl")

DEFAULT_TASK = "put the red block in the green bin"
KEYS = ("planning", "bridge", "policy", "physics", "world", "recording", "other")


def _source(requested: str) -> tuple[str, str | None]:
    from skillbridge.errors import UserError
    from skillbridge.runner.executor import make_executor

    if requested != "auto":
        return requested, None
    try:
        make_executor("pretrained")
        return "pretrained", None
    except UserError as e:
        return "scripted", f"pretrained policies unavailable ({e}); used the scripted experts"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default=DEFAULT_TASK)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--policy-source", default="auto", choices=("auto", "pretrained", "scripted"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    import sim  # noqa: F401
    from sim import util
    from sim.env import TabletopEnv
    from skillbridge.episodes import episode as E
    from skillbridge.episodes import replay
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    source, note = _source(args.policy_source)
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench_run-") as tmp:
        for _i in range(max(1, args.repeats)):
            cfg = RunConfig(task=args.task, seed=args.seed, out_dir=Path(tmp), policy_source=source)
            r = Runner(cfg).run()
            runs.append(r)
        rtfs = [r.real_time_factor for r in runs]
        med = sorted(runs, key=lambda r: r.real_time_factor)[len(runs) // 2]
        ep = E.load(med.episode)
        v = replay.verify(ep)
        env = TabletopEnv()
        states = ep.all_states()
        t0 = time.perf_counter()
        for s in states:
            env.set_state(s)
        restore_s = time.perf_counter() - t0
        env.close()
        t0 = time.perf_counter()
        E.load(med.episode)
        load_s = time.perf_counter() - t0
    run_s = med.timings["run_s"]
    out = {
        "task": args.task,
        "seed": args.seed,
        "policy_source": source,
        "note": note,
        "success": all(r.success for r in runs),
        "repeats": len(runs),
        "steps": med.steps,
        "sim_time_s": round(med.sim_time_s, 3),
        "run_wall_s": round(run_s, 4),
        "real_time_factor": round(statistics.median(rtfs), 2),
        "real_time_factor_all": [round(x, 2) for x in rtfs],
        "time_split_s": {k: med.timings.get(k, 0.0) for k in KEYS},
        "time_split_pct": {k: round(100 * med.timings.get(k, 0.0) / run_s, 1) for k in KEYS},
        "replay_verify_steps_per_s": round(v.steps_per_s, 1),
        "replay_verify_bit_exact": v.ok,
        "replay_restore_states_per_s": round(len(states) / restore_s, 1),
        "episode_load_s": round(load_s, 4),
        "machine": {k: util.machine_info()[k] for k in ("python", "cpus", "platform")},
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"task: {args.task!r} (seed {args.seed}, policies {source}, {len(runs)} runs)")
        if note:
            print(f"note: {note}")
        print(
            f"real-time factor: {out['real_time_factor']}x "
            f"(median of {[round(x, 1) for x in rtfs]}); "
            f"{med.steps} steps = {med.sim_time_s:.2f} s sim in {run_s:.3f} s wall"
        )
        for k in KEYS:
            print(f"  {k:<10} {med.timings.get(k, 0.0):8.4f} s  {out['time_split_pct'][k]:5.1f} %")
        print(
            f"replay --verify (re-simulation, no rendering): {out['replay_verify_steps_per_s']} "
            f"steps/s, bit-exact: {v.ok}"
        )
        print(f"state restore (no rendering): {out['replay_restore_states_per_s']} states/s")
    return 0 if out["success"] and v.ok else 1


if __name__ == "__main__":
    sys.exit(main())
