"""Random plans as clauses: each executable after those before it."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from planner.corpus.forms import BINS, CUBES, REGIONS
from planner.grammar import Clause

T = TypeVar("T")


def other_than(r: random.Random, xs: Sequence[T], *not_in: T) -> T:
    return r.choice([x for x in xs if x not in not_in])


def random_clause(
    r: random.Random, used: set[str], bases: set[str], *, last: bool = False
) -> Clause:
    """A clause a competent robot could execute after the ones before it: a block already
    moved is not moved again, nothing is stacked onto a moved block or taken from under
    another, and a bare pick only ends a plan (the gripper would still hold it)."""
    free = [c for c in CUBES if c not in used and c not in bases] or list(CUBES)
    o = r.choice(free)
    kinds, weights = ["move", "stack", "region", "push", "pick"], [46, 20, 8, 18, 4]
    if not last:
        weights[4] = 0
    k = r.choices(kinds, weights=weights)[0]
    if k == "move":
        return Clause("move", o, r.choice(BINS))
    if k == "stack":
        under = [c for c in CUBES if c != o and c not in used and c not in bases]
        if under:
            return Clause("stack", o, r.choice(under))
        return Clause("move", o, r.choice(BINS))
    if k == "region":
        return Clause("region", o, r.choice(REGIONS))
    if k == "push":
        return Clause("push", o, r.choice(REGIONS))
    return Clause("pick", o)


def random_clauses(r: random.Random, n: int) -> list[Clause]:
    """``n`` clauses of :func:`random_clause`, each executable after those before it."""
    used: set[str] = set()
    bases: set[str] = set()
    clauses: list[Clause] = []
    for i in range(n):
        c = random_clause(r, used, bases, last=i == n - 1)
        used.add(c.named_obj)
        if c.kind == "stack":
            bases.add(c.named_dest)
        clauses.append(c)
    return clauses


def quantified(r: random.Random) -> Clause:
    k = r.choices(["all", "all_match", "except", "except_match"], weights=[3, 3, 4, 2])[0]
    if k == "all":
        return Clause("all", dest=r.choice(BINS))
    if k == "all_match":
        return Clause("all_match")
    n = 1 if r.random() < 0.8 else 2
    excl = tuple(r.sample(CUBES, n))
    if k == "except":
        return Clause("except", dest=r.choice(BINS), excl=excl)
    return Clause("except_match", excl=excl)


def named(clauses: list[Clause]) -> tuple[str, ...]:
    """The cubes a plan names (as object, or as the block a stack goes on)."""
    out = {c.obj for c in clauses if c.obj} | {c.dest for c in clauses if c.kind == "stack"}
    return tuple(c for c in CUBES if c in out)
