"""Families the twenty-eighth and twenty-ninth understanding sets (AB and AC, 2026-12-04)
found.

Each failed before: a shop assistant's and a formal Briton's requests ("would it be all
right if you popped ...", "might I trouble you to ..., should it not be too much bother"),
"same as before" (no memory: answered), an accent written as it sounds ("put eet een ze red
bin", "ztop ztop!"), a claim asked back ("it looks like X is on Y. have I got that
right?"), Portuguese "você consegue", French "surtout", German "oben auf", "mal", "lässt du
aber liegen". The phrasings here are not those of the sets.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import understand
from planner.understand.translate import translate
from tests.planner.planned import four, planned


@pytest.mark.parametrize(
    "text, goal",
    [
        (
            "would it be okay if you placed the red block into the blue bin for me? ta",
            "in(red_block, blue_bin)",
        ),
        (
            "might I ask you to put the green cube on the yellow one, should it not be too "
            "much trouble",
            "on(green_block, yellow_block)",
        ),
        ("pleez put ze blue block een ze green bin", "in(blue_block, green_bin)"),
    ],
)
def test_polite_and_accented_requests(text, goal):
    assert goal_holds([goal], planned(text, four()))


@pytest.mark.parametrize("text", ["do it again, please", "like last time"])
def test_no_memory_is_answered(text):
    u = understand(text, four())
    assert u.kind == "answer" and "memory" in u.answer


def test_an_accented_stop():
    assert understand("ztop! ztop!", four()).kind == "stop"


def test_a_claim_asked_back():
    u = understand("it looks like the red block is in the green bin. is that right?", four())
    assert u.kind == "answer" and u.answer.startswith("No")


@pytest.mark.parametrize(
    "text, english",
    [
        ("Você consegue largar o bloco azul?", "can you drop the blue block?"),
        (
            "Setz mal den roten Würfel oben auf den blauen Würfel.",
            "put the red block on top of the blue block.",
        ),
    ],
)
def test_other_languages(text, english):
    assert translate(text)[0] == english
