"""A clear instruction that no skill can do here (a tower of three) is refused with the
reason when it comes from the model's command, and left unsure for free text (whose parse
may be wrong, so the model is asked first)."""

from planner import rules
from planner.embedded.proposer import command_to_plan
from tests import worlds

TOWER = "stack the red block on the blue block, then stack the green block on the red block"


def _world():
    return worlds.world(
        [
            worlds.cube("red_block", (0.0, -0.1, worlds.CUBE_Z)),
            worlds.cube("green_block", (0.1, -0.1, worlds.CUBE_Z)),
            worlds.cube("blue_block", (-0.1, -0.1, worlds.CUBE_Z)),
        ]
    )


def test_rules_mark_a_tower_of_three_infeasible_not_just_unsure():
    r = rules.parse(TOWER, _world())
    assert not r.confident and r.steps == []
    assert r.infeasible is not None and "nothing can be stacked on it" in r.infeasible


def test_the_model_command_for_it_becomes_a_refusal_with_the_reason():
    plan, notes = command_to_plan(TOWER, _world())
    assert plan["steps"] == [] and "red_block would not be on the table" in plan["refuse"]
    assert notes == {"refused_by": "rules"}


def test_a_command_the_grammar_does_not_cover_stays_an_empty_plan():
    plan, notes = command_to_plan("dance with the red block", _world())
    assert plan == {"steps": []} and notes.get("not_a_command") is True


def test_a_two_block_stack_is_still_planned():
    plan, _ = command_to_plan("stack the red block on the blue block", _world())
    assert [s["skill"] for s in plan["steps"]] == ["pick", "place"]
    assert "refuse" not in plan
