"""Statements about the world, read from English and checked on the world state.

Why one reader for three jobs: a yes/no question ("is the red block in the green bin?"), a
statement ("the red block is in the green bin.") and a condition ("if the green bin is
empty, ...") all say the same kind of thing, a predicate over the world. They are read
into literals of the goal grammar (:mod:`bridge.goals`) and evaluated there, so what the
robot answers and what it conditions on is exactly what its success test would say.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import planner.rx as re
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


def _any(m: re.Match[str]) -> bool:
    return True


@functools.lru_cache(maxsize=1)
def _forms(cop: str) -> list[tuple[str, str, str, bool, Callable[[re.Match[str]], bool]]]:
    """The claims read by one pattern each: (pattern, literal, words, inverted, accept).
    ``{o}``/``{t}``/``{b}`` are the match's cube, other cube and bin colours; ``inverted``
    flips the literal's polarity ("the bin is empty" is ``not in(*, bin)``)."""
    not_a_bin = lambda m: not (m["tn"] and re.fullmatch(_BIN, m["tn"]))  # noqa: E731
    return [
        (
            rf"{_OBJ}{cop}{_NOT}\s+(?:in|inside|within)\s+(?:the\s+)?(?P<b>{_C})\s+{_BIN}",
            "in({o}_block, {b}_bin)",
            "the {o} block is in the {b} bin",
            False,
            _any,
        ),
        (
            rf"{_OBJ}{cop}{_NOT}\s+(?:in|inside)\s+(?:a|any|one\s+of\s+the)\s+(?:bin|bins|basket)",
            "in({o}_block, *)",
            "the {o} block is in a bin",
            False,
            _any,
        ),
        (
            rf"{_OBJ}{cop}{_NOT}\s+(?:on\s+top\s+of|on|atop)\s+(?:another|a|any|some)\s+"
            rf"(?:other\s+)?(?:block|cube|brick|one)",
            "on({o}_block, *)",
            "the {o} block is on another block",
            False,
            _any,
        ),
        (
            rf"(?:anything|something|a\s+block|any\s+block){cop}{_NOT}\s+(?:in|inside)\s+(?:the\s+)?drawer",
            "in(*, drawer)",
            "something is in the drawer",
            False,
            _any,
        ),
        (
            rf"{_OBJ}{cop}{_NOT}\s+in\s+(?:the\s+)?drawer",
            "in({o}_block, drawer)",
            "the {o} block is in the drawer",
            False,
            _any,
        ),
        (
            rf"{_OBJ}{cop}{_NOT}\s+(?:on\s+top\s+of|on|atop|stacked\s+on)\s+{_OBJ2}",
            "on({o}_block, {t}_block)",
            "the {o} block is on the {t} block",
            False,
            not_a_bin,
        ),
        (
            rf"(?:anything|something|a\s+block|any\s+block){cop}{_NOT}\s+(?:stacked\s+)?"
            rf"(?:on\s+top\s+of|on)\s+{_OBJ2}",
            "on(*, {t}_block)",
            "something is on the {t} block",
            False,
            _any,
        ),
        (
            rf"{_OBJ}{cop}{_NOT}\s+on\s+the\s+table",
            "on_table({o}_block)",
            "the {o} block is on the table",
            False,
            _any,
        ),
        (
            rf"{_OBJ}{cop}{_NOT}\s+(?:under|underneath|beneath|below)\s+{_OBJ2}",
            "on({t}_block, {o}_block)",
            "the {o} block is under the {t} block",
            False,
            _any,
        ),
        (
            rf"{_OBJ}(?:{cop}{_NOT}\s+(?:clear|free|uncovered|unobstructed|empty\s+on\s+top)|"
            rf"\s+has\s+nothing\s+on(?:\s+top\s+of)?\s+it)",
            "on(*, {o}_block)",
            "the {o} block is clear",
            True,
            _any,
        ),
        (
            rf"(?:the\s+)?(?P<b>{_C})\s+{_BIN}{cop}{_NOT}\s+empty",
            "in(*, {b}_bin)",
            "the {b} bin is empty",
            True,
            _any,
        ),
        (
            rf"(?:the\s+)?(?P<b>{_C})\s+{_BIN}\s+(?:has|contains|holds){_NOT}\s+(?:the\s+)?"
            rf"(?P<o>{_C})(?:\s+(?:block|cube|brick|one))?(?:\s+in\s+it)?",
            "in({o}_block, {b}_bin)",
            "the {o} block is in the {b} bin",
            False,
            _any,
        ),
        (
            rf"(?:nothing|no\s+block|no\s+cube)\s+is\s+(?:stacked\s+)?(?:on\s+top\s+of|on)\s+{_OBJ2}",
            "on(*, {t}_block)",
            "nothing is on the {t} block",
            True,
            _any,
        ),
        (
            rf"(?:the\s+)?(?P<b>{_C})\s+{_BIN}\s+(?:has|contains|holds)\s+(?:something|anything|"
            rf"a\s+block|blocks|a\s+cube)(?:\s+in\s+it)?",
            "in(*, {b}_bin)",
            "the {b} bin has something in it",
            False,
            _any,
        ),
        (
            rf"(?:you|you're|you\s+are)\s*(?:are\s+)?{_NOT}\s*holding\s+{_OBJ}",
            "held({o}_block)",
            "I am holding the {o} block",
            False,
            _any,
        ),
        (
            rf"(?:you|you're|you\s+are)\s*(?:are\s+)?{_NOT}\s*holding\s+(?:something|anything|"
            rf"a\s+block)",
            "held(*)",
            "I am holding something",
            False,
            _any,
        ),
        (
            r"(?:your|the)\s+(?:hand|gripper)" + cop + _NOT + r"\s+empty",
            "held(*)",
            "the gripper is empty",
            True,
            _any,
        ),
        (
            rf"there\s+(?:is|are){_NOT}\s+(?:a|an|any)?\s*(?:blocks?|cubes?|anything|something)\s+"
            rf"(?:in|inside)\s+(?:the\s+)?(?P<b>{_C})\s+{_BIN}",
            "in(*, {b}_bin)",
            "the {b} bin has something in it",
            False,
            _any,
        ),
        (
            rf"there\s+is\s+nothing\s+(?:stacked\s+)?(?:on\s+top\s+of|on|atop)\s+{_OBJ2}",
            "on(*, {t}_block)",
            "nothing is on the {t} block",
            True,
            _any,
        ),
        (
            rf"there\s+(?:is|are){_NOT}\s+(?:a|an|any)?\s*(?:blocks?|cubes?|anything|something)\s+"
            rf"(?:stacked\s+)?(?:on\s+top\s+of|on|atop)\s+{_OBJ2}",
            "on(*, {t}_block)",
            "something is on the {t} block",
            False,
            _any,
        ),
    ]


def read(text: str, world: WorldState) -> Fact | None:
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
    t = re.sub(r"\b(?:seems|appears|looks)\s+to\s+be\b", "is", t)
    t = re.sub(r"\bthere's\b", "there is", t)
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
    for pattern, lit, says, inverted, ok in _forms(cop):
        m = re.fullmatch(pattern, t)
        if m and ok(m):
            g = m.groupdict()
            neg = bool(g.get("neg")) != inverted
            return Fact(_neg([lit.format(**g)], neg), says.format(**g))
    m = re.fullmatch(r"(?:the\s+)?drawer" + cop + _NOT + r"\s+(?P<s>open|opened|closed|shut)", t)
    if m and world.drawer is not None:
        lit = "open(drawer)" if m["s"].startswith("open") else "closed(drawer)"
        word = "open" if lit.startswith("open") else "closed"
        return Fact(_neg([lit], bool(m["neg"])), f"the drawer is {word}")
    m = re.fullmatch(r"(?:the\s+)?(?:light|lamp)" + cop + _NOT + r"\s+(?P<s>on|off|lit)", t)
    if m and world.light_on is not None:
        on = m["s"] in ("on", "lit")
        return Fact(_neg(["light_on"], on == bool(m["neg"])), f"the light is {m['s']}")
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
