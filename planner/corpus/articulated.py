"""The ``articulated`` profile's instructions: the articulated scene (a drawer, a push
button that toggles a lamp, towers of up to four cubes), taught only where the scene line
shows a drawer and a light; on the tabletop the same requests stay refusals
(:func:`device_refusal`). Kept apart from the tabletop profiles, which draw exactly what they
drew before."""

from __future__ import annotations

import random

from planner.corpus.forms import BINS, CUBES, DRAWER_NOUNS, IN_PREPS
from planner.corpus.lists import join_clauses
from planner.corpus.plans import named, random_clause, random_clauses
from planner.corpus.scenes import Scene, articulated_scene, random_scene
from planner.corpus.writer import Writer
from planner.grammar import NO_DEVICE, REFUSE, Clause


def _tower(r: random.Random, w: Writer) -> tuple[str, list[Clause]]:
    """A tower of three or four named cubes, bottom first, as stack clauses."""
    n = r.choice([3, 3, 4])
    cols = r.sample(CUBES, n)
    clauses = [Clause("stack", cols[i + 1], cols[i]) for i in range(n - 1)]
    p = w.pick
    names = [w.colour(c) for c in cols]
    blocks = [w.block(c, allow_bare=False) for c in cols]
    seq = ", ".join(names[:-1]) + f"{p([',', ''])} and {names[-1]}"
    arrow = p([" -> ", " > ", ", ", " then "])
    tower = p(["tower", "tower", "stack", "pile", "column"])
    k = r.randrange(9)
    if k == 0:
        text = f"{p(['build', 'make', 'stack up', 'put together'])} a {tower} of {seq}"
    elif k == 1:
        text = (
            f"{p(['build', 'make'])} a {tower}: {names[0]} at the bottom, then "
            + ", then ".join(names[1:-1])
            + f", {names[-1]} on top"
        )
    elif k == 2:
        text = f"{tower} {p(['from the bottom up', 'bottom to top', 'bottom up'])}: " + arrow.join(
            names
        )
    elif k == 3:
        top = list(reversed(names))
        text = f"{tower} {p(['from the top down', 'top to bottom'])}: " + arrow.join(top)
    elif k == 4:
        base = p(["at the bottom", "first", "as the base"])
        text = f"{p(['stack', 'pile'])} {seq} into a {tower}, {names[0]} {base}"
    elif k == 5:
        text = " on ".join(reversed(names))
        text = f"{p(['stack', 'make a tower:', 'tower:', 'I want'])} {text}"
    elif k == 6:
        rest = " and ".join(
            f"{blocks[i + 1]} on {p([blocks[i], 'that', 'it'] if i else [blocks[i]])}"
            for i in range(n - 1)
        )
        text = f"{p(['put', 'stack', 'place'])} {rest}"
    elif k == 7:
        text = (
            f"{p(['start a tower with', 'use', 'begin with'])} {blocks[0]} as the base, then "
            + (", then ".join(f"{p(['add', 'put', 'stack'])} {b}" for b in blocks[1:]))
        )
    else:
        text = (
            f"a {n}-{p(['block', 'cube', 'story', 'level'])} {tower}: "
            + arrow.join(names)
            + (f" {p(['(bottom first)', 'from the bottom', 'bottom up'])}")
        )
    return text, clauses


def articulated(r: random.Random, w: Writer) -> tuple[str, list[Clause], Scene]:  # noqa: C901
    """An instruction for the articulated scene: its devices, the drawer as a container,
    towers, and lists mixing them with cube moves."""
    k = r.choices(range(7), weights=[28, 18, 9, 14, 20, 6, 5])[0]
    if k == 0:  # one device clause
        kind = r.choice(["open", "close", "light_on", "light_off", "press", "light_on"])
        sc = articulated_scene(r)
        if kind in ("open", "close"):
            sc.drawer = "closed" if kind == "open" else "open"
        if kind in ("light_on", "light_off") and r.random() < 0.85:
            sc.light = kind == "light_off"
        return w.clause(Clause(kind)), [Clause(kind)], sc
    if k == 1:  # a block into the drawer
        c = r.choice(CUBES)
        sc = articulated_scene(r, (c,))
        sc.in_bin.pop(c, None)
        sc.held = None if sc.held == c else sc.held
        sc.on = {a: b for a, b in sc.on.items() if c != b}
        clauses = [Clause("drawer_in", c)]
        ob, D = w.block(c, allow_bare=False), r.choice(DRAWER_NOUNS)
        j = r.randrange(5)
        if j == 0:
            clauses.append(Clause("close"))
            text = r.choice(
                [
                    f"{w.clause(clauses[0])} and "
                    f"{r.choice(['close it', 'shut it', 'close it after', 'shut it afterwards'])}",
                    f"{w.clause(clauses[0])}, then {w.clause(clauses[1])}",
                    f"put {ob} away in {D} and close it",
                ]
            )
        elif j == 1 and sc.drawer == "closed":
            clauses.insert(0, Clause("open"))
            text = r.choice(
                [
                    f"{w.imperative(clauses[0])} and {r.choice(['put', 'drop', 'pop'])} {ob} in it",
                    f"{w.imperative(clauses[0])}, then {w.clause(clauses[1])}",
                ]
            )
        else:
            text = w.clause(clauses[0])
        return text, clauses, sc
    if k == 2:  # a block out of the drawer
        c = r.choice(CUBES)
        sc = articulated_scene(r, (c,))
        sc.drawer = "open"
        sc.in_bin.pop(c, None)
        sc.on = {a: b for a, b in sc.on.items() if c not in (a, b)}
        sc.held = None if sc.held == c else sc.held
        sc.in_drawer = [c]
        clauses = [Clause("drawer_out", c)]
        if r.random() < 0.65:
            b = r.choice(BINS)
            B = w.bin(b)
            clauses.append(Clause("it", dest=b))
            ob = w.block(c, allow_bare=False)
            text = r.choice(
                [
                    f"{w.clause(clauses[0])} and {r.choice(['put', 'drop', 'place'])} it in {B}",
                    f"{w.clause(clauses[0])}, then {r.choice(['put', 'drop'])} it "
                    f"{r.choice(IN_PREPS[:4])} {B}",
                    f"{r.choice(['move', 'transfer', 'shift'])} {ob} from "
                    f"{r.choice(DRAWER_NOUNS)} to {B}",
                    f"{ob}: drawer -> {B}",
                    f"take {ob} out of {r.choice(DRAWER_NOUNS)} and into {B}",
                ]
            )
        else:
            text = w.clause(clauses[0])
        return text, clauses, sc
    if k == 3:  # a tower
        text, clauses = _tower(r, w)
        sc = articulated_scene(r, tuple(c.named_obj for c in clauses) + (clauses[0].named_dest,))
        sc.in_bin, sc.on, sc.held = {}, {}, None
        return text, clauses, sc
    if k == 4:  # a list mixing device clauses and cube moves
        n = r.choices([2, 3, 4], weights=[50, 35, 15])[0]
        used: set[str] = set()
        bases: set[str] = set()
        devices: list[str] = []
        clauses = []
        for i in range(n):
            if r.random() < 0.55:
                kind = r.choice(
                    [
                        x
                        for x in ("open", "close", "light_on", "light_off", "press", "drawer_in")
                        if x not in devices
                    ]
                )
                devices += [
                    kind,
                    *{
                        "light_on": ["light_off", "press"],
                        "light_off": ["light_on", "press"],
                        "press": ["light_on", "light_off"],
                        "open": ["close"],
                        "close": ["open"],
                    }.get(kind, []),
                ]
                if kind == "drawer_in":
                    free = [c for c in CUBES if c not in used and c not in bases]
                    if not free:
                        continue
                    cl = Clause("drawer_in", r.choice(free))
                    devices.remove("drawer_in")  # another block may follow it
                else:
                    cl = Clause(kind)
            else:
                cl = random_clause(r, used, bases, last=i == n - 1)
            if cl.obj is not None:
                used.add(cl.obj)
            if cl.kind == "stack":
                bases.add(cl.named_dest)
            clauses.append(cl)
        if len(clauses) < 2:
            clauses.append(Clause(r.choice(["light_on", "open", "close"])))
        style = r.choices(
            ["plain", "list", "numbered", "bullets", "ordinal", "goal_list"],
            weights=[45, 15, 8, 6, 12, 14],
        )[0]
        text = join_clauses(r, [w.clause(c) for c in clauses], style)
        sc = articulated_scene(r, named(clauses))
        sc.in_bin, sc.on, sc.held = {}, {}, None
        return text, clauses, sc
    if k == 5:  # the tabletop vocabulary, in an articulated scene
        clauses = random_clauses(r, r.choices([1, 2], weights=[60, 40])[0])
        text = join_clauses(r, [w.clause(c) for c in clauses], "plain")
        return text, clauses, articulated_scene(r, named(clauses))
    # a device beside a block for the drawer ("lights on, and the red block in the drawer")
    c = r.choice(CUBES)
    kind = r.choice(["light_on", "light_off", "press"])
    clauses = [Clause(kind), Clause("drawer_in", c)]
    if r.random() < 0.5:
        clauses.reverse()
    text = join_clauses(r, [w.clause(x) for x in clauses], r.choice(["plain", "list"]))
    sc = articulated_scene(r, (c,))
    sc.in_bin, sc.on, sc.held = {}, {}, None
    return text, clauses, sc


def device_refusal(r: random.Random, w: Writer) -> tuple[str, str, Scene]:
    """An articulated-scene request in a tabletop scene: refused (there is no such thing)."""
    kind = r.choice(list(NO_DEVICE))
    c = Clause(kind, r.choice(CUBES)) if kind.startswith("drawer_") else Clause(kind)
    text = w.clause(c)
    if r.random() < 0.3:
        other = random_clause(r, set(), set(), last=True)
        parts = [w.clause(other), text]
        if r.random() < 0.5:
            parts.reverse()
        text = join_clauses(r, parts, "plain")
    return text, REFUSE + NO_DEVICE[kind], random_scene(r)
