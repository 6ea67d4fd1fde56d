"""Calibrated asking: when the embedded model is unsure of its own plan, the robot asks.

Why: exact ambiguity ("the block" with four blocks) is caught by the understanding layer,
but a model can also be unsure of an instruction that reads clearly to a person and then
guess. In the spirit of KnowNo (Ren et al., 2023), the model's own score (the lowest
probability it gave any token of the command it wrote) is compared with a threshold chosen
on a calibration set, so that what the robot does execute is right at least
``TARGET_SUCCESS`` of the time. ``scripts/calibrate_asking.py`` measures it and writes
``planner/pretrained/asking.json`` (a JSON manifest: the threshold, the target, the set and
the figures it gave); this module only reads it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

#: Success wanted on what the robot executes without asking.
TARGET_SUCCESS = 0.95
#: Where the shipped calibration lives.
CALIBRATION = Path(__file__).resolve().parent / "pretrained" / "asking.json"


@functools.lru_cache(maxsize=4)
def _read(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        return {}
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def asking_threshold(path: Path = CALIBRATION) -> float:
    """The shipped threshold (0.0, never ask, when there is no valid calibration)."""
    tau = _read(str(path)).get("threshold")
    if isinstance(tau, (int, float)) and 0.0 <= float(tau) <= 1.0:
        return float(tau)
    return 0.0


def choose_threshold(scored: list[tuple[float, bool]], target: float = TARGET_SUCCESS) -> float:
    """The lowest threshold at which the plans kept (certainty at or above it) are right at
    least ``target`` of the time: the most the robot can do without asking.

    ``scored`` holds (certainty, right) per calibration instruction. With no threshold that
    reaches the target, the one with the best success is returned."""
    if not scored:
        return 0.0
    cands = sorted({0.0, *(c for c, _ in scored)})
    best, best_rate = cands[-1], -1.0
    for tau in cands:
        kept = [ok for c, ok in scored if c >= tau]
        if not kept:
            continue
        rate = sum(kept) / len(kept)
        if rate >= target:
            return tau
        if rate > best_rate:
            best, best_rate = tau, rate
    return best
