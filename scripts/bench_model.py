"""The embedded planner model's speed where users wait, each figure beside its baseline
measured in the same run (this machine is shared and noisy: only the ratios travel).

- **Decode** tokens/s on one thread for each kind of weights (fp32, int8, int4), beside the
  limit this machine's single-thread read bandwidth sets: a decode step reads every weight
  once, so ``limit = bandwidth / bytes per token``; and beside transformers' fp32 model (the
  old path) with ``--old``.
- **Warm plans**: the model's rewrite latency p50/p95 on the planner's prompts
  (tests/planner/forward_prompts.py), each with the model's prompt-prefix cache emptied
  first (the forward pass alone; scripts/bench_planner.py times plans as they come, where
  the scene line of one instruction is reused by the next).
- **Against a baseline tree** with ``--baseline-tree DIR`` (e.g. ``git archive HEAD~3 | tar
  -x -C /tmp/base``): the same decode and rewrite figures of DIR's planner code, measured in
  child processes interleaved round by round with ours (``--rounds``), so load that comes
  and goes hits both alike; decode is also given per CPU second of the process, which the
  other processes on a shared machine disturb far less than wall time.
- **Cold start** with ``--cold N``: wall time and peak RSS of ``skillbridge plan "chuck the
  crimson cube into the emerald bin"`` (model route) and of ``skillbridge --help``, each
  beside ``python -c pass`` and ``python -c "import torch"`` timed in the same run, and
  beside the old path (``--old-tree DIR``: a checkout of an earlier commit, e.g. ``git
  archive 64ec370 | tar -x -C /tmp/old``) and the baseline tree's (below) when given.

    python scripts/bench_model.py [--tokens 48] [--kinds fp32,int8,int4] [--old]
        [--cold 3] [--old-tree /tmp/old] [--baseline-tree /tmp/base --rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the tree whose planner code is measured: ours, or the one a child of --baseline-tree runs
TREE = Path(os.environ.get("SKILLBRIDGE_BENCH_TREE") or ROOT).resolve()
sys.path.insert(0, str(TREE))
TASK = "chuck the crimson cube into the emerald bin"


def read_bandwidth(mib: int = 1024, rounds: int = 5) -> float:
    """Single-thread read bandwidth (bytes/s): the best of ``rounds`` sums over a buffer
    larger than the caches (a sum does one add per 4 bytes read: bound by memory)."""
    import torch

    buf = torch.ones(mib * 1024 * 1024 // 4)
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        buf.sum()
        best = min(best, time.perf_counter() - t0)
    return buf.numel() * 4 / best


def bytes_per_token(engine) -> int:
    """What one decode step reads: every linear layer's weights (with their scales, zeros
    and the adapter's factors), the norms, the output head's allowed rows and one
    embedding row (the key/value cache of a short prompt is a few hundred KB more)."""
    import torch

    net = engine.net
    total = engine._rows.numel() * 4 + net.cfg.hidden * 4 + net.norm.numel() * 4
    for b in net.blocks:
        total += (b.attn_norm.numel() + b.mlp_norm.numel()) * 4
        for lin in (b.qkv, b.o, b.gate_up, b.down):
            for t in vars(lin).values():
                if isinstance(t, torch.Tensor):
                    total += t.numel() * t.element_size()
    return int(total)


def decode_rate(step, tokens: int, rounds: int = 3) -> tuple[float, float]:
    """Best tokens/s of ``rounds`` runs of ``tokens`` calls of ``step(i)``, per second of
    wall time and per second of this process's CPU time."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(tokens):
            step(i)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return tokens / best, tokens / max(best_cpu, 1e-9)


def ours(kind: str, tokens: int, prompts: list[str]) -> dict:
    import torch

    from planner.embedded import model as em
    from planner.embedded import prompt as fmt
    from planner.embedded.llama import Cache

    t0 = time.perf_counter()
    engine = em.EmbeddedModel(weights=kind, threads=1)
    load_s = time.perf_counter() - t0
    ids = engine.tok.encode(fmt.prompt(prompts[0]))
    with torch.inference_mode():
        cache = Cache(engine.config, len(ids) + 4 * tokens + 8)
        engine.net.forward(ids, cache)
        start = cache.length

        def step(i: int) -> None:
            if cache.length + 1 > cache.size:
                cache.length = start
            engine.net.forward([ids[i % len(ids)]], cache)

        rate, cpu_rate = decode_rate(step, tokens)
    lat = []
    memo = getattr(engine, "prefixes", None)  # the prompt-prefix cache, where there is one
    for p in prompts:
        engine.rewrite(p)  # the first call of each prompt also warms the pages it touches
    cpu = []
    for p in prompts:
        if memo is not None:
            memo.clear()
        c0 = time.process_time()
        lat.append(engine.rewrite(p).latency_s)
        cpu.append(time.process_time() - c0)
    return {
        "kind": kind,
        "load_s": load_s,
        "tokens_per_s": rate,
        "cpu_tokens_per_s": cpu_rate,
        "bytes_per_token": bytes_per_token(engine),
        "rewrite_p50_s": statistics.median(lat),
        "rewrite_p95_s": sorted(lat)[max(0, int(round(0.95 * len(lat))) - 1)],
        "rewrite_cpu_p50_s": statistics.median(cpu),
    }


def transformers_rate(tokens: int, prompt: str) -> float:
    """The old path's decode: transformers' fp32 model with its key/value cache."""
    import warnings

    import torch

    from planner.embedded import base
    from planner.embedded import prompt as fmt

    loaded = base.load_base(1)
    model, tok = loaded.model, loaded.tokenizer
    ids = tok(fmt.prompt(prompt), add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model(input_ids=ids, use_cache=True)
        state = {"past": res.past_key_values}

        def step(i: int) -> None:
            out = model(
                input_ids=torch.tensor([[int(ids[0, i % ids.shape[1]])]]),
                past_key_values=state["past"],
                use_cache=True,
            )
            state["past"] = out.past_key_values

        return decode_rate(step, tokens, rounds=1)[0]


def measure_child(tree: Path, kind: str, tokens: int) -> dict:
    """:func:`ours` for the planner code of ``tree``, in a child process (this script with
    ``--measure``, its imports from ``tree``)."""
    env = dict(os.environ, SKILLBRIDGE_BENCH_TREE=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", kind]
    cmd += ["--tokens", str(tokens)]
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]
        raise SystemExit(f"error: measuring {tree} failed: {tail[0]}")
    return json.loads(out.stdout)


def against_baseline(base: Path, kind: str, tokens: int, rounds: int) -> dict:
    """Ours and ``base``'s decode and rewrite figures, in children interleaved round by
    round; per tree the best decode rate of the rounds and the median rewrite latencies."""
    runs: dict[str, list[dict]] = {"ours": [], "baseline": []}
    for _ in range(rounds):
        runs["ours"].append(measure_child(ROOT, kind, tokens))
        runs["baseline"].append(measure_child(base, kind, tokens))
    out: dict = {"tree": str(base), "rounds": rounds}
    for who, rs in runs.items():
        out[who] = {
            "tokens_per_s": max(r["tokens_per_s"] for r in rs),
            "cpu_tokens_per_s": max(r["cpu_tokens_per_s"] for r in rs),
            "rewrite_p50_s": statistics.median(r["rewrite_p50_s"] for r in rs),
            "rewrite_p95_s": statistics.median(r["rewrite_p95_s"] for r in rs),
            "rewrite_cpu_p50_s": min(r["rewrite_cpu_p50_s"] for r in rs),
            "bytes_per_token": rs[0]["bytes_per_token"],
        }
    return out


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit code of one run of ``cmd`` (rusage of that
    child alone, from wait4)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, p.returncode


def cold(rounds: int, old_tree: Path | None, baseline_tree: Path | None = None) -> dict:
    py = sys.executable
    env = dict(os.environ)
    cases = {
        "python -c pass": ([py, "-c", "pass"], ROOT),
        "import torch": ([py, "-c", "import torch"], ROOT),
        "--help": ([py, "-m", "skillbridge.cli", "--help"], ROOT),
        "plan (model route)": (
            [py, "-m", "skillbridge.cli", "plan", TASK],
            ROOT,
        ),
    }
    if old_tree is not None:
        cases["--help, old path"] = ([py, "-m", "skillbridge.cli", "--help"], old_tree)
        cases["plan (model route), old path"] = (
            [py, "-m", "skillbridge.cli", "plan", TASK],
            old_tree,
        )
    if baseline_tree is not None:
        cases["--help, baseline"] = ([py, "-m", "skillbridge.cli", "--help"], baseline_tree)
        cases["plan (model route), baseline"] = (
            [py, "-m", "skillbridge.cli", "plan", TASK],
            baseline_tree,
        )
    runs: dict[str, list[tuple[float, float, int]]] = {k: [] for k in cases}
    for _ in range(rounds):  # interleaved, so a burst of load hits every case alike
        for name, (cmd, cwd) in cases.items():
            runs[name].append(timed(cmd, cwd, env))
    out = {}
    for name, rs in runs.items():
        out[name] = {
            "wall_s": statistics.median(r[0] for r in rs),
            "peak_rss_mb": max(r[1] for r in rs),
            "exit_codes": sorted({r[2] for r in rs}),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=48, help="decode steps per timing")
    ap.add_argument("--kinds", default="fp32,int8,int4")
    ap.add_argument("--old", action="store_true", help="also time transformers' fp32 decode")
    ap.add_argument("--cold", type=int, default=0, help="cold-start rounds (0: none)")
    ap.add_argument("--old-tree", type=Path, default=None, help="checkout of the old path")
    ap.add_argument(
        "--baseline-tree",
        type=Path,
        default=None,
        help="checkout whose decode and rewrite figures are measured beside ours",
    )
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per tree")
    ap.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # a child's one kind
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.measure:
        import torch

        torch.set_num_threads(1)
        from tests.planner.forward_prompts import planner_prompts

        print(json.dumps(ours(args.measure, args.tokens, planner_prompts())))
        return
    report: dict = {}
    if args.cold:
        # first, while this process is small: a child's peak RSS counts what it inherited
        # from the fork before its exec
        report["cold"] = cold(args.cold, args.old_tree, args.baseline_tree)

    import torch

    torch.set_num_threads(1)
    from tests.planner.forward_prompts import planner_prompts

    prompts = planner_prompts()
    bw = read_bandwidth()
    report["read_bandwidth_gb_s"] = bw / 1e9
    report["kinds"] = []
    for kind in [k.strip() for k in args.kinds.split(",") if k.strip()]:
        r = ours(kind, args.tokens, prompts)
        # the bandwidth again beside each kind: the best seen is the machine's, not the load's
        bw = max(bw, read_bandwidth())
        r["limit_tokens_per_s"] = bw / r["bytes_per_token"]
        r["of_limit"] = r["tokens_per_s"] / r["limit_tokens_per_s"]
        report["kinds"].append(r)
    report["read_bandwidth_gb_s_after"] = read_bandwidth() / 1e9
    bw = max(bw, report["read_bandwidth_gb_s_after"] * 1e9)
    for r in report["kinds"]:  # every kind against the same (best) bandwidth
        r["limit_tokens_per_s"] = bw / r["bytes_per_token"]
        r["of_limit"] = r["tokens_per_s"] / r["limit_tokens_per_s"]
    report["read_bandwidth_gb_s_best"] = bw / 1e9
    if args.old:
        report["transformers_fp32_tokens_per_s"] = transformers_rate(args.tokens, prompts[0])
    if args.baseline_tree is not None:
        kind = "int4" if "int4" in args.kinds else args.kinds.split(",")[0].strip()
        vs = against_baseline(args.baseline_tree, kind, args.tokens, max(1, args.rounds))
        vs["kind"] = kind
        vs["read_bandwidth_gb_s"] = read_bandwidth() / 1e9
        bw = max(bw, vs["read_bandwidth_gb_s"] * 1e9)
        for who in ("ours", "baseline"):
            vs[who]["of_limit"] = vs[who]["tokens_per_s"] * vs[who]["bytes_per_token"] / bw
        report["baseline"] = vs
    report["load_avg"] = os.getloadavg()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    show(report, args)


def show(report: dict, args: argparse.Namespace) -> None:
    """The report in lines of text."""
    print(
        f"single-thread read bandwidth {report['read_bandwidth_gb_s_best']:.1f} GB/s (best "
        f"of the runs; first {report['read_bandwidth_gb_s']:.1f}, "
        f"last {report['read_bandwidth_gb_s_after']:.1f})"
    )
    fp32 = next((r for r in report["kinds"] if r["kind"] == "fp32"), None)
    for r in report["kinds"]:
        vs = f", {r['tokens_per_s'] / fp32['tokens_per_s']:.2f}x fp32" if fp32 else ""
        print(
            f"{r['kind']:>5}: {r['bytes_per_token'] / 1e6:6.1f} MB/token, limit "
            f"{r['limit_tokens_per_s']:6.1f} tok/s, decode {r['tokens_per_s']:6.1f} tok/s "
            f"({r['of_limit']:.2f} of the limit{vs}; {r['cpu_tokens_per_s']:.1f} per CPU "
            f"second); rewrite p50 "
            f"{r['rewrite_p50_s'] * 1e3:.0f} ms, p95 {r['rewrite_p95_s'] * 1e3:.0f} ms; "
            f"load {r['load_s']:.2f} s"
        )
    if args.old:
        old = report["transformers_fp32_tokens_per_s"]
        best = max(report["kinds"], key=lambda r: r["tokens_per_s"]) if report["kinds"] else None
        tail = f"; {best['kind']} is {best['tokens_per_s'] / old:.2f}x it" if best else ""
        print(f"transformers fp32 (old path): decode {old:.1f} tok/s{tail}")
    if args.baseline_tree is not None:
        vs = report["baseline"]
        o, b = vs["ours"], vs["baseline"]
        for who, r in (("ours", o), ("baseline", b)):
            print(
                f"{vs['kind']} {who:>8}: decode {r['tokens_per_s']:6.1f} tok/s "
                f"({r['of_limit']:.2f} of the limit), {r['cpu_tokens_per_s']:6.1f} per CPU "
                f"second; rewrite p50 {r['rewrite_p50_s'] * 1e3:.0f} ms, p95 "
                f"{r['rewrite_p95_s'] * 1e3:.0f} ms, CPU p50 {r['rewrite_cpu_p50_s'] * 1e3:.0f} ms "
                f"({vs['rounds']} interleaved rounds)"
            )
        print(
            f"ours / baseline ({vs['tree']}): decode {o['tokens_per_s'] / b['tokens_per_s']:.2f}x"
            f" (per CPU second {o['cpu_tokens_per_s'] / b['cpu_tokens_per_s']:.2f}x), "
            f"rewrite p50 {o['rewrite_p50_s'] / b['rewrite_p50_s']:.2f} of its time (CPU "
            f"{o['rewrite_cpu_p50_s'] / b['rewrite_cpu_p50_s']:.2f})"
        )
    la = report["load_avg"]
    print(f"load average at the end: {la[0]:.1f} {la[1]:.1f} {la[2]:.1f}")
    if args.cold:
        c = report["cold"]
        base = c["python -c pass"]["wall_s"]
        for name, r in c.items():
            print(
                f"cold {name:<30} {r['wall_s']:6.2f} s ({r['wall_s'] / base:5.1f}x python "
                f"start), peak RSS {r['peak_rss_mb']:6.0f} MB, exit {r['exit_codes']}"
            )
        for what in ("--help", "plan (model route)"):
            for other in ("old path", "baseline"):
                if f"{what}, {other}" in c:
                    ratio = c[what]["wall_s"] / c[f"{what}, {other}"]["wall_s"]
                    mem = c[what]["peak_rss_mb"] / c[f"{what}, {other}"]["peak_rss_mb"]
                    print(
                        f"cold {what}: {ratio:.2f} of the {other}'s time, {mem:.2f} of its memory"
                    )


if __name__ == "__main__":
    main()
