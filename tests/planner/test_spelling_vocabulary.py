"""Typo repair's vocabulary is read from where the words are defined (the lexicon's forms,
the command texts, the corpus's templates), not from a sampled corpus, and it holds exactly
the words a sampled corpus holds."""

from __future__ import annotations

import pytest

from bridge import lexicon
from planner import corpus, spelling
from planner.corpus import sampling, vocabulary


@pytest.fixture
def fresh_vocabulary():
    """Rebuild the remembered vocabulary around a test (and after it, for the others)."""
    spelling._vocabularies.cache_clear()
    spelling._repair_default.cache_clear()
    yield
    spelling._vocabularies.cache_clear()
    spelling._repair_default.cache_clear()


def test_the_vocabulary_holds_the_words_of_a_sampled_corpus():
    every, doable = corpus.words()
    vocab = spelling.vocabulary()
    # one-letter words ("u" of the casual register) are never repaired nor repair targets
    assert {w for w in every if len(w) > 1} == {w for w in vocab if len(w) > 1}
    assert {w for w in doable if len(w) > 1} == {
        w for w in spelling.doable_vocabulary() if len(w) > 1
    }


def test_refusal_words_are_not_doable_words():
    for word in ("paint", "fridge", "joke", "ignore"):
        assert word in spelling.vocabulary(), word
        assert word not in spelling.doable_vocabulary(), word
    for word in ("crimson", "receptacle", "please", "configuration", "purple"):
        assert word in spelling.doable_vocabulary(), word


def test_no_sample_is_drawn(monkeypatch, fresh_vocabulary):
    def no_sampling(*args, **kwargs):
        raise AssertionError("the vocabulary sampled the corpus")

    monkeypatch.setattr(sampling, "sample", no_sampling)
    monkeypatch.setattr(vocabulary, "sample", no_sampling)
    assert spelling.repair("stcak red on grene") == "stack red on green"


def test_a_word_added_to_the_lexicon_is_repaired_towards(monkeypatch, fresh_vocabulary):
    assert spelling.repair("the vermillon block") == "the vermillon block"
    shades = {**lexicon.SHADE_FORMS, "red": (*lexicon.SHADE_FORMS["red"], "vermilion")}
    monkeypatch.setattr(lexicon, "SHADE_FORMS", shades)
    spelling._vocabularies.cache_clear()
    spelling._repair_default.cache_clear()
    assert spelling.repair("the vermillon block") == "the vermilion block"


def test_a_doable_word_wins_a_tie_with_a_refusal_word():
    # "place" and "plate" are one edit from "plase"; a plate is only ever refused
    assert spelling.repair("plase the red cube on the blue cube") == (
        "place the red cube on the blue cube"
    )


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        # slips of the corpus's and the lexicon's words, repaired as before the vocabulary
        # was read from the sources (the old sampled vocabulary gave the same)
        ("cgerry", "cherry"),
        ("shif", "shift"),
        ("fourt", "fourth"),
        ("pposition", "position"),
        ("pijachu", "pikachu"),
        ("dtrawberry", "strawberry"),
        ("urbber", "rubber"),
        ("engin", "engine"),
        ("stackd", "stack"),
        ("soock", "sock"),
        ("recepacle", "receptacle"),
        ("saphire", "sapphire"),
    ],
)
def test_slips_are_repaired(typed, meant):
    assert spelling.repair_word(typed) == meant


@pytest.mark.parametrize("typed", ["periwinkel", "grass", "start", "Please"])
def test_words_without_a_close_vocabulary_word_stay(typed):
    assert spelling.repair_word(typed) == typed
