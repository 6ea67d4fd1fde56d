"""Families the twentieth and twenty-first understanding sets (T and U, 2026-12-04) found.

Each failed before: "time out, everybody freeze", what someone saw before the request
naming what "it" is ("looks like the yellow block went ..., could you move it ..."), a
remark about where a block ended up, which block is easier to reach, blocks listed and then
one "it" (asked back), a tower described bottom and top, "into bins" with a rule against
one, a rule that a block stays where it is, "did somebody leave the drawer open", more
blocks on the table than in the bins, what a block is sitting on, "either the red or the
blue", "none of them are stacked, right?", "a million blocks", "zero blocks" and "neither
block", an order with a question after it, "the thing that's round all over", a shade said
with its colour ("sky-blue"), "lamp off? then ...", "pull it back into the middle", a
relayed errand ("my manager asked me to ... would you take care of that?"), Japanese
"入っていますか", Chinese "不许" and "最喜欢", German "liegt". The phrasings here are not those
of the sets.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import understand
from planner.understand.translate import translate
from tests.planner.planned import four, moved, planned, scene_world
from tests.worlds import cube, world

STILL = ("answer", "stop", "clarify", "refuse")


def stack():
    """The yellow block on the green one, red and blue apart on the table."""
    return world(
        [
            cube("green_block", (0.0, -0.05, 0.02)),
            cube("yellow_block", (0.0, -0.05, 0.06), on="green_block"),
            cube("red_block", (0.1, 0.05, 0.02)),
            cube("blue_block", (-0.12, -0.15, 0.02)),
        ]
    )


@pytest.mark.parametrize("text", ["time out, everyone freeze!", "TIMEOUT"])
def test_a_coachs_stop(text):
    assert understand(text, four()).kind == "stop"


def test_what_was_seen_names_it():
    text = (
        "It seems the yellow block has landed next to the red one, which is a shame. "
        "Would you put it in the green bin instead?"
    )
    assert goal_holds(["in(yellow_block, green_bin)"], planned(text, four()))


def test_a_remark_about_where_a_block_ended_up():
    u = understand("oh look, the red block landed right in the middle", four())
    assert u.kind in STILL


def test_which_is_easier_to_reach():
    u = understand("which one is easier for you to grab, the red one or the yellow one?", four())
    # yellow (-0.14, 0.07) is 29 cm from the base at (-0.42, 0), red (0.1, 0.05) 52 cm
    assert u.kind == "answer" and u.answer.startswith("The yellow block")


def test_blocks_listed_then_one_it_is_asked_about():
    u = understand("The green block, the blue block. Put it on the red one.", four())
    assert u.kind == "clarify" and set(u.candidates) == {"green_block", "blue_block"}


def test_a_tower_described_bottom_and_top():
    text = "build a tower: the yellow block at the bottom, then the blue block on top of it"
    assert goal_holds(["on(blue_block, yellow_block)"], planned(text, four()))


def test_into_bins_with_a_rule_against_one():
    text = "rule: nothing goes in the red bin. now put both of the blocks into bins."
    w = world([cube("green_block", (0.1, -0.1, 0.02)), cube("blue_block", (-0.1, -0.15, 0.02))])
    after = planned(text, w)
    assert all(o.in_bin not in (None, "red_bin") for o in after.objects)


def test_a_rule_that_a_block_stays_put():
    u = understand("house rule: the red block remains exactly where it is", four())
    assert u.kind == "answer" and "red_block" in u.constraints.objects


def test_who_left_the_drawer_open_is_what_it_is_now():
    from sim.world import DrawerState

    w = four().model_copy(
        update={
            "drawer": DrawerState(is_open=True, is_closed=False, opening=0.15),
            "light_on": False,
        }
    )
    u = understand("did someone leave the drawer open?", w)
    assert u.kind == "answer" and u.answer.startswith("Yes")


def test_counts_compared_and_what_a_block_sits_on():
    w = stack()
    said = understand("are there fewer blocks on the table than in the bins?", w).answer
    assert said.startswith("No")
    assert "green" in understand("what is the yellow block resting on?", w).answer


def test_either_and_none():
    w = stack()
    assert understand(
        "is either the yellow or the red block on the green one?", w
    ).answer.startswith("Yes")
    assert "yellow" in understand("no blocks are stacked, right?", w).answer


@pytest.mark.parametrize(
    "text, kind",
    [
        ("stack a thousand blocks on the red one", "refuse"),
        ("put not a single block in the blue bin", "answer"),
        ("move none of the blocks to the left", "answer"),
    ],
)
def test_too_many_and_none_to_move(text, kind):
    assert understand(text, four()).kind == kind


def test_an_order_with_a_question_after_it():
    text = "put the green block on the red one - and btw, how many blocks are there?"
    assert moved(text, four()) == {"green_block"}
    assert goal_holds(["on(green_block, red_block)"], planned(text, four()))


def test_a_shade_said_with_its_colour():
    text = "put the lemon-yellow block in the navy-blue bin"
    assert goal_holds(["in(yellow_block, blue_bin)"], planned(text, four()))


def test_lamp_off_then():
    from sim.world import DrawerState

    w = four().model_copy(
        update={
            "drawer": DrawerState(is_open=False, is_closed=True, opening=0.0),
            "light_on": False,
        }
    )
    u = understand("light off? if so, turn it on", w)
    assert u.kind == "plan" and "turn on" in u.text


def test_pull_it_back_and_a_relayed_errand():
    text = "the red one is nearly off the edge, pull it back to the middle of the table"
    assert goal_holds(["at(red_block, table_center)"], planned(text, four()))
    text = (
        "Hello, my supervisor wants me to put the blue block in the red bin. Could you "
        "handle that for me?"
    )
    assert goal_holds(["in(blue_block, red_bin)"], planned(text, four()))


@pytest.mark.parametrize(
    "text, english",
    [
        ("赤いブロックは緑の箱に入っていますか？", "is the red block in the green bin?"),
        ("从现在起，红色的箱子里什么都别放。", "from now on,, don't put anything in red bin"),
        ("Welcher Würfel steht ganz rechts?", None),
    ],
)
def test_other_languages(text, english):
    said, _ = translate(text)
    if english is None:
        assert said.startswith("which block is")
    else:
        assert said == english


def test_the_thing_round_all_over():
    from planner.kinds import spoken

    said = spoken("pick up the object which is completely round", scene_world("mixed"))
    assert said == "pick up the yellow block"
