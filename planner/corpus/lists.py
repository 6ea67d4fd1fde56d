"""Several clauses as one instruction: joining words, numbered and bulleted lists,
ordinals, goal-state lists, and ordering words that put the second action first."""

from __future__ import annotations

import random

from planner.corpus.writer import Writer
from planner.grammar import Clause

_JOINS = [
    ", then ",
    " and then ",
    ". Then ",
    "; ",
    ", and then ",
    " then ",
    ". After that, ",
    ", afterwards ",
    ". Next, ",
    " and ",
    ", next ",
    ". ",
    " & then ",
    " -> ",
]


def join_clauses(r: random.Random, parts: list[str], style: str) -> str:
    if style == "numbered":
        return " ".join(f"{i + 1}{r.choice([')', '.', ':'])} {p}" for i, p in enumerate(parts))
    if style == "bullets":
        mark = r.choice(["-", "*", "•"])
        return "\n".join(f"{mark} {p}" for p in parts)
    if style == "ordinal":
        words = ["first", "second", "third", "fourth"]
        last = r.choice(["finally", "lastly", "last", "and finally"])
        out = []
        for i, p in enumerate(parts):
            w = last if i == len(parts) - 1 and len(parts) > 1 else words[i]
            out.append(f"{w}, {p}" if r.random() < 0.5 else f"{w} {p}")
        return r.choice([". ", ", ", "; "]).join(out)
    if style == "list":
        return r.choice([", ", "; ", " / ", " | "]).join(parts)
    if style == "goal_list":
        head = r.choice(
            [
                "final state:",
                "end state:",
                "target configuration:",
                "I want:",
                "goal:",
                "the end result should be:",
                "what I need:",
                "to do:",
                "desired layout:",
                "when you're done,",
            ]
        )
        return f"{head} " + r.choice([", ", "; ", " and ", ". "]).join(parts)
    sep = r.choice(_JOINS)
    return sep.join(parts)


def reordered(r: random.Random, w: Writer, a: Clause, b: Clause) -> str:
    """Two clauses in the order [a, b] of execution, written with ordering words that
    put b first or a after ("before you ...", "... after you ...")."""
    A, B = w.imperative(a), w.imperative(b)
    return r.choice(
        [
            f"before you {B}, {A}",
            f"{B}, but before that {A}",
            f"{B}, but first {A}",
            f"{B} after you {A}",
            f"{B} once you have done this: {A}",
            f"after you {A}, {B}",
            f"once you {A}, {B}",
            f"first {A}, and only then {B}",
            f"{A} first, then {B}",
            f"{A}. when that's done, {B}",
            f"{B} - but {A} before that",
        ]
    )
