"""Seeded generators of planner-like output, and the oracle that judges an acceptance.

Shared by the hypothesis tests and ``scripts/bench_bridge.py`` so both attack the bridge
the same way: valid plans found by a random walk over the registry, mutations of them
(typos, swapped names, dropped or extra keys, reordering, bad numbers, wrappers), random
JSON and random text. ``unsafe`` re-checks an accepted result independently of the
pipeline's own code path (full schema + a fresh step-by-step simulation).
"""

from __future__ import annotations

import json
import random
from typing import Any

from bridge.models import DEFAULT_MAX_STEPS, SUBGOAL_MODELS
from bridge.schema import Vocabulary, compile_schema
from bridge.validate import BridgeResult
from sim.world import WorldState
from skills.registry import REGISTRY

JUNK_NAMES = ["purple_block", "red_blok", "green bin", "table", "gripper", "", "RED_BLOCK",
              "red_block ", "bin", "the red block", "x" * 100]
JUNK_VALUES: list[Any] = [None, True, 0, -1, 1e308, 3.5, [], {}, [1], "0.1", [0.1, "y"],
                          float("nan"), float("inf"), 10**400]


def _candidates(world: WorldState) -> list[dict]:
    v = Vocabulary.of(world)
    out: list[dict] = [{"skill": "home"}]
    for o in v.objects:
        out.append({"skill": "pick", "object": o})
        for r in v.regions:
            out.append({"skill": "push", "object": o, "target": r})
    for t in v.bins + v.objects + v.regions:
        out.append({"skill": "place", "target": t})
    return out


def _runnable(world: WorldState, step: dict):
    sub = SUBGOAL_MODELS[step["skill"]].model_validate(step)
    skill = REGISTRY[step["skill"]]
    if skill.preconditions(world, sub):
        return None
    nxt = skill.effect(world, sub)
    return None if nxt.model_dump() == world.model_dump() else nxt


def valid_plan(world: WorldState, rng: random.Random, max_len: int = 6) -> list[dict]:
    """A random executable plan (possibly with a random [x, y] push)."""
    plan: list[dict] = []
    w = world
    for _ in range(rng.randint(1, max_len)):
        cands = _candidates(w)
        if rng.random() < 0.2 and w.held_object is None:
            o = rng.choice(w.object_names) if w.object_names else None
            if o:
                cands.append({"skill": "push", "object": o,
                              "target": [round(rng.uniform(-0.2, 0.2), 3),
                                         round(rng.uniform(-0.25, 0.2), 3)]})
        rng.shuffle(cands)
        for c in cands:
            nxt = _runnable(w, c)
            if nxt is not None:
                plan.append(c)
                w = nxt
                break
        else:
            break
    return plan


def _names(world: WorldState) -> list[str]:
    v = Vocabulary.of(world)
    return list(v.objects + v.bins + v.regions) + list(SUBGOAL_MODELS)


def mutate(plan: list[dict], world: WorldState, rng: random.Random) -> Any:
    """One to three random edits of a plan (a deep copy; the input is untouched)."""
    doc: list = json.loads(json.dumps(plan))
    pool = _names(world) + JUNK_NAMES
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(10)
        if not doc:
            doc.append({"skill": rng.choice(pool)})
            continue
        i = rng.randrange(len(doc))
        step = doc[i]
        if not isinstance(step, dict):
            doc[i] = {"skill": "home"}
            continue
        keys = list(step) or ["skill"]
        step.setdefault("skill", rng.choice(pool))
        if kind == 0:
            step[rng.choice(keys)] = rng.choice(pool)
        elif kind == 1:
            step.pop(rng.choice(keys), None)
        elif kind == 2:
            step[rng.choice(["speed", "object", "target", "note", "skill"])] = rng.choice(pool)
        elif kind == 3:
            doc.insert(rng.randrange(len(doc) + 1), dict(step))
        elif kind == 4:
            j = rng.randrange(len(doc))
            doc[i], doc[j] = doc[j], doc[i]
        elif kind == 5:
            doc.pop(i)
        elif kind == 6:
            step[rng.choice(keys)] = rng.choice(JUNK_VALUES)
        elif kind == 7:
            step["target"] = [rng.uniform(-1, 1), rng.uniform(-1, 1)]
        elif kind == 8:
            k = rng.choice(keys)
            if isinstance(step[k], str) and step[k]:
                s = step[k]
                p = rng.randrange(len(s))
                step[k] = s[:p] + rng.choice("abxyz_ ") + s[p + 1:]
        else:
            doc[i] = rng.choice(JUNK_VALUES)
    return doc


def wrap(doc: Any, rng: random.Random, damaging: bool = True) -> Any:
    """Present a JSON value the way models do: bare, enveloped, fenced, in prose, repeated;
    with ``damaging`` also truncated or single-quoted."""
    try:
        text = json.dumps(doc)
    except (ValueError, TypeError):
        return doc
    kind = rng.randrange(8 if damaging else 4)
    if kind == 3 and not damaging:
        kind = 5 if rng.random() < 0.5 else 3
    if kind == 0:
        return doc
    if kind == 1:
        return json.dumps({"steps": doc}) if isinstance(doc, list) else text
    if kind == 2:
        return f"```json\n{text}\n```"
    if kind == 3:
        return f"Sure! Here is the plan:\n{text}\nThis should work."
    if kind == 4:
        return text[: rng.randrange(len(text) + 1)]
    if kind == 5:
        return text + "\n" + text
    if kind == 6:
        return text.replace('"', "'")
    return text


def random_json(rng: random.Random, depth: int = 0) -> Any:
    k = rng.randrange(8 if depth < 4 else 5)
    if k == 0:
        return None
    if k == 1:
        return rng.choice([True, False])
    if k == 2:
        return rng.choice([0, -3, 2**70, 0.5, -1e-9, 1e300])
    if k == 3:
        return rng.choice(JUNK_NAMES + ["steps", "skill", "pick", "home", "refuse"])
    if k == 4:
        return rng.uniform(-1, 1)
    if k == 5:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["steps", "skill", "object", "target", "refuse", "plan", "x"]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randrange(4))}


def random_text(rng: random.Random) -> str:
    alphabet = '{}[]":,. \n`abcdefghijklmnopqrstuvwxyz_0123456789-'
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(80)))


def case(world: WorldState, rng: random.Random) -> tuple[str, Any]:
    """One fuzz case: (family, raw)."""
    r = rng.random()
    if r < 0.25:
        return "valid", wrap(valid_plan(world, rng), rng, damaging=False)
    if r < 0.75:
        return "mutated", wrap(mutate(valid_plan(world, rng), world, rng), rng)
    if r < 0.9:
        return "json", wrap(random_json(rng), rng)
    return "text", random_text(rng)


def unsafe(res: BridgeResult, world: WorldState, max_steps: int = DEFAULT_MAX_STEPS) -> bool:
    """True when ``res`` accepted something that must not run. Independent of the pipeline:
    the full schema validator on the plan, then a fresh simulation with full-state
    comparison for no-ops."""
    if not res.accepted:
        return False
    steps = res.plan_json()
    if not steps or len(steps) > max_steps:
        return True
    cs = compile_schema(Vocabulary.of(world), max_steps)
    if not cs.full.is_valid({"steps": steps}):
        return True
    w = world
    for step in steps:
        nxt = _runnable(w, step)
        if nxt is None:
            return True
        w = nxt
    return False
