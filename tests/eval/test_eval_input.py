"""Bad input to ``eval`` and ``eval-skill`` is one line and exit 2 before any work; their
output is what it says (issue 10 D, E): seeds, deep or impossible suites, markup in user
text, JSON-only stdout, options that do not apply, recorded figures not clobbered unasked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

ONE = """\
suite: {name}
tasks:
  - id: posed-pick-place
    instruction: put the red block in the green bin
    category: pick_place
    scene: {{cubes: {cubes}}}
    goal:
      - in(red_block, green_bin)
"""
GOOD_CUBES = "{red_block: [0.05, -0.12], blue_block: [-0.12, 0.05]}"


def _suite(tmp_path: Path, cubes: str = GOOD_CUBES, name: str = "one") -> Path:
    p = tmp_path / "one.yaml"
    p.write_text(ONE.format(cubes=cubes, name=json.dumps(name)))
    return p


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ----------------------------------------------------------------------------- seeds
@pytest.mark.parametrize(
    "args", [["--seed-base", "-1"], ["--seed-base", str(2**32 - 2), "--seeds", "3"]]
)
def test_eval_rejects_seeds_out_of_range(monkeypatch, capsys, tmp_path, args):
    out = tmp_path / "rep"
    code, stdout, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(_suite(tmp_path)),
        "--out",
        str(out),
        "--policy-source",
        "scripted",
        "--json",
        *args,
    )
    assert code == 2
    assert "--seed-base" in _one_line(err) and json.loads(stdout)["exit_code"] == 2
    assert not out.exists()  # nothing ran


def test_eval_skill_rejects_a_negative_seed(monkeypatch, capsys):
    code, stdout, err = run_cli(
        monkeypatch, capsys, "eval-skill", "pick", "-n", "1", "--seed", "-1", "--json"
    )
    assert code == 2 and "--seed" in _one_line(err) and json.loads(stdout)["exit_code"] == 2


@pytest.mark.parametrize(
    "args, words",
    [
        (["pick", "--scene", "kitchen"], "--scene must be one of"),
        (["press_button", "--scene", "tabletop"], "needs the articulated scene"),
        (["pick", "--scene", "articulated", "--split", "nominal"], "single skill's nominal"),
        (["pick", "--kind", "pyramid"], "--kind must be one of"),
        (["pick", "--kind", "sphere", "--scene", "tabletop"], "tabletop scene holds no sphere"),
        (["home", "--kind", "cube"], "home does not act on an object"),
        (["pick-place", "--kind", "cube"], "not the chain"),
    ],
)
def test_eval_skill_rejects_a_scene_it_cannot_use(monkeypatch, capsys, args, words):
    code, stdout, err = run_cli(monkeypatch, capsys, "eval-skill", *args, "-n", "1", "--json")
    assert code == 2 and words in _one_line(err) and json.loads(stdout)["exit_code"] == 2


def test_eval_skill_runs_a_tabletop_skill_in_the_articulated_scene(monkeypatch, capsys):
    code, stdout, err = run_cli(
        monkeypatch, capsys, "eval-skill", "home", "--scene", "articulated", "-n", "2", "--json"
    )
    assert code == 0, err
    assert json.loads(stdout)["episodes"] == 2


def test_eval_skill_by_kind_reports_each_object(monkeypatch, capsys):
    code, stdout, err = run_cli(
        monkeypatch, capsys, "eval-skill", "push", "--kind", "sphere", "-n", "2", "--json"
    )
    assert code == 0, err
    got = json.loads(stdout)
    assert got["scene"] == "mixed" and list(got["by_object"]) == ["yellow_ball"]
    assert got["by_object"]["yellow_ball"]["episodes"] == 2


def test_skill_env_takes_another_scene():
    from skills.skill_env import SkillEnv

    env = SkillEnv("pick", scene_name="articulated")
    env.reset(seed=0)
    assert env.sim.scene == "articulated" and env.sim.world_state().drawer is not None
    own = SkillEnv("pick")
    own.reset(seed=0)
    assert own.sim.world_state().drawer is None


# ----------------------------------------------------------------------------- suites
@pytest.mark.parametrize(
    "body",
    [
        "suite: deep\ntasks: " + "[" * 5000 + "]" * 5000 + "\n",
        "suite: deep\ntasks: " + "[" * 800 + "]" * 800 + "\n",
        "suite: deep\ntasks: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
    ],
    ids=["list-5000", "list-800", "map-3000"],
)
def test_deeply_nested_suite_is_one_line(monkeypatch, capsys, tmp_path, body):
    p = tmp_path / "deep.yaml"
    p.write_text(body)
    code, _, err = run_cli(
        monkeypatch, capsys, "eval", "--suite", str(p), "--out", str(tmp_path / "rep")
    )
    assert code == 2
    assert "nested too deeply" in _one_line(err) and str(p) in err


@pytest.mark.parametrize(
    "cubes, why",
    [
        ("{red_block: [0.05, .nan]}", "non-finite"),
        ("{red_block: [0.05, -0.12, .inf, 0.0]}", "non-finite"),
        ("{red_block: [0.9, 0.0]}", "out of the arm's reach"),
        ("{red_block: [-0.41, 0.0]}", "out of the arm's reach"),
        ("{red_block: [0.05, -0.12], blue_block: [0.06, -0.12]}", "would overlap"),
        ("{red_block: [0.05, -0.12, 1.5, 0.0]}", "above the workspace"),
    ],
    ids=["nan", "inf", "far", "under-base", "overlap", "too-high"],
)
def test_impossible_suite_poses_are_refused_at_load(monkeypatch, capsys, tmp_path, cubes, why):
    from skillbridge.evaluation.suite import SuiteError, load_suite

    p = _suite(tmp_path, cubes)
    with pytest.raises(SuiteError) as e:
        load_suite(p)
    assert "posed-pick-place" in str(e.value) and why in str(e.value)
    out = tmp_path / "rep"
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(p),
        "--out",
        str(out),
        "--policy-source",
        "scripted",
    )
    assert code == 2
    line = _one_line(err)
    assert "id 'posed-pick-place'" in line and why in line
    assert not out.exists()  # refused at load, not turned into "error" episodes


def test_a_stack_and_the_shipped_suite_still_load():
    from skillbridge.evaluation.suite import load_suite

    assert len(load_suite().tasks) > 50
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        load_suite(
            _suite(Path(d), "{red_block: [0.05, -0.12], blue_block: [0.05, -0.12, 0.06, 0.0]}")
        )


# ----------------------------------------------------------------------------- markup
def test_markup_in_user_text_prints_as_itself(monkeypatch, capsys, tmp_path):
    out = tmp_path / "odd[/x]" / "rep[b]"
    suite = _suite(tmp_path, name="[/x] suite [red]")
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "eval",
        "--suite",
        str(suite),
        "--seeds",
        "1",
        "--workers",
        "1",
        "--out",
        str(out),
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    assert "Traceback" not in err
    assert "[/x] suite [red]" in err  # the suite name, as written
    assert f"report: {out}/report.md" in err  # the path, as written
    code, _, err = run_cli(monkeypatch, capsys, "eval", "--suite", str(suite), "--only", "[/x]")
    assert code == 2 and "'[/x]'" in _one_line(err)


# ----------------------------------------------------------------------------- eval-skill
def test_eval_skill_json_writes_json_only_to_stdout(monkeypatch, capsys):
    code, stdout, err = run_cli(monkeypatch, capsys, "eval-skill", "pick", "-n", "2", "--json")
    assert code == 0, err
    assert json.loads(stdout)["episodes"] == 2  # the whole of stdout is one JSON object
    assert "eval pick" in err  # the progress went to stderr


@pytest.mark.parametrize(
    "args, why",
    [
        (["pick-place", "-f", "."], "does not apply to pick-place"),
        (["pick", "--expert", "-f", "."], "exclude each other"),
        (["pick-place", "--record"], "pick-place has none"),
        (["pick", "--expert", "--record"], "the expert has none"),
        (["pick", "--replace"], "only goes with --record"),
    ],
    ids=["chain-f", "expert-f", "chain-record", "expert-record", "replace-alone"],
)
def test_eval_skill_options_that_do_not_apply_are_refused(monkeypatch, capsys, args, why):
    code, stdout, err = run_cli(monkeypatch, capsys, "eval-skill", *args, "-n", "1")
    assert code == 2 and why in _one_line(err) and stdout == ""


def test_record_does_not_clobber_recorded_figures_unasked(monkeypatch, capsys, tmp_path):
    from skills.policy import load_policy, pretrained_dir

    d = tmp_path / "pick"
    shutil.copytree(pretrained_dir("pick"), d)
    before = (d / "manifest.json").read_bytes()
    old = json.loads(before)["evaluation"]
    assert old["episodes"] >= 100  # the shipped figure

    code, stdout, err = run_cli(
        monkeypatch, capsys, "eval-skill", "pick", "-f", str(d), "-n", "2", "--record"
    )
    assert code == 2 and "--replace" in _one_line(err) and f"n={old['episodes']}" in err
    assert stdout == ""  # refused before any episode ran
    assert (d / "manifest.json").read_bytes() == before

    code, stdout, err = run_cli(
        monkeypatch,
        capsys,
        "eval-skill",
        "pick",
        "-f",
        str(d),
        "-n",
        "2",
        "--record",
        "--replace",
        "--json",
    )
    assert code == 0, err
    assert json.loads(stdout)["episodes"] == 2
    line = next(ln for ln in err.splitlines() if "replaced" in ln)
    assert f"n={old['episodes']}" in line and "n=2" in line
    new = json.loads((d / "manifest.json").read_text())["evaluation"]
    assert new["episodes"] == 2 and new["command"].endswith(f"-f {d}")
    load_policy(d, "pick")  # still a loadable policy
    assert not list(d.glob(".*.tmp"))


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--scene", "articulated"], "--scene goes with --chains"),
        (["--video"], "--video goes with --chains"),
        (["--scene", "tabletop", "--video"], "--scene and --video go with --chains"),
    ],
)
def test_chain_options_without_chains_are_one_line(monkeypatch, capsys, tmp_path, extra, words):
    """They used to be ignored without a word: a suite ran on its own scenes, unfilmed."""
    out = tmp_path / "rep"
    code, _, err = run_cli(
        monkeypatch, capsys, "eval", "--suite", str(_suite(tmp_path)), "--out", str(out), *extra
    )
    assert code == 2 and words in _one_line(err)
    assert not out.exists()  # refused before any work
