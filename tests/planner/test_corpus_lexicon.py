"""One source of truth for the language: the corpus and the rules read their words from the
lexicon, the lexicon's corpus forms agree with its own word sets, and the corpora the shipped
adapter was trained on are reproduced byte for byte."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from bridge import lexicon as L
from planner import corpus, grammar, rules
from tests.planner.planner_worlds import make_world


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def test_the_corpus_reads_its_words_from_the_lexicon():
    assert corpus.CUBES is L.COLOURS and corpus.BINS is L.BIN_COLOURS
    assert corpus.ABSENT is L.ABSENT_COLOURS and corpus.REGIONS is L.REGION_NAMES
    assert corpus.COLOR_SYNONYMS is L.SHADE_FORMS and corpus.WORLD_THINGS is L.THING_FORMS
    assert corpus.BLOCK_NOUNS is L.BLOCK_FORMS and corpus.BIN_NOUNS is L.BIN_FORMS
    assert corpus.REGION_WORDS is L.REGION_FORMS and corpus.MOVE_VERBS is L.MOVE_VERB_FORMS
    assert corpus.PICK_VERBS is L.PICK_VERB_FORMS and corpus.EXCEPT_WORDS is L.EXCEPT_FORMS
    assert set(_words(" ".join(L.QUANTIFIER_FORMS))) - {"the", "of"} <= L.QUANTIFIERS


def test_the_rules_read_their_words_from_the_lexicon():
    assert rules.VERBS == L.VERB_SENSES and rules.QUANTS == L.QUANTIFIERS
    assert rules.DEVICE_NOUNS == L.DEVICE_NOUNS and rules.DEVICE_VERBS == L.DEVICE_VERBS
    assert rules.BLOCK_NOUNS == L.BLOCK_NOUNS and rules.REGION_WORDS == L.REGION_WORDS


def test_every_shade_names_its_colour_for_the_grounding_check():
    """A shade the model learns to rewrite must also ground that colour in the bridge."""
    for colour, shades in L.SHADE_FORMS.items():
        assert shades[0] == colour
        for shade in shades:
            assert set(_words(shade)) <= L.COLOUR_CUES[colour], shade


def test_absent_colours_bins_and_regions_agree_with_the_word_sets():
    assert set(L.ABSENT_COLOURS) <= L.OTHER_COLORS
    assert not set(L.ABSENT_COLOURS) & set(L.COLOURS)
    assert set(L.BIN_FORMS) <= L.BIN_WORDS
    assert set(L.REGION_NAMES) == {r.removeprefix("table_") for r in L.REGION_WORDS.values()}
    for region, forms in L.REGION_FORMS.items():
        for form in forms:
            if form == "the central area":  # the one form without a region word
                continue
            assert f"table_{region}" in {L.REGION_WORDS.get(w) for w in _words(form)}, form
    for form in L.BLOCK_FORMS:
        assert form.split()[-1] in L.BLOCK_NOUNS | L.ONE_WORDS | {"piece", "square"}, form


def test_the_rules_read_the_verbs_the_corpus_teaches_most():
    # the plain verbs of each skill; the corpus's rarer ones ("chuck", "plop") are the model's
    for verb, sense in (("put", "move"), ("stack", "stack"), ("push", "push"), ("grab", "pick")):
        assert L.VERB_SENSES[verb] == sense


def test_the_command_grammar_is_one_definition():
    """The model's output vocabulary, the corpus's commands and the rules' device commands
    come from the one grammar module."""
    assert corpus.Clause is grammar.Clause and corpus.DEVICE_COMMANDS is grammar.DEVICE_COMMANDS
    texts = corpus.command_texts()
    assert grammar.Clause("move", "red", "green").command() in texts
    assert all(not t.startswith("refuse:") or t.startswith(grammar.REFUSE) for t in texts)
    assert grammar.command([grammar.Clause("home"), grammar.Clause("open")]) == (
        "go home" + grammar.THEN + "open the drawer"
    )


#: sha256 of ``json.dumps(corpus.generate(n, seed, profile), sort_keys=True)`` for the five
#: stages the shipped adapter was trained in (docs/HISTORY.md), measured before the corpus
#: and the rules were split into packages and read the lexicon.
SHIPPED_STAGES = [
    (6000, 0, "base", "4a0d41c194ed76a9fac0f4ace8b786ce20f578487d949238bbd3cbd0dc6129e1"),
    (3000, 1, "lists", "eac5285c3557e19b989fe1be70ddfe3500f0591e220f72dc0d21ca7e26079f4c"),
    (4000, 3, "phrasing", "59dd77c478c3a7cdd0e52baf84ab6104dabfacc51e5b74a81a577d118e686306"),
    (2500, 4, "articulated", "096cf5dd85ca538485686c829475a73ab7a5b8562434a3a7ee68b23cb91b19b1"),
    (2500, 5, "articulated", "3c8ef6542a1ae89b51f4a4d38af49008248402c4c610e2e55dc3d7753a8d2e76"),
]


@pytest.mark.parametrize(("n", "seed", "profile", "digest"), SHIPPED_STAGES)
def test_the_shipped_stages_corpora_are_what_they_were(n, seed, profile, digest):
    text = json.dumps(corpus.generate(n, seed, profile), sort_keys=True)
    assert hashlib.sha256(text.encode()).hexdigest() == digest


def test_the_command_texts_are_what_they_were():
    """The embedded model's decoding mask is made of these texts' tokens."""
    for articulated, digest in (
        (True, "746ff7031f7a84b4a992023300c02de714d631d61826e28965555939ded91b2b"),
        (False, "50987f2388e792b274bc0bad25dbad7eb5650bd7bd240788db046cc500b9c19c"),
    ):
        text = json.dumps(corpus.command_texts(articulated))
        assert hashlib.sha256(text.encode()).hexdigest() == digest


def test_every_command_shape_is_read_by_the_rules():
    """Each one-clause text of the command language is one the rules planner reads with
    confidence (a plan, or a refusal naming what is absent), but a cube on itself, which
    it reads as impossible."""
    world, holding = make_world(), make_world(held="red_block")
    texts = [t for t in corpus.command_texts() if grammar.THEN not in t]
    assert len(texts) > 500
    for text in texts:
        if text.startswith(grammar.REFUSE):
            continue
        r = rules.parse(text, holding if text.startswith("put it") else world)
        if r.infeasible:
            assert re.fullmatch(r"stack the (\w+) block on the \1 block", text), text
        else:
            assert r.confident, (text, r.notes)
