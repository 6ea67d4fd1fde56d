"""The hand-written free-language test set is well-formed (fast: no physics, no planner)."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.planner.freeform import CATEGORIES, FreeformError, load_freeform


@pytest.fixture(scope="module")
def entries():
    return load_freeform()


def test_size_ids_and_categories(entries):
    assert len(entries) >= 150
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == len(ids)
    counts = Counter(e["category"] for e in entries)
    assert set(counts) == set(CATEGORIES), counts
    assert counts["refuse"] >= 25


def test_every_entry_has_a_goal_or_is_refused(entries):
    for e in entries:
        assert e["refuse"] == (e["category"] == "refuse"), e["id"]
        if not e["refuse"]:
            assert e["literals"] and len(e["literals"]) == len(e["goal"]), e["id"]
            assert any(not lit.negated for lit in e["literals"]), e["id"]


def test_instructions_are_distinct(entries):
    texts = [" ".join(e["instruction"].lower().split()) for e in entries]
    assert len(set(texts)) == len(texts)


def test_malformed_entries_are_named(tmp_path):
    p = tmp_path / "f.yaml"
    p.write_text(
        "entries:\n  - id: x\n    instruction: put red in the blue bin\n"
        "    category: lists\n    goal:\n      - in(red_block, purple_bin)\n"
    )
    with pytest.raises(FreeformError, match=r"id 'x'.*purple_bin"):
        load_freeform(p)
    p.write_text("entries:\n  - id: x\n    instruction: hi\n    category: refuse\n")
    with pytest.raises(FreeformError, match="exactly one"):
        load_freeform(p)


def test_the_second_set_is_well_formed_and_apart_from_the_first(entries):
    from tests.planner.freeform import DEFAULT_PATH

    second = load_freeform(DEFAULT_PATH.with_name("freeform_b.yaml"))
    assert len(second) >= 50
    assert {e["category"] for e in second} == set(CATEGORIES)
    first = {" ".join(e["instruction"].lower().split()) for e in entries}
    assert not first & {" ".join(e["instruction"].lower().split()) for e in second}
    assert not {e["id"] for e in entries} & {e["id"] for e in second}
