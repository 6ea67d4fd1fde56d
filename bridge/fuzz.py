"""Seeded generators of planner-like output, and the oracle that judges an acceptance.

Shared by the hypothesis tests and ``scripts/bench_bridge.py`` so both attack the bridge
the same way: valid plans found by a random walk over the registry, mutations of them
(typos, swapped names, dropped or extra keys, reordering, bad numbers, wrappers), random
JSON and random text; and the ways a model's reply gets cut or garbled *around* a plan it
meant (``BROKEN_FAMILIES``): truncated anywhere, truncated right after a complete step (a
strict prefix of the intended plan), a refusal broken so that its steps survive and its
``refuse`` does not, and a plan followed by many values and a correction. ``verdict``
re-checks an accepted result independently of the pipeline's own code path (full schema
+ a fresh step-by-step simulation) and against what the reply meant.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, NamedTuple

from bridge.models import DEFAULT_MAX_STEPS, SUBGOAL_MODELS
from bridge.schema import Vocabulary, compile_schema
from bridge.validate import BridgeResult
from sim.world import WorldState
from skills.registry import REGISTRY
from skills.success_model import low_affordance

JUNK_NAMES = [
    "purple_block",
    "red_blok",
    "green bin",
    "table",
    "gripper",
    "",
    "RED_BLOCK",
    "red_block ",
    "bin",
    "the red block",
    "x" * 100,
]
JUNK_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1e308,
    3.5,
    [],
    {},
    [1],
    "0.1",
    [0.1, "y"],
    float("nan"),
    float("inf"),
    10**400,
]


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


def _runnable(world: WorldState, step: dict) -> WorldState | None:
    sub = SUBGOAL_MODELS[step["skill"]].model_validate(step)
    skill = REGISTRY[step["skill"]]
    if skill.preconditions(world, sub) or low_affordance(world, step, sub) is not None:
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
                cands.append(
                    {
                        "skill": "push",
                        "object": o,
                        "target": [
                            round(rng.uniform(-0.2, 0.2), 3),
                            round(rng.uniform(-0.25, 0.2), 3),
                        ],
                    }
                )
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
                step[k] = s[:p] + rng.choice("abxyz_ ") + s[p + 1 :]
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


#: Families whose reply is broken around an intended plan or refusal (issue 10 A).
BROKEN_FAMILIES = ("truncated", "prefix", "lost_refusal", "correction")
#: Cut a plan after a complete step with one of these; none closes the value.
_PREFIX_TAILS = ["", ",", ", ", ",\n  ", " {", ', {"skill": "pl', ', {"skill"']
_REFUSALS = [
    "there is no purple block in the scene",
    "I cannot do that",
    "the task needs a skill I do not have",
]


class Case(NamedTuple):
    """One fuzz case. ``intent`` is what the reply meant (a plan's steps, or a refusal
    dict), None when unknown; ``exact``: an accepted plan must equal ``intent``."""

    family: str
    raw: Any
    intent: Any = None
    exact: bool = False


def _dress(text: str, rng: random.Random) -> str:
    """Text as a model sends it: alone, after prose, or in an (unclosed) code fence."""
    k = rng.randrange(3)
    if k == 0:
        return text
    if k == 1:
        return "Sure! Here is the plan:\n" + text
    return "```json\n" + text


def _plan_text(plan: list[dict], rng: random.Random) -> str:
    doc: Any = plan if rng.random() < 0.3 else {"steps": plan}
    return json.dumps(doc, indent=rng.choice([None, 2]))


def truncated(world: WorldState, rng: random.Random) -> Case:
    """A valid plan's reply (possibly with prose after it) cut at any character."""
    plan = valid_plan(world, rng)
    text = _plan_text(plan, rng)
    if rng.random() < 0.3:
        text += "\nThis should work."
    cut = rng.randrange(1, len(text))
    return Case("truncated", _dress(text[:cut], rng), plan, True)


def prefix(world: WorldState, rng: random.Random) -> Case:
    """A multi-step plan cut right after one of its complete steps: the bytes read so far
    hold a strict prefix of the intended plan, which must never run."""
    plan: list[dict] = []
    for _ in range(8):
        plan = valid_plan(world, rng)
        if len(plan) >= 2:
            break
    k = rng.randrange(1, len(plan)) if len(plan) > 1 else 1
    as_list, indent = rng.random() < 0.3, rng.choice([None, 2])
    text = json.dumps(plan[:k] if as_list else {"steps": plan[:k]}, indent=indent)
    cut = re.sub(r"\s*\]$" if as_list else r"\s*\]\s*\}$", "", text)
    return Case("prefix", _dress(cut + rng.choice(_PREFIX_TAILS), rng), plan, True)


def lost_refusal(world: WorldState, rng: random.Random) -> Case:
    """A refusal garbled so that a careless reader keeps its steps and drops its refusal:
    truncated, or with a trailing comma; steps before or after ``refuse``."""
    steps = valid_plan(world, rng) if rng.random() < 0.8 else []
    reason = rng.choice(_REFUSALS)
    first = [("refuse", reason), ("steps", steps)]
    if rng.random() < 0.5:
        first.reverse()
    text = json.dumps(dict(first))
    k = rng.randrange(4)
    if k == 0:
        text = text[: rng.randrange(1, len(text))]
    elif k == 1:
        text = text[:-1] + ",}"
    elif k == 2:
        text = text[:-1]
    else:
        text = text[:-2] + ",]}" if text.endswith("]}") else text[:-1] + ","
    return Case("lost_refusal", _dress(text, rng), {"refuse": reason, "steps": steps}, True)


def correction(world: WorldState, rng: random.Random) -> Case:
    """Plan A, many small JSON values, then "use this instead" and plan B: B was meant."""
    a, b = valid_plan(world, rng), valid_plan(world, rng)
    noise = " ".join(
        rng.choice(["[0]", "{}", "[1, 2]", '{"x": 1}'])
        for _ in range(rng.choice([3, 40, 63, 64, 70, 120]))
    )
    raw = (
        f"{json.dumps({'steps': a})}\n{noise}\nCorrection, use this instead:\n"
        f"{json.dumps({'steps': b})}"
    )
    return Case("correction", raw, b, True)


_BROKEN = {
    "truncated": truncated,
    "prefix": prefix,
    "lost_refusal": lost_refusal,
    "correction": correction,
}


def case(world: WorldState, rng: random.Random) -> Case:
    """One fuzz case of a random family."""
    r = rng.random()
    if r < 0.2:
        plan = valid_plan(world, rng)
        return Case("valid", wrap(plan, rng, damaging=False), plan, True)
    if r < 0.55:
        doc = mutate(valid_plan(world, rng), world, rng)
        return Case("mutated", wrap(doc, rng), doc)
    if r < 0.67:
        return Case("json", wrap(random_json(rng), rng))
    if r < 0.75:
        return Case("text", random_text(rng))
    fam = BROKEN_FAMILIES[min(int((r - 0.75) / 0.0625), len(BROKEN_FAMILIES) - 1)]
    return _BROKEN[fam](world, rng)


def _is_strict_prefix(short: list, long: Any) -> bool:
    return isinstance(long, list) and len(short) < len(long) and long[: len(short)] == short


def verdict(
    res: BridgeResult,
    world: WorldState,
    intent: Any = None,
    exact: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> str | None:
    """Why accepting ``res`` is unsafe, or None when it is not (or nothing was accepted).

    ``invalid``: the plan fails the full schema or a fresh simulation; ``refusal_lost``:
    the reply meant to refuse; ``prefix``: a strict prefix of the intended plan (a cut
    reply run as a shorter one); ``not_intended``: with ``exact``, any other plan."""
    if not res.accepted:
        return None
    steps = res.plan_json()
    if not steps or len(steps) > max_steps:
        return "invalid"
    cs = compile_schema(Vocabulary.of(world), max_steps)
    if not cs.full.is_valid({"steps": steps}):
        return "invalid"
    w = world
    for step in steps:
        nxt = _runnable(w, step)
        if nxt is None:
            return "invalid"
        w = nxt
    if isinstance(intent, dict) and isinstance(intent.get("refuse"), str):
        return "refusal_lost"
    if _is_strict_prefix(steps, intent):
        return "prefix"
    if exact and intent is not None and steps != intent:
        return "not_intended"
    return None


def unsafe(
    res: BridgeResult,
    world: WorldState,
    max_steps: int = DEFAULT_MAX_STEPS,
    intent: Any = None,
    exact: bool = False,
) -> bool:
    """True when ``res`` accepted something that must not run (see :func:`verdict`)."""
    return verdict(res, world, intent, exact, max_steps) is not None
