"""Every command text the corpus teaches, and the words the corpus writes.

:func:`command_texts` is what the embedded model's decoding mask is made of
(:func:`planner.embedded.model.command_vocabulary`). :func:`template_words` reads the words
of the corpus's templates from their source, without sampling: typo repair
(:mod:`planner.spelling`) repairs towards them, together with the lexicon's forms and the
command texts. :func:`words` counts the words of a sampled corpus; it is kept as the check
that the static vocabulary misses no word a sample can contain.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import random
import re
from collections import Counter

from planner.corpus.forms import ABSENT, BINS, CUBES, REGIONS
from planner.corpus.refusals import FIXED_REFUSALS, OTHER_OBJECTS, REFUSE_TEMPLATES
from planner.corpus.sampling import TABLETOP_PROFILES, sample
from planner.grammar import DEVICE_COMMANDS, INJECTION_REASON, REFUSE, THEN, Clause


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
    return out + [THEN.join(out[i : i + 2]) for i in range(0, len(out) - 1, 2)]


def words(n: int = 4000, seed: int = 0) -> tuple[dict[str, int], dict[str, int]]:
    """How often each lower-case word occurs in clean samples (no keyboard slips; ``n // 2``
    per profile) and in the command texts: (every word, the words of doable requests and
    their commands only; the second leaves out what only refusals name, "paint", "fridge").
    Typo repair no longer reads it (it reads :func:`template_words`, the lexicon and
    :func:`command_texts`); it stays as the check that those miss no word a sample holds."""
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


#: The modules of this package whose string literals are text a sample may contain (the
#: others hold names, patterns and bookkeeping). The articulated scene's (``devices``,
#: ``articulated``) are left out, as :func:`words` leaves out the ``articulated`` profile.
TEXT_MODULES = ("forms", "writer", "references", "lists", "phrasing")
#: The modules whose text is only ever refused ("paint the red block", "open the fridge").
REFUSAL_MODULES = ("refusals",)

_PLACEHOLDER = re.compile(r"\{[^}]*\}")


def _literals(module: str) -> list[str]:
    """The string literals of ``planner.corpus.<module>`` that are text: docstrings, the
    operands of comparisons (``c.kind == "move"``), a clause's kind (``Clause("move", ...)``)
    and ``__all__`` left out."""
    tree = ast.parse(inspect.getsource(importlib.import_module(f"planner.corpus.{module}")))
    names: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                names.add(id(first.value))
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                names.update(id(n) for n in ast.walk(side))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Clause" and node.args:
            names.add(id(node.args[0]))
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "__all__" for t in node.targets
        ):
            names.update(id(n) for n in ast.walk(node.value))
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in names
    ]


def template_words() -> tuple[Counter[str], Counter[str]]:
    """How often each lower-case word is written in the corpus's templates (``{x}``
    placeholders left out): (the words of doable requests' templates, the words of
    refusals' templates). Read from the source, so no sample is drawn."""
    doable: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    for group, modules in ((doable, TEXT_MODULES), (refused, REFUSAL_MODULES)):
        for m in modules:
            for text in _literals(m):
                group.update(re.findall(r"[a-z]+", _PLACEHOLDER.sub(" ", text.lower())))
    return doable, refused
