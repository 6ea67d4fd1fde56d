"""Families the twenty-fourth and twenty-fifth understanding sets (X and Y, 2026-12-04)
found.

Each failed before: a contract's words ("the block coloured yellow", "the receptacle
coloured green", "(hereinafter ...)", "shall at no time make contact with"), a laboratory's
("report the number of specimens in receptacle G"), a learner's English ("you can to put
... on top the ..."), "the warm colours", "keep your gripper away from X", "balance X on
itself", a two-branch condition with "leave it be", "drawer: open or shut atm?", "pulled
out", which colours the robot knows, which bin suits a block, a guide describing the arm,
a liking or a memory said aloud, "pull the drawer off" (refused), "there should be nothing
in the red bin", "make sure no block is left on the table", "the round thing" (ball or
cylinder: asked back), Japanese "くれる？", German "die mittlere Kiste". The phrasings here
are not those of the sets.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.hybrid import HybridPlanner
from planner.understand import understand
from planner.understand.translate import translate
from tests.planner.planned import four, planned, scene_world

STILL = ("answer", "stop", "clarify", "refuse")


def test_a_contracts_words():
    text = "The Arm shall place the block coloured red into the receptacle coloured blue."
    assert goal_holds(["in(red_block, blue_bin)"], planned(text, four()))
    u = understand("the Operator shall never make contact with the block coloured green", four())
    assert u.kind == "answer" and "green_block" in u.constraints.objects


def test_a_laboratorys_words():
    u = understand("report the count of specimens currently in receptacle B", four())
    assert u.kind == "answer" and "blue bin" in u.answer


def test_a_learners_english():
    text = "you can to put the green block on top the red block?"
    assert goal_holds(["on(green_block, red_block)"], planned(text, four()))


def test_warm_and_cool_colours():
    after = planned("the cool colours can go in the green bin", four())
    assert goal_holds(["in(green_block, green_bin)", "in(blue_block, green_bin)"], after)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("keep your hand far away from the yellow cube", "answer"),
        ("balance the red block on itself", "refuse"),
        ("I really love how calm the table looks", "answer"),
        ("when I was a kid we stacked wooden blocks all day", "answer"),
        ("which colours can you tell apart?", "answer"),
    ],
)
def test_must_not_move(text, kind):
    assert understand(text, four()).kind == kind


def test_which_bin_suits_a_block():
    u = understand("which bin do you think the green block belongs in?", four())
    assert u.kind == "answer" and u.answer.startswith("The green bin")


def test_a_two_branch_condition_with_leave_it_be():
    text = "if the red block's already in a bin, leave it alone; if not, put it in the blue bin"
    assert goal_holds(["in(red_block, blue_bin)"], planned(text, four()))


def test_empty_goals():
    after = planned("make sure no block is left on the table", four())
    assert not any(o.on_table for o in after.objects)


def test_the_drawer_questions_and_the_drawer_itself():
    w = scene_world("articulated")
    assert understand("drawer: open or closed?", w).answer.startswith("No") or "closed" in (
        understand("drawer: open or closed?", w).answer.lower()
    )
    assert "closed" in understand("is the drawer slid out?", w).answer
    assert understand("rip the drawer out and drop it in the red bin", w).kind == "refuse"


def test_the_round_thing_is_asked_about():
    u = HybridPlanner().understand("move the round one to the blue bin", scene_world("mixed"))
    assert u.kind == "clarify" and "cylinder" in u.question and "ball" in u.question
    u = HybridPlanner().understand(
        "the round one - the cylinder - into the red bin", scene_world("mixed")
    )
    assert u.kind == "plan"


@pytest.mark.parametrize(
    "text, english",
    [
        ("赤いブロックを青い箱に入れてくれる？", "put red block into blue bin"),
        ("Leg den gelben Würfel in die mittlere Kiste.", "put the yellow block in the middle bin."),
    ],
)
def test_other_languages(text, english):
    assert translate(text)[0] == english
