#!/usr/bin/env python
"""Smoothness of the motion (issue 27): the shipped policies against the scripted experts
on the same starts, inside skills and at skill switches.

    python scripts/bench_smooth.py                      # suite (1 seed) + 50 chains, both sources
    python scripts/bench_smooth.py --chains 5 --only pick_place,sequence      # a quick look
    python scripts/bench_smooth.py --reuse --out runs/smooth       # measure again, run nothing
    python scripts/bench_smooth.py --reuse --out runs/smooth-after \\
        --compare before=runs/smooth-before --plot docs/smoothness.png --episode lst-arrows

A fixed set of runs, each a real ``skillbridge eval`` in its own process (so every figure
can be replayed from its episode): the task suite with one seed (``--seed``) and ``--chains``
chains of five instructions from seeds ``--seed``.. on ``--scene``, once per policy source
(``pretrained``, ``scripted``). Everything is seeded: the same tree gives the same figures.
The suite's starts are the same for both sources; a chain's first instruction starts from
the same world, the later ones from wherever the previous one left it.

The figures (:mod:`skillbridge.evaluation.smoothness`, docs/SMOOTHNESS.md) are pooled over
every control step of every episode, and printed as markdown tables; ``--json`` prints the
whole document instead. ``OUT/smoothness.json`` is always written. ``--compare LABEL=DIR``
adds the ``pretrained`` run of another output folder of this script (e.g. the one measured
before a change) as a column with the ratio to it, and as a curve of the plot.
``--tree DIR`` runs the evals from another checkout (e.g. ``git archive`` of an older
commit) with this script's measures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.util import atomic_write_text  # noqa: E402
from skillbridge.evaluation import smoothness as S  # noqa: E402

FORMAT = "skillbridge.smoothness"
SOURCES = ("pretrained", "scripted")
#: how each source is named in the tables
NAMES = {"pretrained": "policy", "scripted": "expert"}
#: The episode the plot draws by default: four subgoals (pick, place, pick, place).
EPISODE = "lst-arrows"
ROWS = ("speed", "accel", "jerk", "action_change", "grip_change")


class BenchError(Exception):
    """Bad input or a run that did not happen: one line, exit 2."""


# ----------------------------------------------------------------------------- running
def eval_commands(a: argparse.Namespace, source: str, out: Path) -> list[tuple[str, list[str]]]:
    """The ``skillbridge eval`` invocations of one source: (part, argv after the program)."""
    common = ["--policy-source", source, "--json", "--seed-base", str(a.seed)]
    if a.llm:
        common += ["--llm", a.llm]
    cmds = []
    if not a.skip_suite:
        suite = ["eval", "--seeds", "1", "--workers", str(a.workers), *common]
        if a.only:
            suite += ["--only", a.only]
        cmds.append(("suite", [*suite, "--out", str(out / source / "suite")]))
    if a.chains:
        chains = ["eval", "--chains", str(a.chains), "--scene", a.scene, *common]
        cmds.append(("chains", [*chains, "--out", str(out / source / "chains")]))
    return cmds


def run_eval(part: str, argv: list[str], folder: Path, tree: Path) -> dict:
    """Run one eval in its own process (niced, one thread per process); its JSON summary
    is kept beside the episodes (``SOURCE/PART.json``)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = ["nice", "-n", "10", sys.executable, "-m", "skillbridge.cli", *argv]
    print(f"running: skillbridge {' '.join(argv)}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    # exit 1 is a missed target or a failed episode: figures of a real run, measured all the same
    if p.returncode not in (0, 1):
        last = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
        raise BenchError(f"skillbridge {' '.join(argv[:3])}... failed: {last}")
    try:
        summary: dict = json.loads(p.stdout)
    except ValueError:
        raise BenchError(f"skillbridge {' '.join(argv[:3])}... printed no JSON summary") from None
    atomic_write_text(folder / f"{part}.json", json.dumps(summary) + "\n")
    print(f"  done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return summary


# ----------------------------------------------------------------------------- episodes
def episode_folders(run: Path) -> dict[str, dict[str, Path]]:
    """A source's episodes by part and key: ``suite`` by task id, ``chains`` by
    ``chain-NNNN/K`` (K: the instruction's place in its chain)."""
    found: dict[str, dict[str, Path]] = {"suite": {}, "chains": {}}
    for meta in sorted((run / "suite" / "episodes").glob("*/*/meta.json")):
        task = meta.parent.parent.name
        found["suite"].setdefault(task, meta.parent)  # one seed: one episode per task
    for meta in sorted((run / "chains").glob("chain-*/*/*/meta.json")):
        key = f"{meta.parent.parent.parent.name}/{meta.parent.parent.name}"
        found["chains"].setdefault(key, meta.parent)
    return found


def trajectories(run: Path) -> dict[str, dict[str, S.Trajectory]]:
    from skillbridge.episodes.episode import EpisodeError

    out: dict[str, dict[str, S.Trajectory]] = {}
    for part, eps in episode_folders(run).items():
        out[part] = {}
        for key, folder in eps.items():
            try:
                out[part][key] = S.load_trajectory(folder, key)
            except EpisodeError as e:
                raise BenchError(str(e)) from None
    return out


def measure(
    run: Path, window: float, trajs: dict[str, dict[str, S.Trajectory]] | None = None
) -> dict[str, Any]:
    """Figures of one source's folder: all its episodes, and the suite and chains apart."""
    trajs = trajectories(run) if trajs is None else trajs
    every = [t for part in trajs.values() for t in part.values()]
    if not every:
        raise BenchError(f"{run}: no episodes to measure")
    out: dict[str, Any] = {"all": S.summarise(every, window)}
    for part, ts in trajs.items():
        if ts:
            out[part] = S.summarise(list(ts.values()), window)
    for part in ("suite", "chains"):
        f = run / f"{part}.json"
        if f.is_file():
            out.setdefault("runs", {})[part] = _outcome(part, json.loads(f.read_text()))
    return out


def _flat(trajs: dict[str, dict[str, S.Trajectory]]) -> dict[str, S.Trajectory]:
    return {k: t for part in trajs.values() for k, t in part.items()}


def _outcome(part: str, summary: dict) -> dict:
    """What the eval itself says of the run (its success: smoother must not mean worse)."""
    if part == "chains":
        return {k: summary.get(k) for k in ("chains", "average_completed", "wall_s")}
    ov = summary.get("overall") or {}
    causes = (summary.get("failures") or {}).get("by_cause") or {}
    return {
        "episodes": summary.get("episodes"),
        # an episode that broke (an exception, not a robot failure) measures nothing
        "errors": int(causes.get("error", 0)),
        "execution": ov.get("execution"),
        "planning": ov.get("planning"),
        "wall_s": summary.get("wall_s"),
    }


# ----------------------------------------------------------------------------- tables
def _f(v: float | None) -> str:
    """Three significant figures (whole numbers from 1000 up)."""
    if v is None:
        return "-"
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def tables(doc: dict) -> str:
    """The figures as markdown: one row per quantity and place, one column group per run."""
    names = {**NAMES, "pretrained": doc["config"].get("label") or NAMES["pretrained"]}
    cols: list[tuple[str, dict]] = [
        (names.get(src, src), m["all"]) for src, m in doc["sources"].items()
    ]
    base = [(f"{label}", m) for label, m in doc.get("compare", {}).items()]
    cols += base
    lines = []
    head = "| quantity | where | " + " | ".join(f"{n} p50 / p95 / max" for n, _ in cols)
    if base and "pretrained" in doc["sources"]:
        head += f" | p95 {names['pretrained']}/{base[0][0]}"
    head += " |"
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for q in ROWS:
        unit, _ = S.QUANTITIES[q]
        places = ["inside", "switch"] + (
            ["boundary"] if q in ("action_change", "grip_change") else []
        )
        for where in places:
            cells = []
            for _, m in cols:
                st = m["figures"][q].get(where) or {}
                cells.append(f"{_f(st.get('p50'))} / {_f(st.get('p95'))} / {_f(st.get('max'))}")
            row = f"| {q}{f' ({unit})' if unit else ''} | {where} | " + " | ".join(cells)
            if base and "pretrained" in doc["sources"]:
                now = doc["sources"]["pretrained"]["all"]["figures"][q].get(where) or {}
                then = base[0][1]["figures"][q].get(where) or {}
                row += f" | {_ratio(now.get('p95'), then.get('p95'))}"
            lines.append(row + " |")
    for q, label in (("saturated", "components"), ("saturated_any", "steps")):
        for where in ("inside", "switch"):
            cells = [_f(m["figures"][q][where]["mean"]) for _, m in cols]
            lines.append(f"| saturated {label} (share) | {where} | " + " | ".join(cells) + " |")
    lines.append("")
    lines += _run_table(doc, cols, names, base[0][0] if base else None)
    if doc.get("paired"):
        lines += [
            "",
            "| paired: same start, same skills, all succeeded | episodes | subgoals "
            "| time ratio | path ratio | per-subgoal time ratio p50 / p95 |",
        ]
        lines.append("|---|---|---|---|---|---|")
        for label, p in doc["paired"].items():
            per = p["time_ratio_per_subgoal"]
            lines.append(
                f"| {label} | {p['episodes']} | {p['subgoals']} | {_f(p['time_ratio'])} "
                f"| {_f(p['path_ratio'])} | {_f(per['p50'])} / {_f(per['p95'])} |"
            )
    lines.append("")
    lines.append(_skill_table(cols))
    return "\n".join(lines)


def _run_table(doc: dict, cols: list, names: dict, base: str | None) -> list[str]:
    """Counts, time and path per subgoal, and what the evals said (success must not
    drop); with a compared run, the ratio of the time and path to it."""
    ratio = base is not None and "pretrained" in doc["sources"]
    head = "| run | " + " | ".join(n for n, _ in cols)
    head += f" | {names['pretrained']}/{base} |" if ratio else " |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    extra = " | |" if ratio else " |"

    def row(label: str, cells: list[str], r: str | None = None) -> None:
        lines.append(f"| {label} | " + " | ".join(cells) + (f" | {r or ''} |" if ratio else extra))

    for key, label in (("episodes", "episodes"), ("steps", "control steps")):
        row(label, [str(m[key]) for _, m in cols], "")
    row("switches", [str(m["switches"]) for _, m in cols], "")
    sub = [m["subgoals"] for _, m in cols]
    row("subgoals (failed)", [f"{s['count']} ({s['failed']})" for s in sub], "")
    for key, label in (
        ("seconds", "time per subgoal, mean (s)"),
        ("path_m", "path per subgoal, mean (m)"),
    ):
        now = doc["sources"].get("pretrained", {}).get("all", {}).get("subgoals", {}).get(key, {})
        then = doc.get("compare", {}).get(base, {}).get("subgoals", {}).get(key, {})
        row(label, [_f(s[key]["mean"]) for s in sub], _ratio(now.get("mean"), then.get("mean")))
    runs = [(m.get("runs") or {}) for m in doc["sources"].values()]
    runs += [doc.get("compare_runs", {}).get(label) or {} for label in doc.get("compare", {})]
    if any((r.get("suite") or {}).get("errors") for r in runs):
        row("suite episodes that broke", [str((r.get("suite") or {}).get("errors")) for r in runs])
    if any(r.get("suite") for r in runs):
        row("suite execution", [_rate((r.get("suite") or {}).get("execution")) for r in runs], "")
    if any(r.get("chains") for r in runs):
        done = [_f((r.get("chains") or {}).get("average_completed")) for r in runs]
        row("chains, average completed", done, "")
    return lines


def _rate(r: dict | None) -> str:
    if not r or r.get("rate") is None:
        return "-"
    lo, hi = r["ci95"]
    return f"{r['rate']:.3f} [{lo:.3f}, {hi:.3f}] (n={r['episodes']})"


def _skill_table(cols: list[tuple[str, dict]]) -> str:
    """Per skill: subgoals, mean time and path (succeeded ones), and the p95 of the motion
    command change and of the jerk inside the skill."""
    skills = sorted({k for _, m in cols for k in m["subgoals"]["by_skill"]})
    head = "| skill | " + " | ".join(f"{n}: n, s, path m, change p95, jerk p95" for n, _ in cols)
    lines = [head + " |", "|---|" + "---|" * len(cols)]
    for sk in skills:
        cells = []
        for _, m in cols:
            row = m["subgoals"]["by_skill"].get(sk)
            inside = m.get("inside_by_skill", {}).get(sk, {})
            if row is None:
                cells.append("-")
                continue
            change = (inside.get("action_change") or {}).get("p95")
            jerk = (inside.get("jerk") or {}).get("p95")
            cells.append(
                f"{row['subgoals']}, {_f(row['seconds']['mean'])}, {_f(row['path_m']['mean'])}, "
                f"{_f(change)}, {_f(jerk)}"
            )
        lines.append(f"| {sk} | " + " | ".join(cells) + " |")
    pairs = sorted({k for _, m in cols for k in m.get("switch_pairs", {})})
    lines += ["", "| switch | " + " | ".join(f"{n}: n, change p50 / p95" for n, _ in cols) + " |"]
    lines.append("|---|" + "---|" * len(cols))
    for pair in pairs:
        cells = []
        for _, m in cols:
            st = m.get("switch_pairs", {}).get(pair)
            cells.append("-" if st is None else f"{st['n']}, {_f(st['p50'])} / {_f(st['p95'])}")
        lines.append(f"| {pair} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the plot
def _find(run: Path, key: str) -> Path | None:
    eps = episode_folders(run)
    part = "chains" if key.startswith("chain-") else "suite"
    return eps[part].get(key)


def default_episode(run: Path) -> str:
    """:data:`EPISODE` when the run has it, else the suite episode with the most switches
    (ties: the first task id): a multi-step task either way."""
    suite = episode_folders(run)["suite"]
    if EPISODE in suite:
        return EPISODE
    best, key = -1, None
    for k, folder in suite.items():
        n = len(S.load_trajectory(folder, k).switches())
        if n > best:
            best, key = n, k
    if key is None:
        raise BenchError(f"{run}: no suite episode to plot")
    return key


def plot(a: argparse.Namespace, out: Path, compare: dict[str, Path]) -> Path:
    from skillbridge.evaluation.smoothness_plot import plot_trajectories

    names = {**NAMES, "pretrained": a.label}
    runs = [(names.get(s, s), out / s) for s in a.plot_sources]
    runs += [(label, d / "pretrained") for label, d in compare.items()]
    if not runs:
        raise BenchError("--plot: nothing to draw (--plot-sources none and no --compare)")
    key = a.episode or default_episode(runs[0][1])
    sets = []
    for label, run in runs:
        folder = Path(key) if Path(key, "meta.json").is_file() else _find(run, key)
        if folder is None:
            raise BenchError(f"{run}: no episode {key!r} (a suite task id or chain-NNNN/K)")
        sets.append((label, S.load_trajectory(folder, key)))
    return plot_trajectories(sets, a.plot, title=f"{key}: end-effector speed and jerk")


# ----------------------------------------------------------------------------- main
def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "smooth", help="output folder")
    ap.add_argument("--reuse", action="store_true", help="measure OUT's episodes, run nothing")
    ap.add_argument("--sources", default=",".join(SOURCES), help="policy sources, comma-separated")
    ap.add_argument("--chains", type=int, default=50, help="chains of 5 (0: none)")
    ap.add_argument("--scene", default="tabletop", help="scene of the chains")
    ap.add_argument("--only", help="suite task ids, globs or categories (eval --only)")
    ap.add_argument("--skip-suite", action="store_true", help="chains only")
    ap.add_argument("--workers", type=int, default=2, help="suite worker processes")
    ap.add_argument("--seed", type=int, default=0, help="suite seed and first chain seed")
    ap.add_argument("--llm", help="planner (eval --llm; default: eval's own)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout to run the evals from")
    ap.add_argument("--window", type=float, default=S.WINDOW, help="steps either side of a switch")
    ap.add_argument(
        "--compare", action="append", default=[], metavar="LABEL=DIR", help="another OUT"
    )
    ap.add_argument("--plot", type=Path, help="PNG of speed and jerk over one episode")
    ap.add_argument("--episode", help="plot: suite task id, chain-NNNN/K or an episode folder")
    ap.add_argument(
        "--plot-sources",
        help="plot: this run's sources drawn (default --sources; none: only --compare)",
    )
    ap.add_argument("--label", default=NAMES["pretrained"], help="name of this run's policies")
    ap.add_argument("--json", action="store_true", help="print the JSON document")
    a = ap.parse_args(argv)
    a.sources = [s.strip() for s in a.sources.split(",") if s.strip()]
    bad = [s for s in a.sources if s not in SOURCES]
    if bad or not a.sources:
        raise BenchError(f"--sources: one or more of {', '.join(SOURCES)}, not {a.sources}")
    if a.plot_sources is None:
        a.plot_sources = list(a.sources)
    else:
        a.plot_sources = [
            x.strip() for x in a.plot_sources.split(",") if x.strip() not in ("", "none")
        ]
        if any(x not in a.sources for x in a.plot_sources):
            raise BenchError(
                f"--plot-sources: a part of --sources ({', '.join(a.sources)}) or none"
            )
    if a.chains < 0 or a.workers < 1 or a.window < 0:
        raise BenchError("--chains must be >= 0, --workers >= 1, --window >= 0")
    if a.skip_suite and not a.chains:
        raise BenchError("--skip-suite with --chains 0 leaves nothing to measure")
    if a.plot is not None and a.plot.suffix.lower() != ".png":
        raise BenchError(f"--plot {a.plot}: the figure must end in .png")
    a.tree = a.tree.resolve()
    if not (a.tree / "skillbridge" / "cli" / "__main__.py").is_file():
        raise BenchError(f"--tree {a.tree}: not a skillbridge checkout")
    return a


def _compare(specs: list[str]) -> dict[str, Path]:
    out = {}
    for spec in specs:
        label, sep, d = spec.partition("=")
        if not sep or not label or not d:
            raise BenchError(f"--compare {spec!r}: expected LABEL=DIR")
        if not (Path(d) / "pretrained").is_dir():
            raise BenchError(f"--compare {spec!r}: {d} holds no pretrained run of this script")
        out[label] = Path(d)
    return out


def _commands(a: argparse.Namespace, out: Path) -> dict[str, list[str]]:
    """The evals of each source, as printed; checks ``out`` can take them (or, with
    ``--reuse``, holds them) before anything runs."""
    commands: dict[str, list[str]] = {}
    for src in a.sources:
        cmds = eval_commands(a, src, out)
        commands[src] = ["skillbridge " + " ".join(c) for _, c in cmds]
        if a.reuse:
            if not (out / src).is_dir():
                raise BenchError(f"--reuse: {out / src} does not exist (run without --reuse)")
            continue
        for part, _ in cmds:
            if (out / src / part).exists():
                raise BenchError(
                    f"{out / src / part} exists: measure it with --reuse, or choose another --out"
                )
    return commands


def _warn_broken(doc: dict, out: Path) -> None:
    for src, m in doc["sources"].items():
        broke = ((m.get("runs") or {}).get("suite") or {}).get("errors")
        if broke:
            print(
                f"warning: {broke} suite episode(s) of {src} broke with an error (not a robot "
                f"failure; see {out / src / 'suite' / 'report.md'}): the figures miss them",
                file=sys.stderr,
            )


def _add_compare(doc: dict, a: argparse.Namespace, compare: dict[str, Path], loaded: dict) -> None:
    """The compared runs' figures, and the paired time of this run's policies against the
    experts and against each compared run (the same subgoals of the same starts)."""
    doc["paired"] = {}
    if set(SOURCES) <= set(loaded):
        pair = S.paired(_flat(loaded["pretrained"]), _flat(loaded["scripted"]))
        doc["paired"][f"{a.label}/{NAMES['scripted']}"] = pair
    if not compare:
        return
    doc["compare"], doc["compare_runs"] = {}, {}
    for label, d in compare.items():
        theirs = trajectories(d / "pretrained")
        m = measure(d / "pretrained", a.window, theirs)
        doc["compare"][label] = m["all"]
        doc["compare_runs"][label] = m.get("runs") or {}
        if "pretrained" in loaded:
            pair = S.paired(_flat(loaded["pretrained"]), _flat(theirs))
            doc["paired"][f"{a.label}/{label}"] = pair


def run(argv: list[str] | None = None) -> dict:
    a = _parse(argv)
    compare = _compare(a.compare)
    out: Path = a.out.resolve()  # the evals run from --tree: no path relative to here
    commands = _commands(a, out)
    if not a.reuse:
        for src in a.sources:
            (out / src).mkdir(parents=True, exist_ok=True)
            for part, argv_ in eval_commands(a, src, out):
                run_eval(part, argv_, out / src, a.tree)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": 1,
        "config": {
            "seed": a.seed,
            "chains": a.chains,
            "scene": a.scene,
            "only": a.only,
            "suite": not a.skip_suite,
            "window": a.window,
            "saturated": S.SATURATED,
            "label": a.label,
            "tree": str(a.tree),
            "commands": commands,
        },
    }
    loaded = {src: trajectories(out / src) for src in a.sources}
    doc["sources"] = {src: measure(out / src, a.window, loaded[src]) for src in a.sources}
    _warn_broken(doc, out)
    _add_compare(doc, a, compare, loaded)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "smoothness.json", json.dumps(doc, indent=1) + "\n")
    if a.plot is not None:
        doc["plot"] = str(plot(a, out, compare))
    return doc


def main(argv: list[str] | None = None) -> int:
    try:
        a_json = "--json" in (argv if argv is not None else sys.argv[1:])
        doc = run(argv)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if a_json:
        print(json.dumps(doc, indent=1))
    else:
        print(tables(doc))
        if doc.get("plot"):
            print(f"\nplot: {doc['plot']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
