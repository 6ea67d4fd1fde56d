#!/usr/bin/env python
"""Generate BENCHMARKS.md from the benchmark scripts and the evaluation suite.

Every number on the page comes from a command printed beside it, so anyone can rerun it:

    python scripts/make_benchmarks.py                  # full sizes (tens of minutes)
    python scripts/make_benchmarks.py --quick          # reduced sizes, a few minutes
    python scripts/make_benchmarks.py --suite-report runs/eval-X/report.json   # reuse a suite run
    python scripts/make_benchmarks.py --skip suite,skills --out /tmp/B.md

Sections: simulator (``bench_sim.py``), bridge (``bench_bridge.py``), runner and replay
(``bench_run.py``), skills (``skillbridge eval-skill SKILL -n N --json``), the perturbation
split (``skillbridge eval-skill SKILL --split all --json``; ``--split-extra
SKILL:LABEL:DIR`` adds another policy's column, e.g. the one shipped before) and the task suite
(``skillbridge eval --json``). Each is run in its own process; one that fails is reported as
failed on the page (with its error line) and the rest still run. The raw JSON of every
section is written beside the page (``benchmarks.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from skillbridge.evaluation.benchmarks_page import render

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = (
    "sim",
    "bridge",
    "run",
    "skills",
    "split",
    "learning",
    "planner",
    "planner_b",
    "planner_art",
    "suite",
    "chains",
)
#: Skills measured on the perturbation split (``eval-skill SKILL --split all``).
SPLIT_SKILLS = ("pick", "place", "push", "pick-place")
SKILLS = (
    "pick",
    "place",
    "push",
    "home",
    "pick-place",
    "open_drawer",
    "close_drawer",
    "press_button",
)

#: (full, quick) sizes
SIZES = {
    "sim_seconds": (5.0, 1.0),
    "bridge_cases": (10000, 1000),
    "run_repeats": (5, 1),
    "skill_episodes": (200, 20),
    "split_episodes": (50, 10),
    "suite_seeds": (3, 1),
    "chains": (100, 10),
}
#: Scenes the long-horizon chains run on (``eval --chains N --scene S``).
CHAIN_SCENES = ("tabletop", "articulated")


def _py() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _cli() -> list[str]:
    return (
        [_py(), "-m", "skillbridge.cli"]
        if not (ROOT / ".venv/bin/skillbridge").exists()
        else [str(ROOT / ".venv/bin/skillbridge")]
    )


def _shown(cmd: list[str]) -> str:
    """The command as a reader would type it (repository-relative, no venv paths)."""
    out = []
    for c in cmd:
        if c == _py():
            c = "python"
        elif c.endswith("/.venv/bin/skillbridge"):
            c = "skillbridge"
        elif c.startswith(str(ROOT) + "/"):
            c = c[len(str(ROOT)) + 1 :]
        out.append(c)
    return " ".join(shlex.quote(c) for c in out)


def run_json(cmd: list[str], timeout: float) -> tuple[dict | None, str, float]:
    """(parsed JSON of the last JSON object printed, error line, wall seconds)."""
    t0 = time.perf_counter()
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f} s", time.perf_counter() - t0
    wall = time.perf_counter() - t0
    text = p.stdout.strip()
    data = None
    # the whole output, else the last line that parses (progress bars may precede it)
    for candidate in [text, *reversed(text.splitlines())]:
        try:
            data = json.loads(candidate)
            break
        except (json.JSONDecodeError, ValueError):
            continue
    if isinstance(data, dict) and set(data) == {"error", "exit_code"}:
        data = None  # a --json verb's error document: nothing was measured
    if p.returncode != 0 or not isinstance(data, dict):
        err = p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no output"]
        return (
            data if isinstance(data, dict) else None,
            f"exit {p.returncode}: {err[-1][:300]}",
            wall,
        )
    return data, "", wall


def machine() -> dict:
    sys.path.insert(0, str(ROOT))
    from sim import util

    m = util.machine_info()
    info = {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        **{k: m[k] for k in ("platform", "python", "cpus", "processor")},
        **util.host_details(),
    }
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        pass
    try:
        info["versions"] = util.library_versions()
    except Exception:  # noqa: BLE001 - informational
        info["versions"] = {}
    return info


# ----------------------------------------------------------------------------- sections
def bench(args) -> dict:  # noqa: C901 - one branch per optional section
    q = 1 if args.quick else 0
    size = {k: v[q] for k, v in SIZES.items()}
    if args.skill_episodes:
        size["skill_episodes"] = args.skill_episodes
    if args.suite_seeds:
        size["suite_seeds"] = args.suite_seeds
    skip = {s.strip() for s in (args.skip or "").split(",") if s.strip()}
    out: dict = {
        "machine": machine(),
        "quick": bool(args.quick),
        "sizes": size,
        "policy_source": args.policy_source,
        "sections": {},
        "command": " ".join(
            ["python scripts/make_benchmarks.py", *map(shlex.quote, args.argv)]
        ).strip(),
    }
    S = out["sections"]

    def section(name: str, cmd: list[str], timeout: float) -> None:
        print(f"[make_benchmarks] {name}: {_shown(cmd)}", file=sys.stderr, flush=True)
        data, err, wall = run_json(cmd, timeout)
        S[name] = {"command": _shown(cmd), "data": data, "error": err, "wall_s": round(wall, 1)}

    if "sim" not in skip:
        section(
            "sim",
            [
                _py(),
                str(ROOT / "scripts/bench_sim.py"),
                "--json",
                "--seconds",
                str(size["sim_seconds"]),
            ],
            600,
        )
    if "bridge" not in skip:
        section(
            "bridge",
            [
                _py(),
                str(ROOT / "scripts/bench_bridge.py"),
                "--json",
                "--cases",
                str(size["bridge_cases"]),
            ],
            1200,
        )
    if "run" not in skip:
        section(
            "run",
            [
                _py(),
                str(ROOT / "scripts/bench_run.py"),
                "--json",
                "--repeats",
                str(size["run_repeats"]),
                "--policy-source",
                "scripted" if args.policy_source == "scripted" else "auto",
            ],
            1200,
        )
    if "skills" not in skip:
        skills = {}
        for sk in SKILLS:
            cmd = [*_cli(), "eval-skill", sk, "-n", str(size["skill_episodes"]), "--json"]
            if args.policy_source == "scripted":
                cmd.append("--expert")
            print(f"[make_benchmarks] skill {sk}: {_shown(cmd)}", file=sys.stderr, flush=True)
            data, err, wall = run_json(cmd, 3600)
            skills[sk] = {
                "command": _shown(cmd),
                "data": data,
                "error": err,
                "wall_s": round(wall, 1),
            }
        S["skills"] = skills
    if "split" not in skip:
        S["split"] = _bench_split(size["split_episodes"], args.split_extra or [])
    if "learning" not in skip:
        section("learning", [_py(), str(ROOT / "scripts/bench_skills.py"), "--json"], 600)
    if "planner" not in skip:
        section("planner", [_py(), str(ROOT / "scripts/bench_planner.py"), "--json"], 3600)
    if "planner_b" not in skip:
        second = str(ROOT / "tests/planner/data/freeform_b.yaml")
        cmd = [_py(), str(ROOT / "scripts/bench_planner.py"), "--json", "--set", second]
        section("planner_b", cmd, 3600)
    if "planner_art" not in skip:
        third = str(ROOT / "tests/planner/data/freeform_articulated.yaml")
        cmd = [_py(), str(ROOT / "scripts/bench_planner.py"), "--json", "--set", third]
        section("planner_art", cmd, 3600)
    if "suite" not in skip:
        if args.suite_report:
            rep = json.loads(Path(args.suite_report).read_text())
            cmd = (rep.get("config") or {}).get("command") or "(unknown)"
            S["suite"] = {
                "command": cmd,
                "data": rep,
                "error": "",
                "wall_s": rep.get("wall_s"),
                "report": str(args.suite_report),
            }
        else:
            d = Path(args.suite_out or tempfile.mkdtemp(prefix="skillbridge-bench-suite-"))
            cmd = [
                *_cli(),
                "eval",
                "--seeds",
                str(size["suite_seeds"]),
                "--workers",
                str(args.workers),
                "--json",
                "--out",
                str(d / "report"),
            ]
            if args.suite_only:
                cmd += ["--only", args.suite_only]
            if args.policy_source == "scripted":
                cmd += ["--policy-source", "scripted"]
            section("suite", cmd, 7200)
            S["suite"]["report"] = str(d / "report" / "report.md")
            full = d / "report" / "report.json"
            if full.exists():
                S["suite"]["data"] = json.loads(full.read_text())
    if "chains" not in skip:
        S["chains"] = {}
        for sc in CHAIN_SCENES:
            d = Path(tempfile.mkdtemp(prefix=f"skillbridge-bench-chains-{sc}-"))
            cmd = [*_cli(), "eval", "--chains", str(size["chains"]), "--scene", sc, "--json"]
            print(f"[make_benchmarks] chains {sc}: {_shown(cmd)}", file=sys.stderr, flush=True)
            data, err, wall = run_json([*cmd, "--out", str(d)], 7200)
            S["chains"][sc] = {
                "command": _shown(cmd),
                "data": data,
                "error": err,
                "wall_s": round(wall, 1),
            }
    return out


def _bench_split(episodes: int, extra: list[str]) -> dict:
    """Each skill's perturbation split: the shipped policy and the expert, paired, and each
    ``SKILL:LABEL:DIR`` policy of ``extra`` on the same starts. A ``DIR`` ending in
    ``.json`` is a result measured earlier (``{"command": ..., "data": <eval-skill --split
    all --json>}``), for a policy today's code can no longer load (its observation
    changed)."""
    runs: list[tuple[str, str, str | None]] = [(sk, "shipped", None) for sk in SPLIT_SKILLS]
    for spec in extra:
        sk, label, d = spec.split(":", 2)
        runs.append((sk, label, d))
    out: dict = {}
    for sk, label, d in runs:
        if d and d.endswith(".json"):  # a result measured earlier: {"command", "data"}
            saved = json.loads(Path(d).read_text())
            out.setdefault(sk, {})[label] = {
                "command": f"{saved['command']} (saved in {d})",
                "data": saved["data"],
                "error": "",
                "wall_s": saved.get("wall_s"),
            }
            continue
        cmd = [*_cli(), "eval-skill", sk, "--split", "all", "-n", str(episodes)]
        cmd += ["--seed", "777", "--json"] + (["-f", d] if d else [])
        print(f"[make_benchmarks] split {sk} ({label}): {_shown(cmd)}", file=sys.stderr)
        data, err, wall = run_json(cmd, 3600)
        out.setdefault(sk, {})[label] = {
            "command": _shown(cmd),
            "data": data,
            "error": err,
            "wall_s": round(wall, 1),
        }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes (a few minutes)")
    ap.add_argument("--skip", help=f"comma-separated sections to skip: {', '.join(SECTIONS)}")
    ap.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md", help="the page")
    ap.add_argument(
        "--suite-report", type=Path, help="use this report.json instead of running the suite"
    )
    ap.add_argument("--suite-out", type=Path, help="folder for the suite run (default: temp)")
    ap.add_argument("--suite-only", help="run only these suite tasks (ids, globs, categories)")
    ap.add_argument("--suite-seeds", type=int, help="seeds per suite task (overrides the size)")
    ap.add_argument("--skill-episodes", type=int, help="episodes per skill (overrides the size)")
    ap.add_argument("--workers", type=int, default=2, help="suite worker processes")
    ap.add_argument(
        "--split-extra",
        action="append",
        metavar="SKILL:LABEL:DIR",
        help="also measure the policy in DIR on SKILL's perturbation split, as column LABEL "
        "(repeatable; e.g. the policy shipped before, or a run's bc/ warm start); a DIR "
        "ending in .json is a saved result {command, data}",
    )
    ap.add_argument(
        "--policy-source",
        choices=("pretrained", "scripted"),
        default="pretrained",
        help="skills, runner and suite with the shipped policies (default) or the "
        "scripted experts (a baseline; the page says so)",
    )
    ap.add_argument("--from-json", type=Path, help="only render the page from a benchmarks.json")
    ap.add_argument(
        "--reuse",
        type=Path,
        help="a benchmarks.json whose sections stand in for the --skip'ped ones (the page "
        "shows each section's own command)",
    )
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    for spec in args.split_extra or []:
        parts = spec.split(":", 2)
        if len(parts) != 3 or parts[0] not in SPLIT_SKILLS or not all(parts):
            ap.error(
                f"--split-extra {spec!r}: expected SKILL:LABEL:DIR with SKILL one of "
                f"{', '.join(SPLIT_SKILLS)}"
            )
    if args.skip:
        bad = {s.strip() for s in args.skip.split(",")} - set(SECTIONS)
        if bad:
            ap.error(f"unknown section(s) {', '.join(sorted(bad))}; known: {', '.join(SECTIONS)}")
    if args.from_json:
        b = json.loads(args.from_json.read_text())
    else:
        b = bench(args)
        if args.reuse:
            old = json.loads(args.reuse.read_text()).get("sections", {})
            for k, v in old.items():
                b["sections"].setdefault(k, v)
            b["sections"] = {k: b["sections"][k] for k in SECTIONS if k in b["sections"]}
        raw = args.out.with_name("benchmarks.json")
        slim = json.loads(json.dumps(b, default=str))
        su = (slim["sections"].get("suite") or {}).get("data")
        if isinstance(su, dict):
            su.pop("results", None)  # per-episode records stay in the suite's own report
        raw.write_text(json.dumps(slim, indent=2) + "\n")
    args.out.write_text(render(b))
    print(f"wrote {args.out}", file=sys.stderr)
    failed = [
        k
        for k, v in b["sections"].items()
        if isinstance(v, dict) and v.get("error") and not v.get("data")
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
