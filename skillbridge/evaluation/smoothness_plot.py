"""The smoothness figure: end-effector speed and jerk over one episode, switches marked.

Several labelled trajectories of the same task (the shipped policies before and after a
change, the scripted expert) are drawn on the same axes, each in its own colour with its
own switches, so a figure shows at a glance what a change did to the motion and where the
skills hand over. The measures themselves are :mod:`skillbridge.evaluation.smoothness`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from skillbridge.evaluation.smoothness import Trajectory, series


def plot_trajectories(
    sets: Sequence[tuple[str, Trajectory]], out: str | Path, title: str | None = None
) -> Path:
    """Write a PNG of speed and jerk over time for each ``(label, trajectory)``; the file
    is written to a temporary name and renamed, never left half-written."""
    if not sets:
        raise ValueError("nothing to plot")
    out = Path(out)
    if out.suffix.lower() != ".png":
        raise ValueError(f"{out}: the figure must end in .png")
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.pyplot as plt

    fig, (ax_v, ax_j) = plt.subplots(2, 1, figsize=(9.5, 5.6), dpi=110, sharex=True)
    for n, (label, traj) in enumerate(sets):
        s = series(traj)
        colour = f"C{n}"
        sw = len(s["switches_t"])
        ax_v.plot(s["speed_t"], s["speed"], color=colour, lw=1.2, label=f"{label} ({sw} switches)")
        ax_j.plot(s["jerk_t"], s["jerk"], color=colour, lw=1.0)
        for ax in (ax_v, ax_j):
            for t in s["switches_t"]:
                ax.axvline(t, color=colour, ls="--", lw=0.8, alpha=0.7)
            for t0, t1 in s["holds"]:  # no skill: the physics settling, the arm at rest
                ax.axvspan(t0, t1, color=colour, alpha=0.06, lw=0)
        if n == 0:  # the first set's skills named over their stretch of time
            for skill, t0, t1 in s["segments"]:
                ax_v.text(
                    (t0 + t1) / 2,
                    1.0,
                    skill,
                    transform=ax_v.get_xaxis_transform(),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    color=colour,
                )
    ax_v.set_ylabel("EE speed (m/s)")
    ax_j.set_ylabel("EE jerk (m/s³)")
    ax_j.set_xlabel("time (s); dashed: skill switches; shaded: holds (no skill)")
    for ax in (ax_v, ax_j):
        ax.grid(alpha=0.3)
    ax_v.legend(fontsize=7, loc="upper right")
    fig.suptitle(title or sets[0][1].name, fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}.png")
    try:
        fig.savefig(tmp)
        os.replace(tmp, out)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return out
