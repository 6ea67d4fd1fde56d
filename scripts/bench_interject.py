#!/usr/bin/env python
"""Benchmark of corrections while the robot works: seeded scripted interjections in physics.

Each scenario is a pick-and-place task in a seeded scene (colours drawn at random), first
run once without interruption to learn how many control steps it takes, then run again
with one utterance said at a random control step of that run. Five kinds, in turn:

- ``stop``: "stop";
- ``object``: "not that one, the <other> one" (the block is corrected);
- ``target``: "put it in the <other> bin instead" (the destination is corrected);
- ``addition``: "also put the <other> block in the <other> bin";
- ``new``: "put the <other> block in the <other> bin" (a new task replaces the old).

Per scenario, from the run's result and its episode: the goal the correction asked for
holds in the world after the run (for ``stop``: the run stopped and nothing started after
it); no step of the superseded plan is commanded after the interjection was taken (the
episode's subgoal column; a release in progress that was finished counts as allowed and
is reported); the delay from the utterance to the new plan's first motion, in control
steps, sim seconds and wall seconds. Rates carry Wilson 95% intervals. The wall time from
taking an interjection to the new plan's first motion is put beside the wall time of the
first plan of the same runs (the ratio to a baseline measured in the same run).

    python scripts/bench_interject.py               # 100 scenarios, the rules planner
    python scripts/bench_interject.py --n 30 --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("MUJOCO_GL", "egl")

KINDS = ("stop", "object", "target", "addition", "new")
CUBES = ("red", "green", "blue", "yellow")
BINS = ("red", "green", "blue")


def scenario(i: int, rng) -> dict:
    """The ``i``-th scenario: scene seed, task, what is said, what must hold afterwards."""
    kind = KINDS[i % len(KINDS)]
    a, b, c = (str(x) for x in rng.choice(CUBES, 3, replace=False))
    tb, ob = (str(x) for x in rng.choice(BINS, 2, replace=False))
    task = f"put the {a} block in the {tb} bin"
    said, expect = {
        "stop": ("stop", []),
        "object": (f"not that one, the {b} one", [f"in({b}_block, {tb}_bin)"]),
        "target": (f"put it in the {ob} bin instead", [f"in({a}_block, {ob}_bin)"]),
        "addition": (
            f"also put the {b} block in the {ob} bin",
            [f"in({a}_block, {tb}_bin)", f"in({b}_block, {ob}_bin)"],
        ),
        "new": (f"put the {c} block in the {ob} bin", [f"in({c}_block, {ob}_bin)"]),
    }[kind]
    return {
        "index": i,
        "kind": kind,
        "seed": int(rng.integers(0, 10_000)),
        "task": task,
        "said": said,
        "expect": expect,
    }


def _run(sc: dict, out: Path, args, at: int | None):
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    cfg = RunConfig(
        task=sc["task"],
        seed=sc["seed"],
        llm=args.llm,
        route=args.route,
        out_dir=out,
        policy_source=args.policy_source,
        interjections=[(at, sc["said"])] if at is not None else None,
    )
    return Runner(cfg).prepare().run()


def judge(sc: dict, r) -> dict:
    """The three checks of one run with its interjection (see the module docstring)."""
    import numpy as np

    from bridge import goals as G
    from sim import scene
    from sim.world import WorldState
    from skillbridge.episodes.episode import load

    row = {k: sc[k] for k in ("index", "kind", "seed", "task", "said", "at")}
    row.update(status=str(r.status), taken=bool(r.interjections))
    if not r.interjections:
        return {**row, "goal_met": False, "clean": False, "why": "never taken"}
    ij = r.interjections[0]
    taken, rest = ij["taken_step"], ij["rest_step"]
    # the plan under way when it was taken: the stopped subgoal's, else the last started
    if ij["subgoal"] is not None:
        plan_then = r.subgoals[ij["subgoal"]]["plan"]
    else:
        plan_then = max((s["plan"] for s in r.subgoals if s["start_step"] < taken), default=-1)
    old = {s["index"] for s in r.subgoals if s["plan"] <= plan_then}
    sg = np.asarray(load(r.episode).subgoals)
    late_starts = [
        s["index"] for s in r.subgoals if s["plan"] <= plan_then and s["start_step"] > taken
    ]
    clean = not late_starts and not np.isin(sg[rest:], list(old)).any()
    if ij["mode"] == "stopped":
        clean = clean and bool((sg[taken:rest] < -1).all())
    world = WorldState.model_validate(r.world)
    if sc["kind"] == "stop":
        # stopped, and nothing started after it (a stop during the settling before the goal
        # check lets the settling end: the arm is holding still there already)
        met = str(r.status) == "stopped" and not any(
            s["start_step"] >= taken and s["index"] != ij["subgoal"] for s in r.subgoals
        )
    else:
        met = str(r.status) == "success" and all(e["met"] for e in G.evaluate(sc["expect"], world))
    delay = None if ij["resumed_step"] is None else ij["resumed_step"] - ij["posted_step"]
    return {
        **row,
        "mode": ij["mode"],
        "reading": ij["reading"],
        "final_task": r.final_task,
        "goal_met": bool(met),
        "clean": bool(clean),
        "delay_steps": delay,
        "delay_sim_s": None if delay is None else round(delay * scene.CONTROL_DT, 4),
        "resume_wall_s": ij["resume_wall_s"],
        "first_plan_wall_s": r.plans[0]["wall_s"] if r.plans else None,
    }


def _rate(rows: list[dict], key: str) -> dict:
    from sim.util import wilson

    k, n = sum(1 for x in rows if x[key]), len(rows)
    lo, hi = wilson(k, n)
    return {
        "k": k,
        "n": n,
        "rate": round(k / n, 4) if n else None,
        "ci95": [round(lo, 3), round(hi, 3)],
    }


def _pct(values: list[float]) -> dict:
    import numpy as np

    if not values:
        return {"n": 0, "p50": None, "p95": None}
    v = np.asarray(values, dtype=float)
    return {
        "n": len(v),
        "p50": round(float(np.percentile(v, 50)), 4),
        "p95": round(float(np.percentile(v, 95)), 4),
    }


def summarise(rows: list[dict]) -> dict:
    moved = [x for x in rows if x.get("delay_steps") is not None]
    wall = [x["resume_wall_s"] for x in moved if x.get("resume_wall_s") is not None]
    base = [x["first_plan_wall_s"] for x in rows if x.get("first_plan_wall_s") is not None]
    out = {
        "scenarios": len(rows),
        "taken": _rate(rows, "taken"),
        "goal_met": _rate(rows, "goal_met"),
        "no_superseded_motion": _rate(rows, "clean"),
        "finished_release": sum(1 for x in rows if x.get("mode") == "finished"),
        "delay_steps": _pct([x["delay_steps"] for x in moved]),
        "delay_sim_s": _pct([x["delay_sim_s"] for x in moved]),
        "resume_wall_s": _pct(wall),
        "first_plan_wall_s": _pct(base),
        "by_kind": {
            k: {
                "goal_met": _rate([x for x in rows if x["kind"] == k], "goal_met"),
                "no_superseded_motion": _rate([x for x in rows if x["kind"] == k], "clean"),
            }
            for k in KINDS
        },
    }
    p = out["resume_wall_s"]["p50"]
    b = out["first_plan_wall_s"]["p50"]
    out["resume_wall_vs_first_plan_p50"] = round(p / b, 2) if p and b else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="scenarios (at least 30 for the report)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm", default="rules", help="planner spec (default: the rules)")
    ap.add_argument("--route", default="hybrid")
    ap.add_argument("--policy-source", default="pretrained", choices=("pretrained", "scripted"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    out = Path(tempfile.mkdtemp(prefix="bench-interject-"))
    rows = []
    try:
        for i in range(args.n):
            sc = scenario(i, rng)
            base = _run(sc, out, args, None)
            # a random control step of the uninterrupted run (its settling included)
            sc["at"] = int(rng.integers(1, max(2, base.steps - 1)))
            r = _run(sc, out, args, sc["at"])
            row = judge(sc, r)
            row["base_status"] = str(base.status)
            rows.append(row)
            if not args.json:
                print(
                    f"{i:3d} {sc['kind']:8s} seed {sc['seed']:5d} at {sc['at']:3d}/{base.steps:3d} "
                    f"{row.get('mode', '-'):8s} goal {'ok ' if row['goal_met'] else 'NO '} "
                    f"clean {'ok ' if row['clean'] else 'NO '} delay {row.get('delay_steps')}",
                    flush=True,
                )
    finally:
        shutil.rmtree(out, ignore_errors=True)
    summary = summarise(rows)
    summary.update(planner=args.llm, route=args.route, policy_source=args.policy_source)
    if args.json:
        print(json.dumps({"summary": summary, "scenarios": rows}, indent=2))
        return 0
    s = summary

    def rate(d):
        return f"{d['k']}/{d['n']} = {d['rate']:.3f} (95% CI {d['ci95'][0]:.3f}-{d['ci95'][1]:.3f})"

    print(f"\nplanner {args.llm} (route {args.route}), policies {args.policy_source}")
    print(f"interjection taken        {rate(s['taken'])}")
    print(f"goal met after it         {rate(s['goal_met'])}")
    print(f"no superseded motion      {rate(s['no_superseded_motion'])}")
    print(f"releases finished first   {s['finished_release']}")
    d, ds, w = s["delay_steps"], s["delay_sim_s"], s["resume_wall_s"]
    print(
        f"delay to the new plan's first motion (n={d['n']}): p50 {d['p50']} / p95 {d['p95']} "
        f"control steps = p50 {ds['p50']} / p95 {ds['p95']} s sim; wall p50 {w['p50']} / "
        f"p95 {w['p95']} s"
    )
    print(
        f"wall from taking it to the first motion vs the first plan's wall (p50): "
        f"x{s['resume_wall_vs_first_plan_p50']}"
    )
    for k, v in s["by_kind"].items():
        print(f"  {k:8s} goal {rate(v['goal_met'])}; clean {rate(v['no_superseded_motion'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
