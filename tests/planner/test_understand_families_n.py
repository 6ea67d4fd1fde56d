"""Families a fourteenth understanding set (N, 2026-12-04) found.

Each failed before: a commentator narrating the move ("watch now as the arm takes ... and
drops it ... - go on!"), kitchen talk ("86 the yellow one - blue bin, on the fly!",
"Behind! Hold it right there!", "nobody touches the red one until I say so. Heard?"),
"I want the table empty", "whichever of the red and the green blocks is nearer to you",
"whichever one's nearer" with a tie (asked back), "the bigger of the two cubes" in the
mixed scene, Portuguese "não, espera", a complaint about another run before a task ("why
did you grab the green one? ... I wanted blue stacked on yellow"), "put red in green - no
wait, first tell me where red is", two questions joined by "and which", a prohibition
before a question, verbless device questions ("drawer open or closed, lamp on or off?"),
"step 1: tell me ...", "to the side!" with the verb in another sentence, "the bin next to
the green one" with no green block (asked back), Chinese "停！别动了！". The phrasings here
are not those of the set.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.hybrid import HybridPlanner
from planner.understand import is_stop, understand
from sim.env import TabletopEnv
from sim.world import DrawerState
from tests.planner.planned import four, moved, planned
from tests.worlds import cube, world

Z = 0.02


@pytest.mark.parametrize(
    "text, goal",
    [
        (
            "and now, folks, watch as the robot grabs the green block and puts it neatly on the "
            "red block - come on, show them how it's done!",
            "on(green_block, red_block)",
        ),
        ("86 the blue one - green bin, pronto!", "in(blue_block, green_bin)"),
        ("tu peux mettre le cube jaune dans le bac bleu ?", "in(yellow_block, blue_bin)"),
        (
            "Põe o bloco azul na caixa vermelha... não, espera, na caixa verde.",
            "in(blue_block, green_bin)",
        ),
    ],
)
def test_narration_kitchen_talk_and_corrections(text, goal):
    assert goal_holds([goal], planned(text, four()))


def test_an_empty_table_is_every_block_in_a_bin():
    after = planned("I'd like the table cleared off. Any bin will do.", four())
    assert not any(o.on_table for o in after.objects)


def test_the_one_of_two_that_fits_and_a_tie_asked():
    w = world([cube("blue_block", (-0.15, 0.0, Z)), cube("yellow_block", (0.15, 0.05, Z))])
    text = (
        "whichever of the blue and the yellow blocks is farther from you, put that one in the "
        "red bin"
    )
    assert goal_holds(["in(yellow_block, red_bin)"], planned(text, w))
    tie = world([cube("red_block", (-0.1, 0.08, Z)), cube("green_block", (-0.1, -0.08, Z))])
    u = understand("stack whichever one's closer to you on the other", tie)
    assert u.kind == "clarify"


def test_the_bigger_cube_in_the_mixed_scene():
    env = TabletopEnv(scene="mixed")
    env.reset(seed=0)
    w = env.world_state()
    env.close()
    out = HybridPlanner().plan("the larger of the two cubes goes in the blue bin", w)
    assert {s.get("object") for s in out.steps() if s.get("object")} == {"green_big_block"}


def test_a_complaint_about_another_run_then_the_task():
    text = (
        "why did you move the red one last time? leave red alone. I wanted green stacked on blue."
    )
    w = four()
    assert goal_holds(["on(green_block, blue_block)"], planned(text, w))
    assert "red_block" not in moved(text, w)


@pytest.mark.parametrize(
    "text, has",
    [
        ("stack red on blue - no wait, first tell me where blue is", "blue block is"),
        ("which bins are empty and where is the yellow block?", "empty"),
        ("Step 1: tell me which block is nearest to you. Step 2: nothing - leave it.", "yellow"),
        ("Don't touch anything for now. Is the red block on the table?", "Yes"),
    ],
)
def test_questions_asked_around_other_words(text, has):
    u = understand(text, four())
    assert u.kind == "answer" and has in u.answer, u.answer


def test_verbless_device_questions():
    w = four().model_copy(
        update={"drawer": DrawerState(is_open=False, is_closed=True), "light_on": True}
    )
    said = understand("status report: lamp on or off, drawer open or shut?", w).answer
    assert "light is on" in said and "closed" in said


def test_rules_and_stops_of_a_kitchen():
    u = understand("No one touches the green one till I'm back. Copy?", four())
    assert u.kind == "answer" and "green" in u.answer
    assert is_stop("Behind! Hold it there!")
    assert understand("停下！别动！", four()).kind == "stop"


def test_sides_and_neighbouring_bins_are_asked():
    u = understand("Yellow one. Aside! Move it!", four())
    assert u.kind == "clarify" and set(u.candidates) == {"table_left", "table_right"}
    w = world([cube("red_block", (0.05, -0.1, Z))])
    u = understand("put the red block in the bin beside the green one", w)
    assert u.kind == "clarify" and set(u.candidates) == {"red_bin", "blue_bin"}
