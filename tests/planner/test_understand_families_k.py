"""Families an eleventh understanding set (K, 2026-12-04) and the probes before it found.

Each failed before: "there's no need to ..." / "could you not ..." / "you don't have to ..."
as prohibitions, "avoid X while you ...", requests put off ("wait until I say go, then
...", "later, when I'm back, ...", "... when I say so"), what someone else did at another
time, a relayed request called off ("he was joking, so don't worry about it"), whether all
or any of the bins are empty, a terse relation corrected by another, "hold on" inside a
correction, a quiz ("pop quiz", "true or false: ..."), the farthest bin, the biggest block,
an ability asked about and not asked for, chat slang, a prohibition with a tag ("okay?"),
"my right or yours?", the block stacked on another, totals a bin must end up with, "check
the bin - if X is in there ...", a mind changed twice, "there" after "scratch that", a
request buried in a ramble, "top X with Y", "add X to the bin", an imperative with a
question mark, Spanish "¿me pones ...?", Chinese 哪个, and a stop with a worried question.
The phrasings here are not those of the set.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import is_stop, noise, understand
from tests.planner.planned import four, moved, planned
from tests.worlds import cube, world

Z = 0.02
IN = {
    "red_bin": (-0.16, 0.25, 0.025),
    "green_bin": (0.0, 0.25, 0.025),
    "blue_bin": (0.16, 0.25, 0.025),
}


@pytest.mark.parametrize(
    "text",
    [
        "there's no need to move the blue block",
        "you don't have to touch anything",
        "could you not stack the red one on the green one",
        "can you not put the yellow block in the red bin, please",
        "wait until I say go, then stack the red block on the blue one",
        "later on, when I'm back, put the green block in the red bin",
        "stack the yellow block on the red one when I tell you to",
        "on my mark, put the blue block in the green bin",
        "Alice stacked the red block on the blue one this morning",
        "my brother put the green block in the red bin a few minutes ago",
        "my boss said to tell you to move the red block, but she was only kidding",
        "in theory, could you carry three blocks at once?",
    ],
)
def test_requests_that_ask_for_no_motion_now(text):
    u = understand(text, four())
    assert u.kind == "answer", (u.kind, u.text)


def test_what_is_spared_and_what_is_done():
    w = four()
    text = "you needn't move the red block, just put the blue block in the green bin"
    assert goal_holds(["in(blue_block, green_bin)"], planned(text, w))
    assert "red_block" not in moved(text, w)
    text = "avoid the green block while putting the yellow one in the blue bin"
    assert goal_holds(["in(yellow_block, blue_bin)"], planned(text, w))
    assert "green_block" not in moved(text, w)


def test_bins_all_or_any_empty():
    w = world([cube("red_block", IN["green_bin"], in_bin="green_bin")])
    said = understand("are all of the bins empty?", w).answer
    assert said.startswith("No") and "red" in said and "blue" in said
    said = understand("is any bin empty?", w).answer
    assert said.startswith("Yes")
    said = understand("is every bin full", w).answer
    assert said.startswith("No")


@pytest.mark.parametrize(
    "text, goal",
    [
        ("yellow on red, no wait, yellow on green", "on(yellow_block, green_block)"),
        (
            "put the green block in the red bin - no, hang on, the blue bin",
            "in(green_block, blue_bin)",
        ),
        (
            "let's put the red block in the green bin. no, the blue one. hmm, no, green was right "
            "after all. green bin.",
            "in(red_block, green_bin)",
        ),
        (
            "put the blue block in the red bin. actually, scratch that - leave blue alone and "
            "drop the yellow one in there",
            "in(yellow_block, red_bin)",
        ),
    ],
)
def test_corrections(text, goal):
    assert goal_holds([goal], planned(text, four()))


def test_quizzes_are_questions():
    w = world(
        [
            cube("red_block", (0.05, -0.05, Z)),
            cube("blue_block", (0.05, -0.05, 0.062), on="red_block"),
        ]
    )
    u = understand("Quiz time! True or false: the blue block is on top of the red block.", w)
    assert u.kind == "answer" and u.answer.startswith("Yes")
    u = understand("pop quiz: which bin is closest to you?", w)
    assert u.kind == "answer" and "red bin" in u.answer
    u = understand("which is the heaviest block?", w)
    assert u.kind == "answer" and "same size" in u.answer


def test_ability_asked_about_not_asked_for():
    said = understand("just asking - could you pick up both blocks at the same time?", four())
    assert said.kind == "answer" and said.answer.startswith("No")
    said = understand("hypothetically, could you lift the green bin?", four())
    assert said.kind == "answer" and "only the blocks" in said.answer


def test_slang_goes_and_what_is_left_is_read():
    assert noise.clean("yo put the red block in the blue bin no cap") == (
        "put the red block in the blue bin"
    )
    w = world(
        [cube("red_block", IN["red_bin"], in_bin="red_bin"), cube("blue_block", (0.05, -0.1, Z))]
    )
    said = understand("bruh how many blocks r just hanging out on the table lol", w)
    assert said.kind == "answer" and "1" in said.answer


def test_a_prohibition_with_a_tag_question_moves_nothing():
    u = understand("don't move a thing till I'm back, alright? cheers", four())
    assert u.kind == "answer"


def test_whose_right_is_asked_back():
    w = world([cube("green_block", (0.05, 0.12, Z)), cube("yellow_block", (0.05, -0.15, Z))])
    u = understand("put the left one in the red bin... hmm, your left or mine?", w)
    assert u.kind == "clarify" and set(u.candidates) == {"green_block", "yellow_block"}


def test_the_block_stacked_on_another():
    w = world(
        [
            cube("green_block", (0.05, 0.0, Z)),
            cube("red_block", (0.05, 0.0, 0.062), on="green_block"),
            cube("blue_block", (-0.1, -0.1, Z)),
        ]
    )
    after = planned(
        "grab the block that's sitting on top of another one, put it in the blue bin", w
    )
    assert goal_holds(["in(red_block, blue_bin)"], after)


def test_totals_a_bin_must_end_with():
    w = world(
        [
            cube("green_block", IN["blue_bin"], in_bin="blue_bin"),
            cube("red_block", (0.05, -0.1, Z)),
            cube("yellow_block", (0.1, 0.05, Z)),
            cube("blue_block", (-0.1, 0.05, Z)),
        ]
    )
    after = planned("I want exactly three blocks in the blue bin", w)
    assert sum(o.in_bin == "blue_bin" for o in after.objects) == 3
    after = planned("make sure every bin has exactly one block in it", w)
    assert all(sum(o.in_bin == b for o in after.objects) == 1 for b in IN)


def test_check_the_bin_then_act_on_what_is_in_there():
    w = world([cube("red_block", IN["blue_bin"], in_bin="blue_bin"), cube("green_block")])
    after = planned(
        "look in the blue bin - if the red block is in there, move it to the green bin", w
    )
    assert goal_holds(["in(red_block, green_bin)"], after)


def test_a_request_buried_in_a_ramble():
    text = (
        "so anyway we were at the market this morning and the queue was enormous, honestly, "
        "and oh by the way, could you put the blue block in the red bin, and then my friend "
        "says she forgot her wallet"
    )
    w = four()
    assert goal_holds(["in(blue_block, red_bin)"], planned(text, w))
    assert moved(text, w) == {"blue_block"}


@pytest.mark.parametrize(
    "text, goal",
    [
        ("crown the red block with the yellow block", "on(yellow_block, red_block)"),
        ("add the green cube to the blue bin", "in(green_block, blue_bin)"),
        ("stack the blue block on the green one?", "on(blue_block, green_block)"),
        ("¿me pones el bloque azul en la caja roja?", "in(blue_block, red_bin)"),
    ],
)
def test_more_ways_to_ask(text, goal):
    assert goal_holds([goal], planned(text, four()))


def test_which_bin_in_chinese():
    w = world([cube("yellow_block", IN["green_bin"], in_bin="green_bin")])
    u = understand("黄色的方块在哪个箱子里？", w)
    assert u.kind == "answer" and "green bin" in u.answer


def test_a_stop_with_a_worried_question_is_a_stop():
    assert is_stop("stop stop - is the arm about to hit the lamp?")
    assert not is_stop("stop - is the red block in the bin?")
