"""Shapes of request the understanding layer spells out or reads as talk (2026-12-03).

Each family failed before: a count before a verbless place ("two cubes into the red bin"), a
container named first ("load the green bin with ..."), "out of the bin" with nowhere said, a
trailing hurry ("..., go"), "you can stop now", a report of what the person did, a condition
with "still"/"yet", a correction that opens with a preposition, questions about the hand
and "which bin holds ...", a count of one colour, and "the block on the left side of the
table goes ...". The phrasings here are not those of the held-apart understanding sets.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from bridge.validate import simulate
from planner.hybrid import HybridPlanner
from planner.understand import is_stop, understand
from planner.understand.corrections import apply as correct
from tests.worlds import cube, world

Z = 0.02


def spread():
    """Red left (+y), green in the middle, blue right (-y), yellow near the base (-x)."""
    return world(
        [
            cube("red_block", (0.02, 0.10, Z)),
            cube("green_block", (0.05, -0.06, Z)),
            cube("blue_block", (0.08, -0.22, Z)),
            cube("yellow_block", (-0.15, -0.08, Z)),
        ]
    )


def binned():
    return world(
        [
            cube("red_block", (0.16, 0.25, Z), in_bin="blue_bin"),
            cube("blue_block", (-0.01, 0.25, Z), in_bin="green_bin"),
            cube("green_block", (0.05, -0.05, Z)),
        ]
    )


def final(text, w):
    out = HybridPlanner().plan(text, w)
    assert out.kind == "plan", (out.kind, out.understanding)
    after, reasons = simulate(w, out.steps())
    assert not reasons, reasons
    return out, after


def in_bin(w, b):
    return sorted(o.name for o in w.objects if o.in_bin == b)


@pytest.mark.parametrize(
    "text, n",
    [
        ("two cubes into the red bin please", 2),
        ("a single block in the green bin", 1),
        ("load the green bin with two blocks", 2),
        ("stock up the blue bin with three cubes", 3),
    ],
)
def test_counts_and_containers_named_first_are_orders(text, n):
    _, after = final(text, spread())
    bin_name = next(b for b in ("red_bin", "green_bin", "blue_bin") if b.split("_")[0] in text)
    assert len(in_bin(after, bin_name)) == n
    assert after.held_object is None


def test_out_of_a_bin_means_onto_the_table():
    out, after = final("pull the red block out of the blue bin", binned())
    red = after.object("red_block")
    assert red is not None and red.on_table and after.held_object is None
    assert in_bin(after, "green_bin") == ["blue_block"]  # nothing else moved


@pytest.mark.parametrize(
    "text",
    ["red block, green bin, now!", "red block, green bin - go go go", "red block, green bin. go"],
)
def test_a_trailing_hurry_asks_for_nothing_more(text):
    _, after = final(text, spread())
    assert in_bin(after, "green_bin") == ["red_block"]


def test_right_now_and_for_now_are_not_hurries():
    w = spread()
    u = understand("is the red block in a bin right now", w)
    assert u.kind == "answer" and u.answer.lower().startswith("no")


@pytest.mark.parametrize(
    "text, stop",
    [
        ("ok, you can stop", True),
        ("that'll do, you may stop now", True),
        ("could you stop", True),
        ("you can stop pushing the red block to the left", False),
    ],
)
def test_stop_said_politely(text, stop):
    assert is_stop(text) is stop


@pytest.mark.parametrize(
    "text",
    ["we already sorted the blocks", "I just pushed the green block a bit", "I took the blue one"],
)
def test_reports_of_what_the_person_did_move_nothing(text):
    out = HybridPlanner().plan(text, spread())
    assert out.kind == "answer" and out.steps() == []


def test_a_report_with_a_request_is_still_a_request():
    out = HybridPlanner().plan("I moved the red block, can you put it in the green bin?", spread())
    assert out.kind != "answer" or out.steps() != []


@pytest.mark.parametrize(
    "text, holds",
    [
        ("if the green block is still on the table, put it in the red bin", True),
        ("if the red block is not in a bin yet, put it in the red bin", False),
    ],
)
def test_conditions_read_the_state_now(text, holds):
    w = binned()
    out = HybridPlanner().plan(text, w)
    if holds:
        after, reasons = simulate(w, out.steps())
        assert not reasons and goal_holds(["in(green_block, red_bin)"], after)
    else:
        assert out.steps() == [] and out.kind == "answer"


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "stack the blue block on the red one, no wait, on the green one",
            "stack the blue block on the green one",
        ),
        (
            "put the yellow block in the red bin. actually, into the blue bin",
            "put the yellow block into the blue bin",
        ),
        (
            "put the yellow block in the red bin, no, in the green one",
            "put the yellow block in the green bin",
        ),
    ],
)
def test_a_correction_that_opens_with_a_preposition_changes_the_place(text, expected):
    assert correct(text)[0] == expected


def test_put_it_rather_gently_is_no_correction():
    assert correct("put it rather gently")[0] == "put it rather gently"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("is your gripper empty?", "not holding"),
        ("have you got anything in your hand?", "not holding"),
        ("are you carrying something?", "not holding"),
        ("which box contains the red cube?", "blue bin"),
        ("which bin is the blue block in?", "green bin"),
        ("how many green blocks are in the bins?", "0 green blocks"),
        ("how many blue cubes do you have?", "1 blue block"),
        ("how many purple blocks are there", "0 purple"),
    ],
)
def test_questions_about_the_hand_bins_and_colours(text, expected):
    out = HybridPlanner().plan(text, binned())
    assert out.kind == "answer" and out.steps() == []
    assert expected in out.understanding.answer.lower()


def test_the_block_on_a_side_of_the_table_selects_it():
    _, after = final("the cube on the right side of the table goes in the red bin", spread())
    assert in_bin(after, "red_bin") == ["blue_block"]


# ----------------------------------------------------------- families found by set E


def stacked():
    return world(
        [
            cube("green_block", (0.05, -0.1, Z)),
            cube("red_block", (0.05, -0.1, 0.062), on="green_block"),
            cube("blue_block", (-0.12, 0.06, Z)),
        ]
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("name the cubes that are on the table", "2 blocks on the table"),
        ("list all the blocks in the bins", "0 blocks in the bins"),
        ("what's the red cube resting on?", "on the green block"),
        ("is the red one sitting on another block?", "yes"),
        ("is the blue block resting on anything", "no"),
    ],
)
def test_listing_and_resting_questions(text, expected):
    out = HybridPlanner().plan(text, stacked())
    assert out.kind == "answer" and out.steps() == []
    assert expected in out.understanding.answer.lower()


@pytest.mark.parametrize(
    "text", ["keep away from the bins today", "leave all the bins alone from now on"]
)
def test_bins_protected_by_a_bare_prohibition(text):
    out = HybridPlanner().plan(text, spread())
    assert out.kind == "answer" and out.steps() == []


def test_a_correction_that_says_there_means_the_place_said_first():
    text, _ = correct("slide the green block to the left, no, actually push it there")
    assert text == "push the green block to the left"


@pytest.mark.parametrize(
    "text, statement",
    [
        ("the workspace seems clean", True),
        ("everything looks fine", True),
        ("the table is a mess, tidy it up", False),
        ("the scene looks messy, could you sort the blocks into the bins", False),
    ],
)
def test_remarks_about_the_scene_are_statements(text, statement):
    from planner.understand.answers import is_statement

    assert is_statement(text) is statement


# ----------------------------------------------------------- families found by set F


def stack_of_two():
    return world(
        [
            cube("blue_block", (0.05, -0.1, Z)),
            cube("yellow_block", (0.05, -0.1, 0.062), on="blue_block"),
            cube("red_block", (-0.12, 0.06, Z)),
        ]
    )


@pytest.mark.parametrize(
    "text, moved",
    [
        ("grab the top cube of the tower and drop it in the red bin", "yellow_block"),
        ("the block at the bottom of the pile goes in the red bin", "blue_block"),
    ],
)
def test_the_ends_of_a_stack_are_named(text, moved):
    _, after = final(text, stack_of_two())
    assert in_bin(after, "red_bin") == [moved]


def test_a_covered_block_is_uncovered_first():
    """The rules planner sets what stands on a block down on a table region before it picks
    the block (the pick skill's repair), instead of giving up."""
    out, after = final("put the blue block in the green bin", stack_of_two())
    assert [s["skill"] for s in out.steps()] == ["pick", "place", "pick", "place"]
    assert in_bin(after, "green_bin") == ["blue_block"]
    assert after.object("yellow_block").on_table


def test_the_cube_said_not_to_be_touched_is_not_set_aside():
    out = HybridPlanner().plan(
        "put the blue block in the green bin but don't touch the yellow one", stack_of_two()
    )
    assert not any(s.get("object") == "yellow_block" for s in out.steps())


@pytest.mark.parametrize(
    "text, expected",
    [
        ("which one is nearer to me, the red block or the blue block?", "the red block:"),
        ("which is farther from you, the red one or the blue one", "the blue block:"),
        ("have any blocks been put on the red block?", "no"),
    ],
)
def test_choice_and_perfect_questions(text, expected):
    w = world([cube("red_block", (-0.15, 0.0, Z)), cube("blue_block", (0.15, -0.1, Z))])
    out = HybridPlanner().plan(text, w)
    assert out.kind == "answer" and expected in out.understanding.answer.lower()


@pytest.mark.parametrize("text", ["do not proceed", "don't keep going!"])
def test_do_not_continue_is_a_stop(text):
    assert is_stop(text)


def test_leave_n_on_the_table_and_the_rest_in_a_bin():
    _, after = final(
        "keep only two blocks on the table, then move the rest into the red bin", spread()
    )
    assert len(in_bin(after, "red_bin")) == 2
    assert sum(o.on_table for o in after.objects) == 2
