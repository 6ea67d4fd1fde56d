"""Instructions that name a cube by where it is or by what was said before ("the one on
top", "the block in the green bin", "the other one", "the rest"), with a scene that makes
the reference resolve."""

from __future__ import annotations

import random

from planner.corpus.forms import BINS, CUBES, REGIONS
from planner.corpus.plans import other_than
from planner.corpus.scenes import Scene, random_scene
from planner.corpus.writer import Writer
from planner.grammar import Clause


def reference(r: random.Random, w: Writer) -> tuple[str, list[Clause], Scene]:
    """An instruction that names a cube by where it is or by what was said before."""
    k = r.randrange(8)
    p = r.choice
    if k == 0:  # the block in a bin
        c, b1 = r.choice(CUBES), r.choice(BINS)
        sc = random_scene(r, (c,))
        sc.in_bin = {c: b1}
        sc.on = {a: b for a, b in sc.on.items() if c not in (a, b)}
        b2 = other_than(r, BINS, b1)
        noun = p(["block", "cube", "one", "thing"])
        src = w.bin(b1)
        if r.random() < 0.3:
            reg = r.choice(REGIONS)
            text = (
                f"{p(['move', 'take', 'put'])} the {noun} {p(['in', 'inside', 'from'])} {src} "
                f"{p(['to', 'onto'])} {w.region(reg)}"
            )
            return text, [Clause("region", c, reg)], sc
        text = p(
            [
                f"{p(['move', 'put', 'transfer'])} the {noun} {p(['in', 'inside', 'that is in'])} "
                f"{src} {p(['into', 'to', 'in'])} {w.bin(b2)}",
                f"take whatever is in {src} and put it in {w.bin(b2)}",
                f"the {noun} sitting in {src} should go in {w.bin(b2)} instead",
            ]
        )
        return text, [Clause("move", c, b2)], sc
    if k == 1:  # the stack
        top, base = r.sample(CUBES, 2)
        sc = random_scene(r, (top, base))
        sc.in_bin.pop(top, None)
        sc.in_bin.pop(base, None)
        sc.on = {top: base}
        sc.held = None
        b = r.choice(BINS)
        topw = p(
            [
                "the block on top",
                "the top block",
                "the one on top",
                "the cube on top of the stack",
                "the top one",
                "whatever is on top of the stack",
            ]
        )
        if r.random() < 0.5:
            b2 = r.choice(BINS)
            botw = p(
                [
                    "the bottom one",
                    "the one underneath",
                    "the block below it",
                    "the bottom block",
                    "the other one",
                ]
            )
            text = (
                f"{p(['unstack them:', 'take the stack apart:', ''])} put {topw} in "
                f"{w.bin(b)} and {botw} in {w.bin(b2)}"
            )
            return text, [Clause("move", top, b), Clause("move", base, b2)], sc
        text = f"{p(['put', 'move', 'drop'])} {topw} {p(['in', 'into'])} {w.bin(b)}"
        return text, [Clause("move", top, b)], sc
    if k == 2:  # what the gripper holds
        c = r.choice(CUBES)
        sc = random_scene(r, (c,))
        sc.in_bin.pop(c, None)
        sc.on = {a: b for a, b in sc.on.items() if c not in (a, b)}
        sc.held = c
        what = p(
            [
                "the block you're holding",
                "the cube in your gripper",
                "what you are holding",
                "the block in your hand",
                "the one you have",
                "the cube you picked up",
            ]
        )
        others = [x for x in sc.cubes if x != c and x not in sc.on and x not in sc.in_bin]
        if others and r.random() < 0.35:
            d = r.choice(others)
            return f"put {what} on top of {w.block(d)}", [Clause("stack", c, d)], sc
        b = r.choice(BINS)
        return (
            f"{p(['put', 'drop', 'place'])} {what} {p(['in', 'into'])} {w.bin(b)}",
            [Clause("move", c, b)],
            sc,
        )
    if k == 3:  # the other one (two cubes in the scene)
        a, o = r.sample(CUBES, 2)
        sc = Scene([c for c in CUBES if c in (a, o)])
        b1, b2 = r.choice(BINS), r.choice(BINS)
        text = p(
            [
                f"put {w.block(a)} in {w.bin(b1)} and the other one in {w.bin(b2)}",
                f"{w.block(a)} goes in {w.bin(b1)}, the other {p(['block', 'cube', 'one'])} "
                f"in {w.bin(b2)}",
            ]
        )
        return text, [Clause("move", a, b1), Clause("move", o, b2)], sc
    if k == 4:  # the rest
        a = r.choice(CUBES)
        sc = random_scene(r, (a,))
        sc.in_bin, sc.on, sc.held = {}, {}, None
        b1, b2 = r.sample(BINS, 2)
        rest = p(
            [
                "the rest",
                "the others",
                "all the other blocks",
                "the remaining blocks",
                "everything else",
                "the remaining cubes",
            ]
        )
        text = f"put {w.block(a)} in {w.bin(b1)} and {rest} in {w.bin(b2)}"
        return text, [Clause("move", a, b1), Clause("except", dest=b2, excl=(a,))], sc
    if k == 5:  # the same bin
        a, c = r.sample(CUBES, 2)
        sc = random_scene(r, (a, c))
        sc.in_bin, sc.on, sc.held = {}, {}, None
        b = r.choice(BINS)
        same = p(["the same bin", "that bin too", "the same one", "the same box", "it as well"])
        text = f"put {w.block(a)} in {w.bin(b)}, then {w.block(c)} in {same}"
        return text, [Clause("move", a, b), Clause("move", c, b)], sc
    if k == 6:  # both / them
        a, c = r.sample(CUBES, 2)
        sc = random_scene(r, (a, c))
        sc.in_bin, sc.on, sc.held = {}, {}, None
        b = r.choice(BINS)
        text = p(
            [
                f"take {w.block(a)} and {w.block(c)} and put them in {w.bin(b)}",
                f"both {w.block(a)} and {w.block(c)} {p(['go', 'belong'])} in {w.bin(b)}",
                f"{w.block(a)} and {w.block(c)} -> {w.bin(b)}",
            ]
        )
        return text, [Clause("move", a, b), Clause("move", c, b)], sc
    # the bin that holds a named cube
    a, c = r.sample(CUBES, 2)
    sc = random_scene(r, (a, c))
    b = r.choice(BINS)
    sc.in_bin = {a: b}
    sc.on, sc.held = {}, None
    text = (
        f"put {w.block(c)} in the bin {p(['with', 'that has', 'holding', 'containing'])} "
        f"{w.block(a)}{p(['', ' in it'])}"
    )
    return text, [Clause("move", c, b)], sc
