"""The noise of typing and of speech, taken out before anything is read.

Why: a dictated request comes with fillers and repeated words ("so um the green block is is
already in the uh the red bin"), a child types "teh bal" and "stooop", a hurried user runs
words together ("putthe leftmostblock inthe bluebin"), and someone says the whole request
twice. Each of these hid a request (or a stop, or a statement) from every reader after this
one. The rules here only remove what carries no meaning: fillers, a word or phrase said
twice in a row, a letter held down, words of chat shorthand, and spaces left out between
words the robot's vocabulary or common English knows. Slips inside longer words are
:mod:`planner.spelling`'s (the planners repair those against the robot's vocabulary).
"""

from __future__ import annotations

import functools

import planner.rx as re
from bridge import lexicon as L
from planner import spelling

#: Spoken fillers with no pause marked around them (dictation has no commas): they say
#: nothing. Set off by a comma ("right side, er, actually the left") a filler is the
#: hesitation before a correction, which :mod:`planner.understand.corrections` reads.
_FILLER = re.compile(r"(?:^|(?<=[^,\s]\s))(?:u+m+|u+h+m*|e+r+m+|e+r+|a+h+m+|hm+)(?=\s+[^,\s]|$)\s*")
#: Chat shorthand and short slips the spelling repair leaves alone (it does not touch words
#: under four letters).
_SHORT = {
    "teh": "the",
    "hte": "the",
    "r": "are",
    "u": "you",
    "ur": "your",
    "pls": "please",
    "plz": "please",
    "blu": "blue",
    "bleu": "blue",
    "gren": "green",
    "grn": "green",
    "yelo": "yellow",
    "rd": "red",
    "bal": "ball",
    "blok": "block",
    "bloks": "blocks",
    "wat": "what",
    "wot": "what",
    "meny": "many",
    "n": "and",
    "thats": "that's",
    "whats": "what's",
    "wheres": "where's",
    "dont": "don't",
    "lotsa": "lots of",
    "gonna": "going to",
    "wanna": "want to",
    "pres": "press",
    "chillin": "chilling",
    "sittin": "sitting",
    "rn": "right now",
    "atm": "at the moment",
    # a strong accent written as it sounds ("pleez put ze red block een ze blue bin")
    "ze": "the",
    "zee": "the",
    "eet": "it",
    "een": "in",
    "zank": "thank",
    "pleez": "please",
    "leetle": "little",
    "seet": "sit",
    "ztop": "stop",
    "zere": "there",
    "zis": "this",
    "zat": "that",
    "ees": "is",
    "yeet": "throw",
    "yeeted": "threw",
}
#: Words speech-to-text writes for a colour, read as the colour where a block or a bin
#: follows ("the read block", "the blew bin", "the grin bin").
_SOUNDS_LIKE = {
    "read": "red",
    "blew": "blue",
    "grin": "green",
    "greene": "green",
    "yellowe": "yellow",
}
_HOMOPHONES = re.compile(
    r"\b(read|blew|grin|greene|yellowe)(?=\s+(?:blocks?|cubes?|bricks?|bins?|boxe?s?|one|blogs?|blocs?|been|beans?)\b)",
    re.I,
)
#: Nouns speech-to-text mishears after a colour ("the yellow blog", "the green been").
_NOUN_SOUNDS = {
    "blog": "block",
    "blogs": "blocks",
    "bloc": "block",
    "blocs": "blocks",
    "been": "bin",
    "bean": "bin",
    "beans": "bins",
}
_NOUN_HOMOPHONES = re.compile(
    rf"\b(?P<c>{'|'.join(L.COLOURS)})\s+(?P<n>{'|'.join(_NOUN_SOUNDS)})\b", re.I
)
#: Punctuation that dictation writes out as words ("stop stop stop exclamation mark").
_SPOKEN_MARKS = {
    "exclamation mark": "!",
    "exclamation point": "!",
    "question mark": "?",
    "full stop": ".",
    "comma": ",",
}
_SPOKEN_PUNCTUATION = re.compile(
    r"\s*\b(" + "|".join(k.replace(" ", r"\s+") for k in _SPOKEN_MARKS) + r")\b", re.I
)
#: Chat slang that carries no request: "bro", "lol", "no cap", "fr", said at the start or
#: the end, or set off by commas.
_SLANG = re.compile(
    r"(?:^|(?<=[,.!?]\s)|(?<=\s))(?:bro|bruh|fam|lol|lmao|lmfao|rofl|ngl|fr|no\s+cap|deadass|fr\s+fr|tbh|imo|istg)"
    r"(?=[\s,.!?]*$|\s*[,.!?])[\s,]*|^(?:yo|bro|bruh|fam|ngl|tbh)\s+(?=\w)"
)
#: Words said twice on purpose: "no no", "stop stop", "go go" keep their force.
_KEEP_DOUBLED = frozenset({"no", "stop", "go", "wait", "very", "really", "halt", "nope", "break"})


def clean(text: str) -> str:
    """``text`` without fillers, doubled words, held letters, shorthand or words run
    together; unchanged when it has none of them."""
    t = _FILLER.sub("", text)
    t = _SLANG.sub("", t).strip() or t
    t = _HOMOPHONES.sub(lambda m: _SOUNDS_LIKE[m.group(1).lower()], t)
    t = _NOUN_HOMOPHONES.sub(lambda m: f"{m['c']} {_NOUN_SOUNDS[m['n'].lower()]}", t)
    t = _SPOKEN_PUNCTUATION.sub(lambda m: _SPOKEN_MARKS[re.sub(r"\s+", " ", m.group(1).lower())], t)
    t = re.sub(
        r"\b(are\s+there|there\s+are|all|put|stack|move|the)\s+for\s+(?=(?:blocks|cubes|bricks)\b)",
        r"\1 four ",
        t,
        flags=re.I,
    )
    t = re.sub(r"\b(\w*?)(\w)\2{2,}(\w*)\b", _held, t)
    t = re.sub(r"\b[A-Za-z]+\b", _word, t)
    t = re.sub(r"\b(left|right|front|back|top|bottom)\s+most\b", r"\1most", t, flags=re.I)
    t = _said_twice(t)
    t = _doubled(t)
    return re.sub(r"\s+", " ", t).strip() if t != text else text


def _held(m: re.Match[str]) -> str:
    """ "stooop" -> "stop", "pleeease" -> "please": a letter held down is one (or two, where
    only that is a word)."""
    head, ch, tail = m.group(1), m.group(2), m.group(3)
    if not ch.isalpha():
        return m.group(0)
    for n in (1, 2):
        w = head + ch * n + tail
        if _known(w.lower()):
            return w
    return head + ch + tail


def _word(m: re.Match[str]) -> str:
    w = m.group(0)
    low = w.lower()
    if low in _SHORT:
        return _SHORT[low]
    swapped = _transposed(low) if len(low) >= 4 and not _known(low) else None
    if swapped:
        return swapped  # "blcok", "lfet": two letters typed the wrong way round
    if len(low) >= 5 and not _known(low):
        split = _split(low)
        # only where the robot's own words are in it ("putthe", "bluebin"), not "afternoon"
        if split and any(
            p in spelling.vocabulary() and len(p) >= 3 and p not in _LINKS for p in split
        ):
            return " ".join(split)
    return w


@functools.lru_cache(maxsize=4096)
def _transposed(word: str) -> str | None:
    """The one robot word that ``word`` is with two neighbouring letters swapped, else None."""
    found = {
        w
        for i in range(len(word) - 1)
        if (w := word[:i] + word[i + 1] + word[i] + word[i + 2 :]) != word
        and w in spelling.vocabulary()
    }
    return found.pop() if len(found) == 1 else None


@functools.lru_cache(maxsize=4096)
def _known(word: str) -> bool:
    return word in spelling.vocabulary() or spelling.is_english(word)


#: Robot words that alone do not make a run-together word ours ("after" + "noon").
_LINKS = frozenset(
    {
        "after",
        "before",
        "then",
        "than",
        "this",
        "that",
        "there",
        "here",
        "over",
        "under",
        "but",
        "and",
        "not",
        "for",
        "out",
        "off",
    }
)

_SMALL = frozenset(
    {"a", "i", "in", "on", "to", "of", "it", "is", "up", "at", "by", "or", "me", "my"}
)


@functools.lru_cache(maxsize=4096)
def _split(word: str) -> tuple[str, ...] | None:
    """ "leftmostblock" -> ("leftmost", "block"): two or three known words (each of two
    letters or more, a two-letter one only from a short list), else None."""
    cuts = range(2, len(word) - 1)
    two = [(word[:i], word[i:]) for i in cuts if _part(word[:i]) and _part(word[i:])]
    if two:
        return max(two, key=lambda p: min(len(p[0]), len(p[1])))  # the fewest, longest parts
    for i in cuts:
        a, b = word[:i], word[i:]
        if _part(a):
            for j in range(2, len(b) - 1):
                if _part(b[:j]) and _part(b[j:]):
                    return (a, b[:j], b[j:])
    return None


def _part(w: str) -> bool:
    if len(w) <= 2:
        return w in _SMALL
    return w in spelling.vocabulary() or (len(w) >= 4 and spelling.is_english(w))


def _said_twice(t: str) -> str:
    """ "put the red one in the red bin put the red one in the red bin": said once."""
    words = t.split()
    n = len(words)
    if (
        n >= 6
        and n % 2 == 0
        and [w.lower() for w in words[: n // 2]]
        == [re.sub(r"[.,!?]+$", "", w.lower()) for w in words[n // 2 :]]
        or (n >= 6 and n % 2 == 0 and _norm(words[: n // 2]) == _norm(words[n // 2 :]))
    ):
        return " ".join(words[n // 2 :])
    return t


def _norm(ws: list[str]) -> list[str]:
    return [re.sub(r"[^\w']+", "", w.lower()) for w in ws]


def _doubled(t: str) -> str:
    """ "is is", "the the", "on the on the": a word or two said again at once."""
    for size in (3, 2, 1):
        pattern = re.compile(rf"\b((?:[\w']+\s+){{{size - 1}}}[\w']+)\s+\1\b", re.IGNORECASE)

        def once(m: re.Match[str], size: int = size) -> str:
            words = m.group(1).lower().split()
            return m.group(0) if size == 1 and words[0] in _KEEP_DOUBLED else m.group(1)

        t = pattern.sub(once, t)
    return t
