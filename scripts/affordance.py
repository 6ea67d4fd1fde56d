"""Affordance models: collect labelled rollouts, fit the success predictors, report
their calibration, and check the geometric ``graspable`` predicate against rollouts.

    python scripts/affordance.py collect pick -n 2000 --seed 1      # rollouts -> runs/affordance/
    python scripts/affordance.py fit pick                            # -> skills/predictors/pick.*
    python scripts/affordance.py report --png docs/affordance_calibration.png
    python scripts/affordance.py verify                              # graspable vs outcomes

Rollouts run the *shipped* policy of the skill (and, with ``--expert``, the scripted expert on
the same start) from the starts of :mod:`skills.affordance_data`; each line of the JSONL file
holds the start's world state, the parameters and the outcomes, so features can be recomputed
when their code changes. Episodes are split by index: every 4th is held out for the
calibration report (never seen in fitting), every 4th + 1 calibrates the fitted network's
temperature, the rest train it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.world import WorldState  # noqa: E402
from skills import success_model as SM  # noqa: E402
from skills.affordance_data import LAYOUTS, run_skill, sample_start  # noqa: E402
from skills.policy import load_manifest, pretrained_dir  # noqa: E402
from skills.registry import get  # noqa: E402
from skills.success_model import brier, ece  # noqa: E402

DATA = ROOT / "runs" / "affordance"
#: Share of each layout in the collected starts (the rest of the weight is nominal).
WEIGHTS = {
    "pick": {
        "nominal": 2,
        "yaw": 1,
        "edges": 2,
        "neighbour": 3,
        "block": 1,
        "row": 1,
        "wall": 2,
        "in_bin": 2,
    },
    "place": {"nominal": 1, "yaw": 2},
    "push": {"nominal": 2, "yaw": 1, "edges": 2, "neighbour": 3, "block": 1},
}
HIDDEN = [16]


class Net(torch.nn.Module):
    """The predictor's network for fitting (inference is numpy, in skills.success_model)."""

    def __init__(self, n_in: int, hidden: list[int]):
        super().__init__()
        dims = [n_in, *hidden, 1]
        self.lin = torch.nn.ModuleList(
            [torch.nn.Linear(a, b) for a, b in zip(dims, dims[1:], strict=False)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.lin):
            x = layer(x)
            if i < len(self.lin) - 1:
                x = torch.tanh(x)
        return x.squeeze(-1)  # logits


def policy_sha(skill: str) -> str:
    return str(load_manifest(pretrained_dir(skill))["sha256"])


def data_policy_sha(skill: str) -> str:
    """The sha256 of the policy that produced the collected rollouts of ``skill``."""
    meta = json.loads((DATA / f"{skill}.meta.json").read_text())
    return str(meta["policy_sha256"])


# ----------------------------------------------------------------------------- collect
def collect(skill: str, n: int, seed: int, expert: bool, out: Path, first: int = 0) -> None:
    from sim.env import TabletopEnv
    from skills.runtime import load_pretrained

    torch.set_num_threads(1)
    env = TabletopEnv()
    policy = load_pretrained(skill)
    layouts = list(WEIGHTS[skill])
    assert set(layouts) <= set(LAYOUTS[skill])
    p = np.asarray([WEIGHTS[skill][k] for k in layouts], dtype=np.float64)
    p /= p.sum()
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    ok = 0
    with open(out, "a" if first else "w") as f:
        for i in range(first, first + n):
            rng = np.random.default_rng([seed, i])
            layout = str(rng.choice(layouts, p=p))
            start = sample_start(env, skill, rng, layout)
            rec = {
                "i": i,
                "layout": layout,
                "params": start.params.model_dump(mode="json"),
                "world": start.world.model_dump(mode="json"),
                "policy": run_skill(env, skill, start, policy),
            }
            if expert:
                rec["expert"] = run_skill(env, skill, start, None)
            ok += rec["policy"]
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            if (i + 1) % 100 == 0:
                print(f"{skill}: {i + 1}/{first + n} ({ok} ok) {time.time() - t0:.0f}s", flush=True)
    meta = {"skill": skill, "n": first + n, "seed": seed, "policy_sha256": policy_sha(skill)}
    out.with_suffix(".meta.json").write_text(json.dumps(meta) + "\n")


def load_data(skill: str, path: Path | None = None):
    path = path or DATA / f"{skill}.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    P = get(skill).Params
    X, y, split, layouts, expert, recs_out = [], [], [], [], [], []
    for r in recs:
        w = WorldState.model_validate(r["world"])
        params = P.model_validate(r["params"])
        X.append(SM.features(skill, w, params))
        y.append(float(r["policy"]))
        split.append(r["i"] % 4)
        layouts.append(r["layout"])
        expert.append(r.get("expert"))
        recs_out.append((w, params))
    return np.asarray(X), np.asarray(y), np.asarray(split), layouts, expert, recs_out


# ----------------------------------------------------------------------------- metrics
def auc(p: np.ndarray, y: np.ndarray) -> float | None:
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return None
    gt = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    return float(gt)


# ----------------------------------------------------------------------------- fit
def fit(skill: str, seed: int = 0, threshold: float = 0.5, out_dir: Path = SM.DIR) -> dict:
    torch.manual_seed(seed)
    X, y, split, *_ = load_data(skill)
    tr, cal, te = split >= 2, split == 1, split == 0
    mean, std = X[tr].mean(0), X[tr].std(0)
    std = np.where(std < 1e-6, 1.0, std)
    Z = torch.as_tensor((X - mean) / std, dtype=torch.float32)
    Y = torch.as_tensor(y, dtype=torch.float32)
    net = Net(X.shape[1], HIDDEN)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-4)
    lossf = torch.nn.BCEWithLogitsLoss()
    best, best_state = math.inf, None
    idx_tr = torch.as_tensor(np.where(tr)[0])
    for epoch in range(600):
        net.train()
        opt.zero_grad()
        loss = lossf(net(Z[idx_tr]), Y[idx_tr])
        loss.backward()
        opt.step()
        if epoch % 10 == 9:
            with torch.no_grad():
                v = float(lossf(net(Z[cal]), Y[cal]))
            if v < best - 1e-5:
                best, best_state = v, {k: t.clone() for k, t in net.state_dict().items()}
    net.load_state_dict(best_state)
    # temperature scaling on the calibration split, folded into the last layer
    with torch.no_grad():
        logits_cal = net(Z[cal])
    temps = np.linspace(0.3, 3.0, 55)
    nll = [float(lossf(logits_cal / t, Y[cal])) for t in temps]
    temp = float(temps[int(np.argmin(nll))])
    last = net.lin[-1]
    with torch.no_grad():
        last.weight /= temp
        last.bias /= temp
        p_te = torch.sigmoid(net(Z[te])).numpy().astype(np.float64)
    metrics = {
        "ece": round(ece(p_te, y[te]), 4),
        "brier": round(brier(p_te, y[te]), 4),
        "auc": None if (a := auc(p_te, y[te])) is None else round(a, 4),
        "test_episodes": int(te.sum()),
        "test_success_rate": round(float(y[te].mean()), 4),
    }
    meta = {
        "features": SM.FEATURES[skill],
        "mean": [float(v) for v in mean],
        "std": [float(v) for v in std],
        "hidden": HIDDEN,
        "threshold": threshold,
        "temperature": temp,
        # the policy whose rollouts these are (recorded when they were collected)
        "policy_sha256": data_policy_sha(skill),
        "episodes": {"train": int(tr.sum()), "calibration": int(cal.sum()), "test": int(te.sum())},
        "held_out": metrics,
        "refit": f"python scripts/affordance.py collect {skill} -n N && "
        f"python scripts/affordance.py fit {skill}",
    }
    layers = [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in net.lin]
    path = SM.save(skill, layers, meta, out_dir)
    p_np = SM.load(skill, out_dir).prob_features(X[te])
    assert np.allclose(p_np, p_te, atol=1e-4), "numpy inference differs from the fit"

    print(f"{skill}: {json.dumps(metrics)} -> {path}")
    return metrics


# ----------------------------------------------------------------------------- report
def report(skills: list[str], png: Path | None) -> int:
    rows = {}
    for skill in skills:
        model = SM.load(skill)
        X, y, split, layouts, *_ = load_data(skill)
        te = split == 0
        p = model.prob_features(X[te])
        yt = y[te]
        lay = np.asarray(layouts)[te]
        stale = model.manifest.policy_sha256 != policy_sha(skill)
        rows[skill] = (p, yt)
        low = p < model.threshold
        among = float(yt[low].mean()) if low.any() else float("nan")
        print(
            f"{skill}: held-out n={len(yt)} success={yt.mean():.3f} "
            f"ECE={ece(p, yt):.4f} Brier={brier(p, yt):.4f} AUC={auc(p, yt) or float('nan'):.3f} "
            f"below threshold {model.threshold}: {float(low.mean()):.3f} "
            f"(their success rate {among:.3f})"
            + ("  [STALE: the shipped policy changed since the fit; refit]" if stale else "")
        )
        for k in sorted(set(lay)):
            m = lay == k
            print(f"    {k:10s} n={m.sum():4d} success={yt[m].mean():.3f} mean p={p[m].mean():.3f}")
    if png is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(rows), figsize=(4.2 * len(rows), 4.2), squeeze=False)
        for ax, (skill, (p, yt)) in zip(axes[0], rows.items(), strict=False):
            bins = np.linspace(0, 1, 11)
            idx = np.minimum((p * 10).astype(int), 9)
            cx, cy, cn = [], [], []
            for b in range(10):
                m = idx == b
                if m.any():
                    cx.append(p[m].mean())
                    cy.append(yt[m].mean())
                    cn.append(int(m.sum()))
            ax.plot([0, 1], [0, 1], "k--", lw=1, label="perfect")
            ax.plot(cx, cy, "o-", label="predictor")
            for x_, y_, n_ in zip(cx, cy, cn, strict=False):
                ax.annotate(
                    str(n_), (x_, y_), textcoords="offset points", xytext=(4, -10), fontsize=7
                )
            ax.set_xticks(bins[::2])
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_xlabel("predicted P(success)")
            ax.set_ylabel("observed success rate")
            ax.set_title(f"{skill}: ECE {ece(p, yt):.3f}, Brier {brier(p, yt):.3f} (n={len(yt)})")
            ax.legend(loc="upper left", fontsize=8)
        fig.suptitle("Success predictors on held-out rollouts (points: 10 equal-width bins)")
        fig.tight_layout()
        png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(png, dpi=110)
        print(f"reliability diagram: {png}")
    return 0


# ----------------------------------------------------------------------------- verify
def verify() -> int:
    """The geometric ``graspable`` predicate against the pick rollouts (policy and expert)."""
    _, y, _, layouts, expert, recs = load_data("pick")
    table: dict = {}
    for (w, params), ok, ex, lay in zip(recs, y, expert, layouts, strict=False):
        g = w.graspable(params.object)
        r = table.setdefault((lay, g), [0, 0, 0])
        r[0] += 1
        r[1] += int(ok)
        r[2] += int(bool(ex))
    print("layout      graspable  n     policy ok  expert ok")
    tot = {True: [0, 0, 0], False: [0, 0, 0]}
    for (lay, g), (n, p, e) in sorted(table.items()):
        print(f"{lay:10s}  {str(g):9s}  {n:4d}  {p:4d} ({p / n:.2f})  {e:4d} ({e / n:.2f})")
        for j, v in enumerate((n, p, e)):
            tot[g][j] += v
    for g in (True, False):
        n, p, e = tot[g]
        if n:
            print(f"all         {str(g):9s}  {n:4d}  {p:4d} ({p / n:.2f})  {e:4d} ({e / n:.2f})")
    return 0


# ----------------------------------------------------------------------------- e2e
E2E_LAYOUTS = ("pair", "column", "rotated", "edges", "wall", "block")


def e2e_scene(layout: str, rng: np.random.Generator) -> tuple[dict, str]:
    """Cube poses and an instruction about the first cube, for one crowded scene."""
    from sim import scene

    names = [str(n) for n in rng.permutation(scene.CUBE_NAMES)]
    a = names[0]
    x, y = (float(v) for v in rng.uniform([-0.15, -0.2], [0.15, 0.04]))
    yaw = float(rng.uniform(-0.2, 0.2))
    # touching (to half a millimetre) at this yaw: the cubes' widths along y plus a gap
    dy = 2 * scene.CUBE_HALF * (math.cos(abs(yaw)) + math.sin(abs(yaw))) + 0.0005
    if layout == "pair":
        cubes = {a: [x, y, yaw], names[1]: [x, y + dy * rng.choice([-1, 1]), yaw]}
    elif layout == "column":
        cubes = {a: [x, y, yaw], names[1]: [x, y + dy, yaw], names[2]: [x, y - dy, yaw]}
    elif layout == "block":
        cubes = {
            a: [x, y, 0.0],
            names[1]: [x + 0.0405, y, 0.0],
            names[2]: [x, y + 0.0405, 0.0],
            names[3]: [x + 0.0405, y + 0.0405, 0.0],
        }
    elif layout == "wall":
        cubes = {a: [float(rng.uniform(-0.2, 0.2)), 0.182 - 0.0205, 0.0], names[1]: None}
    elif layout == "edges":
        lo, hi = scene.SPAWN_LOW - 0.04, scene.SPAWN_HIGH + 0.04
        xy = rng.uniform(lo, hi)
        side = int(rng.integers(4))
        xy[side % 2] = (lo if side < 2 else hi)[side % 2]
        cubes = {a: [float(xy[0]), float(xy[1]), float(rng.uniform(-0.78, 0.78))]}
        cubes.update({n: None for n in names[1:3]})
    else:  # rotated
        cubes = {n: [*rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH), 0.0] for n in names[:3]}
        pts = list(cubes.values())
        if any(
            np.hypot(p[0] - q[0], p[1] - q[1]) < scene.SPAWN_MIN_DIST
            for i, p in enumerate(pts)
            for q in pts[i + 1 :]
        ):
            return e2e_scene(layout, rng)
        for v in cubes.values():
            v[2] = float(rng.uniform(-0.78, 0.78))
    for n, v in cubes.items():
        if v is not None:
            cubes[n] = [round(float(c), 4) for c in v]
    col = a.split("_")[0]
    bin_col = col if col in scene.BIN_COLORS else "green"
    task = f"put the {col} block in the {bin_col} bin"
    return cubes, task


def e2e(n: int, seed: int, layouts: list[str]) -> int:
    """Crowded, rotated and edge scenes run end to end with the rules planner."""
    import tempfile

    from skillbridge.runner.runner import run_task

    print("layout    runs  success  refused  failed  repaired(push inserted)")
    for layout in layouts:
        ok = refused = failed = repaired = 0
        for i in range(n):
            rng = np.random.default_rng([seed, E2E_LAYOUTS.index(layout), i])
            cubes, task = e2e_scene(layout, rng)
            with tempfile.TemporaryDirectory() as d:
                r = run_task(task, seed=i, llm="rules", route="rules", cubes=cubes, out_dir=Path(d))
            plan = r.accepted_plan
            repaired += bool(plan) and plan[0].get("skill") == "push"
            if r.success:
                ok += 1
            elif not plan:
                refused += 1
            else:
                failed += 1
        print(f"{layout:8s}  {n:4d}  {ok:7d}  {refused:7d}  {failed:6d}  {repaired:7d}", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("skill", choices=SM.skills())
    c.add_argument("-n", type=int, default=2000)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--expert", action="store_true")
    c.add_argument("--out", type=Path)
    c.add_argument("--start", type=int, default=0, help="append episodes start.. to the file")
    f = sub.add_parser("fit")
    f.add_argument("skill", choices=SM.skills())
    f.add_argument("--threshold", type=float, default=0.5)
    r = sub.add_parser("report")
    r.add_argument("skills", nargs="*", default=list(SM.skills()))
    r.add_argument("--png", type=Path)
    sub.add_parser("verify")
    e = sub.add_parser("e2e")
    e.add_argument("-n", type=int, default=20)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--layouts", default=",".join(E2E_LAYOUTS))
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    if a.cmd == "collect":
        collect(a.skill, a.n, a.seed, a.expert, a.out or DATA / f"{a.skill}.jsonl", a.start)
    elif a.cmd == "fit":
        fit(a.skill, threshold=a.threshold)
    elif a.cmd == "report":
        return report(a.skills, a.png)
    elif a.cmd == "verify":
        return verify()
    elif a.cmd == "e2e":
        return e2e(a.n, a.seed, a.layouts.split(","))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
