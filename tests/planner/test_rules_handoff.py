"""What the rules planner must hand to a model instead of refusing with confidence: shades of
the scene's colours and things named for their colour are not missing objects."""

from __future__ import annotations

import pytest

from planner.rules import parse
from tests.planner.planner_worlds import make_world


@pytest.mark.parametrize(
    "task",
    [
        "put the navy block in the red bin",
        "put the golden cube in the blue bin",
        "put the banana-coloured one in the blue bin",
        "put the block the colour of cherries in the red bin",
        "put the red block in the same bin as the green block",
        "put the blue block in the green bin, and the yellow one in the same bin",
        "put the green block in the blue bin and the rest in the red bin",  # not "go to rest"
    ],
)
def test_handed_to_a_model(task):
    r = parse(task, make_world())
    assert not r.confident and r.refuse is None


@pytest.mark.parametrize(
    "task, word",
    [
        ("put the banana in the blue bin", "banana"),
        ("put the purple block in the red bin", "purple"),
    ],
)
def test_missing_things_are_still_refused(task, word):
    r = parse(task, make_world())
    assert r.confident and word in (r.refuse or "")


def test_returning_to_rest_is_still_home():
    r = parse("put the red block in the red bin, then return to the rest position", make_world())
    assert r.confident and r.steps[-1] == {"skill": "home"}
