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

An understanding set (``--set tests/planner/data/understanding.yaml``, top-level
``format: understanding``; see tests/planner/understanding_set.py) is judged by the kind each
entry expects: an ``answer`` is right when the outcome is an answer, nothing is planned and
the reply has a word of every ``answer_has`` group; a ``clarify`` when the question back names
every candidate; a ``stop`` when it stops with no steps; a ``refuse`` when it refuses with no
motion (home only); a ``plan`` when its steps simulate to the goal (an already-true goal with
no steps is right), never pick or push an ``unmoved`` cube and meet every ``count``. It prints
right/total with a Wilson interval per category, kind and language, and "motions where none
allowed: N of M" over the entries whose kind forbids motion. The outcome's kind comes from
``PlanOutcome.to_dict()["kind"]``; where that is absent it is derived from the older fields
(steps: plan; a safe stop: refuse; "nothing to do": nothing_to_do; otherwise refuse). An
outcome that names its kind ``safe_stop`` is no refusal: an impossible request is refused
before anything moves. "expected X got ..." lines count the kinds given for each expected one.

``--baseline-tree DIR --rounds N`` runs the same command line on DIR's planner too (that
checkout's own copy of this script, in child processes interleaved with ours round by
round) and prints both, with our plan latency as a ratio to its.

    python scripts/bench_planner.py [--routes rules,model,hybrid] [--limit N] [--json]
        [--baseline-tree DIR --rounds N]
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
    ``in_drawer`` are then put into the (open) drawer, and a cube named by ``held`` into the
    gripper, by the skills' symbolic effects."""
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
            if e.get("held"):
                world, reasons = simulate(world, [{"skill": "pick", "object": e["held"]}])
                if reasons:
                    raise SystemExit(f"{e['id']}: cannot start holding {e['held']}: {reasons}")
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


#: Skills that move a cube (the ones an ``unmoved`` cube must never be the object of).
MOVING_SKILLS = ("pick", "push")


def outcome_kind(d: dict) -> str:
    """The outcome's kind: its own ``kind``, or derived from the older fields."""
    if d.get("kind"):
        return str(d["kind"])
    if d.get("steps"):
        return "refuse" if d.get("decision") == "safe_stop" else "plan"
    if str(d.get("refuse") or "").startswith("nothing to do"):
        return "nothing_to_do"
    return "refuse"


def has_motion(steps: list[dict]) -> bool:
    """Any step besides driving home."""
    return any(s.get("skill") != "home" for s in steps)


def judge_understanding(entry: dict, d: dict, world) -> tuple[bool, str]:
    """Right or wrong by the expected kind (module docstring), and why when wrong."""
    kind, steps = outcome_kind(d), list(d.get("steps") or [])
    want = entry["kind"]
    if want == "refuse":
        if kind != "refuse":
            return False, f"kind {kind}, not refuse"
        return (not has_motion(steps)), "moved" if has_motion(steps) else ""
    if want in ("answer", "clarify", "stop"):
        return _judge_still(entry, d, kind, steps)
    return _judge_plan(entry, kind, steps, world)


def _judge_still(entry: dict, d: dict, kind: str, steps: list[dict]) -> tuple[bool, str]:
    """An answer, a question back or a stop: that kind, no steps, the right words."""
    from tests.planner.understanding_set import answer_matches, unnamed_candidates

    want = entry["kind"]
    if kind != want:
        return False, f"kind {kind}, not {want}"
    if steps:
        return False, "planned steps"
    if want == "answer" and not answer_matches(entry["answer_has"], d.get("answer")):
        return False, f"answer {d.get('answer')!r} lacks {entry['answer_has']}"
    if want == "clarify":
        missing = unnamed_candidates(entry["candidates"], d.get("question"), d.get("candidates"))
        if missing:
            return False, f"question {d.get('question')!r} does not name {missing}"
    return True, ""


def _judge_plan(entry: dict, kind: str, steps: list[dict], world) -> tuple[bool, str]:
    """A plan: simulated to the goal and the counts, no ``unmoved`` cube picked or pushed;
    no steps is right only when all of that already holds (and it is no clarify or stop)."""
    from bridge.goals import goal_holds, unmet
    from bridge.validate import simulate
    from tests.planner.understanding_set import count_holds

    if not steps:
        if kind in ("clarify", "stop"):
            return False, f"kind {kind}, not plan"
        ok = goal_holds(entry["literals"], world) and all(
            count_holds(c, world) for c in entry["count"]
        )
        return ok, "" if ok else f"no steps (kind {kind})"
    if kind != "plan":
        return False, f"kind {kind} with steps"
    touched = sorted(
        {
            str(s.get("object"))
            for s in steps
            if s.get("skill") in MOVING_SKILLS and s.get("object") in entry["unmoved"]
        }
    )
    if touched:
        return False, f"moves {touched}, which must not move"
    after, reasons = simulate(world, steps)
    if reasons:
        return False, "steps do not simulate"
    if not goal_holds(entry["literals"], after):
        return False, f"unmet {unmet(entry['literals'], after)}"
    bad = [c["predicate"] for c in entry["count"] if not count_holds(c, after)]
    if bad:
        return False, f"count of {bad} is off"
    return True, ""


def run_route(route: str, entries: list[dict], worlds: list, planner) -> list[dict]:
    rows = []
    for e, w in zip(entries, worlds, strict=True):
        t0 = time.perf_counter()
        out = planner.plan(e["instruction"], w)
        wall = time.perf_counter() - t0
        model_calls = [p for p in out.proposals if p.get("proposer", "").startswith("embedded")]
        extra: dict = {}
        if "kind" in e:  # an understanding set: judged by the kind it expects
            d = out.to_dict()
            ok, why = judge_understanding(e, d, w)
            extra = {
                "expected_kind": e["kind"],
                "kind": outcome_kind(d),
                "lang": e.get("lang"),
                "motion": has_motion(list(d.get("steps") or [])),
                "answer": d.get("answer"),
                "question": d.get("question"),
                "why": why,
            }
        else:
            ok = judge(e, out, w)
        rows.append(
            {
                "id": e["id"],
                "category": e["category"],
                "refuse": e["refuse"],
                "ok": ok,
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
                **extra,
            }
        )
    return rows


def _rate(rows: list[dict]) -> dict:
    k, n = sum(r["ok"] for r in rows), len(rows)
    return {
        "ok": k,
        "n": n,
        "rate": round(k / n, 3) if n else None,
        "ci95": [round(x, 3) for x in wilson(k, n)],
    }


def summarise_understanding(rows: list[dict]) -> dict:
    """Right/total with Wilson intervals by category, expected kind and language, and the
    motions made where the expected kind allows none."""
    from tests.planner.understanding_set import STILL_KINDS

    def by(key: str) -> dict:
        groups: dict[str, list[dict]] = {}
        for r in rows:
            if r.get(key) is not None:
                groups.setdefault(str(r[key]), []).append(r)
        return {g: _rate(rs) for g, rs in groups.items()}

    still = [r for r in rows if r["expected_kind"] in STILL_KINDS]
    confusion: dict[str, dict[str, int]] = {}
    for r in rows:
        got = confusion.setdefault(r["expected_kind"], {})
        got[r["kind"]] = got.get(r["kind"], 0) + 1
    return {
        "overall": _rate(rows),
        "by_category": by("category"),
        "by_kind": by("expected_kind"),
        "by_lang": by("lang"),
        "motions_where_none_allowed": sum(r["motion"] for r in still),
        "still_n": len(still),
        "kinds_given": confusion,
    }


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
        **(
            {"understanding": summarise_understanding(rows)}
            if rows and "expected_kind" in rows[0]
            else {}
        ),
    }


def print_understanding(u: dict) -> None:
    """The understanding summary, one line per category, kind and language."""
    for title, key in (("category", "by_category"), ("kind", "by_kind"), ("lang", "by_lang")):
        for name, c in u[key].items():
            print(f"   {title:8s} {name:13s} {c['ok']}/{c['n']} ({c['rate']}, 95% CI {c['ci95']})")
    for want, got in u["kinds_given"].items():
        given = ", ".join(f"{k} {n}" for k, n in sorted(got.items()))
        print(f"   expected {want:13s} got {given}")
    o = u["overall"]
    print(f"   overall {o['ok']}/{o['n']} ({o['rate']}, 95% CI {o['ci95']})")
    print(f"   motions where none allowed: {u['motions_where_none_allowed']} of {u['still_n']}")


def load_entries(path: str | None) -> list[dict]:
    """The set's entries: an understanding set by its own loader, else a free-language set
    (FreeformError, one line, on a missing or malformed file)."""
    from tests.planner.freeform import FreeformError, load_freeform
    from tests.planner.understanding_set import is_understanding_set, load_understanding

    if path is None:
        return load_freeform()
    if not Path(path).is_file():
        raise FreeformError(f"{path}: no such file")
    return load_understanding(path) if is_understanding_set(path) else load_freeform(path)


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
    ap.add_argument(
        "--baseline-tree",
        type=Path,
        default=None,
        help="also run this checkout's planner on the same set, in child processes "
        "interleaved with ours (--rounds each), and print both side by side",
    )
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds per tree")
    a = ap.parse_args(argv)
    if a.baseline_tree is not None:
        return against_baseline(a, argv if argv is not None else sys.argv[1:])

    import torch

    torch.set_num_threads(a.threads)
    from planner.hybrid import HybridPlanner
    from tests.planner.freeform import FreeformError

    try:
        entries = load_entries(a.set)
    except (FreeformError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
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
            keys: tuple[str, ...] = ("id", "decision", "steps", "commands")
            if rows and "expected_kind" in rows[0]:
                keys += ("expected_kind", "kind", "answer", "question", "why")
            report["routes"][route]["failures"] = [
                {k: r[k] for k in keys} for r in rows if not r["ok"]
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
            if s.get("understanding"):
                print_understanding(s["understanding"])
            for f in s.get("failures", []):
                print("   x", f)
        print(f"model load {report['model_load_s']} s, peak RSS {report['peak_rss_mb']} MB")
    return 0


def _child_args(argv: list[str]) -> list[str]:
    """The command line without --baseline-tree/--rounds/--json (a child prints JSON)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--baseline-tree", "--rounds"):
            skip = "=" not in arg
            continue
        if arg != "--json":
            out.append(arg)
    return out


def against_baseline(a: argparse.Namespace, argv: list[str]) -> int:
    """This set on our planner and on ``--baseline-tree``'s, each run by that tree's own copy
    of this script in a child process, ours then the baseline's, ``--rounds`` times (load
    that comes and goes hits both alike): accuracy of the first round (the plans do not
    change between rounds), latency p50/p95 as the median over rounds."""
    import subprocess

    args = _child_args(argv)
    trees = {"ours": ROOT, "baseline": a.baseline_tree.resolve()}
    runs: dict[str, list[dict]] = {k: [] for k in trees}
    for _ in range(max(1, a.rounds)):
        for who, tree in trees.items():
            cmd = [sys.executable, str(tree / "scripts" / "bench_planner.py"), *args, "--json"]
            p = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=False)
            if p.returncode != 0:
                tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
                print(f"error: {who} ({tree}) failed: {tail[0]}", file=sys.stderr)
                return 2
            runs[who].append(json.loads(p.stdout))
    report: dict = {"baseline_tree": str(trees["baseline"]), "rounds": len(runs["ours"])}
    for who, rs in runs.items():
        report[who] = {
            route: {
                "accuracy": s["accuracy"],
                "n": s["n"],
                "refusal_accuracy": s["refusal_accuracy"],
                "refusal_n": s["refusal_n"],
                "latency_p50_s": statistics.median(r["routes"][route]["latency_p50_s"] for r in rs),
                "latency_p95_s": statistics.median(r["routes"][route]["latency_p95_s"] for r in rs),
            }
            for route, s in rs[0]["routes"].items()
        }
        report[who]["peak_rss_mb"] = max(r["peak_rss_mb"] for r in rs)
    report["load_avg"] = os.getloadavg()
    if a.json:
        print(json.dumps(report, indent=2))
        return 0
    for route in report["ours"]:
        if route == "peak_rss_mb":
            continue
        for who in trees:
            s = report[who][route]
            print(
                f"{route:7s} {who:>8}: accuracy {s['accuracy']} (n={s['n']}), refusals "
                f"{s['refusal_accuracy']} (n={s['refusal_n']}), p50 {s['latency_p50_s']} s, "
                f"p95 {s['latency_p95_s']} s, peak RSS {report[who]['peak_rss_mb']} MB"
            )
        o, b = report["ours"][route], report["baseline"][route]
        print(
            f"{route:7s} ours / baseline: p50 {o['latency_p50_s'] / b['latency_p50_s']:.2f}, "
            f"p95 {o['latency_p95_s'] / b['latency_p95_s']:.2f} of its time "
            f"({report['rounds']} interleaved rounds)"
        )
    la = report["load_avg"]
    print(f"load average at the end: {la[0]:.1f} {la[1]:.1f} {la[2]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
