"""Families a thirteenth understanding set (M, 2026-12-04) and the free-language probes
before it found.

Each failed before: speech-to-text homophones ("the read block in the blew bin", "are
there for blocks"), a deal ("if you put red in green, I'll let you skip the blue one"), a
selector inside another ("the block right next to the one furthest on the left"),
"precisely two sitting in the bin", French "tu peux ... ? merci", two Japanese sentences
(a prohibition, then a request), "do you believe X is Y?", "could you ...? I'm only asking
whether you'd be able to", "hypothetically, if I asked you to ..., which block would you
pick up first?", a colleague's past, "you never push anything off the edge", "I'd like to
report that ...", "don't touch the button - I only want to know: is the lamp on?", "shove
it to the side" (which side is asked), radio talk ("all stop, hold position"); and from the
free-language sets: terse stacks ("red on blue", "blue on red, green on yellow"), "..., but
only after X is in Y", "take X and set it carefully on Y" inside a long polite message,
colours by what things are ("the one the colour of blood"). The phrasings here are not those
of the set.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import is_stop, noise, understand
from sim.world import DrawerState
from tests.planner.planned import four, moved, planned
from tests.worlds import cube, world

Z = 0.02


def test_homophones_of_speech_to_text():
    assert noise.clean("put the read cube in the grin bin") == "put the red cube in the green bin"
    assert noise.clean("I read the book") == "I read the book"
    after = planned("drop the blew block in the read bin", four())
    assert goal_holds(["in(blue_block, red_bin)"], after)
    said = understand("are there for cubes on the table", four()).answer
    assert said.startswith("Yes")


def test_a_deal_spares_what_it_lets_off():
    text = "tell you what: if you stack yellow on red, I'll let you skip the green one"
    w = four()
    assert goal_holds(["on(yellow_block, red_block)"], planned(text, w))
    assert "green_block" not in moved(text, w)


def test_a_selector_inside_another():
    w = world(
        [
            cube("green_block", (0.0, -0.2, Z)),
            cube("blue_block", (0.02, -0.11, Z)),
            cube("red_block", (0.1, 0.15, Z)),
        ]
    )
    after = planned(
        "take the block right beside the one farthest to the right, put it in the red bin", w
    )
    assert goal_holds(["in(blue_block, red_bin)"], after)


def test_a_total_said_with_precisely():
    w = world(
        [
            cube("yellow_block", (0.16, 0.25, 0.025), in_bin="blue_bin"),
            cube("red_block", (0.05, -0.1, Z)),
            cube("green_block", (-0.1, 0.05, Z)),
        ]
    )
    after = planned("I want precisely two blocks sitting in the blue bin when you finish", w)
    assert sum(o.in_bin == "blue_bin" for o in after.objects) == 2


def test_languages():
    w = four()
    assert goal_holds(
        ["in(red_block, green_bin)"],
        planned("Tu peux mettre le cube rouge dans le bac vert ? Merci !", w),
    )
    text = "緑のブロックには触らないで。赤いブロックだけ青い箱に入れて。"
    assert goal_holds(["in(red_block, blue_bin)"], planned(text, w))
    assert "green_block" not in moved(text, w)


@pytest.mark.parametrize(
    "text, has",
    [
        ("do you reckon the green block is in the red bin?", "No"),
        (
            "could you stack the red block on the blue one? I'm just asking whether you'd be "
            "able to",
            "could",
        ),
        (
            "hypothetically, if I asked you to put the blue block on the green one, which block "
            "would you pick up first?",
            "blue block",
        ),
        ("I'd like to report that you knocked the red block over yesterday", "Noted"),
    ],
)
def test_questions_and_reports_that_move_nothing(text, has):
    u = understand(text, four())
    assert u.kind == "answer" and has in u.answer, u.answer


@pytest.mark.parametrize(
    "text",
    [
        "last week my neighbour put the red block in the green bin and it fell out",
        "you never stack anything on the blue block. ever.",
        "no action needed: I just wanted to mention that the blue bin is dusty",
    ],
)
def test_statements_and_rules_move_nothing(text):
    assert understand(text, four()).kind == "answer"


def test_a_prohibition_before_a_question():
    w = four().model_copy(
        update={"drawer": DrawerState(is_open=False, is_closed=True), "light_on": True}
    )
    u = understand(
        "don't press the button - I just want to know: is the light on at the moment?", w
    )
    assert u.kind == "answer" and "on" in u.answer


def test_no_side_named_is_asked():
    u = understand("push the red block aside", four())
    assert u.kind == "clarify" and set(u.candidates) == {"table_left", "table_right"}
    assert understand("push the red block to the left side", four()).kind == "plan"


@pytest.mark.parametrize("text", ["All stop! Hold your position.", "negative, all stop"])
def test_radio_stops(text):
    assert is_stop(text) or understand(text, four()).kind == "stop"


@pytest.mark.parametrize(
    "text, goals",
    [
        ("ok robot, green on yellow", ["on(green_block, yellow_block)"]),
        (
            "yellow on blue, red on green",
            ["on(yellow_block, blue_block)", "on(red_block, green_block)"],
        ),
        (
            "put the green block in the red bin, but only once the yellow block is in the blue bin",
            ["in(yellow_block, blue_bin)", "in(green_block, red_bin)"],
        ),
        (
            "Hello there. We're getting ready for visitors later and I would love it if you could "
            "grab the blue cube and pop it gently into the green bin. Thanks so much.",
            ["in(blue_block, green_bin)"],
        ),
        (
            "stack the grass-coloured cube on the one the colour of a banana",
            ["on(green_block, yellow_block)"],
        ),
    ],
)
def test_free_language_shapes(text, goals):
    assert goal_holds(goals, planned(text, four()))


@pytest.mark.parametrize(
    "text, goals",
    [
        (
            "blue cube, red bin. green cube, blue bin.",
            ["in(blue_block, red_bin)", "in(green_block, blue_bin)"],
        ),
        (
            "do the red block last: green block in the blue bin first, then red block in the "
            "red bin",
            ["in(green_block, blue_bin)", "in(red_block, red_bin)"],
        ),
        (
            "Morning! The yellow block looks a bit lost out there, so could you push it to the "
            "middle of the table? Much appreciated.",
            ["in_region(yellow_block, table_center)"],
        ),
        (
            "stack the blue block on the green one, then put the remaining two in the red bin",
            ["on(blue_block, green_block)", "in(red_block, red_bin)", "in(yellow_block, red_bin)"],
        ),
    ],
)
def test_the_suites_terse_pairs_orders_descriptions_and_the_rest(text, goals):
    assert goal_holds(goals, planned(text, four()))
