"""Goal predicates: parsed by the grammar, evaluated on hand-built world states."""

from __future__ import annotations

import pytest

from sim.world import BinState, ObjectState, RegionState, WorldState
from skillbridge.evaluation.suite import GoalSyntaxError, goal_holds, parse_literal, unmet
from tests import worlds


def _obj(name, **kw):
    base = dict(name=name, color=name.split("_")[0], pos=(0.1, -0.1, 0.02), on_table=True)
    base.update(kw)
    return ObjectState(**base)


@pytest.fixture
def world() -> WorldState:
    """red in the green bin, blue on yellow, yellow on the table at the centre, green held."""
    return WorldState(
        objects=[
            _obj("red_block", on_table=False, in_bin="green_bin", pos=(0.0, 0.25, 0.024)),
            _obj("blue_block", on_table=False, on="yellow_block", pos=(0.0, -0.08, 0.06)),
            _obj("yellow_block", pos=(0.01, -0.08, 0.02)),
            _obj("green_block", on_table=False, held=True, pos=(0.0, 0.0, 0.15)),
        ],
        bins=worlds.bins(),
        regions=[
            RegionState(name="table_center", pos=(0.0, -0.08)),
            RegionState(name="table_front", pos=(0.17, -0.08)),
        ],
        held_object="green_block",
    )


def holds(text: str, w: WorldState) -> bool:
    return parse_literal(text).holds(w)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("in(red_block, green_bin)", True),
        ("in(red_block, red_bin)", False),
        ("not in(red_block, red_bin)", True),
        ("on(blue_block, yellow_block)", True),
        ("on(yellow_block, blue_block)", False),
        ("held(green_block)", True),
        ("held(red_block)", False),
        ("held(*)", True),
        ("not held(*)", False),
        ("on_table(yellow_block)", True),
        ("on_table(blue_block)", False),
        ("in_region(yellow_block, table_center)", True),
        ("in_region(yellow_block, table_front)", False),
        ("in_region(blue_block, table_center)", False),  # stacked, not on the table
        ("in_region(red_block, table_left)", False),  # region absent from this world
        ("reachable(red_block)", True),
        ("in(red_block, *)", True),
        ("in(blue_block, *)", False),
        ("not in(blue_block, *)", True),
        ("in(*, green_bin)", True),
        ("in(*, blue_bin)", False),
        ("on(*, yellow_block)", True),
        ("on(*, *)", True),
        ("in(all, green_bin)", False),
        ("on_table(all)", False),
        ("reachable(all)", True),
        ("in(yellow_block, red_bin)", False),
        ("  not   in( red_block ,green_bin ) ", False),
    ],
)
def test_literals(world, text, expected):
    assert holds(text, world) is expected


def test_all_quantifier_over_present_objects():
    w = WorldState(
        objects=[
            _obj("red_block", on_table=False, in_bin="blue_bin"),
            _obj("green_block", on_table=False, in_bin="blue_bin"),
        ],
        bins=[BinState(name="blue_bin", color="blue", pos=(0.16, 0.25, 0.0))],
    )
    assert holds("in(all, blue_bin)", w)
    assert holds("not held(*)", w)
    w2 = w.model_copy(update={"objects": [*w.objects, _obj("blue_block")]})
    assert not holds("in(all, blue_bin)", w2)
    # an absent cube is in no bin: a negative literal about it holds, a positive does not
    assert holds("not in(yellow_block, blue_bin)", w) and not holds("held(yellow_block)", w)


def test_goal_conjunction_and_unmet(world):
    lits = [
        parse_literal(t)
        for t in ("in(red_block, green_bin)", "not held(*)", "on(blue_block, yellow_block)")
    ]
    assert not goal_holds(lits, world)
    assert unmet(lits, world) == ["not held(*)"]
    free = world.model_copy(update={"held_object": None})
    assert goal_holds(lits, free) and unmet(lits, free) == []


def test_literal_round_trip():
    assert str(parse_literal("not  in(red_block,green_bin)")) == "not in(red_block, green_bin)"


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("inside(red_block, green_bin)", "unknown predicate 'inside'"),
        ("in(red_block)", "takes 2 argument(s)"),
        ("held(red_block, blue_block)", "takes 1 argument(s)"),
        ("in(red_block, purple_bin)", "'purple_bin'"),
        ("in(green_bin, red_bin)", "is not an object"),
        ("in_region(red_block, green_bin)", "is not a region"),
        ("in(red_block", "unbalanced parentheses"),
        ("red_block in green_bin", "is not of the form"),
        ("held(__import__('os'))", "bad argument"),
        ("", "is not of the form"),
    ],
)
def test_syntax_errors(text, fragment):
    with pytest.raises(GoalSyntaxError, match=None) as e:
        parse_literal(text)
    assert fragment in str(e.value)


def test_non_string_goal():
    with pytest.raises(GoalSyntaxError, match="must be a string"):
        parse_literal(["in", "red_block"])  # type: ignore[arg-type]
