"""Grounding: a model's plan may move only what the instruction asked about.

Why: a schema-valid, executable plan can still be the wrong plan. A small model asked to
"open the drawer" may answer with a pick and a place of whatever cube it likes; nothing in
the schema or the simulation objects. So every cube a model's plan moves and every bin or
cube it places onto must be *grounded* in the instruction's words: named by its colour (or a
synonym, or a thing of that colour: "the colour of grass"), possibly misspelt by a letter,
or covered by a quantifier ("every block", "sort the blocks"), or by a pronoun for the
block already in the gripper, or named through a named neighbour in the scene ("the block on
the blue one", "the cube in the green bin", "the same bin as the red block"). Regions need a
region word. Rules plans are built from the words themselves and are not checked.

The lexicon is deliberately generous (a false "grounded" only lets a valid plan through to
the other checks; a false "ungrounded" costs a regeneration), but a plan for an instruction
with no cue at all, such as "open the drawer", never passes.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable
from typing import Any

from bridge import lexicon as L
from bridge import reasons as R
from bridge.reasons import Reason
from sim.world import WorldState

#: Words that point at a colour: the name, shades, and familiar things of that colour (the
#: shared lexicon's, bridge.lexicon).
COLOUR_CUES: dict[str, frozenset[str]] = L.COLOUR_CUES
#: Words under which every cube is meant.
QUANTIFIERS = frozenset(
    """all every each everything both remaining rest whole sort tidy
    clear other others everyone any""".split()
)
#: Words for "the bin of its colour".
MATCHING = frozenset(
    """its their own matching match same corresponding respective sort sorted""".split()
)
#: Words for the block in the gripper.
PRONOUNS = frozenset("""it them this that holding held hand gripper grip one""".split())
#: Words that point from a named cube or bin to its neighbour: "the block on the blue one",
#: "the one under red", "the cube in the green bin", "the same bin as the red block".
ON_CUES = frozenset("""on onto top atop sitting resting above stacked""".split())
UNDER_CUES = frozenset("""under underneath below beneath bottom supporting""".split())
IN_CUES = frozenset("""in inside from out within""".split())
SAME_BIN_CUES = frozenset(
    """same with where whichever containing contains has holding join joins""".split()
)
REGION_CUES = frozenset(
    """left right center centre middle front back rear central
    leftmost rightmost""".split()
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-zà-ÿ]+", text.lower())


def _stem(word: str) -> str:
    """A plural's singular, roughly (cherries -> cherry, tomatoes -> tomato)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("oes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _squeeze(word: str) -> str:
    """Runs of one letter as one letter: 'yellloww' and 'yellow' both read 'yelow'."""
    return re.sub(r"(.)\1+", r"\1", word)


def _matches(word: str, cue: str) -> bool:
    """A word points at a cue despite a plural, doubled keys or one typing slip. An ordinary
    English word is never a slip for another ("top" is not "stop", "from" is not "frog")."""
    if word == cue:
        return True
    if _ordinary(word) and _stem(word) != _stem(cue):
        return False
    if _near(word, cue) or _near(_stem(word), _stem(cue)):
        return True
    a, b = _squeeze(word), _squeeze(cue)
    return len(b) >= 4 and _near(a, b)


#: How often (pyspellchecker's English frequency list) a word must occur to be too common to
#: be a slip for a colour cue: "top" (250k), "read", "blew", "rod" (6.6k) are words of their
#: own; "blu" (173) and "reed" (1.8k) are still read as slips.
ORDINARY_MIN_COUNT = 5000


@functools.lru_cache(maxsize=8192)
def _ordinary(word: str) -> bool:
    """A common English word that is no colour cue itself."""
    if any(word in cues for cues in COLOUR_CUES.values()):
        return False
    return bool(_english()[word] >= ORDINARY_MIN_COUNT)


@functools.lru_cache(maxsize=1)
def _english() -> Any:
    from spellchecker import SpellChecker

    return SpellChecker().word_frequency


def _near(word: str, cue: str) -> bool:
    """Equal, or one typing slip apart: two letters swapped, one letter dropped or doubled
    (words of three letters and more), or one letter mistyped (four letters and more)."""
    if word == cue:
        return True
    if min(len(word), len(cue)) < 3 or abs(len(word) - len(cue)) > 1:
        return False
    if len(word) == len(cue):
        diff = [i for i, (a, b) in enumerate(zip(word, cue, strict=True)) if a != b]
        swapped = (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and (word[diff[0]] == cue[diff[1]] and word[diff[1]] == cue[diff[0]])
        )
        return swapped or (len(diff) == 1 and len(cue) >= 4)
    short, long_ = (word, cue) if len(word) < len(cue) else (cue, word)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _has(words: Iterable[str], cues: frozenset[str]) -> bool:
    return any(_matches(w, c) for w in words for c in cues)


def colours_named(text: str) -> set[str]:
    """The colours the text points at."""
    words = _words(text)
    return {c for c, cues in COLOUR_CUES.items() if _has(words, cues)}


#: Nouns of containers: a colour right before one names a bin, not a cube ("box" is left
#: out: people call the cubes boxes too).
BIN_NOUNS = L.CONTAINER_NOUNS
#: Words that may sit between a colour and its noun ("the grass coloured bin").
_LINKS = frozenset("""coloured colored colour color ish one""".split())


def colours_of_objects(text: str) -> set[str]:
    """The colours the text points at other than as a bin's colour: in "pick up the green
    bin" green names a bin, so it grounds no cube."""
    words = _words(text)
    out: set[str] = set()
    for i, w in enumerate(words):
        for c, cues in COLOUR_CUES.items():
            if c in out or not any(_matches(w, cue) for cue in cues):
                continue
            nxt = [u for u in words[i + 1 : i + 4] if u not in _LINKS]
            if not (nxt and nxt[0] in BIN_NOUNS):
                out.add(c)
    return out


_NEGATED = re.compile(
    r"\b(?:don't|dont|do\s+not|never|without|not|no\s+need\s+to|avoid)\b[^,;.!?]*"
    r"|\b(?:leave|keep|let)\s+[^,;.!?]*?\s+(?:alone|where\s+(?:it|they)\s+(?:is|are)|untouched|be)\b"
    r"|\bhands\s+off\b[^,;.!?]*"
)


def positive(task: str) -> str:
    """``task`` without its negated clauses (what it asks for, not what it forbids)."""
    return _NEGATED.sub(" ", task.lower().replace("\u2019", "'"))


def check(task: str, steps: list[dict[str, Any]], world: WorldState) -> list[Reason]:
    """Reasons (code ``not_grounded``) for every moved cube or target the task never asked
    about; empty when the plan is grounded. A colour named only under a negation ("don't
    touch the red one", "leave blue alone", "without moving green") grounds nothing."""
    task = positive(task)
    words = _words(task)
    named = colours_named(task)
    objects = colours_of_objects(task)
    quant = _has(words, QUANTIFIERS) or any(
        w.endswith(("blocks", "cubes", "bricks")) for w in words
    )
    matching = _has(words, MATCHING)
    pronoun = any(w in PRONOUNS for w in words)
    held = getattr(world, "held_object", None)
    out: list[Reason] = []

    def colour_of(name: str) -> str:
        return name.split("_", 1)[0]

    related = _related(words, named, world) | _kinds_named(words, world)
    for i, step in enumerate(steps):
        skill = step.get("skill")
        obj = step.get("object")
        if isinstance(obj, str):
            ok = colour_of(obj) in objects or quant or (pronoun and obj == held) or obj in related
            if not ok:
                out.append(
                    Reason(
                        R.NOT_GROUNDED,
                        f"/steps/{i}/object",
                        f"the instruction never asks about {obj}",
                        f"move only what the instruction names: {_names(named)}",
                    )
                )
        tgt = step.get("target")
        if isinstance(tgt, str):
            if tgt.startswith("table_"):
                ok = _has(words, REGION_CUES)
            elif tgt in _drawers(world):
                ok = _mentions_drawer(words)
            else:
                ok = (
                    colour_of(tgt) in named
                    or tgt in related
                    or (tgt.endswith("_bin") and matching)
                    or (tgt.endswith("_bin") and len(getattr(world, "bins", []) or []) == 1)
                )
            if not ok:
                out.append(
                    Reason(
                        R.NOT_GROUNDED,
                        f"/steps/{i}/target",
                        f"the instruction never asks about {tgt}",
                        f"use only targets the instruction names: {_names(named)}",
                    )
                )
        elif isinstance(tgt, list) and skill == "push":
            if not re.search(r"\d", task):
                out.append(
                    Reason(
                        R.NOT_GROUNDED,
                        f"/steps/{i}/target",
                        "the instruction gives no coordinates",
                        "push to a region the instruction names",
                    )
                )
    return out


def _kinds_named(words: list[str], world: WorldState) -> set[str]:
    """The objects the words name by their kind ("the ball", "the cylinders"): an object of
    any kind but cube, whose words ("block", "cube") stand for every object."""
    from sim.objects import KINDS

    stems = {_stem(w) for w in words}
    out = set()
    for o in getattr(world, "objects", None) or ():
        cls = KINDS.get(getattr(o, "kind", "cube"))
        if cls is not None and o.kind != "cube" and stems & set(cls.kind_words):
            out.add(o.name)
    return out


def _related(words: list[str], named: set[str], world: WorldState) -> set[str]:
    """Cubes and bins the text names through a named neighbour in this scene: the cube on
    (or under) a named cube, the cube in a named bin, the bin that holds a named cube."""
    w = set(words)
    out: set[str] = set()
    for o in getattr(world, "objects", []) or []:
        below = getattr(o, "on", None)
        if below and below.split("_", 1)[0] in named and w & ON_CUES:
            out.add(o.name)
        if below and o.name.split("_", 1)[0] in named and w & UNDER_CUES:
            out.add(below)
        if below and w & {"top"}:
            out.add(o.name)  # "the one on top"
        b = getattr(o, "in_bin", None)
        if b and b.split("_", 1)[0] in named and w & IN_CUES:
            out.add(o.name)
        if b and o.name.split("_", 1)[0] in named and w & SAME_BIN_CUES:
            out.add(b)
    return out


#: Words for the articulated scene's drawer (a typo of one within ``DRAWER_TYPO`` counts).
DRAWER_CUES = frozenset({"drawer", "drawers", "cabinet", "cupboard", "dresser"})
DRAWER_TYPO = 0.8


def _drawers(world: WorldState) -> set[str]:
    d = getattr(world, "drawer", None)
    return {d.name} if d is not None else set()


def _mentions_drawer(words: list[str]) -> bool:
    """Whether the text names the drawer: "drawer", a word for it, or a typo of one
    ("drwaer"); the spelling repair leaves words outside the cube vocabulary alone."""
    return any(
        w in DRAWER_CUES
        or (len(w) >= 5 and difflib.get_close_matches(w, DRAWER_CUES, 1, DRAWER_TYPO))
        for w in words
    )


def _names(named: set[str]) -> str:
    return ", ".join(sorted(named)) or "nothing in this scene, so refuse"
