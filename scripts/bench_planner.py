"""Planner accuracy and speed on the hand-written free-language test set.

Runs every instruction of ``tests/planner/data/freeform.yaml`` through the rules planner,
the embedded model alone and the hybrid route (rules when they understand everything, the
model otherwise), each plan through the bridge, and judges it by its meaning: a doable
instruction is right when the accepted plan, simulated with the skills' effects, makes the
entry's goal true; a request that must be refused is right when nothing executable comes
back. Prints accuracy with Wilson 95% intervals per route and category, refusal accuracy,
plan latency p50/p95, decode tokens/s, model load time and peak RSS. A refusal is
right when the planner declines with a reason or ends in the safe stop (home only); the two
are counted apart.

    python scripts/bench_planner.py [--routes rules,model,hybrid] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MUJOCO_GL", "egl")

from sim.util import wilson  # noqa: E402


def worlds_for(entries: list[dict], seed: int) -> list:
    """The initial world of each entry, computed from physics (the scene it names: the
    tabletop, or the articulated scene with its drawer and light). Cubes an entry lists under
    ``in_drawer`` are then put into the (open) drawer by the skills' symbolic effects."""
    import sim  # noqa: F401
    from bridge.validate import simulate
    from sim.env import TabletopEnv

    envs: dict[str, TabletopEnv] = {}
    out = []
    try:
        for e in entries:
            model = e["scene"].model
            if model not in envs:
                envs[model] = TabletopEnv() if model == "tabletop" else TabletopEnv(scene=model)
            env = envs[model]
            env.reset(seed=seed, options=e["scene"].reset_options())
            world = env.world_state()
            for name in e.get("in_drawer", []):
                steps = [{"skill": "pick", "object": name}, {"skill": "place", "target": "drawer"}]
                world, reasons = simulate(world, steps)
                if reasons:
                    raise SystemExit(f"{e['id']}: cannot put {name} in the drawer: {reasons}")
            out.append(world)
    finally:
        for env in envs.values():
            env.close()
    return out


def judge(entry: dict, outcome, world) -> bool:
    """Right or wrong, by meaning (see the module docstring)."""
    from bridge.goals import goal_holds
    from bridge.validate import simulate

    steps = outcome.steps()
    if entry["refuse"]:
        # declined, or the safe stop (home only): nothing of the task is attempted
        return all(s.get("skill") == "home" for s in steps)
    if not steps:
        return False
    after, reasons = simulate(world, steps)
    return not reasons and goal_holds(entry["literals"], after)


def run_route(route: str, entries: list[dict], worlds: list, planner) -> list[dict]:
    rows = []
    for e, w in zip(entries, worlds, strict=True):
        t0 = time.perf_counter()
        out = planner.plan(e["instruction"], w)
        wall = time.perf_counter() - t0
        model_calls = [p for p in out.proposals if p.get("proposer", "").startswith("embedded")]
        rows.append(
            {
                "id": e["id"],
                "category": e["category"],
                "refuse": e["refuse"],
                "ok": judge(e, out, w),
                "route": out.route,
                "decision": out.decision,
                "steps": out.steps(),
                "latency_s": wall,
                "model_calls": len(model_calls),
                "tokens_out": sum(int(p.get("tokens_out", 0)) for p in model_calls),
                "model_s": sum(float(p.get("latency_s", 0)) for p in model_calls),
                "commands": [
                    a.get("meta", {}).get("command")
                    for a in (x.to_dict() for x in out.attempts)
                    if a.get("meta", {}).get("command")
                ],
            }
        )
    return rows


def summarise(rows: list[dict]) -> dict:
    doable = [r for r in rows if not r["refuse"]]
    refuse = [r for r in rows if r["refuse"]]
    k, n = sum(r["ok"] for r in doable), len(doable)
    declined = sum(r["decision"] == "refused" for r in refuse)
    kr, nr = sum(r["ok"] for r in refuse), len(refuse)
    lat = sorted(r["latency_s"] for r in rows)
    model = [r for r in rows if r["model_calls"]]
    cats: dict[str, dict] = {}
    for r in rows:
        c = cats.setdefault(r["category"], {"n": 0, "ok": 0})
        c["n"] += 1
        c["ok"] += int(r["ok"])
    for c in cats.values():
        c["rate"] = round(c["ok"] / c["n"], 3)
    tok = sum(r["tokens_out"] for r in model)
    secs = sum(r["model_s"] for r in model)
    return {
        "accuracy": round(k / n, 4) if n else None,
        "n": n,
        "ci95": [round(x, 3) for x in wilson(k, n)],
        "refusal_accuracy": round(kr / nr, 4) if nr else None,
        "refusal_n": nr,
        "refusal_ci95": [round(x, 3) for x in wilson(kr, nr)],
        "refusals_with_a_reason": declined,
        "refusals_by_safe_stop": kr - declined,
        "latency_p50_s": round(statistics.median(lat), 4) if lat else None,
        "latency_p95_s": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 4) if lat else None,
        "model_calls": sum(r["model_calls"] for r in rows),
        "model_latency_p50_s": round(
            statistics.median([r["model_s"] / r["model_calls"] for r in model]), 4
        )
        if model
        else None,
        "decode_tokens_per_s": round(tok / secs, 1) if secs else None,
        "by_category": cats,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--routes", default="rules,model,hybrid")
    ap.add_argument("--limit", type=int, default=0, help="first N entries only")
    ap.add_argument(
        "--set",
        default=None,
        help="test set YAML (default: tests/planner/data/freeform.yaml; a second, untuned "
        "set is tests/planner/data/freeform_b.yaml; the articulated scene's is "
        "tests/planner/data/freeform_articulated.yaml)",
    )
    ap.add_argument("--seed", type=int, default=0, help="scene seed")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--adapter", default=None, help="adapter folder (default: shipped)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--failures", action="store_true", help="list wrong answers")
    a = ap.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    from planner.hybrid import HybridPlanner
    from tests.planner.freeform import load_freeform

    entries = load_freeform(Path(a.set)) if a.set else load_freeform()
    if a.limit:
        entries = entries[: a.limit]
    worlds = worlds_for(entries, a.seed)
    import subprocess
    from datetime import datetime

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    report: dict = {
        "n_entries": len(entries),
        "seed": a.seed,
        "threads": a.threads,
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "git_commit": commit,
        "routes": {},
    }
    load_s = None
    for route in a.routes.split(","):
        spec = (
            "rules" if route == "rules" else (f"embedded:{a.adapter}" if a.adapter else "embedded")
        )
        t0 = time.perf_counter()
        planner = HybridPlanner.from_spec(spec, route=route)
        if route != "rules" and load_s is None:
            planner.llm.chat.engine()  # load once, timed apart from the plans
            load_s = time.perf_counter() - t0
        rows = run_route(route, entries, worlds, planner)
        report["routes"][route] = summarise(rows)
        if a.failures:
            report["routes"][route]["failures"] = [
                {k: r[k] for k in ("id", "decision", "steps", "commands")}
                for r in rows
                if not r["ok"]
            ]
    report["model_load_s"] = round(load_s, 2) if load_s is not None else None
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        for route, s in report["routes"].items():
            print(
                f"{route:7s} accuracy {s['accuracy']} (n={s['n']}, 95% CI {s['ci95']}), "
                f"refusals {s['refusal_accuracy']} (n={s['refusal_n']}), "
                f"p50 {s['latency_p50_s']} s, p95 {s['latency_p95_s']} s, "
                f"decode {s['decode_tokens_per_s']} tok/s"
            )
            for f in s.get("failures", []):
                print("   x", f)
        print(f"model load {report['model_load_s']} s, peak RSS {report['peak_rss_mb']} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
