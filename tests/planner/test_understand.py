"""The understanding layer: what kind of utterance, and what a command means in this world.

Worlds are built directly (tests/worlds.py), with cube poses chosen so each selector has
exactly one answer (or, for the ambiguity tests, several)."""

from __future__ import annotations

import re

import pytest

from bridge import validate
from bridge.constraints import Constraints
from bridge.goals import goal_holds
from bridge.validate import simulate
from planner.hybrid import HybridPlanner
from planner.understand import understand
from planner.understand.translate import detect, translate
from tests.worlds import cube, world

Z = 0.02


def row():
    """Four cubes in a row across the robot's view: red leftmost (+y) ... yellow rightmost."""
    return world(
        [
            cube("red_block", (0.0, 0.08, Z)),
            cube("green_block", (0.05, -0.02, Z)),
            cube("blue_block", (-0.10, -0.12, Z)),
            cube("yellow_block", (0.12, -0.22, Z)),
        ]
    )


def binned():
    return world(
        [
            cube("red_block", (0.0, 0.25, Z), in_bin="green_bin"),
            cube("blue_block", (0.05, -0.05, Z)),
            cube("yellow_block", (-0.1, -0.15, Z)),
        ]
    )


def plan_goal(text, w):
    out = HybridPlanner().plan(text, w)
    return out, out.steps()


def _after(w, steps):
    after, reasons = simulate(w, steps)
    assert not reasons, reasons
    return after


# ------------------------------------------------------------------------------ kinds
@pytest.mark.parametrize(
    "text, expected",
    [
        ("is the red block in the green bin?", "Yes"),
        ("is the blue block in the green bin?", "No"),
        ("Is the yellow block on the table", "Yes"),
        ("where is the red block?", "green bin"),
        ("how many blocks are in the green bin?", "1 block"),
        ("what's in the green bin?", "red block"),
        ("what are you holding?", "not holding"),
        ("the red block is in the green bin.", "Yes"),
        ("the blue block is in the red bin", "No"),
        ("what would happen if you put the blue block in the red bin?", "red bin"),
        ("what can you do?", "pick up"),
    ],
)
def test_questions_and_statements_are_answered_and_move_nothing(text, expected):
    w = binned()
    out = HybridPlanner().plan(text, w)
    assert out.kind == "answer"
    assert out.steps() == []
    assert expected.lower() in out.understanding.answer.lower()


@pytest.mark.parametrize(
    "text", ["stop", "Stop!", "never mind", "cancel", "forget it", "halt", "wait, don't"]
)
def test_stop_words_stop(text):
    out = HybridPlanner().plan(text, row())
    assert out.kind == "stop" and out.steps() == []


def test_polite_command_is_a_command_not_a_question():
    out = HybridPlanner().plan("can you put the red block in the blue bin?", row())
    assert out.kind == "plan"
    assert goal_holds(["in(red_block, blue_bin)"], _after(row(), out.steps()))


@pytest.mark.parametrize(
    "text, kind",
    [
        ("put the block in the bin", "block"),
        ("put the red block in the bin", "bin"),
        ("pick it up", "block"),
    ],
)
def test_ambiguity_asks_naming_the_candidates(text, kind):
    out = HybridPlanner().plan(text, row())
    assert out.kind == "clarify" and out.steps() == []
    q = out.understanding.question
    names = ["red", "green", "blue"] + (["yellow"] if kind == "block" else [])
    for n in names:
        if kind == "bin" or n != "red" or "red" not in text:
            assert n in q, (q, n)


def test_impossible_requests_are_refused_before_motion():
    for text in ("put the red block on itself", "put the green bin in the red block"):
        out = HybridPlanner().plan(text, row())
        assert out.kind == "refuse", text
        assert out.refusal and out.steps() == []


# ------------------------------------------------------------------------ prohibitions
def test_bare_prohibition_plans_nothing():
    out = HybridPlanner().plan("don't put the red block in the green bin", row())
    assert out.kind == "answer" and out.steps() == []
    assert ("red_block", "green_bin") in out.understanding.constraints.pairs


def test_prohibition_beside_a_command_is_kept():
    w = row()
    out = HybridPlanner().plan("put every block in the green bin but don't touch the blue one", w)
    moved = {s.get("object") for s in out.steps()}
    assert "blue_block" not in moved
    assert {"red_block", "green_block", "yellow_block"} <= moved


def test_leave_alone_and_anywhere_but():
    w = row()
    out = HybridPlanner().plan("leave the red block alone and put the others in the blue bin", w)
    assert "red_block" not in {s.get("object") for s in out.steps()}
    out = HybridPlanner().plan("put the yellow block anywhere but the red bin", w)
    after = _after(w, out.steps())
    assert not goal_holds(["in(yellow_block, red_bin)"], after)
    assert any(goal_holds([f"in(yellow_block, {b})"], after) for b in ("green_bin", "blue_bin"))


def test_bridge_rejects_a_plan_that_breaks_a_constraint():
    """Whatever wrote the plan: the bridge's check is on the steps."""
    cons = Constraints(objects=frozenset({"red_block"}))
    steps = [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "blue_bin"}]
    reasons = cons.check(steps)
    assert reasons and reasons[0].code == "forbidden"
    assert not Constraints(pairs=frozenset({("red_block", "green_bin")})).check(steps)
    assert Constraints(pairs=frozenset({("*", "blue_bin")})).check(steps)
    from bridge.policy import negotiate

    class Fixed:
        name = "fixed"

        def propose(self, request):
            import json

            from bridge.policy import Proposal

            return Proposal(raw=json.dumps({"steps": steps}))

    neg = negotiate("x", row(), [Fixed()], max_regenerations=0, constraints=cons)
    assert neg.decision == "safe_stop"
    assert any(r.code == "forbidden" for a in neg.attempts for r in a.reasons)
    assert validate(__import__("json").dumps({"steps": steps}), row()).accepted


# -------------------------------------------------------------------------- selectors
@pytest.mark.parametrize(
    "text, mover",
    [
        ("put the leftmost block in the blue bin", "red_block"),
        ("put the rightmost cube in the blue bin", "yellow_block"),
        ("put the block closest to you in the blue bin", "blue_block"),
        ("put the block furthest from you in the blue bin", "yellow_block"),
        ("put the second block from the left in the blue bin", "green_block"),
        ("put the one next to the red block in the blue bin", "green_block"),
        ("put the block nearest the green bin in the blue bin", "red_block"),
    ],
)
def test_spatial_selectors_resolve_in_the_world(text, mover):
    w = row()
    out = HybridPlanner().plan(text, w)
    assert out.kind == "plan", out.to_dict()
    assert goal_holds([f"in({mover}, blue_bin)"], _after(w, out.steps())), out.steps()


def test_a_tie_is_asked_not_guessed():
    w = world(
        [
            cube("red_block", (0.0, 0.05, Z)),
            cube("green_block", (0.10, 0.055, Z)),
            cube("blue_block", (-0.1, -0.2, Z)),
        ]
    )
    out = HybridPlanner().plan("put the leftmost block in the blue bin", w)
    assert out.kind == "clarify"
    assert set(out.understanding.candidates) == {"red_block", "green_block"}


def test_counts_and_each_bin():
    w = row()
    out = HybridPlanner().plan("put two blocks in the green bin", w)
    after = _after(w, out.steps())
    assert sum(o.in_bin == "green_bin" for o in after.objects) == 2
    out = HybridPlanner().plan("put one block in each bin", w)
    after = _after(w, out.steps())
    assert {o.in_bin for o in after.objects if o.in_bin} == {"red_bin", "green_bin", "blue_bin"}
    assert after.object("yellow_block").in_bin is None


def test_conditionals_take_the_branch_the_world_says():
    empty = row()
    text = "if the green bin is empty, put the red block in it, otherwise put it in the blue bin"
    out = HybridPlanner().plan(text, empty)
    assert goal_holds(["in(red_block, green_bin)"], _after(empty, out.steps()))
    full = binned()
    text = "if the green bin is empty put the blue block in it, otherwise in the red bin"
    out = HybridPlanner().plan(text, full)
    assert goal_holds(["in(blue_block, red_bin)"], _after(full, out.steps()))
    out = HybridPlanner().plan(
        "unless the green bin is empty, put the blue block in the red bin", full
    )
    assert goal_holds(["in(blue_block, red_bin)"], _after(full, out.steps()))


@pytest.mark.parametrize(
    "text, goal",
    [
        ("put the red block in the green bin, no wait, the blue bin", "in(red_block, blue_bin)"),
        ("put the red, sorry, the yellow one in the blue bin", "in(yellow_block, blue_bin)"),
        (
            "put blue in the red bin. scratch that, stack blue on green",
            "on(blue_block, green_block)",
        ),
        ("stack red on blue, no, the other way round", "on(blue_block, red_block)"),
        ("put the green block in the red bin, I meant the blue bin", "in(green_block, blue_bin)"),
    ],
)
def test_self_corrections(text, goal):
    w = row()
    out = HybridPlanner().plan(text, w)
    after = _after(w, out.steps())
    assert goal_holds([goal], after), (out.understanding.text, out.steps())
    # the corrected-away half is not done too
    assert len(out.steps()) == 2


# -------------------------------------------------------------------------- languages
@pytest.mark.parametrize(
    "text, lang, goal",
    [
        ("把红色方块放进绿色的箱子里", "zh", "in(red_block, green_bin)"),
        ("请把蓝色积木叠在黄色积木上", "zh", "on(blue_block, yellow_block)"),
        ("pon el bloque rojo en el contenedor verde", "es", "in(red_block, green_bin)"),
        ("apila el cubo azul sobre el cubo amarillo", "es", "on(blue_block, yellow_block)"),
        ("mets le bloc rouge dans le bac vert", "fr", "in(red_block, green_bin)"),
        ("empile le cube bleu sur le cube jaune", "fr", "on(blue_block, yellow_block)"),
        ("Leg den roten Würfel in den grünen Behälter", "de", "in(red_block, green_bin)"),
        ("Staple den blauen Würfel auf den gelben Würfel", "de", "on(blue_block, yellow_block)"),
        ("赤いブロックを緑の箱に入れて", "ja", "in(red_block, green_bin)"),
    ],
)
def test_other_languages_plan_as_english(text, lang, goal):
    assert detect(text) == lang
    w = row()
    out = HybridPlanner().plan(text, w)
    assert out.kind == "plan", out.to_dict()
    assert goal_holds([goal], _after(w, out.steps()))


def test_questions_and_prohibitions_in_other_languages_move_nothing():
    w = row()
    for text in (
        "红色方块在绿色箱子里吗？",
        "¿está el bloque rojo en la caja verde?",
        "ne touche pas le bloc rouge",
        "Bewege den roten Würfel nicht",
        "停",
    ):
        out = HybridPlanner().plan(text, w)
        assert out.kind in ("answer", "stop"), (text, out.kind)
        assert out.steps() == []


def test_english_is_left_alone():
    for text in ("put the red block in the green bin", "stack blue on red", "go home"):
        assert translate(text) == (text, "en")


def test_understanding_is_recorded():
    d = HybridPlanner().plan("put the leftmost block in the blue bin", row()).to_dict()
    assert d["kind"] == "plan"
    assert d["understanding"]["text"] == "put the red block in the blue bin"
    assert any("leftmost" in n for n in d["understanding"]["notes"])
    d = understand("is the red block in the green bin?", row()).to_dict()
    assert d["kind"] == "answer" and d["answer"].startswith("No")


def test_grounding_has_polarity_and_no_false_slips():
    """A colour named only under a negation never grounds a motion; an ordinary English word
    is never a typo for a colour cue ("top" is not "stop", "from" is not "frog")."""
    from bridge.grounding import check, colours_named

    steps = [{"skill": "pick", "object": "blue_block"}, {"skill": "place", "target": "green_bin"}]
    assert not check("put the blue block in the green bin", steps, row())
    reasons = check("don't touch the blue block, put the red one in the green bin", steps, row())
    assert [r.code for r in reasons] == ["not_grounded"]
    assert check("leave blue alone and put red in the green bin", steps, row())
    assert colours_named("take it from the top") == set()
    assert colours_named("put the gren one in the bleu bin") == {"green", "blue"}


@pytest.mark.parametrize(
    "text, kind, goal",
    [
        ("put any block in the red bin", "plan", "in(*, red_bin)"),
        ("stack the green block on the block", "clarify", None),
        ("stack the red block on the other block", "clarify", None),
        ("take one block out of the blue bin", "refuse", None),
        ("set the red block on another block, never on the green one", "plan", "on(red_block, *)"),
        ("put the block on the right in the blue bin", "plan", "in(yellow_block, blue_bin)"),
    ],
)
def test_indefinite_and_relative_references(text, kind, goal):
    """'any block' is a choice (never read as a source), 'the block' / 'the other block'
    among several is asked, 'another block' avoids what is forbidden."""
    w = row()
    out = HybridPlanner().plan(text, w)
    assert out.kind == kind, (out.kind, out.understanding.text if out.understanding else None)
    if goal:
        after = _after(w, out.steps())
        assert goal_holds([goal], after), out.steps()
        assert "green_block" not in {s.get("target") for s in out.steps()}


def test_a_state_word_is_no_action_in_a_condition():
    from sim.world import DrawerState

    shut = row().model_copy(update={"drawer": DrawerState(is_open=False, is_closed=True)})
    text = (
        "if the drawer's open put the red block in it, "
        "if it's shut put the red block in the green bin"
    )
    u = understand(text, shut)
    assert u.kind == "plan" and u.text == "put the red block in the green bin", u


def test_any_of_them_is_a_choice_and_it_after_a_take_goes_on_the_table():
    w = binned()  # red in the green bin
    u = understand("I only want one block in the blue bin, any of them", w)
    assert u.kind == "plan" and "block in the blue bin" in u.text and "any of them" not in u.text
    u = understand("take one of the blocks out of the green bin, put it on the table", w)
    assert u.kind == "plan"
    assert u.text == "take the red block out of the green bin, put it on the table center"


def test_split_evenly_and_one_more():
    w = row()
    out = HybridPlanner().plan("split the four blocks evenly between the red and the blue bins", w)
    after = _after(w, out.steps())
    assert sum(o.in_bin == "red_bin" for o in after.objects) == 2
    assert sum(o.in_bin == "blue_bin" for o in after.objects) == 2
    w = binned()  # red in the green bin
    out = HybridPlanner().plan("there's one block in the green bin already, add one more", w)
    after = _after(w, out.steps())
    assert sum(o.in_bin == "green_bin" for o in after.objects) == 2


def test_dont_forget_asks_for_more_and_forbids_nothing():
    w = row()
    u = understand("don't forget to put the yellow block in the red bin", w)
    assert u.kind == "plan" and not u.constraints
    out = HybridPlanner().plan(u.text, w)
    assert goal_holds(["in(yellow_block, red_bin)"], _after(w, out.steps()))


# ------------------------------------------------- second sitting: wider phenomena
@pytest.mark.parametrize(
    "text, has",
    [
        ("do you know where the red one went", "green bin"),
        ("the red cube is in the green bin, right?", "Yes"),
        ("the blue block is in the green bin, isn't it?", "No"),
        ("which bins are empty", "red and blue bins are empty"),
        ("looks like the red block is already in the green bin", "Yes"),
        ("was the blue block moved?", "no record"),
        ("could the blue block go on top of the yellow one?", "Yes, I could"),
        ("can the yellow block go in the red bin?", "Yes, I could"),
    ],
)
def test_more_question_forms_are_answered_and_move_nothing(text, has):
    u = understand(text, binned())
    assert u.kind == "answer" and not u.moves
    assert has in u.answer


def test_a_request_marker_makes_a_could_question_a_request():
    u = understand("at some point could the blue cube end up in the blue bin? thx", binned())
    assert u.kind == "plan" and "blue bin" in u.text


@pytest.mark.parametrize(
    "text, objects, targets",
    [
        ("i don't want the red block moved", {"red_block"}, set()),
        ("I'd rather you didn't touch the blue one", {"blue_block"}, set()),
        ("the green bin is off limits", set(), {"green_bin"}),
        ("I don't want you to move the yellow cube", {"yellow_block"}, set()),
    ],
)
def test_wishes_that_forbid_are_bare_prohibitions(text, objects, targets):
    u = understand(text, row())
    assert u.kind == "answer" and not u.moves
    assert set(u.constraints.objects) == objects and set(u.constraints.targets) == targets


def test_any_bin_is_a_choice_that_keeps_the_prohibitions():
    w = row()
    u = understand("never use the blue bin. now put the yellow block in a bin", w)
    assert u.kind == "plan" and "blue bin" not in u.text and "bin" in u.text
    u = understand("put the green block away, just not in the red bin", w)
    assert u.kind == "plan" and re.search(r"in the (green|blue) bin", u.text)
    # a bin named by what it holds is a selector, not a free choice
    u = understand("put the yellow block in whichever bin is still empty", binned())
    assert u.kind == "clarify" and set(u.candidates) == {"red_bin", "blue_bin"}


@pytest.mark.parametrize("text", ["grab that", "pick one up", "put this in the red bin"])
def test_a_pointing_word_with_nothing_held_asks(text):
    u = understand(text, row())
    assert u.kind == "clarify" and len(u.candidates) == 4


def test_more_than_the_scene_holds_is_refused_with_the_count():
    u = understand("put five blocks in the red bin", row())
    assert u.kind == "refuse" and "only 4" in u.reason


@pytest.mark.parametrize(
    "text, goal",
    [
        ("put the blue one on the green one, wait, swap them", ["on(green_block, blue_block)"]),
        (
            "the green block, the blue block and the red block into the red bin",
            ["in(green_block, red_bin)", "in(blue_block, red_bin)", "in(red_block, red_bin)"],
        ),
        (
            "is the blue block in a bin? if not, put it in the green one",
            ["in(blue_block, green_bin)"],
        ),
        (
            "push the block at the front to the back of the table",
            ["in_region(yellow_block, table_back)"],
        ),
    ],
)
def test_swaps_lists_asked_conditions_and_postposed_places(text, goal):
    w = row()
    out, steps = plan_goal(text, w)
    assert goal_holds(goal, _after(w, steps)), (out.to_dict().get("understanding"), steps)


@pytest.mark.parametrize(
    "text", ["nah forget it", "hold on, stop stop", "abort the task", "don't bother"]
)
def test_more_stop_forms(text):
    assert understand(text, row()).kind == "stop"


def test_a_side_then_a_distance_narrows_in_that_order():
    w = world(
        [
            cube("green_block", (-0.15, -0.2, Z)),
            cube("red_block", (-0.15, 0.08, Z)),
            cube("blue_block", (0.15, -0.2, Z)),
            cube("yellow_block", (0.15, 0.08, Z)),
        ]
    )
    u = understand("the block on your right that's closest to you goes into the red bin", w)
    assert u.kind == "plan" and "green block" in u.text
    u = understand("put the block on the left farthest from you in the blue bin", w)
    assert u.kind == "plan" and "yellow block" in u.text


@pytest.mark.parametrize(
    "text", ["put two blocks on top of the red one", "stack two blocks on red, one on the other"]
)
def test_two_blocks_on_one_is_a_tower(text):
    w = row()
    out, steps = plan_goal(text, w)
    after = _after(w, steps)
    above = [
        o.name for o in after.objects if o.name != "red_block" and after.above(o.name, "red_block")
    ]
    assert len(above) == 2, (out.to_dict().get("understanding"), steps)


@pytest.mark.parametrize(
    "text, has",
    [
        ("wait is the red one in a bin already", "Yes"),
        ("are all the blocks in a bin?", "No"),
        ("is the green bin empty or not?", "No"),
        ("how far is the blue block from you?", "cm from me"),
        ("so where's everything right now?", "the yellow block is"),
        ("is it possible to put the blue block in the red bin?", "Yes, I could"),
        ("don't move anything, just tell me where the blue block is", "blue block is on the table"),
        ("绿色的箱子里有什么？", "red block"),
        ("赤いブロックはどこ？", "green bin"),
    ],
)
def test_questions_behind_fillers_prohibitions_and_other_languages(text, has):
    u = understand(text, binned())
    assert u.kind == "answer" and has in u.answer, u.answer


@pytest.mark.parametrize(
    "text, n",
    [("stack them all", 4), ("build a tower of three blocks", 3), ("make a stack of two", 2)],
)
def test_towers_without_names_use_the_free_blocks(text, n):
    w = row()
    out, steps = plan_goal(text, w)
    after = _after(w, steps)
    tops = {o.name for o in after.objects if o.on}
    assert len(tops) == n - 1, (out.to_dict().get("understanding"), steps)


def test_several_counts_choose_different_blocks():
    w = row()
    out, steps = plan_goal("put one block in the red bin and two in the green bin", w)
    after = _after(w, steps)
    assert sum(o.in_bin == "red_bin" for o in after.objects) == 1
    assert sum(o.in_bin == "green_bin" for o in after.objects) == 2


@pytest.mark.parametrize(
    "text, goal",
    [
        ("stack blue on yellow, or actually yellow on blue", ["on(yellow_block, blue_block)"]),
        (
            "if the red block is on the table, stack the blue one on it",
            ["on(blue_block, red_block)"],
        ),
        (
            "put the yellow block in the blue bin unless it's already there",
            ["in(yellow_block, blue_bin)"],
        ),
        (
            "leave the green one where it is and put the others in the blue bin",
            ["in(red_block, blue_bin)", "in(blue_block, blue_bin)", "in(yellow_block, blue_bin)"],
        ),
        ("i need the red block in the blue bin asap", ["in(red_block, blue_bin)"]),
    ],
)
def test_whole_corrections_referents_others_and_wishes(text, goal):
    w = row()
    out, steps = plan_goal(text, w)
    assert goal_holds(goal, _after(w, steps)), (out.to_dict().get("understanding"), steps)


def _articulated(open_: bool, light: bool):
    from sim.world import DrawerState

    drawer = DrawerState(is_open=open_, is_closed=not open_, opening=0.15 if open_ else 0.0)
    return row().model_copy(update={"drawer": drawer, "light_on": light})


@pytest.mark.parametrize(
    "text, open_, light, kind, has",
    [
        ("is the light on or off?", False, True, "answer", "The light is on"),
        ("is the drawer open?", False, False, "answer", "the drawer is closed"),
        ("close the drawer unless it's already closed", False, False, "answer", "Nothing to do"),
        ("lights off please", False, True, "plan", "turn off the light"),
        ("make it bright in here", False, False, "plan", "turn on the light"),
        (
            "open the drawer, then put the blue block in it and close it",
            False,
            False,
            "plan",
            "put the blue block in the drawer, then close the drawer",
        ),
    ],
)
def test_the_drawer_and_the_light_in_other_words(text, open_, light, kind, has):
    u = understand(text, _articulated(open_, light))
    assert u.kind == kind and has in (u.answer or u.text), u


@pytest.mark.parametrize(
    "text, objects, pairs, skills",
    [
        ("do not, under any circumstances, touch the blue block", {"blue_block"}, 0, set()),
        ("no stacking please", set(), 4, set()),
        ("nothing goes in the red bin", set(), 1, set()),
        ("no pushing", set(), 0, {"push"}),
    ],
)
def test_asides_gerunds_and_nothing_goes_are_bare_prohibitions(text, objects, pairs, skills):
    u = understand(text, row())
    assert u.kind == "answer" and not u.moves
    c = u.constraints
    assert set(c.objects) == objects and len(c.pairs) == pairs and set(c.skills) == skills


@pytest.mark.parametrize(
    "text, goal",
    [
        (
            "put the blue block in the red bin. not the red bin, the green one",
            ["in(blue_block, green_bin)"],
        ),
        ("the yellow one goes in the green bin", ["in(yellow_block, green_bin)"]),
        (
            "my boss wants the yellow block stacked on the green one",
            ["on(yellow_block, green_block)"],
        ),
        ("red block green bin", ["in(red_block, green_bin)"]),
        ("red on blue", ["on(red_block, blue_block)"]),
        ("for science: stack red on yellow \U0001f642", ["on(red_block, yellow_block)"]),
        ("ugh can you just put the red thing in the blue bin already", ["in(red_block, blue_bin)"]),
        (
            "put the two blocks on the left in the red bin",
            ["in(red_block, red_bin)", "in(green_block, red_bin)"],
        ),
    ],
)
def test_not_x_but_y_goes_wants_pairings_and_asides(text, goal):
    w = row()
    out, steps = plan_goal(text, w)
    assert goal_holds(goal, _after(w, steps)), (out.to_dict().get("understanding"), steps)


@pytest.mark.parametrize(
    "text, has",
    [
        ("isn't the red block in the green bin?", "Yes"),
        ("aren't there four blocks?", "No, there are 3 blocks"),
        ("show me the blue block", "blue block is on the table"),
        ("point to the blue bin", "The blue bin is on the table"),
        ("why is the red block in the green bin?", "no record"),
    ],
)
def test_negative_questions_show_me_and_why(text, has):
    u = understand(text, binned())
    assert u.kind == "answer" and has in u.answer, u.answer


def test_move_it_with_nothing_held_asks():
    u = understand("move it", row())
    assert u.kind == "clarify" and len(u.candidates) == 4


@pytest.mark.parametrize(
    "text, kind, has",
    [
        ("put red into the red bin - actually no, don't", "stop", "Stopped"),
        ("can you push blocks?", "answer", "Yes, I can push"),
        ("can you fly?", "answer", "No, I cannot fly"),
        ("is the yellow block closer to you than the blue block?", "answer", "Yes"),
        ("which block is the biggest?", "answer", "same size"),
        ("le cube rouge est-il dans la boîte verte ?", "answer", "Yes"),
    ],
)
def test_taking_back_capabilities_comparisons(text, kind, has):
    u = understand(text, binned())
    assert u.kind == kind and has in (u.answer or ""), u


@pytest.mark.parametrize(
    "text, goal, unmoved",
    [
        (
            "put the red block in the blue bin and do not move anything else",
            ["in(red_block, blue_bin)"],
            ["green_block", "blue_block", "yellow_block"],
        ),
        (
            "as long as the green bin is empty, put the blue block there",
            ["in(blue_block, green_bin)"],
            [],
        ),
        (
            "put the red block in the green bin, or if that's not possible, the blue bin",
            ["in(red_block, green_bin)"],
            [],
        ),
        ("请不要把黄色方块放进红色箱子，把它放进蓝色箱子", ["in(yellow_block, blue_bin)"], []),
    ],
)
def test_anything_else_there_in_conditions_fallbacks_and_zh_it(text, goal, unmoved):
    w = row()
    out, steps = plan_goal(text, w)
    assert goal_holds(goal, _after(w, steps)), (out.to_dict().get("understanding"), steps)
    assert not {s.get("object") for s in steps} & set(unmoved)


@pytest.mark.parametrize(
    "text, goal",
    [
        ("yeet the red block into the blue bin", ["in(red_block, blue_bin)"]),
        ("shift the blue block to the right", ["in_region(blue_block, table_right)"]),
        ("mets le cube bleu sur le cube jaune, non, sur le rouge", ["on(blue_block, red_block)"]),
        ("rote Würfel in die blaue Kiste, bitte", ["in(red_block, blue_bin)"]),
        ("把绿色方块放在红色方块上面，不对，放在蓝色方块上面", ["on(green_block, blue_block)"]),
    ],
)
def test_slang_verbs_and_corrections_in_other_languages(text, goal):
    w = row()
    out, steps = plan_goal(text, w)
    assert goal_holds(goal, _after(w, steps)), (out.to_dict().get("understanding"), steps)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("if I asked you to stack yellow on red, could you?", "answer"),
        ("what would you do if I told you to put blue in the red bin?", "answer"),
        ("suppose you stacked red on green, what would happen?", "answer"),
        ("para", "stop"),
        ("stop, arrête tout", "stop"),
    ],
)
def test_hypotheticals_about_orders_and_foreign_stops_move_nothing(text, kind):
    u = understand(text, row())
    assert u.kind == kind and not u.moves
    if kind == "answer":
        assert u.answer.startswith("Then ")


@pytest.mark.parametrize(
    "text", ["put the red block on a block", "stack one block on another", "put a block on a block"]
)
def test_a_block_on_a_block_is_two_different_blocks(text):
    w = row()
    out, steps = plan_goal(text, w)
    after = _after(w, steps)
    assert sum(1 for o in after.objects if o.on) == 1, (out.to_dict().get("understanding"), steps)
    if "red" in text:
        assert after.object("red_block").on


def test_in_it_inside_a_condition_is_not_a_destination():
    u = understand(
        "put the blue block in the red bin unless the red bin already has something in it", row()
    )
    assert u.kind == "plan" and u.text == "put the blue block in the red bin", u


@pytest.mark.parametrize(
    "text, kind",
    [
        ("move the block that isn't red into the red bin", "clarify"),
        ("put the yellow block beside the red block", "refuse"),
        ("put the green block where the red block is", "refuse"),
        ("put the red block on top", "clarify"),
    ],
)
def test_negated_selectors_and_places_no_skill_has_are_not_guessed(text, kind):
    u = understand(text, row())
    assert u.kind == kind and not u.moves, u


def test_any_block_that_is_not_a_colour_is_chosen_among_the_others():
    u = understand("put any block that isn't red in the red bin", row())
    assert u.kind == "plan" and "red block" not in u.text.replace("red bin", "")


@pytest.mark.parametrize(
    "text, kind",
    [
        ("I'm going to put the red block in the green bin myself", "answer"),
        ("let me put the red block in the green bin", "answer"),
        ("could you explain how you'd stack the blocks?", "answer"),
        ("explain your plan for putting red in the green bin", "answer"),
        ("describe the scene", "answer"),
        ("can you hear me?", "answer"),
        ("yes", "answer"),
        ("hang on a minute", "stop"),
        ("not now", "stop"),
    ],
)
def test_the_person_acting_explanations_and_hesitations_move_nothing(text, kind):
    u = understand(text, row())
    assert u.kind == kind and not u.moves, u


@pytest.mark.parametrize(
    "text, goal",
    [
        (
            "don't put the red block on the blue block, put it on the yellow one",
            ["on(red_block, yellow_block)"],
        ),
        ("put the green block in the red... no, the blue bin", ["in(green_block, blue_bin)"]),
        (
            "never stack anything on the green block. now stack red on something",
            ["on(red_block, blue_block)"],
        ),
        ("mets le cube le plus à gauche dans la boîte bleue", ["in(red_block, blue_bin)"]),
        ("leg den Würfel ganz rechts in die grüne Kiste", ["in(yellow_block, green_bin)"]),
    ],
)
def test_it_after_a_prohibition_cut_off_bins_something_and_far_sides(text, goal):
    w = row()
    out, steps = plan_goal(text, w)
    assert goal_holds(goal, _after(w, steps)), (out.to_dict().get("understanding"), steps)


def test_a_bin_in_a_state_is_no_choice():
    u = understand(
        "put all the blocks in the red bin except the ones that are already in a bin", binned()
    )
    assert u.kind == "plan" and "already in a bin" in u.text


def test_a_tie_between_bins_is_said_as_bins_not_blocks() -> None:
    """A listing of scene names keeps each name's noun: a tie between two bins (or a
    drawer's contents) must not call the bins "blocks"."""
    from planner.understand.answers import _listing

    assert _listing(["red_bin", "green_bin"]) == "the red bin and the green bin"
    assert _listing(["blue_block"]) == "the blue block"
    assert _listing([]) == "nothing"


@pytest.mark.parametrize(
    "text, protected",
    [
        ("i'd rather you didn't touch the red block", "red_block"),
        ("I'd much rather you didn't move the green block", "green_block"),
        ("would you mind not moving the blue block", "blue_block"),
        ("I'd prefer you leave the red block alone", "red_block"),
        ("i would rather you kept the yellow block where it is", "yellow_block"),
    ],
)
def test_a_preference_that_forbids_is_a_prohibition_not_a_correction(text, protected):
    """ "I'd rather you didn't ..." is a wish against a motion: its "rather" is no
    correction marker, and nothing is planned."""
    u = understand(text, row())
    assert u.kind == "answer" and not u.moves
    assert protected in u.constraints.objects


def test_a_preference_protects_and_the_rest_is_planned_while_or_rather_still_corrects():
    u = understand(
        "i'd prefer that you leave the yellow block alone and put the red block in the green bin",
        row(),
    )
    assert u.kind == "plan" and "yellow_block" in u.constraints.objects
    assert "red block" in u.text and "yellow" not in u.text
    u = understand("put the red block in the green bin, or rather the blue bin", row())
    assert u.kind == "plan" and "blue bin" in u.text and "green" not in u.text


@pytest.mark.parametrize(
    "text, kind, word",
    [
        ("grab the one on the left", "plan", "red block"),
        ("pick up the cube on the right", "plan", "yellow block"),
        ("push the block on the left", "clarify", None),  # "on the left" may be where it goes
        ("put the block on the left", "clarify", None),
    ],
)
def test_a_side_phrase_selects_only_where_it_cannot_be_a_destination(text, kind, word):
    u = understand(text, row())
    assert u.kind == kind
    if word:
        assert word in u.text


@pytest.mark.parametrize("text", ["stack it", "shove it", "stack it up please"])
def test_a_bare_it_with_nothing_held_is_asked_about(text):
    u = understand(text, row())
    assert u.kind == "clarify" and len(u.candidates or []) == 4


@pytest.mark.parametrize(
    "text, w, expected",
    [
        ("how many blocks are not in a bin?", binned, "2 blocks"),
        ("how many blocks are outside the bins", binned, "2 blocks"),
        ("how many blocks are in the bins?", binned, "1 block"),
        ("do you see a green block anywhere?", row, "yes"),
        ("can you spot a purple block", row, "no"),
        ("can you tell me what colour the block on the left is", row, "red"),
        ("is the yellow block clear?", row, "yes"),
    ],
)
def test_negated_counts_sightings_and_embedded_colour_questions_are_answered(text, w, expected):
    u = understand(text, w())
    assert u.kind == "answer" and not u.moves
    assert expected in (u.answer or "").lower()


def test_a_condition_on_a_block_being_clear_is_decided_in_the_world():
    u = understand("only if the yellow block is clear, stack the red block on it", row())
    assert u.kind == "plan" and "yellow block" in u.text
    covered = world(
        [
            cube("red_block", (0.0, 0.08, Z)),
            cube("yellow_block", (0.12, -0.22, Z)),
            cube("blue_block", (0.12, -0.22, 3 * Z), on="yellow_block"),
        ]
    )
    u = understand("only if the yellow block is clear, stack the red block on it", covered)
    assert u.kind == "answer" and not u.moves


@pytest.mark.parametrize(
    "text, check",
    [
        ("keep the green bin empty and put the red block in a bin", "green_bin in targets"),
        ("don't push anything, just put the yellow block in the red bin", "push in skills"),
        ("don't stack anything; put the blue block in the green bin", "stacking pairs"),
    ],
)
def test_a_forbidden_kind_of_step_or_bin_leaves_the_blocks_free(text, check):
    """ "don't push anything" forbids the push skill, not every block: the put that
    follows it stays plannable."""
    u = understand(text, row())
    assert u.kind == "plan" and not u.constraints.objects
    c = u.constraints
    if check == "green_bin in targets":
        assert "green_bin" in c.targets and "green" not in u.text
    elif check == "push in skills":
        assert c.skills == frozenset({"push"}) and "yellow block" in u.text
    else:
        assert {t for _, t in c.pairs} == {"red_block", "green_block", "blue_block", "yellow_block"}


def test_a_selector_does_not_pick_the_block_the_sentence_puts_it_on():
    w = row()  # red is the leftmost, green the next one
    u = understand("put the leftmost block on the red one", w)
    assert u.kind == "plan" and u.text.startswith("put the green block")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("is anything on top of the green block?", "no"),
        ("what's the block on the left?", "red"),
        ("tell me about the scene", "yellow block"),
    ],
)
def test_more_question_shapes_are_answered(text, expected):
    u = understand(text, row())
    assert u.kind == "answer" and expected in (u.answer or "").lower()


@pytest.mark.parametrize(
    "text", ["the blue block looks lonely", "the red block seems to be in the green bin"]
)
def test_an_observation_with_looks_or_seems_is_a_statement(text):
    assert understand(text, row()).kind == "answer"


def test_a_condition_that_nothing_is_on_a_block_names_the_it_of_the_order():
    u = understand("if there's nothing on the red block, stack the blue block on it", row())
    assert u.kind == "plan" and u.text == "stack the blue block on the red block"


@pytest.mark.parametrize("text", ["fly to the moon", "dance for me", "pirouette"])
def test_acts_no_arm_can_do_are_refused_plainly(text):
    u = understand(text, row())
    assert u.kind == "refuse" and "anything" not in (u.reason or "")


def test_put_it_on_the_table_moves_a_block_off_a_stack_and_not_one_already_there():
    stacked = world(
        [
            cube("red_block", (0.0, 0.08, 3 * Z), on="blue_block"),
            cube("blue_block", (0.0, 0.08, Z)),
        ]
    )
    u = understand("put the red block on the table", stacked)
    assert u.kind == "plan" and u.text == "put the red block on the table center"
    u = understand("put the blue block on the table", row())
    assert u.kind == "answer" and "already" in (u.answer or "")


def _stack_and_hold():
    return world(
        [
            cube("red_block", (0.0, 0.08, 3 * Z), on="blue_block"),
            cube("blue_block", (0.0, 0.08, Z)),
            cube("green_block", (0.1, 0.25, Z), in_bin="green_bin"),
            cube("yellow_block", (0.05, -0.1, 0.2), held=True),
        ],
        held="yellow_block",
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("what is under the red block?", "blue block"),
        ("which block is on top of the stack?", "red block"),
        ("which blocks are not in a bin?", "3 blocks"),
        ("where's the thing you're holding?", "yellow block"),
    ],
)
def test_questions_about_stacks_and_the_hand_are_answered(text, expected):
    u = understand(text, _stack_and_hold())
    assert u.kind == "answer" and expected in (u.answer or "")


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "put the red and the blue block in the green bin, no, just the red one",
            "put the red block in the green bin",
        ),
        (
            "put the red block in the green bin \u2014 oh wait, I meant the blue bin",
            "put the red block in the blue bin",
        ),
        (
            "put the red block into the green bin and, um, the blue block into the red bin",
            "put the red block into the green bin and the blue block into the red bin",
        ),
    ],
)
def test_self_repairs_narrow_replace_or_only_pause(text, expected):
    u = understand(text, row())
    assert u.kind == "plan" and u.text == expected


def test_an_it_that_is_empty_is_the_bin_of_the_order():
    u = understand("put the blue block in the red bin if it's empty", row())
    assert u.kind == "plan" and u.text == "put the blue block in the red bin"
    full = world([cube("red_block", (0.0, 0.25, Z), in_bin="red_bin"), cube("blue_block")])
    u = understand("put the blue block in the red bin if it's empty", full)
    assert u.kind == "answer" and not u.moves


@pytest.mark.parametrize(
    "text, expected",
    [
        ("把最左边的方块放进红色的箱子", "put the leftmost block into red bin"),
        (
            "把离绿色箱子最近的方块放进蓝色箱子",
            "put the block closest to the green bin into blue bin",
        ),
        (
            "如果红色方块在桌子上，就把它放进绿色箱子",
            "if red block is on the table, put it into green bin",
        ),
        ("combien de cubes y a-t-il ?", "how many blocks is there?"),
        (
            "pon el bloque rojo en la caja verde, no, en la caja azul",
            "put the red block in the green bin, no wait, in the blue bin",
        ),
    ],
)
def test_superlatives_distances_conditions_and_repairs_survive_translation(text, expected):
    assert translate(text)[0] == expected


def test_a_translated_condition_and_repair_are_decided_like_english_ones():
    u = understand("如果红色方块在桌子上，就把它放进绿色箱子", row())
    assert u.kind == "plan" and u.text == "put the red block into green bin"
    u = understand("pon el bloque rojo en la caja verde, no, en la caja azul", row())
    assert u.kind == "plan" and u.text == "put the red block in the blue bin"


@pytest.mark.parametrize(
    "text",
    [
        "I like the blue block",
        "blue is my favourite colour",
        "we love the red one",
        "lol",
        "haha :)",
    ],
)
def test_a_taste_or_a_laugh_is_no_request(text):
    """No verb of doing and nothing asked for: a colour named in a liking is no order."""
    u = understand(text, row())
    assert u.kind == "answer" and not u.moves


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "why don't you put the yellow block in the green bin?",
            "put the yellow block in the green bin",
        ),
        ("maybe put the red block in the green bin?", "put the red block in the green bin"),
        (
            "I was wondering if you could put the blue block in the red bin",
            "put the blue block in the red bin",
        ),
        ("perhaps you could stack blue on red", "stack blue on red"),
    ],
)
def test_a_suggestion_is_a_request_and_its_dont_forbids_nothing(text, expected):
    u = understand(text, row())
    assert u.kind == "plan" and u.text == expected and not u.constraints


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "before stacking blue on yellow, put red in the green bin",
            "put red in the green bin, then stack blue on yellow",
        ),
        (
            "put red in the blue bin after you put green in the red bin",
            "put green in the red bin, then put red in the blue bin",
        ),
        (
            "after you've put the red block in the green bin, stack blue on yellow",
            "put the red block in the green bin, then stack blue on yellow",
        ),
    ],
)
def test_before_and_after_put_the_steps_in_the_order_they_happen(text, expected):
    u = understand(text, row())
    assert u.kind == "plan" and u.text == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("just tell me where the red block is, don't move it", "red block is"),
        ("tell me what's in the green bin but don't move anything", "green bin"),
    ],
)
def test_a_question_with_a_do_not_move_tail_is_still_answered(text, expected):
    u = understand(text, binned())
    assert u.kind == "answer" and expected in (u.answer or "")


@pytest.mark.parametrize(
    "text", ["I'll handle the blue block", "leave the red block to me", "I'll take care of it"]
)
def test_the_person_taking_a_job_on_themselves_keeps_the_arm_still(text):
    u = understand(text, row())
    assert u.kind == "answer" and not u.moves


@pytest.mark.parametrize("text", ["shutt the drawr", "pres the buton", "illuminate the workspace"])
def test_misspelt_or_unusual_requests_are_not_taken_for_remarks(text):
    assert understand(text, row()).kind != "answer"


def test_what_the_speaker_will_grab_is_no_pointing():
    u = understand("open the drawer so I can grab something", row())
    assert u.kind == "plan"
    assert understand("I want you to grab that", row()).kind == "clarify"


def _articulated_world(light=False, drawer=0.0):
    from sim.env import TabletopEnv

    env = TabletopEnv(scene="articulated")
    env.reset(seed=3, options={"light": light, "drawer": drawer})
    w = env.world_state()
    env.close()
    return w


@pytest.mark.parametrize(
    "text, expected",
    [
        ("can't see a thing, give me some light", "turn on the light"),
        ("it's too dark in here", "turn on the light"),
        ("switch the lamp off", "turn off the lamp"),
        ("if the light is off, turn it on", "turn on the light"),
    ],
)
def test_darkness_and_the_lamp_said_otherwise_are_one_switch_of_the_light(text, expected):
    u = understand(text, _articulated_world())
    assert u.kind == "plan" and u.text == expected


def test_anything_in_the_drawer_is_answered_plainly():
    u = understand("is anything in the drawer?", _articulated_world())
    assert u.kind == "answer" and u.answer == "No, nothing is in the drawer"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("the drawer is sticking out, push it back in", "close the drawer"),
        ("slide the drawer shut", "close the drawer"),
        ("pull the drawer out", "open the drawer"),
    ],
)
def test_the_drawer_pushed_or_pulled_is_closed_or_opened(text, expected):
    u = understand(text, _articulated_world())
    assert u.kind == "plan" and u.text == expected


def test_the_blocks_on_a_side_are_every_cube_there_and_are_counted_so():
    w = row()  # red and green on the left (+y), blue and yellow on the right
    u = understand("put the blocks on the left side in the blue bin", w)
    assert u.kind == "plan" and u.text == "put the red block and the green block in the blue bin"
    u = understand("how many blocks are on the right side?", w)
    assert u.kind == "answer" and "2 blocks" in (u.answer or "")


def test_the_nearest_bin_is_measured_from_the_block_that_goes_in_it():
    w = world(
        [cube("red_block", (0.1, 0.3, Z)), cube("blue_block", (0.1, -0.3, Z))],
        bin_names=("red_bin", "blue_bin"),
    )
    near = {}
    for o in ("red_block", "blue_block"):
        xy = next(x for x in w.objects if x.name == o).pos[:2]
        near[o] = min(w.bins, key=lambda b: (b.pos[0] - xy[0]) ** 2 + (b.pos[1] - xy[1]) ** 2).name
    for o in ("red_block", "blue_block"):
        u = understand(f"put the {o.split('_')[0]} block in the nearest bin", w)
        assert u.kind == "plan" and u.text.endswith(f"the {near[o].split('_')[0]} bin"), u.text
    u = understand("which bin is closest to the red block?", w)
    assert u.kind == "answer" and near["red_block"].split("_")[0] in (u.answer or "")


def test_it_after_a_measured_selector_is_the_cube_it_was_measured_from():
    u = understand("put the block nearest the red one on top of it", row())
    assert u.kind == "plan" and u.text.endswith("on top of the red block")


@pytest.mark.parametrize("text", ["and the blue one too", "now the green one", "same for green"])
def test_a_follow_up_fragment_alone_is_not_guessed_into_a_motion(text):
    """Without the request it follows, "and the blue one too" says nothing to do: the robot
    says so instead of guessing a destination."""
    u = understand(text, row())
    assert u.kind == "refuse" and not u.moves
    assert understand("and the blue one in the red bin", row()).kind == "plan"
