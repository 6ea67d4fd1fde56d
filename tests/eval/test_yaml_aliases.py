"""YAML alias bombs (issue 23, item 16): ``skillbridge.yaml``, ``train -c`` and suite files
refuse anchors and aliases before anything expands them, in one line, exit 2, fast."""

import re
import time

import pytest

from sim import safeyaml
from tests.cli_helpers import run_cli

#: A "billion laughs" value: nine anchored lists, each naming the previous one nine times
#: (9^9, ~387 million strings through shared references). Where pydantic validates it and the
#: error names the value, it used to hang every verb for minutes at gigabytes.
_A = "abcdefghi"
BOMB = (
    '[&a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"], '
    + ", ".join(f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip(_A, _A[1:], strict=False))
    + "]"
)


def test_loader_refuses_anchor_and_alias_with_where():
    with pytest.raises(safeyaml.YamlError, match=r"anchors and aliases .*line 1, column 4"):
        safeyaml.load("a: &x 1\nb: 2\n")
    with pytest.raises(safeyaml.YamlError, match=r"line 2"):
        safeyaml.load("a: 1\nb: *x\n")  # an alias with no anchor is refused the same way
    with pytest.raises(safeyaml.YamlError, match="anchors"):
        safeyaml.load("base: &b {x: 1}\nmore:\n  <<: *b\n")  # merge keys need an alias
    assert safeyaml.load("a: 1\nb: [x, 'y&z', '*w']\n") == {"a": 1, "b": ["x", "y&z", "*w"]}
    assert safeyaml.load("") is None
    with pytest.raises(safeyaml.YamlTooDeep):
        safeyaml.load("[" * 5000)


def test_config_file_bomb_is_one_line_and_fast(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    monkeypatch.delenv("SKILLBRIDGE_CONFIG", raising=False)
    (tmp_path / "skillbridge.yaml").write_text(f"llm: {{spec: rules, timeout: {BOMB}}}\n")
    from planner.backends import load_config
    from planner.errors import PlannerError

    t0 = time.perf_counter()
    with pytest.raises(PlannerError, match="anchors and aliases"):
        load_config()
    assert time.perf_counter() - t0 < 0.5
    code, out, err = run_cli(monkeypatch, capsys, "plan", "put the red block in the green bin")
    assert code == 2
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "skillbridge.yaml" in lines[0] and "aliases" in lines[0], err


def test_train_config_bomb_is_one_line_and_fast(tmp_path, monkeypatch, capsys):
    from skills.train import CONFIG_DIR, TrainError, load_config

    shipped = (CONFIG_DIR / "pick.yaml").read_text()
    p = tmp_path / "bomb.yaml"
    p.write_text(re.sub(r"^timesteps:.*$", f"timesteps: {BOMB}", shipped, flags=re.M))
    t0 = time.perf_counter()
    with pytest.raises(TrainError, match="anchors and aliases"):
        load_config("pick", p)
    assert time.perf_counter() - t0 < 0.5
    code, out, err = run_cli(
        monkeypatch, capsys, "train", "pick", "-c", str(p), "--log-folder", str(tmp_path / "logs")
    )
    assert code == 2
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "aliases" in lines[0], err
    assert not (tmp_path / "logs").exists()  # refused before any run folder


def test_suite_file_bomb_is_refused_fast(tmp_path):
    from skillbridge.evaluation.suite import SuiteError, load_file

    p = tmp_path / "suite.yaml"
    p.write_text(f"suite: x\ntasks:\n  - id: t1\n    instruction: {BOMB}\n    goal: [home]\n")
    t0 = time.perf_counter()
    with pytest.raises(SuiteError, match="anchors and aliases"):
        load_file(p)
    assert time.perf_counter() - t0 < 0.5
