"""Does a refusal's reason fit the words it refuses?

Why: the small model sometimes refuses a plain request with a reason that has nothing to do
with it ("put the blue block on the red block" -> "refuse: that would be unsafe"). Most of its
reasons make a claim that can be checked against the instruction: "there is no cup" needs the
word cup, "bins cannot be moved" a bin, "a block cannot go on itself" one colour twice, "that
would be unsafe" a word of harm. When the claim does not hold *and* every word of the
instruction is one the robot's vocabulary knows (so nothing unknown is being asked for), the
model is asked once more with refusals ruled out; the proposer keeps that answer only when it
names every colour of the instruction and the rules planner can ground it.

Refusals that cannot be checked (injections, "not a task for this robot", "no skill can do
that") always stand: a wrong refusal costs a retry, a wrong plan costs a collision.
"""

from __future__ import annotations

import re

from planner import spelling
from planner.corpus import BIN_NOUNS, BLOCK_NOUNS
from planner.embedded.coverage import colours

#: Words that make "that would be unsafe" plausible.
HARM = frozenset(
    """throw throwing threw toss fling hurl smash smashing crush crushing break breaking
    broke hit hitting punch punching slam slamming knock knocking swing swinging fire burn
    burning explode destroy destroying hurt hurting harm attack kill stab wreck damage floor
    person people me face camera window fast faster hard violently wildly shake drop dropping
    someone somebody anyone head glass""".split()
)
_BIN_WORDS = frozenset(w.split()[-1] for w in BIN_NOUNS) | {"bins", "boxes", "baskets"}
#: What every scene has: "there is no bin in the scene" never fits.
_SCENE_THINGS = frozenset(w.split()[-1] for w in BIN_NOUNS + BLOCK_NOUNS) | {"table"}
_NO_THING = re.compile(r"^there is no (.+?) in the scene$")


_CHECKED = (
    "bins cannot be moved",
    "the table cannot be moved",
    "a block cannot go on itself",
    "a block cannot go inside a block",
    "that would be unsafe",
)


def checkable(reason: str) -> bool:
    """Whether :func:`supported` can test ``reason`` against words (else it always holds)."""
    reason = reason.strip().lower()
    return reason in _CHECKED or bool(_NO_THING.match(reason))


def supported(reason: str, instruction: str) -> bool:
    """Whether ``reason`` (a refusal's text, without "refuse:") fits ``instruction``."""
    words = set(re.findall(r"[a-z]+", instruction.lower()))
    reason = reason.strip().lower()
    m = _NO_THING.match(reason)
    if m:
        thing = m.group(1).split()[-1]
        if thing.rstrip("s") in _SCENE_THINGS:
            return False  # bins, blocks and the table are always there
        return any(w == thing or w.rstrip("s") == thing.rstrip("s") for w in words)
    if reason == "bins cannot be moved":
        return bool(words & _BIN_WORDS)
    if reason == "the table cannot be moved":
        return "table" in words
    if reason in ("a block cannot go on itself", "a block cannot go inside a block"):
        return "itself" in words or _repeats_colour(instruction)
    if reason == "that would be unsafe":
        return bool(words & HARM)
    return True


def _repeats_colour(text: str) -> bool:
    low = text.lower()
    return any(len(re.findall(rf"\b{c}\b", low)) > 1 for c in colours(text))


def known_words(instruction: str) -> bool:
    """Whether every word of the instruction is a word of doable requests (or a short
    function word): nothing is being asked for that only refusals, or nothing, name."""
    vocab = spelling.doable_vocabulary()
    return all(len(w) < 3 or w in vocab for w in re.findall(r"[a-z]+", instruction.lower()))
