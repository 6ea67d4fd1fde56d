"""Families a tenth understanding set (J, 2026-12-03) found; its file was lost with the
machine's scratch space before it was committed, so these tests are its only record.

Each failed before: "under no circumstances" / "on no account" as a "don't", "stay away
from" and "don't go near" as "don't touch", a prohibition followed by its reason and then a
task, a rule against all stacking, two questions where the second says "it", "the whole
table", permission worded as the request ("feel free to ..."), "stack X on the red" with
no noun, corrections by "make that ...", "..., I said it wrong", "the X, not the Y" and
"scratch that, the Y", questions about what is in the hand by pointing at it, "confirm
your gripper is empty", "for the record ..." statements, German thanks and a Chinese count
said before its verb. The phrasings here are not those of the set.
"""

from __future__ import annotations

import pytest

from bridge.goals import goal_holds
from planner.understand import understand
from sim.world import DrawerState
from tests.planner.planned import four, moved, planned
from tests.worlds import cube, world

Z = 0.02


def forbids(c, obj: str, target: str) -> bool:
    """Whether the prohibitions ``c`` forbid putting ``obj`` on or in ``target``."""
    return target in c.targets or bool({(obj, target), (c.ANY, target)} & c.pairs)


@pytest.mark.parametrize(
    "text, spared",
    [
        ("on no account move the yellow block; put the red one in the blue bin", "yellow_block"),
        ("By no means should you touch the green block. Red block to the blue bin.", "green_block"),
        ("stay well clear of the blue block and put the red block in the green bin", "blue_block"),
        ("don't come near the green one, it's wobbly. red block into the blue bin", "green_block"),
    ],
)
def test_emphatic_and_distance_prohibitions_spare_their_block(text, spared):
    w = four()
    after = planned(text, w)
    assert spared not in moved(text, w)
    assert any(o.in_bin for o in after.objects if o.name == "red_block")


@pytest.mark.parametrize(
    "text", ["under no circumstances are you to touch the blue block", "keep away from the red one"]
)
def test_a_bare_emphatic_prohibition_moves_nothing(text):
    assert understand(text, four()).kind == "answer"


def test_a_rule_against_stacking_forbids_every_stack_but_not_binning():
    w = four()
    after = planned("house rule, no stacking at all. put the red block in the green bin", w)
    assert goal_holds(["in(red_block, green_bin)"], after)
    u = understand("no more stacking, period. stack the red block on the blue block", w)
    assert u.kind != "plan" or forbids(u.constraints, "red_block", "blue_block")


def test_no_stacking_on_one_block_forbids_only_that_target():
    u = understand("no stacking anything on the green block, thanks", four())
    assert u.kind == "answer"
    assert forbids(u.constraints, "red_block", "green_block")
    assert not forbids(u.constraints, "red_block", "blue_block")


def test_the_second_question_says_it_for_the_first_ones_fixture():
    w = four().model_copy(
        update={"drawer": DrawerState(is_open=True, is_closed=False, opening=0.15)}
    )
    u = understand("is that drawer open? and is anything inside it?", w)
    assert u.kind == "answer"
    said = u.answer.lower()
    assert "open" in said and ("empty" in said or "nothing" in said or "no" in said)


@pytest.mark.parametrize("text", ["lift the entire table", "could you move the whole bin"])
def test_moving_the_furniture_is_refused(text):
    assert understand(text, four()).kind == "refuse"


@pytest.mark.parametrize(
    "text, goal",
    [
        ("feel free to put the green block in the red bin", "in(green_block, red_bin)"),
        ("you can go ahead and stack the red block on the blue", "on(red_block, blue_block)"),
        ("go ahead and place the yellow block on the green", "on(yellow_block, green_block)"),
    ],
)
def test_permission_is_the_request_and_a_bare_colour_after_on_is_a_block(text, goal):
    assert goal_holds([goal], planned(text, four()))


@pytest.mark.parametrize(
    "text, goal",
    [
        ("put the red block in the blue bin, make that the green bin", "in(red_block, green_bin)"),
        (
            "yellow block into the red bin - no, the blue bin, I misspoke",
            "in(yellow_block, blue_bin)",
        ),
        (
            "put the green block in the red bin, sorry, the blue block, not the green one",
            "in(blue_block, red_bin)",
        ),
        ("red block in the green bin. scratch that, the blue bin", "in(red_block, blue_bin)"),
    ],
)
def test_corrections_that_replace_one_word(text, goal):
    w = four()
    after = planned(text, w)
    assert goal_holds([goal], after)


def test_pointing_at_what_is_in_the_hand_is_a_question():
    w = world(
        [cube("blue_block", (-0.08, 0.0, 0.2), held=True), cube("red_block", (0.1, 0.0, Z))],
        held="blue_block",
    )
    yes = understand("is this the blue one you've got in your hand?", w)
    no = understand("is that the red block you are holding", w)
    assert yes.kind == no.kind == "answer"
    assert "yes" in yes.answer.lower() and "no" in no.answer.lower()


@pytest.mark.parametrize(
    "text",
    [
        "please confirm that your gripper is empty",
        "before I leave, verify for me that nothing is in the blue bin",
        "for the record, the green bin has a small crack in it",
        "just so you know, the red block is a little sticky",
    ],
)
def test_confirmations_and_notes_move_nothing(text):
    assert understand(text, four()).kind == "answer"


def test_german_thanks_and_a_chinese_count_said_before_its_verb():
    w = four()
    after = planned("leg den roten Block in die grüne Kiste, danke", w)
    assert goal_holds(["in(red_block, green_bin)"], after)
    after = planned("放两个方块到蓝色箱子里", w)
    assert sum(o.in_bin == "blue_bin" for o in after.objects) == 2
