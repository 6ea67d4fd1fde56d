"""The report on disk: ``report.json``, ``report.md`` and the two plots, each written
atomically (a reader never sees half a report)."""

from __future__ import annotations

import json
from pathlib import Path

from sim import util


def pct(r: dict) -> str:
    if r["rate"] is None:
        return "n/a"
    lo, hi = r["ci95"]
    return f"{r['rate']:.3f} [{lo:.3f}, {hi:.3f}] (n={r['episodes']})"


def write_markdown(report: dict, path: Path) -> None:  # noqa: C901 - a flat page template
    o = report["overall"]
    cfg = report["config"]
    L: list[str] = []
    L.append(f"# Evaluation: suite `{report['suite']['name']}`\n")
    if report.get("complete") is False:
        miss = report.get("missing") or []
        L.append(
            f"**Incomplete**: {len(miss)} episode(s) did not run "
            f"({', '.join(sorted({m['reason'] for m in miss}))}). Continue with "
            f"`skillbridge eval --resume {Path(path).parent}`.\n"
        )
    rerun = (report.get("infrastructure") or {}).get("jobs_rerun", 0)
    if rerun:
        L.append(
            f"{rerun} job(s) ran again after their worker process was lost; a lost "
            "worker is not a robot failure and is not counted as one.\n"
        )
    L.append(
        f"{report['suite']['tasks']} tasks × {cfg['seeds']} seeds = {report['episodes']} "
        f"episodes; planner `{cfg['llm']}` (route {cfg.get('route', 'hybrid')}), "
        f"policies `{cfg['policy_source']}`, "
        f"{cfg['workers']} workers, {report['wall_s']:.0f} s wall, {report['created']}.\n"
    )
    if cfg.get("command"):
        L.append(f"Command: `{cfg['command']}`\n")
    L.append(
        "Rates with their 95% Wilson interval and episode count. Planning: the first "
        "accepted plan achieves the goal when executed symbolically (skills' `effect()`); "
        "execution: the goal holds in physics at the end; refusal: a must-refuse task "
        "ends `refused` with nothing executed; false refusals: tasks that should run but "
        "were declined.\n"
    )
    L.append("| metric | rate [95% CI] (episodes) | target | met |")
    L.append("|---|---|---|---|")
    for k in ("planning", "execution", "refusal"):
        t = report["targets"][k]
        L.append(
            f"| {k} success | {pct(o[k])} | ≥ {t['target']} | "
            f"{'n/a' if t['met'] is None else 'yes' if t['met'] else '**no**'} |"
        )
    L.append(f"| false refusals | {pct(o['false_refusals'])} | | |")
    cl = report.get("claims")
    if cl:
        L.append(
            f"| false success claims (claimed success, goal unmet in the world) | "
            f"{cl['false_success_claims']} of {cl['claimed_success']} | 0 | "
            f"{'yes' if cl['false_success_claims'] == 0 else '**no**'} |"
        )
        if cl["faults_injected"]:
            L.append(
                f"| recovery from an injected fault | {pct(cl['recovery'])} | ≥ 0.8 | "
                f"{'yes' if (cl['recovery']['rate'] or 0) >= 0.8 else '**no**'} |"
            )
            L.append(
                f"| faults repaired by a replan | {cl['repaired_by_replan']} of "
                f"{cl['faults_injected']} "
                f"({', '.join(f'{k} ×{v}' for k, v in cl['faults_by_kind'].items())}) | | |"
            )
        if cl["wrong_goal"]:
            L.append(f"| plans stating a goal other than the task's | {cl['wrong_goal']} | | |")
    L.append("")
    L.append("## By category\n")
    L.append("| category | tasks | planning | execution | refusal |")
    L.append("|---|---|---|---|---|")
    for cat, r in report["by_category"].items():
        n = report["suite"]["by_category"].get(cat, 0)
        L.append(
            f"| {cat} | {n} | {pct(r['planning'])} | {pct(r['execution'])} | {pct(r['refusal'])} |"
        )
    L.append("\n![success by category](success_by_category.png)\n")
    f = report["failures"]
    L.append("## Failures\n")
    L.append("![failure causes](failure_causes.png)\n")
    L.append("| cause | episodes |")
    L.append("|---|---|")
    for k, v in f["by_cause"].items():
        L.append(f"| {k} | {v} |")
    if not f["by_cause"]:
        L.append("| (none) | 0 |")
    L.append("\nBy category:\n")
    L.append("| category | causes |")
    L.append("|---|---|")
    for cat, c in f["by_category"].items():
        L.append(f"| {cat} | {', '.join(f'{k} ×{v}' for k, v in c.items()) or '-'} |")
    L.append("\nBy skill (every executed subgoal, including replans and safe stops):\n")
    L.append("| skill | runs | failures | failure rate [95% CI] |")
    L.append("|---|---|---|---|")
    for k, v in f["by_skill"].items():
        L.append(f"| {k} | {v['runs']} | {v['failures']} | {pct(v['failure_rate'])} |")
    L.append("\nBy bridge rejection code (every rejected planner attempt, refusals included):\n")
    L.append("| code | count |")
    L.append("|---|---|")
    for k, v in f["by_bridge_code"].items():
        L.append(f"| `{k}` | {v} |")
    if not f["by_bridge_code"]:
        L.append("| (none) | 0 |")
    L.append("\n## Tasks\n")
    L.append(
        "| id | category | instruction | planning | execution | refusal | tokens in/out | wall s |"
    )
    L.append("|---|---|---|---|---|---|---|---|")
    for t in report["tasks"]:
        L.append(
            f"| {t['id']} | {t['category']} | {t['instruction']} | "
            f"{t.get('planning', '')} | {t.get('execution', '')} | {t.get('refusal', '')} "
            f"| {t['tokens_in']:.0f}/{t['tokens_out']:.0f} | {t['wall_s']:.2f} |"
        )
    failing = [(t, x) for t in report["tasks"] for x in t["failures"]]
    if failing:
        L.append("\n## Failed episodes\n")
        L.append("Replay any of them with `skillbridge replay EPISODE`.\n")
        for t, x in failing:
            detail = x.get("error") or x.get("message") or ""
            unmet = ", ".join(x.get("unmet_final") or [])
            L.append(
                f"- **{t['id']}** seed {x['seed']}: `{x['cause']}` ({x['status']}) "
                f"{detail[:160]}"
                + (f"; unmet: {unmet}" if unmet else "")
                + (f"  \n  `{x['episode']}`" if x.get("episode") else "")
            )
    m = report["machine"]
    L.append("\n## Machine\n")
    L.append(
        f"Python {m['python']} on {m['platform']} ({m['cpus']} CPUs); "
        + ", ".join(f"{k} {v}" for k, v in (m.get("versions") or {}).items())
        + "\n"
    )
    util.atomic_write_text(path, "\n".join(L) + "\n")


def _savefig_atomic(fig, path: Path) -> None:
    with util.atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")


def write_plots(report: dict, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    paths = []
    cats = list(report["by_category"])
    metrics = [("planning", "#4C72B0"), ("execution", "#55A868"), ("refusal", "#C44E52")]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(cats) + 2), 4.2))
    x = np.arange(len(cats))
    w = 0.27
    for j, (m, colour) in enumerate(metrics):
        vals, lo, hi = [], [], []
        for c in cats:
            r = report["by_category"][c][m]
            v = r["rate"] if r["rate"] is not None else np.nan
            vals.append(v)
            lo.append(0 if np.isnan(v) else v - r["ci95"][0])
            hi.append(0 if np.isnan(v) else r["ci95"][1] - v)
        ax.bar(x + (j - 1) * w, vals, w, yerr=[lo, hi], capsize=3, label=m, color=colour)
    ax.set_xticks(x, cats, rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success rate (95% Wilson CI)")
    ax.set_title(
        f"{report['suite']['name']}: {report['episodes']} episodes, "
        f"planner {report['config']['llm']}"
    )
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    p = out / "success_by_category.png"
    _savefig_atomic(fig, p)
    plt.close(fig)
    paths.append(p)

    f = report["failures"]
    panels = [
        ("failure causes (episodes)", f["by_cause"]),
        ("skill failures (subgoals)", {k: v["failures"] for k, v in f["by_skill"].items()}),
        ("bridge rejection codes", f["by_bridge_code"]),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (title, data) in zip(axes, panels, strict=False):
        items = [(k, v) for k, v in data.items() if v]
        if items:
            ks, vs = zip(*sorted(items, key=lambda kv: kv[1]), strict=False)
            ax.barh(range(len(ks)), vs, color="#8172B2")
            ax.set_yticks(range(len(ks)), ks, fontsize=8)
        else:
            ax.text(0.5, 0.5, "none", ha="center", va="center", transform=ax.transAxes)
            ax.set_yticks([])
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    p = out / "failure_causes.png"
    _savefig_atomic(fig, p)
    plt.close(fig)
    paths.append(p)
    return paths


def write_report(report: dict, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    rj = out / "report.json"
    util.atomic_write_text(rj, json.dumps(report, indent=2, default=str))
    md = out / "report.md"
    write_markdown(report, md)
    plots = write_plots(report, out)
    return {"json": rj, "md": md, **{p.stem: p for p in plots}}
