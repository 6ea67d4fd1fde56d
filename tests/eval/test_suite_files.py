"""Suite files: the shipped suite validates; malformed files are clear errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from skillbridge.evaluation.suite import CATEGORIES, DEFAULT_SUITE, SuiteError, load_suite


def test_shipped_suite_validates():
    s = load_suite()
    assert len(s) >= 60
    cats = s.by_category()
    assert set(cats) == set(CATEGORIES)
    for cat, tasks in cats.items():
        assert len(tasks) >= 7, cat
    assert len({t.id for t in s.tasks}) == len(s)
    assert all(t.refuse for t in cats["refuse"])
    assert all(t.goal for t in s.tasks if not t.refuse)
    assert len(s.files) == len(list(DEFAULT_SUITE.glob("*.yaml")))


def test_each_shipped_file_validates_alone():
    for f in sorted(DEFAULT_SUITE.glob("*.yaml")):
        s = load_suite(f)
        assert len(s) >= 1 and s.files == [f]


def _write(tmp_path: Path, body: str, name: str = "bad.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


GOOD = """\
suite: t
tasks:
  - id: ok
    instruction: put the red block in the green bin
    category: pick_place
    goal:
      - in(red_block, green_bin)
"""


@pytest.mark.parametrize(
    "body,fragments",
    [
        (
            GOOD.replace("    instruction: put the red block in the green bin\n", ""),
            ["tasks[0] (id 'ok').instruction", "Field required"],
        ),
        (
            GOOD.replace("in(red_block, green_bin)", "in(red_block, green_bin)\n      - onn(a, b)"),
            ["tasks[0] (id 'ok').goal[1]", "unknown predicate 'onn'"],
        ),
        (
            GOOD.replace("in(red_block, green_bin)", "in(red_block, purple_bin)"),
            ["tasks[0] (id 'ok').goal[0]", "purple_bin"],
        ),
        (
            GOOD.replace("category: pick_place", "category: juggling"),
            ["tasks[0] (id 'ok').category", "pick_place"],
        ),
        (
            GOOD.replace("    goal:\n      - in(red_block, green_bin)\n", ""),
            ["tasks[0] (id 'ok')", "needs a goal"],
        ),
        (GOOD.replace("pick_place", "refuse"), ["tasks[0] (id 'ok')", "refuse: true"]),
        (
            GOOD.replace(
                "    goal:\n      - in(red_block, green_bin)\n",
                "    goal: [in(red_block, green_bin)]\n",
            ),
            ["tasks[0] (id 'ok').goal[0]", "unbalanced parentheses", "YAML flow list"],
        ),
        (GOOD + "    colour: red\n", ["tasks[0] (id 'ok').colour", "Extra inputs"]),
        (
            GOOD.replace(
                "  - id: ok\n", "  - id: ok\n    scene: {cubes: [red_block, pink_block]}\n"
            ),
            ["tasks[0] (id 'ok').scene.cubes", "pink_block"],
        ),
        (
            GOOD.replace("  - id: ok\n", "  - id: ok\n    scene: {cubes: [blue_block]}\n"),
            ["tasks[0] (id 'ok')", "red_block, which is not in the scene"],
        ),
        (
            GOOD.replace("  - id: ok\n", "  - id: ok\n    scene: {cubes: {red_block: [0.1]}}\n"),
            ["tasks[0] (id 'ok').scene.cubes", "[x, y]"],
        ),
        (GOOD.replace("id: ok", "id: 'has space'"), ["tasks[0] (id 'has space').id"]),
        ("suite: t\ntasks: []\n", ["tasks", "at least 1"]),
        ("tasks:\n  - id: x\n", ["suite", "Field required"]),
        ("- just\n- a list\n", ["expected a mapping"]),
        ("suite: t\ntasks:\n  - id: [unclosed\n", ["not valid YAML", "line"]),
    ],
)
def test_malformed_file_names_file_and_field(tmp_path, body, fragments):
    p = _write(tmp_path, body)
    with pytest.raises(SuiteError) as e:
        load_suite(p)
    msg = str(e.value)
    assert str(p) in msg
    for frag in fragments:
        assert frag in msg, (frag, msg)


def test_duplicate_ids_across_files(tmp_path):
    _write(tmp_path, GOOD, "a.yaml")
    _write(tmp_path, GOOD, "b.yaml")
    with pytest.raises(SuiteError, match=r"b\.yaml: tasks\[0\]\.id: duplicate task id 'ok'"):
        load_suite(tmp_path)


def test_missing_and_empty(tmp_path):
    with pytest.raises(SuiteError, match="no such suite"):
        load_suite(tmp_path / "nope.yaml")
    with pytest.raises(SuiteError, match="no \\*.yaml suite files"):
        load_suite(tmp_path)


def test_yaml_is_loaded_safely(tmp_path):
    p = _write(tmp_path, GOOD.replace("suite: t", "suite: !!python/object/apply:os.getcwd []"))
    with pytest.raises(SuiteError, match="not valid YAML"):
        load_suite(p)


def test_scene_options_and_poses(tmp_path):
    p = _write(
        tmp_path,
        GOOD.replace(
            "  - id: ok\n",
            "  - id: ok\n    scene: {cubes: {red_block: [0.1, 0.0], blue_block: null}}\n",
        ),
    )
    t = load_suite(p).tasks[0]
    assert t.scene.names == ["red_block", "blue_block"]
    assert t.scene.poses == {"red_block": [0.1, 0.0], "blue_block": None}
    assert t.scene.reset_options() == {"cubes": {"red_block": [0.1, 0.0], "blue_block": None}}
    assert load_suite(_write(tmp_path, GOOD, "g.yaml")).tasks[0].scene.reset_options() is None
