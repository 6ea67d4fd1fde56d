"""Families the twenty-second and twenty-third understanding sets (V and W, 2026-12-04) found.

Each failed before: radio procedure around a request ("this is base, come in, over ...
everything else holds position. How copy? Over."), "cease all motion", a colour and a bin
said bare ("red. blue bin. now."), a block named by where it was a moment ago, "could you,
gently please, ...", "all of them but two" and "half of the blocks", a tower pictured
("blue at the base, ... red crowning it"), code ("move(red_block, dest=blue_bin)", a for
loop, a len() count), a dare ("bet you can't ..."), kitchen words ("plate it", the far end
of the counter), "whichever bin matches its colour", "the chunky one", an offer turned down
("nah, thanks, I'll do it myself"), "two quick ones: ...", and Spanish, Italian,
Portuguese and Chinese words ("me cierras", "saca ... del", "déjalo en", "lascia stare",
"lado esquerdo", "停住"). The phrasings here are not those of the sets.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import understand
from planner.understand.translate import translate
from tests.planner.planned import four, moved, planned

STILL = ("answer", "stop", "clarify", "refuse")


def test_radio_procedure_around_a_request():
    text = (
        "Robot, this is base on channel one, come in, over. Request: the yellow cube goes "
        "into the blue bin, everything else stays put. Do you copy? Over."
    )
    assert goal_holds(["in(yellow_block, blue_bin)"], planned(text, four()))
    assert moved(text, four()) == {"yellow_block"}


@pytest.mark.parametrize("text", ["break break, cease all motion, over", "cease motion!"])
def test_radio_stops(text):
    assert understand(text, four()).kind == "stop"


def test_a_colour_and_a_bin_said_bare():
    assert goal_holds(["in(red_block, blue_bin)"], planned("red. blue bin. now.", four()))


def test_a_block_named_by_where_it_was():
    text = "the block that was nearest to you at the start, put it in the red bin"
    after = planned(text, four())
    assert sum(o.in_bin == "red_bin" for o in after.objects) == 1


def test_an_adverb_inside_could_you():
    text = "could you, carefully please, put the blue block on the red one?"
    assert goal_holds(["on(blue_block, red_block)"], planned(text, four()))


@pytest.mark.parametrize(
    "text, n",
    [
        ("all of the blocks except three go in the green bin", 1),
        ("half the blocks into the red bin", 2),
    ],
)
def test_all_but_and_half(text, n):
    after = planned(text if text.startswith("put") else text.replace("half", "put half"), four())
    assert sum(o.in_bin is not None for o in after.objects) == n


def test_a_tower_pictured():
    text = "picture a stack: green at the bottom, red in the middle, blue up top"
    after = planned(text, four())
    assert goal_holds(["on(red_block, green_block)", "on(blue_block, red_block)"], after)


@pytest.mark.parametrize(
    "text, goal",
    [
        ("put(green_block, to='blue_bin')  # only that", "in(green_block, blue_bin)"),
        ("for c in [red, blue]: put(c, bin_of_colour(c))", "in(blue_block, blue_bin)"),
    ],
)
def test_requests_typed_as_code(text, goal):
    assert goal_holds([goal], planned(text, four()))


def test_a_count_typed_as_code():
    u = understand("len([b for b in blocks if b.in_bin == 'green_bin'])", four())
    assert u.kind == "answer" and "green bin" in u.answer


def test_a_dare_is_the_task():
    text = "bet you can't put the green block on the yellow one"
    assert goal_holds(["on(green_block, yellow_block)"], planned(text, four()))


def test_kitchen_words():
    # the blue block (0.12) is farthest from the robot's base
    after = planned("whatever is at the far end of the bench, plate it in the red bin", four())
    assert goal_holds(["in(blue_block, red_bin)"], after)


def test_an_offer_turned_down():
    u = understand("no thank you, I'll sort the blocks myself", four())
    assert u.kind == "answer" and "not move" in u.answer


@pytest.mark.parametrize(
    "text, english",
    [
        ("¿Me abres el cajón, porfa?", "open the drawer, please?"),
        ("Saca el bloque verde de la caja roja y déjalo sobre la mesa.", None),
        ("per favore, lascia stare il blu", None),
    ],
)
def test_other_languages(text, english):
    said, _ = translate(text)
    if english is not None:
        assert said == english
    else:
        assert "forget" not in said and ("out of" in said or "leave alone" in said)


def test_chinese_stop():
    assert understand("停住！别再动了！", four()).kind == "stop"


def test_a_condition_asked_first():
    from tests.worlds import cube, world

    w = world([cube("red_block", (0.1, 0.05, 0.02)), cube("green_block", (-0.1, -0.1, 0.02))])
    text = (
        "one question: nothing in the blue bin, right? if that's the case, the green block "
        "goes in there"
    )
    assert goal_holds(["in(green_block, blue_bin)"], planned(text, w))
    text = "is the red block already on the green one? if not, make it so"
    assert goal_holds(["on(red_block, green_block)"], planned(text, w))


def test_a_radio_check_moves_nothing():
    u = understand("base to robot, comms check, do you read me?", four())
    assert u.kind == "answer" and "clear" in u.answer
