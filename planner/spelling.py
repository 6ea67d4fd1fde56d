"""Typo repair towards the words robot instructions are made of.

Why: people type "stcak red on grene" and "the blue blok". The embedded model saw keyboard
slips in training, but a 135M-parameter model generalises poorly to slips it never saw, and
one wrong colour makes a wrong plan. Repairing a word is cheap and exact when the vocabulary
is small. The vocabulary is the words the robot's language is written in, read where they
are defined, with no corpus sampled: the lexicon's forms (:mod:`bridge.lexicon`: shades,
things of a colour, nouns, regions, verbs), every command text of the command language
(:func:`planner.corpus.vocabulary.command_texts`) and the words of the corpus's templates
(:func:`planner.corpus.vocabulary.template_words`). It holds exactly the words a sampled
tabletop corpus holds (``tests/planner/test_spelling_vocabulary.py``); the counts, which
break ties, are how often each word is written there.

Deliberately conservative, because a wrong repair is worse than none:

- only words outside the vocabulary *and* outside common English (pyspellchecker's word
  frequencies, seen at least :data:`ENGLISH_MIN_COUNT` times) change, so "nothing" never
  becomes "thing" and "stacking" never "starting";
- words shorter than four letters stay as typed ("rde" could be many things);
- one edit (insert, delete, substitute, swap neighbours) for words up to six letters, two for
  longer ones; up to five letters the first letter must agree (slips rarely hit it, and "glue"
  must not become "blue");
- among equally close candidates, one with the same letters wins (two keys pressed in the
  wrong order: "opne" is "open", not "one"), then a word of doable requests (a slip turned
  into a word only refusals use, "plase" into "plate", would refuse a doable request), then
  the most often written word.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import TYPE_CHECKING

import planner.rx as re

if TYPE_CHECKING:
    from spellchecker import WordFrequency

MIN_LEN = 4
#: How often a word must occur in pyspellchecker's English frequency list to count as a real
#: word (misspellings that made it into the list, such as "blok", occur far less often).
ENGLISH_MIN_COUNT = 100

_WORD = re.compile(r"[A-Za-z]+")


def distance(a: str, b: str, limit: int = 2) -> int:
    """Optimal-string-alignment distance (Damerau-Levenshtein without repeated edits of one
    substring), or ``limit + 1`` once it is certainly larger than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


#: The lexicon's forms the vocabulary reads: the tabletop's words (the articulated scene's
#: drawer, lamp and button forms are left out, as the corpus vocabulary always left them).
LEXICON_FORMS = (
    "COLOURS",
    "ABSENT_COLOURS",
    "REGION_NAMES",
    "SHADE_FORMS",
    "THING_FORMS",
    "MORE_THING_FORMS",
    "BLOCK_FORMS",
    "BIN_FORMS",
    "REGION_FORMS",
    "MOVE_VERB_FORMS",
    "STACK_VERB_FORMS",
    "PUSH_VERB_FORMS",
    "PICK_VERB_FORMS",
    "EXCEPT_FORMS",
    "QUANTIFIER_FORMS",
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def lexicon_words() -> Counter[str]:
    """How often each word is written in the lexicon's :data:`LEXICON_FORMS`."""
    from bridge import lexicon

    out: Counter[str] = Counter()
    for name in LEXICON_FORMS:
        table = getattr(lexicon, name)
        for forms in table.values() if isinstance(table, dict) else [table]:
            for form in forms:
                out.update(_words(form))
    return out


@functools.lru_cache(maxsize=1)
def _vocabularies() -> tuple[dict[str, int], frozenset[str]]:
    from planner.corpus.vocabulary import command_texts, template_words
    from planner.grammar import REFUSE

    lexicon = lexicon_words()
    doable_templates, refusal_templates = template_words()
    commands: Counter[str] = Counter()
    refusals: Counter[str] = Counter()
    for text in command_texts(articulated=False):
        (refusals if text.startswith(REFUSE) else commands).update(_words(text))
    doable = lexicon + doable_templates + commands
    every = doable + refusal_templates + refusals
    return dict(every), frozenset(doable)


def vocabulary() -> dict[str, int]:
    """The robot's vocabulary with counts (built once per process)."""
    return _vocabularies()[0]


def doable_vocabulary() -> frozenset[str]:
    """The words of doable requests only (no refusal's words: "paint", "throw", "fridge")."""
    return _vocabularies()[1]


@functools.lru_cache(maxsize=1)
def _english() -> WordFrequency:
    from spellchecker import SpellChecker

    return SpellChecker().word_frequency


def is_english(word: str) -> bool:
    """Whether ``word`` (lower case) is a common English word."""
    return _english()[word] >= ENGLISH_MIN_COUNT


def repair_word(word: str, vocab: dict[str, int] | None = None) -> str:
    """``word`` as the vocabulary word it was probably meant to be, or unchanged (against the
    robot's vocabulary, remembered: the rules planner and the model both repair a request)."""
    if vocab is None:
        return _repair_default(word)
    return _repair(word, vocab)


@functools.lru_cache(maxsize=4096)
def _repair_default(word: str) -> str:
    return _repair(word, vocabulary(), doable_vocabulary())


def _repair(word: str, vocab: dict[str, int], doable: frozenset[str] = frozenset()) -> str:
    low = word.lower()
    if len(low) < MIN_LEN or low in vocab or is_english(low):
        return word
    limit = 1 if len(low) <= 6 else 2
    letters = sorted(low)
    best: tuple[tuple[int, bool, bool, int], str] | None = None
    for cand, count in vocab.items():
        if len(cand) < MIN_LEN - 1 or (len(low) <= 5 and cand[0] != low[0]):
            continue
        d = distance(low, cand, limit)
        if d > limit:
            continue
        key = (d, sorted(cand) != letters, bool(doable) and cand not in doable, -count)
        if best is None or key < best[0]:
            best = (key, cand)
    if best is None:
        return word
    fixed = best[1]
    if word.isupper():
        return fixed.upper()
    return fixed.capitalize() if word[0].isupper() else fixed


def repair(text: str, vocab: dict[str, int] | None = None) -> str:
    """``text`` with each out-of-vocabulary word repaired where a close vocabulary word
    exists; everything else (spacing, punctuation, case) is kept."""
    return _WORD.sub(lambda m: repair_word(m.group(0), vocab), text)
