"""Register and noise over a whole instruction: politeness, chatty openings, a casual
register, keyboard slips, capitals and end punctuation.

Applied last (:func:`finish`), so every phenomenon gets the same noise; ``typos=False``
draws the same random stream without the slips.
"""

from __future__ import annotations

import random
import re

from planner.corpus.forms import POLITE_POST, POLITE_PRE, VERBOSE_POST, VERBOSE_PRE
from planner.corpus.scenes import Scene

_KEYS = "qwertyuiop asdfghjkl zxcvbnm"


def _neighbour(ch: str, r: random.Random) -> str:
    rows = _KEYS.split()
    for row in rows:
        i = row.find(ch)
        if i >= 0:
            opts = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
            return r.choice(opts) if opts else ch
    return ch


def typo_word(w: str, r: random.Random) -> str:
    """One keyboard slip: drop, double, swap or hit a neighbouring key."""
    if len(w) < 3 or not w.isalpha():
        return w
    i = r.randrange(1, len(w)) if r.random() < 0.8 else 0
    op = r.random()
    if op < 0.3:
        return w[:i] + w[i + 1 :]
    if op < 0.5:
        return w[:i] + w[i] + w[i:]
    if op < 0.75 and i < len(w) - 1:
        return w[:i] + w[i + 1] + w[i] + w[i + 2 :]
    return w[:i] + _neighbour(w[i], r) + w[i + 1 :]


def add_typos(text: str, r: random.Random, n: int) -> str:
    words = text.split(" ")
    idx = [i for i, w in enumerate(words) if len(w) >= 3 and w.isalpha()]
    for i in r.sample(idx, min(n, len(idx))):
        words[i] = typo_word(words[i], r)
    out = " ".join(words)
    if r.random() < 0.2:
        out = out.replace(", ", ",")
    return out


def casualise(text: str, r: random.Random) -> str:
    t = text.lower()
    subs = [
        (r"\byou\b", "u"),
        (r"\bplease\b", "pls"),
        (r"\bthe\b ", ""),
        (r"\band\b", "&"),
        (r"\bthen\b", "then"),
        (r"\bto\b", "2"),
    ]
    for pat, rep in subs:
        if r.random() < 0.25:
            t = re.sub(pat, rep, t, count=1)
    if r.random() < 0.3:
        t = t.rstrip(".!")
    return t


def finish(
    r: random.Random,
    text: str,
    cmd: str,
    cat: str,
    scene: Scene,
    *,
    noise: bool,
    casual: bool = False,
    typos: bool = True,
) -> dict:
    """Register, politeness, verbosity and typos, applied to the whole instruction."""
    if noise:
        if r.random() < 0.25:
            text = f"{r.choice(POLITE_PRE)} {text}"
        if r.random() < 0.2:
            text = f"{text} {r.choice(POLITE_POST)}"
        if r.random() < 0.08:
            text = f"{r.choice(VERBOSE_PRE)} {text}. {r.choice(VERBOSE_POST)}"
        if casual:
            text = casualise(text, r)
        if r.random() < 0.3 and typos:
            text = add_typos(text, r, r.choice([1, 1, 2, 3]))
    if r.random() < 0.5:
        text = text[0].upper() + text[1:]
    if r.random() < 0.03:
        text = text.upper()
    if r.random() < 0.3 and not text.endswith((".", "!", "?")):
        text += r.choice([".", "!", "."])
    text = re.sub(r"[ ]{2,}", " ", text).strip()
    return {"instruction": text, "scene": scene.line(), "command": cmd, "category": cat}
