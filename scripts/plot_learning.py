"""Learning curves of skill training runs, as one PNG.

    python scripts/plot_learning.py runs/s21/ppo/pick_1 skills/pretrained/place -o curves.png

Each argument is a run folder or a policy folder holding ``evaluations.json`` (a run's
periodic evaluations: success over its evaluation episodes, on the run's own start mix,
randomised conditions included). One panel per skill; several folders of one skill are
stages (``train --init`` continuing the one before), drawn one after the other on a common
axis of RL steps. ``--with-init`` also draws the stage a fine-tuned policy continued, where
its manifest recorded that curve. The shaded band is the 95% Wilson interval of each
evaluation, so a wiggle inside it is read as noise, not progress.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.util import wilson  # noqa: E402


def curves(
    folder: Path, with_init: bool = True
) -> list[tuple[str, str, list[tuple[int, float, int]]]]:
    """(skill, label, [(timesteps, success rate, episodes)]) per stage found in ``folder``."""
    f = folder / "evaluations.json"
    if not f.is_file():
        raise SystemExit(f"error: {f} not found (give a run folder or a policy folder)")
    try:
        evals = json.loads(f.read_text())
        last = [(int(e["timesteps"]), float(e["success_rate"]), int(e["episodes"])) for e in evals]
    except (ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"error: {f}: not a list of evaluations ({e})") from None
    out = []
    m = folder / "manifest.json"
    if not m.is_file():
        m = folder / "best" / "manifest.json"
    manifest = json.loads(m.read_text()) if m.is_file() else {}
    init = manifest.get("init") or {}
    name = str(manifest.get("skill", folder.name))
    if with_init and init.get("curve"):
        out.append((name, f"before {folder.name} (the stage it continued)", init["curve"]))
    tag = " (--init)" if init else ""
    out.append((name, f"{folder.name}{tag}", last))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("-o", "--out", type=Path, required=True, help="PNG to write")
    ap.add_argument("--title", default="success over training (periodic evaluations)")
    ap.add_argument("--ymin", type=float, default=0.0, help="lower end of the success axis")
    ap.add_argument("--with-init", action="store_true", help="draw the stage each continued")
    a = ap.parse_args(argv)
    if a.out.suffix.lower() != ".png":
        raise SystemExit(f"error: {a.out}: the output must end in .png")
    by_skill: dict[str, list[tuple[str, list]]] = {}
    for f in a.folders:
        for skill, label, pts in curves(f, a.with_init):
            by_skill.setdefault(skill, []).append((label, pts))
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.pyplot as plt

    n = len(by_skill)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.6), dpi=110, squeeze=False)
    for ax, (skill, stages) in zip(axes[0], by_skill.items(), strict=True):
        offset = 0
        for label, pts in stages:  # one stage after the other on a common step axis
            t = [offset + p[0] for p in pts]
            r = [p[1] for p in pts]
            band = [wilson(round(p[1] * p[2]), p[2]) for p in pts]
            (line,) = ax.plot(t, r, marker="o", markersize=2.5, label=label)
            lo, hi = [b[0] for b in band], [b[1] for b in band]
            ax.fill_between(t, lo, hi, alpha=0.15, color=line.get_color())
            offset = t[-1] if t else offset
        ax.xaxis.set_major_formatter(lambda x, _: f"{x / 1000:g}k")
        ax.set_title(skill, fontsize=10)
        ax.set_xlabel("RL steps (stages in sequence)")
        ax.set_ylim(a.ymin, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("success rate")
    fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_name(a.out.name + ".tmp.png")
    fig.savefig(tmp)
    os.replace(tmp, a.out)  # never a half-written figure
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
