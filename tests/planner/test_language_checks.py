"""Typo repair, colour coverage, list items and refusal checks around the embedded model,
and the proposer's second look, driven by a scripted chat model (no weights needed)."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from bridge.policy import PlanRequest
from planner import spelling
from planner.embedded import coverage, refusal
from planner.embedded.proposer import EmbeddedProposer
from planner.rules import RulesPlanner
from tests.planner.planner_worlds import make_world


# ----------------------------------------------------------------------------- spelling
@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("stcak red on grene", "stack red on green"),
        ("put the blue blok on the red blok", "put the blue block on the red block"),
        ("PUT THE GREEN BLCOK IN THE BIN", "PUT THE GREEN BLOCK IN THE BIN"),
        (
            "Place the emrald cube in the saphire basket",
            "Place the emerald cube in the sapphire basket",
        ),
        # "one" is as close as "open" (a deleted letter against two swapped ones) and far
        # more frequent in the corpus; the same letters say which was meant
        ("opne the drawer", "open the drawer"),
        ("cloes the drawer and turn the ligth on", "close the drawer and turn the light on"),
    ],
)
def test_typos_are_repaired(typed, meant):
    assert spelling.repair(typed) == meant


@pytest.mark.parametrize(
    "text",
    [
        "make sure nothing else moves",  # "nothing" is not "thing"
        "would you mind stacking the blue cube, then heading home",
        "only if it's safe to do so",
        "glue the red block",  # first letter differs: never "blue"
        "teh rde block",  # too short to guess
    ],
)
def test_real_words_and_short_words_are_kept(text):
    assert spelling.repair(text) == text


def test_distance_counts_a_swap_as_one_edit():
    assert spelling.distance("stcak", "stack") == 1
    assert spelling.distance("grene", "green") == 1
    assert spelling.distance("gerrn", "green", limit=1) == 2


def test_rules_planner_reads_through_typos():
    r = RulesPlanner().parse("stcak the red blok on the grene blok", make_world())
    assert r.confident
    assert [s.get("object") or s.get("target") for s in r.steps] == ["red_block", "green_block"]
    assert any(n.startswith("read as:") for n in r.notes)


# ----------------------------------------------------------------------------- coverage
def test_colours_come_from_words_shades_and_things():
    assert coverage.colours("the navy cube in the golden box") == {"blue", "yellow"}
    assert coverage.colours("the one the colour of a fire truck on the ruby red one") == {"red"}
    assert coverage.colours("put it there") == set()


def test_missing_colours():
    assert coverage.missing("red in red, blue in blue", "put the red block in the red bin") == {
        "blue"
    }
    assert not coverage.missing("navy one in the red box", "put the blue block in the red bin")


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("red in red, blue in blue", ["red in red", "blue in blue"]),
        (
            "red block / blue bin; yellow block / red bin",
            ["red block / blue bin", "yellow block / red bin"],
        ),
        (
            "final state: yellow on blue, red in green bin",
            ["final state: yellow on blue", "final state: red in green bin"],
        ),
        (
            "- red block in the green bin\n- blue block in the blue bin",
            ["red block in the green bin", "blue block in the blue bin"],
        ),
        (
            "1) put red in green bin 2) put blue in blue bin",
            ["put red in green bin", "put blue in blue bin"],
        ),
    ],
)
def test_plain_lists_split_into_items(text, items):
    assert coverage.items(text) == items


@pytest.mark.parametrize(
    "text",
    [
        "put the red block in the blue bin",  # one item
        "before you put red in the green bin, push blue to the left",  # reordered
        "put red on yellow, then the other two in the blue bin",  # refers across items
        "red in the red bin, then go home",  # an item without a colour
        "red in red, blue stays put",  # "stays" keeps a block where it is
    ],
)
def test_lists_that_need_the_whole_sentence_are_not_split(text):
    assert coverage.items(text) is None


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    ("reason", "text", "fits"),
    [
        ("there is no cup in the scene", "put the cup in the red bin", True),
        ("there is no cup in the scene", "put the red block in the blue bin", False),
        ("there is no bin in the scene", "put the crimson cube in the emerald bin", False),
        ("bins cannot be moved", "pick up the blue bin", True),
        ("bins cannot be moved", "put the blue block on the red block", False),
        ("that would be unsafe", "throw the red block at me", True),
        ("that would be unsafe", "put the blue block on the red block", False),
        ("a block cannot go on itself", "stack the red block on the red block", True),
        ("a block cannot go on itself", "stack red on green", False),
        ("not a task for this robot", "red in red", True),  # cannot be checked: stands
    ],
)
def test_refusal_reasons_are_checked_against_the_words(reason, text, fits):
    assert refusal.supported(reason, text) is fits


def test_only_words_of_doable_requests_are_known():
    assert refusal.known_words("put the navy block in the red bin")
    assert not refusal.known_words("paint the red block blue")
    assert not refusal.known_words("put the red block in the microwave")


# ----------------------------------------------------------------------------- proposer
class Scripted(BaseChatModel):
    """Answers each instruction (the last line of the user message) from a table; records
    every call with whether refusals were ruled out."""

    answers: dict
    calls: list = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages, stop=None, run_manager=None, **kw):
        text = str(messages[-1].content).split("\n", 1)[-1]
        no_refusal = bool((kw.get("extra_body") or {}).get("no_refusal"))
        self.calls.append((text, no_refusal))
        reply = self.answers.get((text, no_refusal), self.answers.get(text, "refuse: ?"))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def _propose(answers: dict, task: str, world=None):
    chat = Scripted(answers=answers, calls=[])

    p = EmbeddedProposer(chat).propose(PlanRequest(task, world or make_world()))
    return json.loads(p.raw), p.meta, chat.calls


def _moves(plan):
    return [s.get("object") or s.get("target") for s in plan["steps"]]


def test_a_dropped_list_item_is_recovered_item_by_item():
    plan, meta, calls = _propose(
        {
            "red in red, blue in blue": "put the red block in the red bin",
            "red in red": "put the red block in the red bin",
            "blue in blue": "put the blue block in the blue bin",
        },
        "red in red, blue in blue",
    )
    assert _moves(plan) == ["red_block", "red_bin", "blue_block", "blue_bin"]
    assert meta["items"] == ["red in red", "blue in blue"]
    assert len(calls) == 3


def test_item_answers_that_lose_a_colour_are_not_used():
    plan, meta, _ = _propose(
        {
            "red in red, blue in blue": "put the red block in the red bin",
            "red in red": "put the red block in the red bin",
            "blue in blue": "put the green block in the red bin",
        },
        "red in red, blue in blue",
    )
    # neither answer has every item: the first one is withheld, as it drops blue
    assert plan == {"steps": []} and meta["lost_colours"] == ["blue"]
    assert "items" not in meta


def test_a_refusal_whose_reason_does_not_fit_is_asked_again():
    task = "put the blue block on the red block"
    plan, meta, calls = _propose(
        {
            task: "refuse: that would be unsafe",
            (task, True): "stack the blue block on the red block",
        },
        task,
    )
    assert _moves(plan) == ["blue_block", "red_block"]
    assert meta["first_command"] == "refuse: that would be unsafe"
    assert calls[-1] == (task, True)


@pytest.mark.parametrize(
    ("task", "answer"),
    [
        ("throw the red block at me", "refuse: that would be unsafe"),  # the reason fits
        ("put the red block in the microwave", "refuse: bins cannot be moved"),  # unknown word
        ("tell me a joke", "refuse: not a task for this robot"),  # no colour
    ],
)
def test_refusals_that_fit_or_name_the_unknown_stand(task, answer):
    plan, meta, calls = _propose(
        {task: answer, (task, True): "put the red block in the red bin"}, task
    )
    assert plan["steps"] == [] and plan["refuse"]
    assert len(calls) == 1


def test_a_plan_that_drops_a_named_colour_is_withheld():
    task = "put the canary and the navy cubes into the emerald bucket"
    plan, meta, _ = _propose({task: "put the yellow block in the green bin"}, task)
    assert plan == {"steps": []}  # the bridge rejects it and asks again
    assert meta["lost_colours"] == ["blue"]


@pytest.mark.parametrize(
    ("task", "answer", "world"),
    [
        (  # blue names the block the red one sits on
            "take the block that's sitting on the blue one and put it in the green bin",
            "put the red block in the green bin",
            make_world(on={"red_block": "blue_block"}),
        ),
        (  # the red bin is where the green block is
            "put the blue block in the same bin as the green block",
            "put the blue block in the red bin",
            make_world(in_bin={"green_block": "red_bin"}),
        ),
        (  # told to leave yellow alone
            "put the red block in the blue bin and leave the yellow one",
            "put the red block in the blue bin",
            make_world(),
        ),
    ],
)
def test_colours_accounted_for_by_the_scene_or_left_alone_are_not_lost(task, answer, world):
    plan, meta, _ = _propose({task: answer}, task, world)
    assert plan["steps"] and "lost_colours" not in meta


def test_an_item_must_name_what_moves_and_where():
    assert coverage.mentions("red in red") == 2
    assert coverage.mentions("push blue to the left") == 2
    assert coverage.mentions("take the red block") == 1
    assert coverage.items("take the red block, put in the blue bin") is None
