"""``skillbridge eval`` end to end: a two-task suite, two worker processes, all report files.

The scripted experts stand in for the pretrained policies (the same executor interface), so
this runs whether or not trained weights are installed.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

TWO = """\
suite: two
tasks:
  - id: posed-pick-place
    instruction: put the red block in the green bin
    category: pick_place
    scene: {cubes: {red_block: [0.05, -0.12], blue_block: [-0.12, 0.05]}}
    goal:
      - in(red_block, green_bin)
      - on_table(blue_block)
      - not held(*)
  - id: no-ball
    instruction: put the ball in the red bin
    category: refuse
    refuse: true
    scene: {cubes: [red_block]}
"""


@pytest.fixture
def two_suite(tmp_path) -> Path:
    p = tmp_path / "two.yaml"
    p.write_text(TWO)
    return p


def test_two_task_suite_two_workers(monkeypatch, capsys, tmp_path, two_suite):
    out = tmp_path / "report"
    code, stdout, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(two_suite),
        "--seeds",
        "1",
        "--workers",
        "2",
        "--out",
        str(out),
        "--json",
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    summary = json.loads(stdout)
    for name in ("report.json", "report.md", "success_by_category.png", "failure_causes.png"):
        f = out / name
        assert f.is_file() and f.stat().st_size > 0, name
    assert (out / "success_by_category.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    rep = json.loads((out / "report.json").read_text())
    assert rep["format"] == "skillbridge.eval-report" and rep["episodes"] == 2
    assert rep["config"]["workers"] == 2 and rep["config"]["seeds"] == 1
    o = rep["overall"]
    assert o["planning"] == {"successes": 1, "episodes": 1, "rate": 1.0, "ci95": [0.2065, 1.0]}
    assert o["execution"]["successes"] == 1 and o["refusal"]["successes"] == 1
    assert o["false_refusals"]["successes"] == 0
    assert summary["overall"] == o and set(rep["by_category"]) == {"pick_place", "refuse"}
    by_task = {r["task"]: r for r in rep["results"]}
    pp, ref = by_task["posed-pick-place"], by_task["no-ball"]
    assert pp["plan"] == [
        {"skill": "pick", "object": "red_block"},
        {"skill": "place", "target": "green_bin"},
    ]
    assert pp["status"] == "success" and pp["cause"] is None and pp["unmet_final"] == []
    assert ref["status"] == "refused" and ref["refusal_ok"] and ref["subgoals"] == []
    assert rep["failures"]["by_skill"]["pick"]["runs"] == 1
    assert rep["failures"]["by_bridge_code"] == {"refused": 1}
    for t in rep["tasks"]:
        assert t["episodes"] == 1 and t["wall_s"] > 0 and "tokens_in" in t

    # the episodes are kept, one folder per task, and the posed scene is what was recorded
    ep = Path(pp["episode"])
    assert ep.parent == out / "episodes" / "posed-pick-place"
    meta = json.loads((ep / "meta.json").read_text())
    assert meta["scene"] == {
        "cubes": {"red_block": [0.05, -0.12], "blue_block": [-0.12, 0.05]},
        "env": "TabletopEnv",
    }
    objs = {o["name"]: o for o in meta["initial_world"]["objects"]}
    assert set(objs) == {"red_block", "blue_block"}
    assert objs["red_block"]["pos"][:2] == pytest.approx([0.05, -0.12], abs=0.01)
    assert objs["blue_block"]["pos"][:2] == pytest.approx([-0.12, 0.05], abs=0.01)
    assert meta["status"] == "complete" and Path(ref["episode"]).is_dir()

    md = (out / "report.md").read_text()
    assert "| planning success | 1.000 [0.20" in md and "(n=1) | ≥ 0.95 | yes |" in md
    assert "posed-pick-place" in md and "![success by category]" in md


def test_progress_and_summary_on_terminal(monkeypatch, capsys, tmp_path, two_suite):
    out = tmp_path / "r"
    code, stdout, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(two_suite),
        "--seeds",
        "1",
        "--workers",
        "1",
        "--out",
        str(out),
        "--only",
        "refuse",
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    assert "1 tasks × 1 seeds = 1 episodes" in err
    assert "refusal: 1.0 (target ≥ 1.0) met" in err and "report.md" in err
    rep = json.loads((out / "report.json").read_text())
    assert [t["id"] for t in rep["tasks"]] == ["no-ball"]


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--seeds", "0"], "--seeds must be between 1 and 1000"),
        (["--workers", "0"], "--workers must be between 1 and 64"),
        (["--only", "nothing-like-this"], "matches no task"),
        (["--llm", "nosuchprovider:model"], ""),
    ],
)
def test_bad_options(monkeypatch, capsys, tmp_path, two_suite, args, fragment):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(two_suite),
        "--out",
        str(tmp_path / "o"),
        "--policy-source",
        "scripted",
        *args,
    )
    assert code == 2
    assert err.startswith("error:") and fragment in err and "Traceback" not in err
    assert not (tmp_path / "o" / "report.json").exists()


def test_malformed_suite_is_one_line_naming_file_and_field(monkeypatch, capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent(TWO).replace("in(red_block, green_bin)", "in(red_block)"))
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(bad),
        "--out",
        str(tmp_path / "o"),
        "--policy-source",
        "scripted",
    )
    assert code == 2
    assert str(bad) in err and "tasks[0] (id 'posed-pick-place').goal[0]" in err
    assert "takes 2 argument(s)" in err and "Traceback" not in err


def test_out_must_be_fresh(monkeypatch, capsys, tmp_path, two_suite):
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(two_suite),
        "--out",
        str(f),
        "--policy-source",
        "scripted",
    )
    assert code == 2 and "is a file" in err
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "report.json").write_text("{}")
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(two_suite),
        "--out",
        str(tmp_path / "old"),
        "--policy-source",
        "scripted",
    )
    assert code == 2 and "already holds a report" in err


def test_poses_pass_through_the_run_config(tmp_path):
    """No runner subclass: the task's scene goes to RunConfig.cubes as it is."""
    from skillbridge.evaluation import jobs
    from skillbridge.evaluation.suite import Task

    assert not hasattr(jobs, "_scene_runner_class")
    t = Task.model_validate(
        {
            "id": "t",
            "instruction": "x",
            "category": "pick_place",
            "goal": ["held(red_block)"],
            "scene": {"cubes": {"red_block": [0.05, -0.12], "blue_block": None}},
        }
    )
    assert jobs._scene_cubes(t) == {"red_block": [0.05, -0.12], "blue_block": None}
    t = Task.model_validate(
        {
            "id": "t",
            "instruction": "x",
            "category": "pick_place",
            "goal": ["held(red_block)"],
            "scene": {"cubes": ["red_block"]},
        }
    )
    assert jobs._scene_cubes(t) == ["red_block"]


def test_an_unreachable_pose_never_becomes_an_episode():
    """Refused when the suite is read (issue 10 E), not run into an "error" episode."""
    from pydantic import ValidationError

    from skillbridge.evaluation.suite import Task

    task = {
        "id": "far",
        "instruction": "put the red block in the green bin",
        "category": "pick_place",
        "scene": {"cubes": {"red_block": [0.9, 0.0]}},
        "goal": ["in(red_block, green_bin)"],
    }
    with pytest.raises(ValidationError, match=r"red_block at \(0.9, 0\) is off the table"):
        Task.model_validate(task)
