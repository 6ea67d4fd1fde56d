"""Statements about the world, read from English and checked on the world state.

Why one reader for three jobs: a yes/no question ("is the red block in the green bin?"), a
statement ("the red block is in the green bin.") and a condition ("if the green bin is
empty, ...") all say the same kind of thing, a predicate over the world. They are read
into literals of the goal grammar (:mod:`bridge.goals`) and evaluated there, so what the
robot answers and what it conditions on is exactly what its success test would say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bridge import goals as G
from bridge import lexicon as L
from sim.world import WorldState

_C = "|".join(L.COLOURS)
_BLOCK = r"(?:block|cube|brick|one|thing)s?"
_BIN = r"(?:bin|basket|container|bucket|tub|crate|box)"
_OBJ = rf"(?:the\s+)?(?P<o>{_C})(?:\s+{_BLOCK})?"
_OBJ2 = rf"(?:the\s+)?(?P<t>{_C})(?:\s+(?P<tn>{_BLOCK}|{_BIN}))?"
_NOT = r"(?P<neg>\s+not|n't|\s+no\s+longer)?"


@dataclass
class Fact:
    """A checkable claim: goal literals that are all true when the claim is, and the
    words to say it with."""

    literals: list[str]
    says: str
    #: a claim with no literal (whether a cube exists at all) carries its truth here
    fixed: bool | None = None

    def holds(self, world: WorldState) -> bool:
        if self.fixed is not None:
            return self.fixed
        return G.goal_holds(self.literals, world)


def _neg(lits: list[str], neg: bool) -> list[str]:
    if not neg:
        return lits
    if len(lits) == 1:
        lit = lits[0]
        return [lit[4:] if lit.startswith("not ") else f"not {lit}"]
    return lits


def read(text: str, world: WorldState) -> Fact | None:  # noqa: C901 - one form a branch
    """The claim ``text`` makes, or None when it is not one this reader knows.

    ``text`` is a clause in statement order ("the red block is in the green bin", "the
    green bin is empty", "you are holding the blue block", "the drawer is open")."""
    t = re.sub(r"[?.!]+$", "", text.strip().lower()).strip()
    t = re.sub(
        r"\b(?:currently|still|right now|now|already|actually|really|at the moment|"
        r"from where you (?:are|stand)|as far as you can tell|by now)\b\s*",
        "",
        t,
    )
    t = re.sub(r"\b(?:switched|turned)\s+(on|off)\b", r"\1", t)
    t = re.sub(
        r"^(?:i\s+(?:think|believe|guess|suppose|reckon)|i'm\s+(?:pretty\s+)?sure)\s+(?:that\s+)?",
        "",
        t,
    )
    t = re.sub(r"\s+", " ", t).strip(" ,")
    cop = (
        r"(?:\s+(?:is|are|sits|lies|stands)|'s)"
        r"(?:\s+(?:sitting|resting|lying|standing|placed|stacked))?"
    )
    side = _side(t, world)
    if side is not None:
        return side
    # X is (not) in the Y bin
    m = re.fullmatch(
        rf"{_OBJ}{cop}{_NOT}\s+(?:in|inside|within)\s+(?:the\s+)?(?P<b>{_C})\s+{_BIN}", t
    )
    if m:
        lit = f"in({m['o']}_block, {m['b']}_bin)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is in the {m['b']} bin")
    m = re.fullmatch(
        rf"{_OBJ}{cop}{_NOT}\s+(?:in|inside)\s+(?:a|any|one\s+of\s+the)\s+(?:bin|bins|basket)", t
    )
    if m:
        lit = f"in({m['o']}_block, *)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is in a bin")
    m = re.fullmatch(
        rf"{_OBJ}{cop}{_NOT}\s+(?:on\s+top\s+of|on|atop)\s+(?:another|a|any|some)\s+(?:other\s+)?"
        rf"(?:block|cube|brick|one)",
        t,
    )
    if m:
        lit = f"on({m['o']}_block, *)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is on another block")
    m = re.fullmatch(rf"{_OBJ}{cop}{_NOT}\s+in\s+(?:the\s+)?drawer", t)
    if m:
        lit = f"in({m['o']}_block, drawer)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is in the drawer")
    # X is (not) on (top of) Y / on the table
    m = re.fullmatch(rf"{_OBJ}{cop}{_NOT}\s+(?:on\s+top\s+of|on|atop|stacked\s+on)\s+{_OBJ2}", t)
    if m and not (m["tn"] and re.fullmatch(_BIN, m["tn"])):
        lit = f"on({m['o']}_block, {m['t']}_block)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is on the {m['t']} block")
    m = re.fullmatch(
        rf"(?:anything|something|a\s+block|any\s+block){cop}{_NOT}\s+(?:stacked\s+)?(?:on\s+top\s+of|on)"
        rf"\s+{_OBJ2}",
        t,
    )
    if m:
        lit = f"on(*, {m['t']}_block)"
        return Fact(_neg([lit], bool(m["neg"])), f"something is on the {m['t']} block")
    m = re.fullmatch(rf"{_OBJ}{cop}{_NOT}\s+on\s+the\s+table", t)
    if m:
        lit = f"on_table({m['o']}_block)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is on the table")
    m = re.fullmatch(rf"{_OBJ}{cop}{_NOT}\s+(?:under|underneath|beneath|below)\s+{_OBJ2}", t)
    if m:
        lit = f"on({m['t']}_block, {m['o']}_block)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is under the {m['t']} block")
    # the Y bin is (not) empty / has something in it
    m = re.fullmatch(rf"(?:the\s+)?(?P<b>{_C})\s+{_BIN}{cop}{_NOT}\s+empty", t)
    if m:
        lit = f"in(*, {m['b']}_bin)"
        return Fact(_neg([lit], not m["neg"]), f"the {m['b']} bin is empty")
    m = re.fullmatch(
        rf"(?:the\s+)?(?P<b>{_C})\s+{_BIN}\s+(?:has|contains|holds){_NOT}\s+(?:the\s+)?(?P<o>{_C})"
        rf"(?:\s+(?:block|cube|brick|one))?(?:\s+in\s+it)?",
        t,
    )
    if m:
        lit = f"in({m['o']}_block, {m['b']}_bin)"
        return Fact(_neg([lit], bool(m["neg"])), f"the {m['o']} block is in the {m['b']} bin")
    m = re.fullmatch(
        rf"(?:nothing|no\s+block|no\s+cube)\s+is\s+(?:stacked\s+)?(?:on\s+top\s+of|on)\s+{_OBJ2}", t
    )
    if m:
        return Fact([f"not on(*, {m['t']}_block)"], f"nothing is on the {m['t']} block")
    m = re.fullmatch(
        rf"(?:the\s+)?(?P<b>{_C})\s+{_BIN}\s+(?:has|contains|holds)\s+(?:something|anything|"
        rf"a\s+block|blocks|a\s+cube)(?:\s+in\s+it)?",
        t,
    )
    if m:
        return Fact([f"in(*, {m['b']}_bin)"], f"the {m['b']} bin has something in it")
    m = re.fullmatch(r"(?:the\s+)?drawer" + cop + _NOT + r"\s+(?P<s>open|opened|closed|shut)", t)
    if m and world.drawer is not None:
        lit = "open(drawer)" if m["s"].startswith("open") else "closed(drawer)"
        word = "open" if lit.startswith("open") else "closed"
        return Fact(_neg([lit], bool(m["neg"])), f"the drawer is {word}")
    m = re.fullmatch(r"(?:the\s+)?(?:light|lamp)" + cop + _NOT + r"\s+(?P<s>on|off|lit)", t)
    if m and world.light_on is not None:
        on = m["s"] in ("on", "lit")
        return Fact(_neg(["light_on"], on == bool(m["neg"])), f"the light is {m['s']}")
    # you are holding X / your hand is empty
    m = re.fullmatch(rf"(?:you|you're|you\s+are)\s*(?:are\s+)?{_NOT}\s*holding\s+{_OBJ}", t)
    if m:
        lit = f"held({m['o']}_block)"
        return Fact(_neg([lit], bool(m["neg"])), f"I am holding the {m['o']} block")
    m = re.fullmatch(
        rf"(?:you|you're|you\s+are)\s*(?:are\s+)?{_NOT}\s*holding\s+(?:something|anything|a\s+block)",
        t,
    )
    if m:
        return Fact(_neg(["held(*)"], bool(m["neg"])), "I am holding something")
    m = re.fullmatch(r"(?:your|the)\s+(?:hand|gripper)" + cop + _NOT + r"\s+empty", t)
    if m:
        return Fact(_neg(["not held(*)"], bool(m["neg"])), "the gripper is empty")
    # there is (no) X block
    m = re.fullmatch(
        rf"there\s+(?:is|are){_NOT}\s+(?:a|an|any)?\s*(?:blocks?|cubes?|anything|something)\s+"
        rf"(?:in|inside)\s+(?:the\s+)?(?P<b>{_C})\s+{_BIN}",
        t,
    )
    if m:
        return Fact(
            _neg([f"in(*, {m['b']}_bin)"], bool(m["neg"])), f"the {m['b']} bin has something in it"
        )
    m = re.fullmatch(
        r"there\s+(?:is|are)" + _NOT + r"\s+(?:a|an|any)?\s*(?:blocks?|cubes?|anything|something)"
        r"\s+(?:in|inside)\s+(?:the\s+)?drawer",
        t,
    )
    if m and world.drawer is not None:
        fixed = bool(world.drawer.contents) != bool(m["neg"])
        return Fact([], "there is something in the drawer", fixed=fixed)
    m = re.fullmatch(
        r"(?:it's|it\s+is)" + _NOT + r"\s+(?P<s>dark|bright|light)(?:\s+in\s+here)?", t
    )
    if m and world.light_on is not None:
        dark = m["s"] == "dark"
        return Fact(_neg(["light_on"], dark != bool(m["neg"])), f"it is {m['s']}")
    m = re.fullmatch(rf"there\s+(?:is|are){_NOT}\s+(?:a|an|any)?\s*(?P<o>{_C})\s+{_BLOCK}", t)
    if m:
        present = world.object(f"{m['o']}_block") is not None
        return Fact([], f"there is a {m['o']} block", fixed=present != bool(m["neg"]))
    return None


_SIDE = re.compile(
    rf"^{_OBJ}(?:\s+(?:is|are)|'s){_NOT}\s+(?:(?:just|right|directly)\s+)?(?:to\s+the\s+|on\s+the\s+)?"
    rf"(?P<rel>left|right|in\s+front|behind|further\s+left|further\s+right)(?:\s+of|\s+from)?\s+"
    rf"{_OBJ2}$"
)


def _side(t: str, world: WorldState) -> Fact | None:
    """ "the red block is (to the) left of the blue one": from the robot's view."""
    m = _SIDE.match(t)
    if m is None:
        return None
    a, b = world.object(f"{m['o']}_block"), world.object(f"{m['t']}_block")
    if a is None or b is None:
        return None
    rel = m["rel"].replace("further ", "")
    truth = {
        "left": a.pos[1] > b.pos[1],
        "right": a.pos[1] < b.pos[1],
        "in front": a.pos[0] > b.pos[0],
        "behind": a.pos[0] < b.pos[0],
    }[re.sub(r"\s+", " ", rel)]
    to = "to the " if rel in ("left", "right") else ""
    said = f"the {m['o']} block is {to}{rel} of the {m['t']} block"
    return Fact([], said, fixed=truth != bool(m["neg"]))
