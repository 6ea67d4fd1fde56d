"""Families a twelfth understanding set (L, 2026-12-04) found.

Each failed before: a laboratory's words ("transfer the specimen cube to the green
receptacle, then return the manipulator to rest"), broken phrases ("green... the green.
blue bin."), a push said with "no need to lift it", a game show's address and clock, an
ordinal counted from one side, a distance in centimetres from another block, an order
quoted inside someone else's words, how many bins are of a colour, "be honest - could you
carry two at once?", "should X be ..., do Y" as an "if", a rule said as a description
beside a task ("the yellow block is off limits"), "no bin but the blue one gets used" with
"tidy the table", "the same one as before" (no memory: asked back), "block. bin.",
"abort the transfer", "lights, please - and while you're there, shut that drawer",
Spanish "el verde no lo toques", French "le cube bleu, il est bien dans ...?",
Portuguese "mais à frente", and colours no block has in Chinese. The phrasings here are not
those of the set.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import is_stop, understand
from sim.world import DrawerState
from tests.planner.planned import four, moved, planned
from tests.worlds import cube, world

Z = 0.02


@pytest.mark.parametrize(
    "text, goal",
    [
        (
            "transfer the blue sample cube into the red receptacle, then return the arm to its "
            "home position",
            "in(blue_block, red_bin)",
        ),
        ("yellow... the yellow. green bin. in.", "in(yellow_block, green_bin)"),
        (
            "slide the red block across to the right-hand side, don't lift it",
            "at(red_block, table_right)",
        ),
        (
            "team one, your challenge: red block on top of the green block, a minute on the clock!",
            "on(red_block, green_block)",
        ),
        ("top the blue cube with the red cube", "on(red_block, blue_block)"),
    ],
)
def test_jargon_pieces_and_shows(text, goal):
    assert goal_holds([goal], planned(text, four()))


def test_positions_counted_and_measured():
    row = world(
        [
            cube("green_block", (0.05, 0.12, Z)),
            cube("red_block", (0.05, 0.04, Z)),
            cube("yellow_block", (0.05, -0.04, Z)),
            cube("blue_block", (0.05, -0.12, Z)),
        ]
    )
    after = planned("starting from the right, the second block goes in the green bin", row)
    assert goal_holds(["in(yellow_block, green_bin)"], after)
    after = planned("put the block about 8 cm to the left of the yellow one in the blue bin", row)
    assert goal_holds(["in(red_block, blue_bin)"], after)
    u = understand("put the cube 30 cm behind the red one in the bin", row)
    assert u.kind == "refuse"


@pytest.mark.parametrize(
    "text",
    [
        "my teacher always says 'put the blue block in the red bin', it's his favourite line",
        'the instructions read "stack the green cube on the yellow one" but we\'re not there yet',
        "should the red block be in the green bin already, put the blue one next to it",
        "honestly - could you hold three blocks at the same time?",
    ],
)
def test_quoted_orders_false_conditions_and_abilities_move_nothing(text):
    u = understand(text, four())
    assert u.kind == "answer", (u.kind, u.text)


def test_a_quote_the_speaker_endorses_is_an_order():
    u = understand("do what the note says: 'put the red block in the green bin'", four())
    assert u.kind == "plan"


def test_bins_of_a_colour_are_counted():
    said = understand("how many bins are orange?", four()).answer
    assert said.startswith("None")
    said = understand("how many of the bins are green?", four()).answer
    assert said.startswith("1 of the 3")


@pytest.mark.parametrize(
    "text",
    [
        "the green block is off limits. put every block in the red bin",
        "put every block in the red bin. the green block is not to be touched",
    ],
)
def test_a_rule_said_as_a_description_beside_a_task_is_kept(text):
    w = four()
    assert "green_block" not in moved(text, w)
    assert "red_block" in moved(text, w)


def test_only_one_bin_then_tidy():
    w = four()
    text = (
        "rule number one: only use the green bin. rule number two, hands off the blue block. "
        "now tidy up"
    )
    after = planned(text, w)
    assert goal_holds(["in(red_block, green_bin)", "in(yellow_block, green_bin)"], after)
    assert "blue_block" not in moved(text, w)


def test_no_memory_of_before_is_asked_back():
    u = understand("do the same one as last time, into the blue bin", four())
    assert u.kind == "clarify" and len(u.candidates) == 4


def test_pieces_with_no_colour_ask_which():
    w = world([cube("red_block", (0.05, -0.05, Z))])
    u = understand("cube. bin.", w)
    assert u.kind == "clarify" and "bin" in u.question.lower()


@pytest.mark.parametrize("text", ["Abort. Abort the operation.", "terminate the task"])
def test_abort_is_a_stop(text):
    assert is_stop(text) or understand(text, four()).kind == "stop"


def test_two_device_orders_side_by_side():
    w = four().model_copy(
        update={
            "drawer": DrawerState(is_open=True, is_closed=False, opening=0.15),
            "light_on": False,
        }
    )
    u = understand("lights please, and while you're at it, close that drawer", w)
    assert u.kind == "plan" and "light" in u.text and "close the drawer" in u.text


def test_other_languages():
    w = four()
    after = planned("Pon el yellow block en el red bin, pero el azul no lo muevas", w)
    assert goal_holds(["in(yellow_block, red_bin)"], after)
    assert "blue_block" not in moved(
        "Pon el yellow block en el red bin, pero el azul no lo muevas", w
    )
    inside = world([cube("green_block", (0.0, 0.25, 0.025), in_bin="green_bin")])
    u = understand("Dis-moi, le cube vert, il est bien dans le bac bleu ?", inside)
    assert u.kind == "answer" and u.answer.startswith("No")
    row = world([cube("red_block", (0.15, 0.05, Z)), cube("blue_block", (-0.1, -0.1, Z))])
    after = planned("Põe o cubo que está mais à frente na caixa verde", row)
    assert goal_holds(["in(red_block, green_bin)"], after)
    assert understand("把粉色的方块放进红色的箱子", w).kind != "plan" or not moved(
        "把粉色的方块放进红色的箱子", w
    )
