"""A clear instruction that no skill can do here (a tower on a cube that lies in a bin, one
past the tallest tower) is refused with the reason when it comes from the model's command,
and left unsure for free text (whose parse may be wrong, so the model is asked first)."""

from planner import rules
from planner.embedded.proposer import command_to_plan
from tests import worlds

ON_BINNED = "stack the red block on the blue block"
TOWER_OF_THREE = (
    "stack the red block on the blue block, then stack the green block on the red block"
)


def _world():
    return worlds.world(
        [
            worlds.cube("red_block", (0.0, -0.1, worlds.CUBE_Z)),
            worlds.cube("green_block", (0.1, -0.1, worlds.CUBE_Z)),
            worlds.cube("blue_block", (-0.1, 0.25, 0.025), in_bin="green_bin", on_table=False),
        ]
    )


def test_rules_mark_a_tower_on_a_binned_cube_infeasible_not_just_unsure():
    r = rules.parse(ON_BINNED, _world())
    assert not r.confident and r.steps == []
    assert r.infeasible is not None and "no tower can stand on it" in r.infeasible


def test_the_model_command_for_it_becomes_a_refusal_with_the_reason():
    plan, notes = command_to_plan(ON_BINNED, _world())
    assert plan["steps"] == [] and "blue_block would be in green_bin" in plan["refuse"]
    assert notes == {"refused_by": "rules"}


def test_a_tower_of_three_on_the_table_is_planned():
    w = _world()
    free = w.model_copy(
        update={
            "objects": [
                o.model_copy(
                    update={"pos": (-0.1, -0.1, o.pos[2]), "in_bin": None, "on_table": True}
                )
                if o.name == "blue_block"
                else o
                for o in w.objects
            ]
        }
    )
    plan, _ = command_to_plan(TOWER_OF_THREE, free)
    assert [s["skill"] for s in plan["steps"]] == ["pick", "place", "pick", "place"]
    assert plan["goal"] == ["on(red_block, blue_block)", "on(green_block, red_block)"]


def test_a_command_the_grammar_does_not_cover_stays_an_empty_plan():
    plan, notes = command_to_plan("dance with the red block", _world())
    assert plan == {"steps": []} and notes.get("not_a_command") is True


def test_a_two_block_stack_is_still_planned():
    plan, _ = command_to_plan("stack the red block on the green block", _world())
    assert [s["skill"] for s in plan["steps"]] == ["pick", "place"]
    assert "refuse" not in plan


def test_a_block_on_itself_is_infeasible_and_the_models_command_is_refused():
    """The model copying "stack the red block on the red block" through gave an empty plan,
    rejected three times and ended in a safe stop, not the refusal with its reason."""
    r = rules.parse("stack the red block on the red block", _world())
    assert r.infeasible is not None and "itself" in r.infeasible
    plan, notes = command_to_plan("stack the red block on the red block", _world())
    assert plan["steps"] == [] and "itself" in plan["refuse"] and notes["refused_by"] == "rules"
    # a quantifier over blocks that includes the target stays unsure: "the others" is meant
    assert rules.parse("put every block on the red block", _world()).infeasible is None
