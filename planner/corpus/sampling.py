"""One sample per call, by profile, and the seeded corpus: what each profile draws and in
which proportions, duplicates dropped, the held-out split."""

from __future__ import annotations

import random

from planner.corpus.articulated import articulated, device_refusal
from planner.corpus.forms import BINS
from planner.corpus.lists import join_clauses, reordered
from planner.corpus.noise import finish
from planner.corpus.phrasing import phrasing
from planner.corpus.plans import quantified, random_clauses
from planner.corpus.references import reference
from planner.corpus.refusals import absent, refusal
from planner.corpus.scenes import random_scene
from planner.corpus.writer import Writer
from planner.grammar import Clause, command

#: Corpus profiles: ``base`` (the first stage), ``lists`` (more multi-item instructions:
#: lists, goal-state lists and ordering, for a second stage from the first's adapter) and
#: ``phrasing`` (a third stage: shared destinations, bins as subjects, bare-colour
#: shorthand, "the same bin as", "out of one bin and into another", goal states with a
#: gripper or home clause, more things of a colour; mixed with the ``lists`` samples).
#: ``articulated`` (a fourth stage: the articulated scene's drawer, light, button and
#: towers, half of it ``lists`` and ``phrasing`` samples; see :func:`articulated_sample`).
TABLETOP_PROFILES = ("base", "lists", "phrasing")
PROFILES = (*TABLETOP_PROFILES, "articulated")


def articulated_sample(r: random.Random, *, typos: bool = True) -> dict:
    """One sample of the ``articulated`` profile: articulated-scene instructions, device
    requests refused on the tabletop, and (about half) the ``lists`` / ``phrasing``
    profiles' tabletop samples, so that the tabletop is not forgotten."""
    k = r.random()
    if k < 0.46:
        return sample(r, r.choice(["lists", "phrasing"]), typos=typos)
    casual = r.random() < 0.2
    w = Writer(
        r,
        synonyms=r.choice([0.0, 0.0, 0.3, 0.6]),
        knowledge=r.choice([0.0, 0.0, 0.0, 0.35]),
        goal_state=r.choice([0.0, 0.3, 0.5]),
        casual=casual,
    )
    if k < 0.54:
        text, cmd, sc = device_refusal(r, w)
        return finish(r, text, cmd, "no_device", sc, noise=True, casual=casual, typos=typos)
    text, clauses, sc = articulated(r, w)
    return finish(
        r, text, command(clauses), "articulated", sc, noise=True, casual=casual, typos=typos
    )


def sample(r: random.Random, profile: str = "base", *, typos: bool = True) -> dict:  # noqa: C901
    """One (instruction, scene, command, category) sample (``typos=False``: no keyboard
    slips, for :func:`words`; the random stream is otherwise the same)."""
    if profile == "articulated":
        return articulated_sample(r, typos=typos)
    k = r.random()
    if k < 0.10:
        text, cmd = refusal(r)
        return finish(r, text, cmd, "refuse", random_scene(r), noise=r.random() < 0.3, typos=typos)
    if k < 0.16:
        text, cmd = absent(r)
        return finish(r, text, cmd, "absent", random_scene(r), noise=r.random() < 0.3, typos=typos)
    casual = r.random() < 0.2
    if profile == "phrasing" and r.random() < 0.45:
        w = Writer(
            r,
            synonyms=r.choice([0.0, 0.3]),
            knowledge=r.choice([0.0, 0.3]),
            goal_state=r.choice([0.0, 0.5]),
            casual=casual,
        )
        text, clauses, sc = phrasing(r, w)
        return finish(
            r, text, command(clauses), "phrasing", sc, noise=True, casual=casual, typos=typos
        )
    w = Writer(
        r,
        synonyms=r.choice([0.0, 0.0, 0.3, 0.6]),
        knowledge=r.choice([0.0, 0.0, 0.0, 0.35]),
        goal_state=r.choice([0.0, 0.0, 0.3, 0.7]),
        casual=casual,
    )
    if k < 0.27:
        text, clauses, sc = reference(r, w)
        return finish(
            r, text, command(clauses), "reference", sc, noise=True, casual=casual, typos=typos
        )
    if k < 0.36:
        clauses = [quantified(r)]
        if r.random() < 0.25:
            clauses.append(Clause("home"))
    elif k < 0.40:
        clauses = [Clause("it", dest=r.choice(BINS))]
        if r.random() < 0.3:
            clauses.append(Clause("home"))
    else:
        counts = [45, 35, 15, 5] if profile == "base" else [20, 38, 30, 12]  # lists, phrasing
        clauses = random_clauses(r, r.choices([1, 2, 3, 4], weights=counts)[0])
        if r.random() < 0.15:
            clauses.append(Clause("home"))
    if len(clauses) == 2 and r.random() < 0.25:
        text = reordered(r, w, clauses[0], clauses[1])
        cat = "ordering"
    else:
        styles = ["plain", "list", "numbered", "bullets", "ordinal"]
        weights = [60, 12, 8, 6, 14]
        if profile in ("lists", "phrasing"):
            styles.append("goal_list")
            weights = [35, 18, 9, 8, 12, 18]
            w.p_goal = max(w.p_goal, 0.5)
        style = r.choices(styles, weights=weights)[0] if len(clauses) > 1 else "plain"
        parts = [w.clause(c) for c in clauses]
        text = join_clauses(r, parts, style)
        cat = "list" if style != "plain" else "plain"
    sc = random_scene(r)
    if clauses[0].kind == "it":
        held = r.choice(sc.cubes)
        sc.held = held
        sc.in_bin.pop(held, None)
        sc.on = {a: b for a, b in sc.on.items() if held not in (a, b)}
    return finish(r, text, command(clauses), cat, sc, noise=True, casual=casual, typos=typos)


def generate(n: int, seed: int = 0, profile: str = "base") -> list[dict]:
    """``n`` samples, reproducible from ``seed``; duplicates of an instruction are dropped
    (so the held-out split never contains a training instruction word for word)."""
    r = random.Random(seed)
    out: list[dict] = []
    seen: set[str] = set()
    while len(out) < n:
        s = sample(r, profile)
        key = s["instruction"].lower()
        if key in seen:
            continue
        seen.add(key)
        out.append(s)
    return out


def split(samples: list[dict], held_out: float = 0.05) -> tuple[list[dict], list[dict]]:
    """Deterministic train / held-out split (the last fraction)."""
    k = max(1, int(len(samples) * held_out))
    return samples[:-k], samples[-k:]
