"""The ``phrasing`` profile's forms: shared destinations, bins as subjects, bare-colour
shorthand, "the same bin as", "out of one bin and into another", end states with a gripper
or home clause, more things of a colour."""

from __future__ import annotations

import random

from planner.corpus.forms import BINS, CUBES, MORE_THINGS, MOVE_VERBS
from planner.corpus.plans import random_clause
from planner.corpus.scenes import Scene, random_scene
from planner.corpus.writer import Writer
from planner.grammar import Clause


def _shorthand(w: Writer, c: Clause) -> str:
    """A clause in bare colours: "red in green", "blue on red", "yellow -> blue bin"."""
    p = w.pick
    o = w.colour(c.obj) if c.obj else ""
    if c.kind == "move":
        d = w.colour(c.named_dest)
        return p(
            [
                f"{o} {p(['in', 'into', 'to'])} {d}",
                f"{o} {p(['in', 'into', 'to', '->', '→'])} {d} {p(['bin', 'box', 'bin'])}",
                f"{o} {p(['block', 'cube', 'one'])} {p(['in', 'into', '->', '→', 'to'])} {d}",
                f"{o}: {d} {p(['bin', 'box'])}",
            ]
        )
    if c.kind == "stack":
        d = w.colour(c.named_dest)
        return p(
            [f"{o} on {d}", f"{o} onto {d}", f"{o} on top of {d}", f"{o} {p(['->', '→'])} on {d}"]
        )
    return w.clause(c)


def phrasing(r: random.Random, w: Writer) -> tuple[str, list[Clause], Scene]:  # noqa: C901 - one table of forms
    """Phrasings the first stages lacked (see ``PROFILES``)."""
    p = r.choice
    k = r.randrange(7)
    a, c = r.sample(CUBES, 2)
    b, b2 = r.sample(BINS, 2)
    sc = random_scene(r, (a, c))
    sc.in_bin, sc.on, sc.held = {}, {}, None
    A, C, B = w.block(a), w.block(c), w.bin(b)
    if k == 0:  # two blocks, one destination
        into = p(["in", "into", "to", "inside"])
        text = p(
            [
                f"{A} and {C} both {into} {B}",
                f"{A} n {C} {into} {B}",
                f"{A} n {C} both {into} {B}",
                f"put {A} w/ {C} {into} {B}",
                f"{A} w/ {C} {into} {B}",
                f"{p(MOVE_VERBS)} {A} along with {C} {into} {B}",
                f"{p(MOVE_VERBS)} {A} as well as {C} {into} {B}",
                f"{p(MOVE_VERBS)} both {A} and {C} {into} {B}",
                f"{A} & {C} {p(['->', '→', 'into'])} {B}",
                f"{p(MOVE_VERBS)} {A} together with {C} {into} {B}",
                f"{A}, {C}: {B}",
                f"{A} plus {C} {into} {B}",
            ]
        )
        return text, [Clause("move", a, b), Clause("move", c, b)], sc
    if k == 1:  # bins as the subject
        gets = p(["gets", "should contain", "should hold", "receives", "takes", "is for", "needs"])
        bw = p([B, f"{w.colour(b)} bin", f"the {w.colour(b)} one", w.colour(b)])
        if r.random() < 0.5:
            text = p([f"{bw} {gets} {A}", f"{B} {gets} {A}", f"in {B}: {A}", f"{B} <- {A}"])
            return text, [Clause("move", a, b)], sc
        if r.random() < 0.5:
            text = f"{p(['afterwards', 'at the end', 'when done', ''])} {B} {gets} {A} and {C}"
            return text.strip(), [Clause("move", a, b), Clause("move", c, b)], sc
        bw2 = p([w.bin(b2), f"{w.colour(b2)} bin", w.colour(b2)])
        head = p(["bins:", "bins -", "", "for the bins:"])
        text = f"{head} {bw} {gets} {A}{p([', ', '; ', ' and '])}{bw2} {gets} {C}".strip()
        return text, [Clause("move", a, b), Clause("move", c, b2)], sc
    if k == 2:  # bare colours
        n = r.choices([1, 2, 3], weights=[3, 5, 3])[0]
        used: set[str] = set()
        bases: set[str] = set()
        clauses = []
        for i in range(n):
            cl = random_clause(r, used, bases, last=i == n - 1)
            if cl.kind not in ("move", "stack"):
                cl = Clause("move", cl.obj, r.choice(BINS))
            used.add(cl.named_obj)
            if cl.kind == "stack":
                bases.add(cl.named_dest)
            clauses.append(cl)
        parts = [_shorthand(w, cl) for cl in clauses]
        text = r.choice([", ", "; ", " / ", " | ", ". ", " and ", ", then "]).join(parts)
        return text, clauses, random_scene(r)
    if k == 3:  # the same bin as a named block
        sc.in_bin = {c: b}
        text = p(
            [
                f"put {A} in the same {p(['bin', 'box', 'container'])} as {C}",
                f"{A} goes in the same bin as {C}",
                f"{A} in the same bin as {C}",
                f"{p(MOVE_VERBS)} {A} {p(['into', 'to', 'in'])} whichever bin {C} is in",
                f"put {A} where {C} is",
                f"{A} should join {C} in its bin",
                f"put {A} in with {C}",
            ]
        )
        return text, [Clause("move", a, b)], sc
    if k == 4:  # out of one bin, into another
        sc.in_bin = {a: b}
        B2 = w.bin(b2)
        text = p(
            [
                f"take {A} out of {B} and put it in {B2}",
                f"I need {A} out of {B} and in {B2} instead",
                f"{A} should be in {B2}, not {B}",
                f"{p(['move', 'transfer', 'shift'])} {A} from {B} to {B2}",
                f"{A}: {B} -> {B2}",
                f"{A} is in the wrong bin, it belongs in {B2}",
                f"get {A} out of {B} and into {B2}",
                f"swap {A} from {B} over to {B2}",
            ]
        )
        return text, [Clause("move", a, b2)], sc
    if k == 5:  # an end state with a gripper or home clause
        home = r.random() < 0.45
        extra = p(
            ["arm at home", "robot back home", "arm back in its home pose", "arm parked"]
            if home
            else [
                "gripper empty",
                "nothing in the gripper",
                "hand empty",
                "nothing held",
                "gripper open",
            ]
        )
        head = p(
            ["target configuration -", "final state:", "goal:", "end state:", "desired:", "I want"]
        )
        body = p([f"{A} in {B}", f"{A} inside {B}", f"{A} sitting in {B}"])
        text = f"{head} {body}{p([', ', '; ', ' and ', ', with '])}{extra}"
        clauses = [Clause("move", a, b)] + ([Clause("home")] if home else [])
        return text, clauses, sc
    # a block named by something of its colour, from the extra table
    w2 = Writer(
        r, synonyms=0.0, knowledge=1.0, goal_state=w.p_goal, casual=False, things=MORE_THINGS
    )
    if r.random() < 0.5:
        return w2.clause(Clause("move", a, b)), [Clause("move", a, b)], sc
    return w2.clause(Clause("stack", a, c)), [Clause("stack", a, c)], sc
