"""Did the model's command keep every colour the user named, and if not, can the instruction
be split into items the model can rewrite one by one?

Why: the 135M model's commonest error on long instructions is a dropped item ("red in red,
blue in blue" becomes one clause). A colour named by the user but absent from the command
is a cheap, exact signal of that error. When the instruction is a plain list (separated by
semicolons, commas before a new item, bullets, numbers), each item is short, the case the
model handles best, so its items are rewritten alone and their commands joined in order.

A list is only split when nothing in it refers across items ("the other one", "the rest",
"the same bin", "both", "it") and nothing reorders them ("before", "after", "once"), since
those need the whole sentence.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from planner.corpus import ABSENT, COLOR_SYNONYMS, CUBES, WORLD_THINGS
from sim.scene import cube_color

if TYPE_CHECKING:
    from sim.world import WorldState


@functools.lru_cache(maxsize=1)
def _colour_patterns() -> list[tuple[re.Pattern, str]]:
    phrases: dict[str, str] = {}
    for c in CUBES + ABSENT:
        phrases[c] = c
    for c, syns in COLOR_SYNONYMS.items():
        for s in syns:
            phrases[s] = c
    for c, things in WORLD_THINGS.items():
        for t in things:
            bare = re.sub(r"^(a|an|the) ", "", t)
            phrases.setdefault(bare, c)
    out = []
    for phrase in sorted(phrases, key=len, reverse=True):  # longest first: "ruby red"
        pat = r"\b" + r"[\s-]+".join(map(re.escape, phrase.split())) + r"\b"
        out.append((re.compile(pat, re.IGNORECASE), phrases[phrase]))
    return out


def mentions(text: str) -> int:
    """How many colour phrases and region words ``text`` holds, repeats counted: an item
    that stands alone names what moves and where it goes ("red in red", "blue -> left")."""
    n = 0
    rest = text
    for pat, _ in _colour_patterns():
        n += len(pat.findall(rest))
        rest = pat.sub(" ", rest)
    return n + len(_REGION.findall(rest))


_REGION = re.compile(r"\b(left|right|front|back|middle|center|centre|rear)\b", re.IGNORECASE)


def colours(text: str) -> set[str]:
    """The colours ``text`` names, directly, by a shade or by a thing of that colour."""
    found: set[str] = set()
    rest = text
    for pat, c in _colour_patterns():
        if pat.search(rest):
            found.add(c)
            rest = pat.sub(" ", rest)
    return found


def missing(instruction: str, command: str) -> set[str]:
    """Colours the instruction names that the command does not."""
    return colours(instruction) - colours(command)


#: Words that tie list items together or reorder them: such a list is never split.
_CROSS = re.compile(
    r"\b(other|others|rest|remaining|same|both|them|it|its|their|those|these|that one|"
    r"ones|everything|every|each|all|except|but|apart|besides|before|after|afterwards|"
    r"once|first|until|instead|while|when|unless|if|not|don't|without|leave|only|stay|stays|"
    r"keep|remain|remains)\b",
    re.IGNORECASE,
)
#: Item separators, strongest first: a list split by semicolons keeps its commas and slashes
#: inside items ("red block / blue bin; yellow block / red bin").
_STRONG_SPLIT = re.compile(r"\s*(?:;|\||\.\s+(?:then\s+)?|\s(?=\d[).:]\s))\s*")
_COMMA_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?(?:then\s+)?")
_LEAD = re.compile(
    r"^(?:(?:and then|then|and|also|next|plus|[-*•]|\d+[).:]|step \d+:?)[\s,]*)+", re.I
)
_HEADER = re.compile(r"^([^:]{1,40}):\s*(.+)$")


def items(instruction: str) -> list[str] | None:
    """The instruction's list items, each one a complete request, or ``None`` when it is not
    a plain list of at least two items that each name what moves and where (two colour or
    region mentions: "red in red", not "take the red block")."""
    text = "; ".join(ln for ln in (x.strip() for x in instruction.splitlines()) if ln)
    text = text.rstrip(".!")
    if _CROSS.search(text):
        return None
    header = ""
    m = _HEADER.match(text)
    if m and not colours(m.group(1)):
        header, text = m.group(1).strip() + ": ", m.group(2)
    parts: list[str] = []
    for splitter in (_STRONG_SPLIT, _COMMA_SPLIT):
        parts = [q for q in (_LEAD.sub("", p).strip() for p in splitter.split(text)) if q]
        if len(parts) >= 2:
            break
    if len(parts) < 2 or not all(mentions(p) >= 2 for p in parts):
        return None
    return [header + p for p in parts]


#: Words under which a named colour need not be acted on ("leave the red one", "blue stays").
_KEEPS = re.compile(
    r"\b(except|but|apart|besides|other than|leave|leaving|left alone|alone|stay|stays|keep|"
    r"keeps|untouched|don't|do not|not|without|never|no)\b",
    re.IGNORECASE,
)


def unaccounted(instruction: str, command: str, steps: list[dict], world: WorldState) -> set[str]:
    """Colours the user named that neither the command nor the scene around the plan
    accounts for: not in the command, and not the colour of a cube or bin next to what the
    plan moves ("the block on the blue one", "the same bin as the red block"). Empty when the
    instruction says to leave something alone, or the command quantifies ("every block").

    A plan that leaves a named colour unaccounted for dropped part of the request, and a run
    of it would claim success for less than was asked."""
    if _KEEPS.search(instruction) or "every block" in command:
        return set()
    lost = missing(instruction, command)
    if not lost:
        return set()
    objs = {o.name: o for o in getattr(world, "objects", []) or []}
    near: set[str] = set()
    for step in steps:
        for key in ("object", "target"):
            name = step.get(key)
            if not isinstance(name, str):
                continue
            o = objs.get(name)
            if o is not None:
                near |= {x for x in (o.on, o.in_bin) if x}
            near |= {x.name for x in objs.values() if name in (x.on, x.in_bin)}
    if world.held_object:
        near.add(world.held_object)
    return lost - {cube_color(n) for n in near}
