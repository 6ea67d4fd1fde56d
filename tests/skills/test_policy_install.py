"""Installing a trained policy and recording its evaluation (skills.policy)."""

from __future__ import annotations

import json

import pytest

from skills import policy as P


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    root = tmp_path / "pretrained"
    root.mkdir()
    monkeypatch.setattr(P, "PRETRAINED_DIR", root)
    return root


def _run(tmp_path, tag: str):
    run = tmp_path / f"run-{tag}"
    (run / "best").mkdir(parents=True)
    (run / "best" / "manifest.json").write_text(json.dumps({"tag": tag}))
    (run / "evaluations.json").write_text(json.dumps({"curve": [tag]}))
    return run


def test_install_replaces_the_shipped_policy_with_its_learning_curve(tmp_path, shipped):
    P.install("pick", _run(tmp_path, "old"))
    dest = P.install("pick", _run(tmp_path, "new"))
    assert dest == shipped / "pick"
    assert json.loads((dest / "manifest.json").read_text()) == {"tag": "new"}
    assert json.loads((dest / "evaluations.json").read_text()) == {"curve": ["new"]}
    assert sorted(p.name for p in shipped.iterdir()) == ["pick"]  # no temporary left


def test_a_failed_install_leaves_the_shipped_policy(tmp_path, shipped):
    P.install("pick", _run(tmp_path, "old"))
    with pytest.raises(OSError):
        P.install("pick", tmp_path / "no-such-run")
    assert json.loads((shipped / "pick" / "manifest.json").read_text()) == {"tag": "old"}


def test_record_evaluation_keeps_the_rest_of_the_manifest(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"skill": "pick", "evaluation": {}}))
    path = P.record_evaluation(tmp_path, {"success_rate": 1.0, "seed": 777})
    m = json.loads(path.read_text())
    assert m == {"skill": "pick", "evaluation": {"success_rate": 1.0, "seed": 777}}
