"""The generated corpus: reproducible, and every command is one the rules planner grounds."""

from __future__ import annotations

import pytest

from planner import corpus
from planner.rules import RulesPlanner
from tests.planner.planner_worlds import make_world


def test_same_seed_same_corpus_other_seed_other_corpus():
    a = corpus.generate(300, seed=5)
    assert a == corpus.generate(300, seed=5)
    assert a != corpus.generate(300, seed=6)
    assert len({s["instruction"].lower() for s in a}) == 300


def test_split_is_deterministic_and_disjoint():
    s = corpus.generate(200, seed=1)
    train, held = corpus.split(s, 0.1)
    assert len(held) == 20 and len(train) == 180
    assert not {x["instruction"] for x in train} & {x["instruction"] for x in held}


@pytest.mark.parametrize("seed", [0, 1])
def test_every_command_is_understood_by_the_rules_planner(seed):
    """The model is taught only commands the rules planner parses with confidence, so a
    right answer from the model is always a plan (or a reasoned refusal)."""
    rules = RulesPlanner()
    world = make_world()
    bad = []
    for s in corpus.generate(600, seed=seed):
        cmd = s["command"]
        if cmd.startswith("refuse:"):
            assert len(cmd) > len("refuse: ")
            continue
        if cmd.startswith("put it in"):
            continue  # needs a held cube: checked below
        r = rules.parse(cmd, world)
        if not r.confident:
            bad.append((cmd, r.notes))
        elif s["category"] == "absent":
            assert r.refuse, cmd
    assert not bad, bad[:5]


def test_it_command_places_the_held_cube():
    held = make_world(held="red_block")
    r = RulesPlanner().parse("put it in the blue bin, then go home", held)
    assert r.confident
    assert r.steps == [{"skill": "place", "target": "blue_bin"}, {"skill": "home"}]


def test_the_corpus_covers_the_phenomena():
    text = " ".join(s["instruction"].lower() for s in corpus.generate(3000, seed=0))
    for cue in ("crimson", "colour of", "except", "before you", "->", "i want"):
        assert cue in text, cue
    cats = {s["category"] for s in corpus.generate(3000, seed=0)}
    assert {"plain", "list", "ordering", "refuse", "absent"} <= cats
