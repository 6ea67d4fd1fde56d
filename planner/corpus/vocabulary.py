"""Every command text the corpus teaches, and the words of the corpus.

:func:`command_texts` is what the embedded model's decoding mask is made of
(:func:`planner.embedded.model.command_vocabulary`). :func:`words` counts the words of a
sampled corpus; it is a check on the static vocabulary typo repair reads
(:mod:`planner.spelling`), which does not sample.
"""

from __future__ import annotations

import random
import re

from planner.corpus.forms import ABSENT, BINS, CUBES, REGIONS
from planner.corpus.grammar import DEVICE_COMMANDS, INJECTION_REASON, REFUSE, Clause
from planner.corpus.refusals import FIXED_REFUSALS, OTHER_OBJECTS, REFUSE_TEMPLATES
from planner.corpus.sampling import TABLETOP_PROFILES, sample


def command_texts(articulated: bool = True) -> list[str]:
    """Every shape of command the corpus teaches, over every colour, target and reason:
    the texts whose tokens make up the embedded model's output vocabulary (``articulated``:
    with the articulated scene's commands; :func:`words` leaves them out, so the spelling
    vocabulary of the tabletop is what it was)."""
    cols = CUBES + ABSENT
    out = [Clause("home").command(), Clause("all_match").command()]
    for o in cols:
        for d in BINS + ("yellow",) + ABSENT:
            out += [
                Clause("move", o, d).command(),
                Clause("all", dest=d).command(),
                Clause("it", dest=d).command(),
                Clause("except", dest=d, excl=(o,)).command(),
            ]
        for d in cols:
            out += [Clause("stack", o, d).command(), Clause("except_match", excl=(o, d)).command()]
        for reg in REGIONS:
            out += [Clause("region", o, reg).command(), Clause("push", o, reg).command()]
        out.append(Clause("pick", o).command())
    out += [REFUSE + why.format(x=x) for _, why in REFUSE_TEMPLATES for x in OTHER_OBJECTS]
    out += [REFUSE + why for _, why in FIXED_REFUSALS]
    out.append(REFUSE + INJECTION_REASON)
    if articulated:
        out += list(DEVICE_COMMANDS.values())
        for o in cols:
            out += [Clause("drawer_in", o).command(), Clause("drawer_out", o).command()]
    return out + [", then ".join(out[i : i + 2]) for i in range(0, len(out) - 1, 2)]


def words(n: int = 4000, seed: int = 0) -> tuple[dict[str, int], dict[str, int]]:
    """How often each lower-case word occurs in clean samples (no keyboard slips; ``n // 2``
    per profile) and in the command texts: (every word, the words of doable requests and
    their commands only). The first is what :mod:`planner.spelling` repairs typos towards;
    the second leaves out what only refusals name ("paint", "fridge")."""
    r = random.Random(seed)
    every: dict[str, int] = {}
    doable: dict[str, int] = {}
    samples = [
        sample(r, profile, typos=False) for profile in TABLETOP_PROFILES for _ in range(n // 2)
    ]
    pairs = [(s["instruction"], s["command"].startswith("refuse:")) for s in samples]
    pairs += [(c, c.startswith("refuse:")) for c in command_texts(articulated=False)]
    for text, refused in pairs:
        for w in re.findall(r"[a-z]+", text.lower()):
            every[w] = every.get(w, 0) + 1
            if not refused:
                doable[w] = doable.get(w, 0) + 1
    return every, doable
