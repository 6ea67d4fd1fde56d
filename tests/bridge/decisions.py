"""The bridge's decisions on a fixed seeded fuzz set, as digests, to prove an optimisation
changed no decision.

The case stream is exactly ``scripts/bench_bridge.py``'s (same scenes, same ``random.Random``
draws), plus a second stream on articulated-scene worlds. A *decision* is everything
``validate`` answers except its latency: accepted or not, the plan, every reason (code,
path, message, hint), the refusal, the goal and its source, the extracted text and the
predicted world. ``decisions_fixture.json`` was recorded by the code before the speed work
of issue 25 (``python -m tests.bridge.decisions --write``); the tests recompute it.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bridge import fuzz, validate
from bridge.fuzz import case
from tests.scripts import load_script

FIXTURE = Path(__file__).with_name("decisions_fixture.json")
#: Cases whose digests are stored one by one (the rest only as block digests).
PER_CASE = 1000
BLOCK = 1000


def _pristine_junk() -> None:
    """Put ``bridge.fuzz.JUNK_VALUES`` back as a fresh process has it.

    ``mutate`` hands out its mutable junk values (``{}``, ``[]``, ``[1]``) themselves and
    later edits may change them in place, so the case stream depends on every case drawn
    before in the process; the bench runs in a fresh one. A freshly executed copy of the
    module gives the pristine values (the live list is refilled in place)."""
    spec = importlib.util.spec_from_file_location("_pristine_fuzz", fuzz.__file__)
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)
    fuzz.JUNK_VALUES[:] = copy.deepcopy(fresh.JUNK_VALUES)


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, default=repr, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def decision(res) -> dict:
    """What ``validate`` decided, without its timing."""
    d = res.to_dict()
    d.pop("latency_s")
    d["predicted"] = None if res.predicted is None else res.predicted.model_dump(mode="json")
    return d


def record(cases: int, seed: int, scene: str = "tabletop") -> dict:
    """Digests of the decisions on the bench's case stream (``cases`` cases, ``seed``), as
    a fresh process draws it."""
    _pristine_junk()
    worlds = load_script("bench_bridge").scenes(seed, scene=scene)
    rng = random.Random(seed)
    per_case: list[str] = []
    blocks: list[str] = []
    block = hashlib.sha256()
    inputs = hashlib.sha256()
    accepted = 0
    codes: Counter = Counter()
    for i in range(cases):
        w = worlds[rng.randrange(len(worlds))]
        c = case(w, rng)
        inputs.update(_digest([c.family, repr(c.raw)]).encode())
        res = validate(c.raw, w)
        dg = _digest(decision(res))
        if i < PER_CASE:
            per_case.append(dg[:12])
        block.update(dg.encode())
        if (i + 1) % BLOCK == 0 or i + 1 == cases:
            blocks.append(block.hexdigest()[:16])
            block = hashlib.sha256()
        accepted += res.accepted
        codes.update(res.codes[:1] or ["<accepted>"])
    return {
        "scene": scene,
        "cases": cases,
        "seed": seed,
        "inputs": inputs.hexdigest()[:16],
        "accepted": accepted,
        "first_codes": dict(sorted(codes.items())),
        "blocks": blocks,
        "per_case": per_case,
    }


#: The recorded sets: the bench's full set and a smaller articulated one.
SETS = (("tabletop", 10_000, 0), ("articulated", 2_000, 1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"(re)write {FIXTURE.name}")
    a = ap.parse_args(argv)
    out = {"sets": [record(n, s, sc) for sc, n, s in SETS]}
    if a.write:
        FIXTURE.write_text(json.dumps(out, indent=0) + "\n")
    else:
        print(json.dumps({k: v for k, v in out["sets"][0].items() if k != "per_case"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
