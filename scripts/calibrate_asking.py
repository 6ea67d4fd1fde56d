"""Calibrate when the robot asks instead of guessing (KnowNo-style, on the model's own score).

Runs the default hybrid planner with asking switched off over a calibration set (the
hand-written free-language set A, doable entries), records for every plan the model wrote
its certainty (the lowest probability it gave a token of its command) and whether the plan
is right, and chooses the lowest threshold at which the model plans kept are right at least
``--target`` of the time (planner.calibration.choose_threshold). It then reports, at that
threshold, the help rate (how often the robot would ask) on the unambiguous instructions of
set B and the clarify rate on the ambiguous entries of the understanding set, with Wilson
intervals, and writes the threshold and the figures to ``planner/pretrained/asking.json``
(``--no-write`` leaves it).

    python scripts/calibrate_asking.py [--target 0.95] [--threads 1] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("MUJOCO_GL", "egl")


def _model_rows(planner, entries, worlds, judge) -> list[dict]:
    rows = []
    for e, w in zip(entries, worlds, strict=True):
        out = planner.plan(e["instruction"], w)
        conf = out.confidence
        rows.append(
            {
                "id": e["id"],
                "route": out.route,
                "model_plan": out.route == "model" and conf is not None,
                "confidence": conf,
                "right": bool(judge(e, out, w)),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--limit", type=int, default=0, help="first N entries of each set")
    args = ap.parse_args(argv)

    import bench_planner as B  # noqa: E402 - the benchmark's worlds and judges
    import torch

    from planner.calibration import CALIBRATION, choose_threshold
    from planner.hybrid import HybridPlanner
    from sim.util import wilson

    torch.set_num_threads(args.threads)
    planner = HybridPlanner.from_spec("embedded", ask_below=0.0)

    def take(entries):
        return entries[: args.limit] if args.limit else entries

    calib = take([e for e in B.load_entries(None) if not e["refuse"]])
    rows = _model_rows(planner, calib, B.worlds_for(calib, 0), B.judge)
    scored = [(r["confidence"], r["right"]) for r in rows if r["model_plan"]]
    tau = choose_threshold(scored, args.target)
    kept = [ok for c, ok in scored if c >= tau]
    success = sum(kept) / len(kept) if kept else 0.0

    held = take([e for e in B.load_entries(str(ROOT / "tests/planner/data/freeform_b.yaml"))])
    held = [e for e in held if not e["refuse"]]
    hrows = _model_rows(planner, held, B.worlds_for(held, 0), B.judge)
    asked = sum(1 for r in hrows if r["model_plan"] and r["confidence"] < tau)

    und = B.load_entries(str(ROOT / "tests/planner/data/understanding.yaml"))
    amb = take([e for e in und if e["kind"] == "clarify"])
    planner.ask_below = tau
    clar = 0
    for e, w in zip(amb, B.worlds_for(amb, 0), strict=True):
        clar += planner.plan(e["instruction"], w).kind == "clarify"

    def rate(k: int, n: int) -> dict:
        lo, hi = wilson(k, n) if n else (0.0, 0.0)
        return {"k": k, "n": n, "rate": round(k / n, 4) if n else None, "ci95": [lo, hi]}

    report = {
        "threshold": round(tau, 6),
        "target_success": args.target,
        "score": "lowest token probability of the model's command (command-language mask)",
        "calibration_set": "tests/planner/data/freeform.yaml (doable entries, hybrid route)",
        "model_plans": len(scored),
        "success_when_executed": rate(sum(kept), len(kept)),
        "success_without_asking": rate(sum(ok for _, ok in scored), len(scored)),
        "coverage": rate(len(kept), len(scored)),
        "help_rate_unambiguous": rate(asked, len(hrows)),
        "help_rate_unambiguous_set": "tests/planner/data/freeform_b.yaml (doable entries)",
        "clarify_rate_ambiguous": rate(clar, len(amb)),
        "clarify_set": "tests/planner/data/understanding.yaml (kind clarify)",
        "measured_on": datetime.date.today().isoformat(),
        "command": "python scripts/calibrate_asking.py " + " ".join(argv or sys.argv[1:]),
    }
    print(json.dumps(report, indent=2))
    print(
        f"threshold {tau:.4f}: success when executed {success:.3f} ({len(kept)}/{len(scored)} "
        f"model plans kept), help rate on set B {asked}/{len(hrows)}, clarify on ambiguous "
        f"{clar}/{len(amb)}"
    )
    if not args.no_write and not args.limit:
        tmp = CALIBRATION.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(report, indent=2) + "\n")
        tmp.replace(CALIBRATION)
        print(f"wrote {CALIBRATION.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
