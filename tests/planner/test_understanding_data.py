"""The understanding set is well-formed, its scenes build, and its judge's checks can fail.

Fast: the scenes are reset once each (no skill runs, no planner); the worlds come from
``scripts/bench_planner.py``'s own ``worlds_for``, so the bench judges these same worlds.
"""

from __future__ import annotations

from collections import Counter

import pytest

from bridge.goals import goal_holds, parse_literal
from tests.planner.freeform import DEFAULT_PATH as FREEFORM_PATH
from tests.planner.freeform import FreeformError, load_freeform
from tests.planner.understanding_set import (
    CATEGORIES,
    DEFAULT_PATH,
    KINDS,
    UnderstandingError,
    answer_matches,
    count_holds,
    count_of,
    load_understanding,
    unnamed_candidates,
)
from tests.scripts import load_script


@pytest.fixture(scope="module")
def entries():
    return load_understanding()


@pytest.fixture(scope="module")
def bench():
    return load_script("bench_planner")


@pytest.fixture(scope="module")
def worlds(entries, bench):
    return bench.worlds_for(entries, 0)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def test_size_kinds_and_categories(entries):
    assert len(entries) >= 170
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == len(ids)
    cats = Counter(e["category"] for e in entries)
    # ("verbs", unusual verbs, came with set C; "kinds", the mixed scene's, with set E)
    assert set(cats) == set(CATEGORIES) - {"verbs", "kinds"}, cats
    for c, n in cats.items():
        assert n >= (5 if c == "statements" else 12), (c, n)
    assert cats["languages"] >= 40
    langs = Counter(e["lang"] for e in entries if e["category"] == "languages")
    assert all(langs[x] >= 10 for x in ("zh", "es", "fr", "de")) and langs["ja"] >= 4, langs
    kinds = Counter(e["kind"] for e in entries)
    assert set(kinds) == set(KINDS), kinds
    # the languages are not only commands
    assert {e["kind"] for e in entries if e["category"] == "languages"} >= {"plan", "answer"}


def test_yes_no_questions_go_both_ways(entries):
    groups = [tuple(g) for e in entries if e["kind"] == "answer" for g in e["answer_has"]]
    assert sum("yes" in g for g in groups) >= 5
    assert sum("no" in g for g in groups) >= 5


def test_every_utterance_in_its_scene_is_distinct_and_new(entries):
    keys = [
        (_norm(e["instruction"]), e["scene"].model_dump_json(), e["held"], tuple(e["in_drawer"]))
        for e in entries
    ]
    assert len(set(keys)) == len(keys)
    others = set()
    for name in ("freeform.yaml", "freeform_b.yaml", "freeform_articulated.yaml"):
        others |= {_norm(e["instruction"]) for e in load_freeform(FREEFORM_PATH.with_name(name))}
    assert not {k[0] for k in keys} & others


def _scenes_build_as_written(entries, worlds) -> None:
    assert len(worlds) == len(entries)
    for e, w in zip(entries, worlds, strict=True):
        assert sorted(w.object_names) == sorted(e["scene"].names), e["id"]
        assert w.held_object == e["held"], e["id"]
        for name in e["in_drawer"]:
            assert w.in_(name, "drawer"), e["id"]
        for name, pose in (e["scene"].poses or {}).items():
            if pose is None or e["held"] == name:
                continue
            o = w.object(name)
            assert o is not None and abs(o.pos[0] - pose[0]) < 0.01, (e["id"], name)
            assert abs(o.pos[1] - pose[1]) < 0.01, (e["id"], name)
            if len(pose) == 4 and pose[2] < 0.03:  # the bin poses of the header
                assert o.in_bin, (e["id"], name)
            elif len(pose) == 4:  # on a cube
                assert o.on is not None, (e["id"], name)


def test_every_scene_builds_as_written(entries, worlds):
    _scenes_build_as_written(entries, worlds)


def test_positional_entries_fix_every_cube(entries):
    """Where the answer depends on where things are, no cube is placed at random."""
    for e in entries:
        if e["category"] == "spatial" or (e["kind"] == "clarify" and e["scene"].poses):
            poses = e["scene"].poses
            assert poses and all(p is not None for p in poses.values()), e["id"]


def _plans_have_something_to_do(entries, worlds) -> None:
    """Doing nothing fails every plan entry, except the ones whose meaning is to leave
    things be; those name the cubes that must stay put."""
    for e, w in zip(entries, worlds, strict=True):
        if e["kind"] != "plan":
            continue
        done = goal_holds(e["literals"], w) and all(count_holds(c, w) for c in e["count"])
        assert not done or e["unmoved"], e["id"]


def test_a_plan_has_something_left_to_do_or_says_what_stays(entries, worlds):
    _plans_have_something_to_do(entries, worlds)


def test_clarify_candidates_are_there_and_really_several(entries, worlds):
    for e, w in zip(entries, worlds, strict=True):
        if e["kind"] != "clarify":
            continue
        cubes = [c for c in e["candidates"] if c.endswith("_block")]
        assert all(c in w.object_names for c in cubes), e["id"]
        assert len(e["candidates"]) >= 2, e["id"]


def test_answer_words_match_whole_words():
    assert answer_matches([["yes"]], "Yes, the red block is in the green bin.")
    assert not answer_matches([["yes"]], "No, it is on the table.")
    assert answer_matches([["no"]], "No - it is on the table.")
    assert not answer_matches([["no"]], "I do not know.")  # neither "not" nor "know" is "no"
    assert answer_matches([["2", "two"]], "There are two cubes in the green bin.")
    assert not answer_matches([["2", "two"]], "There are 12 cubes.")
    assert answer_matches([["green"], ["yellow"]], "The green and the yellow block.")
    assert not answer_matches([["green"], ["yellow"]], "Only the green block.")
    assert answer_matches([["yes", "是的"]], "是的，红色方块在绿色箱子里。")
    assert not answer_matches([["yes"]], None) and answer_matches([], None)


def test_a_question_back_must_name_the_candidates():
    cands = ["red_block", "yellow_block"]
    assert unnamed_candidates(cands, "Which block: the red one or the yellow one?", None) == []
    assert unnamed_candidates(cands, "Which block do you mean?", None) == cands
    assert unnamed_candidates(cands, "Which one?", ["red_block", "yellow_block"]) == []
    assert unnamed_candidates(["red_bin", "table_left"], "The red bin or the left side?", []) == []
    assert unnamed_candidates(["table_center"], "Which side?", None) == ["table_center"]


def test_counts_count_cubes_in_the_world(entries, worlds):
    by_id = {e["id"]: (e, w) for e, w in zip(entries, worlds, strict=True)}
    _, w = by_id["u-q-how-many-in-green"]
    assert count_of(parse_literal("in(*, green_bin)"), w) == 2
    assert count_of(parse_literal("on_table(*)"), w) == 1
    assert count_of(parse_literal("not on_table(*)"), w) == 2
    e, w = by_id["u-co-one-out-of-green"]
    assert not all(count_holds(c, w) for c in e["count"])


def _write(tmp_path, body: str):
    p = tmp_path / "u.yaml"
    p.write_text("format: understanding\nentries:\n" + body, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("  - {id: x, instruction: hi, category: questions, kind: guess}\n", "unknown kind"),
        (
            "  - {id: x, instruction: hi, category: questions, kind: answer, goal: [home]}\n",
            "goal belongs to kind plan",
        ),
        (
            "  - {id: x, instruction: hi, category: ambiguity, kind: clarify}\n",
            "lists the candidates",
        ),
        (
            "  - {id: x, instruction: hi, category: ambiguity, kind: clarify, "
            "candidates: [red_block, purple_bin]}\n",
            "purple_bin",
        ),
        (
            "  - {id: x, instruction: hi, category: questions, kind: answer, "
            "answer_has: [[yes]]}\n",
            "quote yes",
        ),
        (
            "  - {id: x, instruction: hi, category: counting, kind: plan, "
            "count: {predicate: 'in(*, *)', n: 2}}\n",
            "exactly one",
        ),
        (
            "  - {id: x, instruction: hi, category: counting, kind: plan, "
            "count: {predicate: 'in(*, red_bin)', n: 5}}\n",
            "more than the scene",
        ),
        (
            "  - {id: x, instruction: hi, category: spatial, kind: plan, goal: ['not held(*)']}\n",
            "positive literal",
        ),
        (
            "  - {id: x, instruction: hi, category: languages, kind: stop}\n",
            "names its lang",
        ),
        (
            "  - {id: x, instruction: hi, category: spatial, kind: plan, "
            "goal: ['in(red_block, red_bin)'], unmoved: [blue_block], "
            "scene: {cubes: [red_block]}}\n",
            "unmoved must list cubes of the scene",
        ),
        (
            "  - {id: x, instruction: hi, category: stop, kind: stop, held: red_block, "
            "scene: {cubes: [blue_block]}}\n",
            "held must be",
        ),
    ],
)
def test_malformed_entries_are_named(tmp_path, body, match):
    with pytest.raises(UnderstandingError, match=match) as info:
        load_understanding(_write(tmp_path, body))
    assert "id 'x'" in str(info.value) or "entries[0]" in str(info.value)


def test_the_loaders_tell_the_two_formats_apart(tmp_path):
    with pytest.raises(FreeformError, match="understanding set"):
        load_freeform(DEFAULT_PATH)
    with pytest.raises(UnderstandingError, match="not an understanding set"):
        load_understanding(FREEFORM_PATH)


def test_the_bench_judges_by_kind(entries, worlds, bench):
    """The judge of ``scripts/bench_planner.py``, on outcome dicts of the planner's shape."""
    by_id = {e["id"]: (e, w) for e, w in zip(entries, worlds, strict=True)}
    judge = bench.judge_understanding
    e, w = by_id["u-q-red-in-green-yes"]
    assert judge(e, {"kind": "answer", "answer": "Yes, it is.", "steps": []}, w)[0]
    assert not judge(e, {"kind": "answer", "answer": "No.", "steps": []}, w)[0]
    moved = [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]
    assert not judge(e, {"kind": "answer", "answer": "Yes.", "steps": moved}, w)[0]
    # today's outcome without a kind: steps are a plan, so a question that moves is wrong
    assert not judge(e, {"decision": "accepted", "steps": moved, "refuse": None}, w)[0]

    e, w = by_id["u-am-left-tie"]
    assert judge(e, {"kind": "clarify", "question": "The red or the yellow one?"}, w)[0]
    assert not judge(e, {"kind": "clarify", "question": "Which one?"}, w)[0]

    e, w = by_id["u-sp-leftmost"]
    right = [{"skill": "pick", "object": "green_block"}, {"skill": "place", "target": "red_bin"}]
    wrong = [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "red_bin"}]
    assert judge(e, {"kind": "plan", "steps": right}, w)[0]
    assert not judge(e, {"kind": "plan", "steps": wrong}, w)[0]
    assert not judge(e, {"kind": "clarify", "steps": []}, w)[0]

    e, w = by_id["u-pr-stack-without-red"]
    detour = [
        {"skill": "push", "object": "red_block", "target": "table_left"},
        {"skill": "pick", "object": "blue_block"},
        {"skill": "place", "target": "green_block"},
    ]
    ok, why = judge(e, {"kind": "plan", "steps": detour}, w)
    assert not ok and "red_block" in why
    assert judge(e, {"kind": "plan", "steps": detour[1:]}, w)[0]

    e, w = by_id["u-co-two-in-green"]
    one = [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]
    two = one + [
        {"skill": "pick", "object": "blue_block"},
        {"skill": "place", "target": "green_bin"},
    ]
    assert not judge(e, {"kind": "plan", "steps": one}, w)[0]
    assert judge(e, {"kind": "plan", "steps": two}, w)[0]

    e, w = by_id["u-cd-if-red-absent"]  # "else do nothing": nothing to do is right
    assert judge(e, {"decision": "refused", "refuse": "nothing to do: ...", "steps": []}, w)[0]

    e, w = by_id["u-im-purple"]
    home = [{"skill": "home"}]
    assert judge(e, {"decision": "safe_stop", "steps": home}, w)[0]
    assert not judge(e, {"kind": "stop", "steps": []}, w)[0]
    e, w = by_id["u-st-stop"]
    assert judge(e, {"kind": "stop", "steps": []}, w)[0]
    assert not judge(e, {"decision": "refused", "refuse": "no button", "steps": []}, w)[0]


def test_the_second_set_is_well_formed_and_apart(entries, bench):
    second = load_understanding(DEFAULT_PATH.with_name("understanding_b.yaml"))
    assert len(second) >= 60
    assert {e["category"] for e in second} == set(CATEGORIES) - {"verbs", "kinds"}
    assert {e["kind"] for e in second} == set(KINDS)
    assert not {e["id"] for e in entries} & {e["id"] for e in second}
    assert not {_norm(e["instruction"]) for e in entries} & {
        _norm(e["instruction"]) for e in second
    }
    others = set()
    for name in ("freeform.yaml", "freeform_b.yaml", "freeform_articulated.yaml"):
        others |= {_norm(e["instruction"]) for e in load_freeform(FREEFORM_PATH.with_name(name))}
    assert not {_norm(e["instruction"]) for e in second} & others
    worlds = bench.worlds_for(second, 0)
    _scenes_build_as_written(second, worlds)
    _plans_have_something_to_do(second, worlds)


def test_the_third_set_is_well_formed_and_apart(entries, bench):
    third = load_understanding(DEFAULT_PATH.with_name("understanding_c.yaml"))
    second = load_understanding(DEFAULT_PATH.with_name("understanding_b.yaml"))
    assert len(third) >= 80
    assert {e["category"] for e in third} == set(CATEGORIES) - {"kinds"}
    assert {e["kind"] for e in third} == set(KINDS)
    earlier = entries + second
    assert not {e["id"] for e in earlier} & {e["id"] for e in third}
    assert not {_norm(e["instruction"]) for e in earlier} & {_norm(e["instruction"]) for e in third}
    worlds = bench.worlds_for(third, 0)
    _scenes_build_as_written(third, worlds)
    _plans_have_something_to_do(third, worlds)


@pytest.mark.parametrize(
    "name, size",
    [
        ("understanding_d.yaml", 75),
        ("understanding_e.yaml", 45),
        ("understanding_f.yaml", 40),
        ("understanding_g.yaml", 24),
        ("understanding_h.yaml", 48),
        ("understanding_i.yaml", 48),
        ("understanding_k.yaml", 40),
        ("understanding_l.yaml", 40),
        ("understanding_m.yaml", 40),
        ("understanding_n.yaml", 40),
        ("understanding_o.yaml", 40),
        ("understanding_p.yaml", 40),
        ("understanding_q.yaml", 40),
        ("understanding_r.yaml", 38),  # two entries dropped: repeats of sets A and Q
        ("understanding_s.yaml", 40),
        ("understanding_t.yaml", 39),  # one entry dropped: a repeat of set N
        ("understanding_u.yaml", 40),
        ("understanding_v.yaml", 40),
        ("understanding_w.yaml", 40),
        ("understanding_x.yaml", 38),  # two entries dropped: repeats of set T
        ("understanding_y.yaml", 40),
        ("understanding_z.yaml", 40),
        ("understanding_aa.yaml", 40),
        ("understanding_ab.yaml", 40),
        ("understanding_ac.yaml", 40),
    ],
)
def test_the_later_sets_are_well_formed_and_apart(entries, bench, name, size):
    """Sets D to AC (2026-12-03 and 04): every kind of outcome, no id or instruction of an earlier
    set, scenes that build as written and plans with something to do."""
    order = [
        "understanding_b.yaml",
        "understanding_c.yaml",
        "understanding_d.yaml",
        "understanding_e.yaml",
        "understanding_f.yaml",
        "understanding_g.yaml",
        "understanding_h.yaml",
        "understanding_i.yaml",
        "understanding_k.yaml",
        "understanding_l.yaml",
        "understanding_m.yaml",
        "understanding_n.yaml",
        "understanding_o.yaml",
        "understanding_p.yaml",
        "understanding_q.yaml",
        "understanding_r.yaml",
        "understanding_s.yaml",
        "understanding_t.yaml",
        "understanding_u.yaml",
        "understanding_v.yaml",
        "understanding_w.yaml",
        "understanding_x.yaml",
        "understanding_y.yaml",
        "understanding_z.yaml",
        "understanding_aa.yaml",
        "understanding_ab.yaml",
        "understanding_ac.yaml",
    ]
    earlier = list(entries)
    for other in order[: order.index(name) if name in order else len(order)]:
        earlier += load_understanding(DEFAULT_PATH.with_name(other))
    later = load_understanding(DEFAULT_PATH.with_name(name))
    assert len(later) >= size
    assert {e["kind"] for e in later} == set(KINDS)
    assert not {e["id"] for e in earlier} & {e["id"] for e in later}
    assert not {_norm(e["instruction"]) for e in earlier} & {_norm(e["instruction"]) for e in later}
    worlds = bench.worlds_for(later, 0)
    _scenes_build_as_written(later, worlds)
    _plans_have_something_to_do(later, worlds)
