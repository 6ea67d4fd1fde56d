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

from planner.corpus import ABSENT, COLOR_SYNONYMS, CUBES, WORLD_THINGS


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
    a plain list of at least two items that each name a colour."""
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
    if len(parts) < 2 or not all(colours(p) for p in parts):
        return None
    return [header + p for p in parts]
