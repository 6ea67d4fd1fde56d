"""Issue 10 A: a reply that fails to parse never yields a plan from the values inside it.

Each case here was accepted before the fix (a shorter plan, a refusal without its refusal,
a plan without its extra-field check, the first of two plans) and moved the arm.
"""

from __future__ import annotations

import json

import pytest

from bridge import reasons as R
from bridge import validate
from bridge.extract import MAX_SCAN_ATTEMPTS, from_text
from tests.bridge.bridge_worlds import WORLDS

PICK = {"skill": "pick", "object": "red_block"}
PLACE = {"skill": "place", "target": "green_bin"}
PLAN = json.dumps({"steps": [PICK, PLACE]})


def _rejected(raw: str, code: str, world="fresh"):
    res = validate(raw, WORLDS[world])
    assert not res.accepted and res.plan == [], res.plan_json()
    assert code in res.codes, res.reasons
    return res


def test_truncated_plan_is_not_a_shorter_plan():
    raw = (
        '{"steps": [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_'
    )
    _rejected(raw, R.TRUNCATED_OUTPUT)


@pytest.mark.parametrize("cut", range(len('{"steps": [') + len(json.dumps(PICK)), len(PLAN) - 1))
def test_every_cut_of_a_plan_after_its_first_step_is_rejected(cut):
    """Any cut that leaves a complete first step used to run as ``[pick]``."""
    _rejected(PLAN[:cut], R.TRUNCATED_OUTPUT)
    _rejected("Here is the plan:\n```json\n" + PLAN[:cut], R.TRUNCATED_OUTPUT)


_REFUSAL = (
    '{"refuse": "there is no purple block", "steps": [{"skill": "pick", "object": "red_block"}'
)


@pytest.mark.parametrize(
    "raw",
    [
        _REFUSAL + "]",
        _REFUSAL + "],",
        _REFUSAL + "],}",
        'Sure: {"refuse": "no purple block", "steps": [{"skill": "pick", "object": "red_block"},]}',
    ],
)
def test_broken_refusal_never_loses_its_refuse(raw):
    res = validate(raw, WORLDS["fresh"])
    assert not res.accepted and res.plan == []
    assert set(res.codes) & {R.TRUNCATED_OUTPUT, R.PARSE_ERROR}, res.reasons


def test_broken_reply_keeps_the_extra_field_check():
    raw = '{"steps": [{"skill": "pick", "object": "red_block"}], "unsafe_override": true'
    _rejected(raw, R.TRUNCATED_OUTPUT)
    raw = '{"steps": [{"skill": "pick", "object": "red_block"}], "unsafe_override": tru}'
    _rejected(raw, R.PARSE_ERROR)


def test_broken_reply_keeps_the_duplicate_key_check():
    raw = '{"steps": [{"skill": "pick", "object": "red_block"}], "steps": [], "steps": '
    _rejected(raw, R.TRUNCATED_OUTPUT)


def test_plan_then_many_values_then_a_correction_is_not_plan_a():
    plan_b = json.dumps({"steps": [{"skill": "pick", "object": "blue_block"}]})
    raw = PLAN + "\n" + " ".join(["[0]"] * 70) + "\nCorrection, use this instead:\n" + plan_b
    res = _rejected(raw, R.TOO_MANY_VALUES)
    assert str(MAX_SCAN_ATTEMPTS) in res.reasons[0].message


def test_plan_then_a_few_values_then_a_correction_is_ambiguous():
    plan_b = json.dumps({"steps": [{"skill": "pick", "object": "blue_block"}]})
    raw = PLAN + "\n" + " ".join(["[0]"] * 10) + "\nCorrection, use this instead:\n" + plan_b
    _rejected(raw, R.AMBIGUOUS_OUTPUT)


def test_complete_plan_then_truncated_correction_is_rejected():
    raw = "```json\n" + PLAN + '\n```\nActually:\n```json\n{"steps": [{"skill": "home"}'
    _rejected(raw, R.TRUNCATED_OUTPUT)


def test_inner_plan_of_a_broken_wrapper_is_not_used():
    raw = "[final answer: " + PLAN + "]"
    _rejected(raw, R.PARSE_ERROR)


@pytest.mark.parametrize(
    "raw",
    [
        "Here is the plan:\n" + PLAN + "\nThis should work.",
        "```json\n" + PLAN + "\n```",
        "```json\n" + PLAN,  # the closing fence was cut, the JSON is whole
        "I use {curly} words and [notes] in prose. " + PLAN,
        PLAN + "\n" + PLAN,
        "Plan: " + PLAN + " (that is all)",
    ],
)
def test_complete_json_in_prose_or_fences_still_accepted(raw):
    res = validate(raw, WORLDS["fresh"])
    assert res.accepted, res.reasons
    assert res.plan_json() == [PICK, PLACE]


def test_truncation_is_cheap_on_hostile_input():
    ex = from_text('"' + "[" * 30_000 + '{"a": "' + "x" * 30_000)
    assert ex.reasons and not ex.found
