"""Families a fifteenth understanding set (O, 2026-12-04) found.

Each failed before: a lawyer's words ("provided that ..., X is to be placed therein;
failing that, ...", "save for", "shall be deposited in", "shall remain where it lies"), a
picture of a tower from the top down ("red on top, then yellow, then green at the
bottom"), "either the red or the blue one - your call", "the lot", letters typed the wrong
way round ("blcok", "lfet"), a count said wrongly with a tag ("there are seven blocks in the
blue bin, right?"), shouted complaints before a question ("I DIDN'T SAY MOVE ANYTHING. I
ASKED WHERE ..."), "tell our guests how many ... - not counting the ones in the bins", the
robot described to visitors ("this arm can pick up a block ..."), French "dépose-le",
German "Tischmitte", Portuguese told apart from Spanish by its own words. The phrasings here
are not those of the set.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import noise, understand
from planner.understand.translate import translate
from tests.planner.planned import four, moved, planned
from tests.worlds import cube, world

Z = 0.02


def test_a_lawyers_conditions_and_exceptions():
    w = world([cube("red_block", (0.0, 0.25, 0.025), in_bin="green_bin"), cube("blue_block")])
    text = (
        "So long as the green bin is empty, the blue block is to be placed therein; failing "
        "that, it is to be placed in the red bin."
    )
    assert goal_holds(["in(blue_block, red_bin)"], planned(text, w))
    text = "every block on the table, save for the red one, shall be deposited in the blue bin"
    after = planned(text, four())
    assert goal_holds(["in(green_block, blue_bin)", "in(yellow_block, blue_bin)"], after)
    assert "red_block" not in moved(text, four())


def test_a_picture_a_choice_and_the_lot():
    after = planned("like a snowman: yellow on top, then red, then blue at the bottom", four())
    assert goal_holds(["on(red_block, blue_block)", "on(yellow_block, red_block)"], after)
    after = planned("either the green or the yellow one into the red bin, up to you", four())
    assert sum(o.in_bin == "red_bin" for o in after.objects) == 1
    after = planned("chuck the whole lot in the blue bin", four())
    assert all(o.in_bin == "blue_bin" for o in after.objects)


@pytest.mark.parametrize(
    "said, heard",
    [
        ("put the blcok on the lfet", "put the block on the left"),
        ("the form is here", "the form is here"),
    ],
)
def test_swapped_letters(said, heard):
    assert noise.clean(said) == heard


@pytest.mark.parametrize(
    "text, has",
    [
        ("there are four blocks in the red bin, yeah?", "No"),
        (
            "I DID NOT ASK YOU TO MOVE ANYTHING. I WANT TO KNOW WHERE THE BLUE BLOCK IS.",
            "blue block is",
        ),
        (
            "could you tell everyone how many blocks are on the table, not counting the ones in "
            "the bins?",
            "4",
        ),
    ],
)
def test_questions_behind_a_tag_or_a_complaint(text, has):
    u = understand(text, four())
    assert u.kind == "answer" and has in u.answer, u.answer


def test_the_robot_described_to_visitors_moves_nothing():
    u = understand("Our robot here can stack the red block on the blue one in seconds.", four())
    assert u.kind == "answer"


def test_other_languages():
    assert translate("Pose-le dans le bac vert")[0].startswith("put it")
    after = planned("Schieb den blauen Würfel in die Tischmitte.", four())
    assert goal_holds(["in_region(blue_block, table_center)"], after)
    assert translate("Coloca o cubo azul no cesto vermelho, por favor.")[1] == "pt"


@pytest.mark.parametrize(
    "text, goals",
    [
        (
            "tower time: cherry, then sky, then grass, from bottom to top",
            ["on(blue_block, red_block)", "on(green_block, blue_block)"],
        ),
        (
            "yellow, then green, then red, from top to bottom",
            ["on(green_block, red_block)", "on(yellow_block, green_block)"],
        ),
    ],
)
def test_a_tower_said_as_an_order_of_colours(text, goals):
    assert goal_holds(goals, planned(text, four()))


def test_a_word_that_holds_a_short_robot_word_is_not_split():
    assert noise.clean("pres the buton") == "press the buton"
