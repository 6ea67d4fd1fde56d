"""Families the twenty-sixth and twenty-seventh understanding sets (Z and AA, 2026-12-04)
found.

Each failed before: a sleepy typist's hedges ("... blue bin i think. ya blue"), "could you
paint it", snapping a block in two, "can you even lift ...?" (asked, not ordered), "I'm
only watching", "whatever else goes on, X stays where it is", "if there's a yellow block
anywhere about, ..." with and without one, a mechanic's "swing her over to the blue bin
and let go", a bare colour that "goes into" a bin. The phrasings here are not those of the
sets.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import understand
from tests.planner.planned import four, planned
from tests.worlds import cube, world


def test_a_sleepy_hedge():
    text = "ok put the yellow one in the... red bin i think. yeah red"
    assert goal_holds(["in(yellow_block, red_bin)"], planned(text, four()))


@pytest.mark.parametrize(
    "text",
    ["would you colour the green block blue for me?", "cut the red block in half please"],
)
def test_impossible_however_asked(text):
    assert understand(text, four()).kind == "refuse"


@pytest.mark.parametrize(
    "text",
    [
        "could you even reach the blue block from there?",
        "I'm just observing today, carry on thinking",
        "no matter what, the green block stays right where it is",
    ],
)
def test_nothing_to_move(text):
    assert understand(text, four()).kind == "answer"


def test_if_there_is_a_block():
    w = world([cube("red_block", (0.1, 0.05, 0.02)), cube("blue_block", (-0.1, -0.1, 0.02))])
    u = understand("if there's a green block around here, put it in the blue bin", w)
    assert u.kind == "answer" and "no green block" in u.answer
    text = "if there is a red block anywhere, pop it in the green bin"
    assert goal_holds(["in(red_block, green_bin)"], planned(text, w))


def test_a_mechanics_swing_and_a_bare_colour():
    text = "take the blue one, swing it over to the red bin and release"
    assert goal_holds(["in(blue_block, red_bin)"], planned(text, four()))
    text = "fine. then yellow goes into the green bin"
    assert goal_holds(["in(yellow_block, green_bin)"], planned(text, four()))
