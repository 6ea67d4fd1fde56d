"""scripts/make_benchmarks.py and the page it writes, rendered from the sections' JSON by
:mod:`skillbridge.evaluation.benchmarks_page`."""

from __future__ import annotations

import json

from skillbridge.evaluation import benchmarks_page
from tests.scripts import load_script


def _module():
    return load_script("make_benchmarks")


def _bench() -> dict:
    rate = {"successes": 9, "episodes": 10, "rate": 0.9, "ci95": [0.596, 0.982]}
    suite = {
        "suite": {"tasks": 5},
        "config": {"seeds": 2, "llm": "rules", "workers": 2, "policy_source": "pretrained"},
        "overall": {"planning": rate, "execution": rate, "refusal": rate, "false_refusals": rate},
        "targets": {
            "planning": {"target": 0.95, "met": False},
            "execution": {"target": 0.85, "met": True},
            "refusal": {"target": 1.0, "met": False},
        },
        "by_category": {
            "pick_place": {"planning": rate, "execution": rate, "refusal": {"rate": None}}
        },
        "failures": {"by_cause": {"false_refusal": 1}},
        "wall_s": 12.0,
        "tokens": {"in": 0, "out": 0},
    }
    return {
        "machine": {"date": "d", "cpus": 2, "python": "3.11", "versions": {"mujoco": "9"}},
        "quick": True,
        "policy_source": "pretrained",
        "command": "python scripts/make_benchmarks.py --quick",
        "sections": {
            "sim": {
                "command": "python scripts/bench_sim.py --json",
                "wall_s": 1.0,
                "error": "",
                "data": {"env_steps_per_s": 1000.0, "sim_seconds_per_wall_second": 40.0},
            },
            "bridge": {
                "command": "python scripts/bench_bridge.py --json",
                "wall_s": 1.0,
                "error": "exit 1: boom",
                "data": None,
            },
            "skills": {
                "pick": {
                    "command": "skillbridge eval-skill pick -n 20 --json",
                    "error": "",
                    "data": {
                        "success_rate": 0.95,
                        "episodes": 20,
                        "ci95": [0.76, 0.99],
                        "mean_steps": 40.0,
                    },
                },
                "push": {
                    "command": "skillbridge eval-skill push -n 20 --json",
                    "error": "exit 2: no policy",
                    "data": None,
                },
            },
            "suite": {
                "command": "skillbridge eval --seeds 2 --json",
                "wall_s": 12.0,
                "error": "",
                "data": suite,
            },
        },
    }


def test_render_page():
    page = benchmarks_page.render(_bench())
    assert page.startswith("# Benchmarks")
    assert "`python scripts/make_benchmarks.py --quick`" in page and "Reduced sizes" in page
    assert "| simulator | 1,000 env steps/s, 40× real time |" in page
    assert "**Not measured**: `python scripts/bench_bridge.py --json` failed: exit 1: boom" in page
    assert "| skill `pick` | success 0.950 [0.760, 0.990] (n=20) |" in page
    assert "| push | not measured: exit 2: no policy |" in page
    assert "| planning success | 0.900 [0.596, 0.982] (n=10) | ≥ 0.95 (not met) |" in page
    assert "| mujoco | 9 |" in page


def test_from_json(tmp_path):
    src = tmp_path / "benchmarks.json"
    src.write_text(json.dumps(_bench()))
    out = tmp_path / "B.md"
    code = _module().main(["--from-json", str(src), "--out", str(out)])
    assert out.read_text().startswith("# Benchmarks")
    assert code == 1  # the bridge section failed, and the exit code says so


def _split_cond(name: str, feasible: bool, pol: int, exp: int, aborted: int = 0) -> dict:
    def r(k: int, ab: int) -> dict:
        return {
            "successes": k,
            "episodes": 10,
            "ci95": [0.1, 0.9],
            "aborted": ab,
            "mean_abort_steps": 4.0 if ab else None,
        }

    return {"condition": name, "feasible": feasible, "policy": r(pol, aborted), "expert": r(exp, 0)}


def test_render_split_section_with_a_before_column():
    b = _bench()
    shipped = {
        "conditions": [
            _split_cond("nominal", True, 10, 10),
            _split_cond("knocked_out", False, 0, 0, 10),
        ]
    }
    before = {
        "conditions": [_split_cond("nominal", True, 9, 10), _split_cond("knocked_out", False, 0, 0)]
    }
    b["sections"]["split"] = {
        "place": {
            "shipped": {
                "command": "skillbridge eval-skill place --split all",
                "wall_s": 1.0,
                "error": "",
                "data": shipped,
            },
            "before": {
                "command": "skillbridge eval-skill place --split all -f old",
                "wall_s": 1.0,
                "error": "",
                "data": before,
            },
        },
        "push": {
            "shipped": {"command": "c", "wall_s": 1.0, "error": "exit 2: no policy", "data": None}
        },
    }
    page = benchmarks_page.render(b)
    assert "## Skills off their training distribution" in page
    assert "| condition | shipped | before | expert |" in page
    assert "| nominal | 10/10 [0.10, 0.90] | 9/10 [0.10, 0.90] | 10/10 [0.10, 0.90] |" in page
    assert "| knocked_out (infeasible) | 0/10 [0.10, 0.90], 10 stopped early @ 4.0 |" in page
    assert "- shipped: `c` (1.0 s): failed: exit 2: no policy" in page


def test_split_extra_must_name_a_skill_label_and_folder(capsys):
    import pytest

    for bad in ("place:before", "home:x:dir", "place::dir"):
        with pytest.raises(SystemExit) as e:
            _module().main(["--split-extra", bad, "--from-json", "none.json"])
        assert e.value.code == 2
        assert "--split-extra" in capsys.readouterr().err


def test_split_extra_reads_a_saved_result(tmp_path):
    m = _module()
    m.SPLIT_SKILLS = ()  # only the saved column: no live evaluation
    saved = {"command": "skillbridge eval-skill push --split all", "data": {"conditions": []}}
    f = tmp_path / "before.json"
    f.write_text(json.dumps(saved))
    out = m._bench_split(10, [f"push:before:{f}"])
    col = out["push"]["before"]
    assert col["data"] == saved["data"] and col["error"] == ""
    assert col["command"].startswith(saved["command"]) and str(f) in col["command"]
