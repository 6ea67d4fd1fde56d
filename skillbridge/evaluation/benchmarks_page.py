"""The BENCHMARKS.md page, rendered from the sections' JSON (``benchmarks.json``).

``scripts/make_benchmarks.py`` runs the benchmark commands and writes their JSON; this module
only turns that JSON into the page, so the page can be rebuilt (and tested) without running
anything, and lives with the evaluation it reports.
"""

from __future__ import annotations


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _rate(r: dict | None) -> str:
    if not r or r.get("rate") is None:
        return "n/a"
    lo, hi = r["ci95"]
    return f"{r['rate']:.3f} [{lo:.3f}, {hi:.3f}] (n={r['episodes']})"


def _flat(d: dict, prefix: str = "") -> list[tuple[str, object]]:
    rows = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            rows += _flat(v, key + ".")
        elif isinstance(v, (int, float, str, bool)) or v is None:
            rows.append((key, v))
    return rows


def _failed(L: list[str], sec: dict) -> bool:
    if sec.get("error") and not sec.get("data"):
        L.append(f"**Not measured**: `{sec['command']}` failed: {sec['error']}\n")
        return True
    return False


def _render_machine(L: list[str], m: dict) -> None:
    """The machine table (and a note when it was busy)."""
    L.append("## Machine\n")
    L.append("| | |")
    L.append("|---|---|")
    for k in (
        "date",
        "git_commit",
        "cpu_model",
        "processor",
        "cpus",
        "memory_gb",
        "load_avg_1m",
        "platform",
        "python",
    ):
        if k in m:
            L.append(f"| {k} | {m[k]} |")
    for k, v in (m.get("versions") or {}).items():
        if k in m:
            continue
        L.append(f"| {k} | {v} |")
    L.append("")
    if m.get("load_avg_1m") is not None and m.get("cpus") and m["load_avg_1m"] > 0.5 * m["cpus"]:
        L.append(
            f"Note: the machine was busy (1-minute load {m['load_avg_1m']} on {m['cpus']} "
            "CPUs) when this page was generated; timings are pessimistic.\n"
        )


def _render_headline(L: list[str], S: dict) -> None:
    """One line per measured section."""
    L.append("## Headline\n")
    L.append("| what | result | command |")
    L.append("|---|---|---|")
    sim = (S.get("sim") or {}).get("data") or {}
    if sim:
        L.append(
            f"| simulator | {_fmt(sim.get('env_steps_per_s'))} env steps/s, "
            f"{_fmt(sim.get('sim_seconds_per_wall_second'))}× real time | "
            f"`{S['sim']['command']}` |"
        )
    br = (S.get("bridge") or {}).get("data") or {}
    if br:
        lat = br.get("latency_ms") or {}
        L.append(
            f"| bridge | {_fmt(br.get('cases'))} fuzz cases: {br.get('crashes')} crashes, "
            f"{br.get('unsafe_accepts')} unsafe accepts; validate p50 {lat.get('p50')} ms, "
            f"p99 {lat.get('p99')} ms | `{S['bridge']['command']}` |"
        )
    run = (S.get("run") or {}).get("data") or {}
    if run:
        L.append(
            f"| runner | {_fmt(run.get('real_time_factor'))}× real time "
            f"({run.get('policy_source')} policies); replay verify "
            f"{_fmt(run.get('replay_verify_steps_per_s'))} steps/s, bit-exact "
            f"{run.get('replay_verify_bit_exact')} | `{S['run']['command']}` |"
        )
    for sk, sec in (S.get("skills") or {}).items():
        d = sec.get("data")
        if d:
            r = {
                "rate": d.get("success_rate"),
                "ci95": d.get("ci95"),
                "episodes": d.get("episodes"),
            }
            L.append(f"| skill `{sk}` | success {_rate(r)} | `{sec['command']}` |")
    su = (S.get("suite") or {}).get("data") or {}
    if su and su.get("overall"):
        o = su["overall"]
        L.append(
            f"| suite ({su['suite']['tasks']} tasks × {su['config']['seeds']} seeds) | "
            f"planning {_rate(o['planning'])}; execution {_rate(o['execution'])}; "
            f"refusal {_rate(o['refusal'])} | `{S['suite']['command']}` |"
        )
    for sc, sec in (S.get("chains") or {}).items():
        d = sec.get("data") or {}
        if d:
            L.append(
                f"| 5-chains, {sc} scene | average completed length {d['average_completed']} "
                f"of {d['length']} (n={d['chains']} chains) | `{sec['command']}` |"
            )
    L.append("")


def _render_sim_bridge_run(L: list[str], S: dict) -> None:
    """The simulator, bridge and runner sections."""
    if "sim" in S:
        L.append("## Simulator\n")
        L.append(f"`{S['sim']['command']}` ({S['sim']['wall_s']} s)\n")
        if not _failed(L, S["sim"]):
            L += ["| metric | value |", "|---|---|"]
            L += [f"| {k} | {_fmt(v)} |" for k, v in _flat(S["sim"]["data"])]
            L.append("")
    if "bridge" in S:
        L.append("## Bridge\n")
        L.append(f"`{S['bridge']['command']}` ({S['bridge']['wall_s']} s)\n")
        if not _failed(L, S["bridge"]):
            d = S["bridge"]["data"]
            keep = [(k, v) for k, v in _flat(d) if not k.startswith(("examples",))]
            L += ["| metric | value |", "|---|---|"]
            L += [f"| {k} | {_fmt(v)} |" for k, v in keep]
            L.append("")
    if "run" in S:
        L.append("## Runner and replay\n")
        L.append(f"`{S['run']['command']}` ({S['run']['wall_s']} s)\n")
        if not _failed(L, S["run"]):
            d = S["run"]["data"]
            L += ["| metric | value |", "|---|---|"]
            L += [f"| {k} | {_fmt(v)} |" for k, v in _flat(d) if not k.startswith("time_split_s")]
            L.append("")


def _render_skills(L: list[str], S: dict) -> None:
    """The per-skill success table."""
    if "skills" in S:
        L.append("## Skills\n")
        L.append(
            "Each skill from its chained start distribution (`pick-place`: the two in a row).\n"
        )
        L += ["| skill | success [95% CI] | mean steps | command |", "|---|---|---|---|"]
        for sk, sec in S["skills"].items():
            d = sec.get("data")
            if d:
                r = {
                    "rate": d.get("success_rate"),
                    "ci95": d.get("ci95"),
                    "episodes": d.get("episodes"),
                }
                ms = d.get("mean_steps")
                L.append(
                    f"| {sk} | {_rate(r)} | {'' if ms is None else f'{ms:.1f}'} | "
                    f"`{sec['command']}` |"
                )
            else:
                L.append(f"| {sk} | not measured: {sec.get('error')} | | `{sec['command']}` |")
        L.append("")


def _cell(r: dict) -> str:
    lo, hi = r["ci95"]
    ab = f", {r['aborted']} stopped early @ {r['mean_abort_steps']}" if r.get("aborted") else ""
    return f"{r['successes']}/{r['episodes']} [{lo:.2f}, {hi:.2f}]{ab}"


def _render_split(L: list[str], S: dict) -> None:
    """Per skill: each condition of the perturbation split, the policies beside the expert."""
    if "split" not in S:
        return
    L.append("## Skills off their training distribution\n")
    L.append(
        "The perturbation split of `skills/perturb.py`: each condition on the same seeded "
        "starts for every policy column and for the scripted expert (paired: each episode's "
        "start is saved and restored, with the same noise and disturbance draws). "
        "*Infeasible*: no controller of this gripper can succeed there (a pick in a 2x2 "
        "block, with a neighbour along both finger axes the hand can take; a place whose cube "
        "left the gripper); what matters there is that the skill stops early with a reason "
        "(`Skill.doomed`) or that the affordance refuses the step before it starts. "
        "`shipped` is the policy in `skills/pretrained/`; the other columns are named with "
        "their commands below; `expert` is today's scripted expert, measured with the first "
        "column.\n"
    )
    for sk, cols in S["split"].items():
        ok = {k: v for k, v in cols.items() if v.get("data")}
        L.append(f"### {sk}\n")
        for k, v in cols.items():
            wall = "" if v.get("wall_s") is None else f" ({v['wall_s']} s)"
            L.append(
                f"- {k}: `{v['command']}`{wall}"
                + ("" if v.get("data") else f": failed: {v.get('error')}")
            )
        L.append("")
        if not ok:
            continue
        labels = list(ok)
        L.append("| condition | " + " | ".join(labels) + " | expert |")
        L.append("|---" * (len(labels) + 2) + "|")
        by = {k: {c["condition"]: c for c in v["data"]["conditions"]} for k, v in ok.items()}
        for c in ok[labels[0]]["data"]["conditions"]:
            name = c["condition"] + ("" if c["feasible"] else " (infeasible)")
            cells = [
                _cell(by[k][c["condition"]]["policy"]) if c["condition"] in by[k] else "-"
                for k in labels
            ]
            L.append(f"| {name} | " + " | ".join(cells) + f" | {_cell(c['expert'])} |")
        L.append("")
        L.append(_against_expert(labels[0], ok[labels[0]]["data"]["conditions"]))


def _against_expert(label: str, conditions: list[dict]) -> str:
    """One line: where the policy of column ``label`` beats its expert and where it loses,
    paired start by start (the split's point: RL has to earn its place over the script)."""
    from sim.util import mcnemar_exact

    better, worse = [], []
    for c in conditions:
        pr = c.get("paired")
        if not c["feasible"] or not pr:
            continue
        a, b = pr["policy_only"], pr["expert_only"]
        p = mcnemar_exact(a, b)
        tag = f"{c['condition']} ({c['policy']['successes']} vs {c['expert']['successes']}"
        tag += f", p = {p:.2g})" if p < 0.05 else ")"
        if a > b:
            better.append((p < 0.05, tag))
        elif b > a:
            worse.append((p < 0.05, tag))
    sig = sum(s for s, _ in better)
    return (
        f"`{label}` against the expert on the same starts, feasible conditions: better on "
        f"{len(better)} ({sig} of them significant, exact McNemar p < 0.05)"
        + (": " + ", ".join(t for _, t in better) if better else "")
        + f"; worse on {len(worse)} ({sum(s for s, _ in worse)} significant)"
        + (": " + ", ".join(t for _, t in worse) if worse else "")
        + "; the same on the rest.\n"
    )


def _render_learning(L: list[str], S: dict) -> None:
    """Inference cost and learning speed of the skill policies."""
    if "learning" in S:
        sec = S["learning"]
        L.append("## Skill policies: inference and learning\n")
        L.append(f"`{sec['command']}` ({sec['wall_s']} s)\n")
        if not _failed(L, sec):
            d = sec["data"]
            L.append(
                f"Baseline measured in the same run: one env control step = "
                f"{d['env_step_ms']:.3f} ms.\n"
            )
            L += [
                "| skill | inference ms/step | vs env step | env steps to bar (DAgger + RL) | "
                "training steps (DAgger + RL) | training wall time | then fine-tuned "
                "(`train --init`) |",
                "|---|---|---|---|---|---|---|",
            ]
            for sk, r in d["skills"].items():
                if "error" in r:
                    L.append(f"| {sk} | {r['error']} | | | | | |")
                    continue
                ft = "; ".join(
                    f"+{st['rl_steps']:,} RL steps, {st['wall_s']} s"
                    for st in r.get("fine_tuning", [])
                )
                bar = r.get("bar")
                hit = r.get("rl_steps_to_bar")
                demo = r.get("warm_start_env_steps", 0)
                to_bar = (
                    ("not recorded (the first stage's curve predates --init)" if ft else "")
                    if bar is None
                    else (
                        f"{r.get('env_steps_to_bar')} = {demo} + {hit} (bar {bar})"
                        if hit is not None
                        else f"not reached (bar {bar})"
                    )
                )
                L.append(
                    f"| {sk} | {r['inference_ms']:.3f} | {r['inference_vs_env_step']:.2f}x | "
                    f"{to_bar} | {demo} + {r.get('training_steps')} | "
                    f"{r.get('training_wall_time_s')} s | {ft} |"
                )
            L.append(
                "\nEnv steps to bar: labelled DAgger steps plus RL steps until the first "
                "periodic training evaluation (50 episodes) at or above the issue's bar; an "
                "RL part of 0 means the DAgger warm start already met it. "
                "Reference: rl-baselines3-zoo's TQC+HER needs ~230k steps (~1 h here) "
                "for FetchPickAndPlace.\n"
            )


def _render_suite(L: list[str], S: dict) -> None:
    """The task-suite section."""
    if "suite" in S:
        L.append("## Task suite\n")
        sec = S["suite"]
        L.append(
            f"`{sec['command']}`"
            + (f" ({sec['wall_s']} s)" if sec.get("wall_s") else "")
            + (f"; full report: `{sec['report']}`" if sec.get("report") else "")
            + "\n"
        )
        d = sec.get("data") or {}
        if not _failed(L, sec) and d.get("overall"):
            o = d["overall"]
            L += ["| metric | rate [95% CI] (episodes) | target |", "|---|---|---|"]
            for k in ("planning", "execution", "refusal"):
                t = (d.get("targets") or {}).get(k, {})
                L.append(
                    f"| {k} success | {_rate(o[k])} | ≥ {t.get('target')} "
                    f"({'met' if t.get('met') else 'not met'}) |"
                )
            L.append(f"| false refusals | {_rate(o['false_refusals'])} | |")
            L.append("")
            L += ["| category | planning | execution | refusal |", "|---|---|---|---|"]
            for cat, r in d["by_category"].items():
                L.append(
                    f"| {cat} | {_rate(r['planning'])} | {_rate(r['execution'])} | "
                    f"{_rate(r['refusal'])} |"
                )
            L.append("")
            causes = d.get("failures", {}).get("by_cause") or {}
            if causes:
                L.append(
                    "Failure causes: " + ", ".join(f"`{k}` ×{v}" for k, v in causes.items()) + "\n"
                )
            L.append(
                f"Planner: `{d['config'].get('llm')}`, policies "
                f"`{d['config'].get('policy_source')}`, {d['config'].get('workers')} workers, "
                f"{d.get('wall_s')} s wall, {d.get('tokens', {}).get('in', 0)} tokens in / "
                f"{d.get('tokens', {}).get('out', 0)} out.\n"
            )


def _render_planner(L: list[str], S: dict) -> None:
    sec = S.get("planner")
    if not sec:
        return
    L.append("## Planner on free language\n")
    d = sec.get("data") or {}
    when = f" (measured {d['date']}, commit {d.get('git_commit', '?')})" if d.get("date") else ""
    L.append(f"`{sec['command']}`{when}\n")
    if _failed(L, sec):
        return
    L.append(
        f"The hand-written test set (`tests/planner/data/freeform.yaml`, {d['n_entries']} "
        "instructions written apart from the training corpus), each plan judged by its "
        "meaning: simulated with the skills' effects it must make the entry's goal true; "
        "a request that must be refused must yield nothing executable.\n"
    )
    L.append("| route | doable right (95% CI) | refusals right | plan p50 / p95 | decode |")
    L.append("|---|---|---|---|---|")
    for route, r in d["routes"].items():
        lo, hi = r["ci95"]
        tok = r.get("decode_tokens_per_s")
        L.append(
            f"| {route} | {r['accuracy']:.3f} [{lo:.3f}, {hi:.3f}] (n={r['n']}) | "
            f"{r['refusal_accuracy']:.3f} (n={r['refusal_n']}) | "
            f"{r['latency_p50_s']:.3f} s / {r['latency_p95_s']:.3f} s | "
            f"{_fmt(tok) + ' tok/s' if tok else '-'} |"
        )
    L.append(
        f"\nModel load {_fmt(d.get('model_load_s'))} s (once per process), peak RSS "
        f"{_fmt(d.get('peak_rss_mb'))} MB, {d.get('threads')} decode thread(s).\n"
    )
    cats = sorted({c for r in d["routes"].values() for c in r["by_category"]})
    L.append("| category | " + " | ".join(d["routes"]) + " |")
    L.append("|---|" + "---|" * len(d["routes"]))
    for c in cats:
        cells = []
        for r in d["routes"].values():
            x = r["by_category"].get(c)
            cells.append(f"{x['ok']}/{x['n']}" if x else "-")
        L.append(f"| {c} | " + " | ".join(cells) + " |")
    L.append("")
    _render_other_set(
        L,
        S.get("planner_b"),
        "A second hand-written set, not tuned against",
        "`tests/planner/data/freeform_b.yaml` ({n} instructions) was written after the first "
        "set's failures had been studied and is used for measurement only.",
    )
    _render_other_set(
        L,
        S.get("planner_art"),
        "The articulated scene's vocabulary",
        "`tests/planner/data/freeform_articulated.yaml` ({n} instructions: the drawer, the "
        "button and the lamp, towers of three and four, lists mixing them with cube moves, "
        "and the same requests on the tabletop to refuse), written apart from the corpus; "
        "each entry's world is the articulated scene (the tabletop for the refusals).",
    )


def _render_other_set(L: list[str], sec: dict | None, title: str, about: str) -> None:
    """A further hand-written set: its routes' accuracy and latency."""
    if not sec:
        return
    L.append(f"### {title}\n")
    L.append(f"`{sec['command']}`\n")
    if _failed(L, sec):
        return
    d = sec.get("data") or {}
    L.append(about.format(n=d.get("n_entries")) + "\n")
    L.append("| route | doable right (95% CI) | refusals right | plan p50 / p95 |")
    L.append("|---|---|---|---|")
    for route, r in d.get("routes", {}).items():
        lo, hi = r["ci95"]
        L.append(
            f"| {route} | {r['accuracy']:.3f} [{lo:.3f}, {hi:.3f}] (n={r['n']}) | "
            f"{r['refusal_accuracy']:.3f} (n={r['refusal_n']}) | "
            f"{r['latency_p50_s']:.3f} s / {r['latency_p95_s']:.3f} s |"
        )
    L.append("")


def _render_chains(L: list[str], S: dict) -> None:
    """Long-horizon chains: average completed length and success at each position."""
    if not S.get("chains"):
        return
    L.append("## Long-horizon chains\n")
    L.append(
        "Chains of 5 instructions sampled from a task graph (each doable where the previous "
        "ones leave the world), run back to back without reset; a chain stops at its first "
        "failure (CALVIN's protocol on our scenes). Target: average completed length ≥ 4.7.\n"
    )
    for sc, sec in S["chains"].items():
        L.append(f"### {sc} scene\n")
        L.append(f"`{sec['command']}` ({sec.get('wall_s')} s)\n")
        d = sec.get("data") or {}
        if _failed(L, sec) or not d:
            continue
        L.append(
            f"Average completed length **{d['average_completed']}** of {d['length']} "
            f"over {d['chains']} chains.\n"
        )
        L += ["| tasks in a row | rate [95% CI] (chains) |", "|---|---|"]
        for a in d["success_at"]:
            L.append(f"| {a['position']} | {_rate({**a, 'episodes': a['chains']})} |")
        L.append("")
        if d.get("failure_causes"):
            causes = ", ".join(f"`{k}` ×{v}" for k, v in d["failure_causes"].items())
            verbs = ", ".join(f"{k} ×{v}" for k, v in (d.get("failures_by_verb") or {}).items())
            L.append(f"Failures: {causes} (by instruction: {verbs}).\n")


def render(b: dict) -> str:
    m = b["machine"]
    S = b["sections"]
    L = [
        "# Benchmarks\n",
        f"Generated by `{b.get('command', 'python scripts/make_benchmarks.py')}`; "
        "every number below comes from the command "
        "printed with it. Rates carry their episode count and a 95% Wilson interval.\n",
    ]
    if b.get("policy_source") == "scripted":
        L.append(
            "> Policies: the **scripted experts**, not the shipped pretrained policies "
            "(`--policy-source scripted`).\n"
        )
    if b["quick"]:
        L.append(
            "> Reduced sizes (`--quick`): intervals are wide; run without `--quick` for the "
            "full sizes.\n"
        )
    _render_machine(L, m)
    _render_headline(L, S)
    _render_sim_bridge_run(L, S)
    _render_skills(L, S)
    _render_split(L, S)
    _render_learning(L, S)
    _render_planner(L, S)
    _render_suite(L, S)
    _render_chains(L, S)
    return "\n".join(L) + "\n"
