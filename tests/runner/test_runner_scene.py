"""Scene options of a run: cube names or ``{name: pose}``, checked before anything runs,
recorded in ``meta.scene``, and replayed exactly."""

from __future__ import annotations

import json

import pytest

from skillbridge.episodes import episode as E
from skillbridge.episodes import replay
from skillbridge.errors import UserError
from skillbridge.runner.records import EXIT_INPUT, RunConfig
from skillbridge.runner.runner import Runner
from tests.cli_helpers import run_cli
from tests.runner.common import TASK


def test_prepare_reports_bad_poses_before_creating_anything(tmp_path):
    out = tmp_path / "runs"
    cfg = RunConfig(
        task=TASK, cubes={"red_block": [0.9, 0.0]}, out_dir=out, policy_source="scripted"
    )
    with pytest.raises(UserError) as e:
        Runner(cfg).prepare()
    assert e.value.code == EXIT_INPUT and "off the table" in str(e.value)
    assert not out.exists() or not any(out.iterdir())


# ----------------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def posed(tmp_path_factory):
    """A scripted run with fixed poses given as a mapping (one random cube)."""
    out = tmp_path_factory.mktemp("posed")
    cubes = {"red_block": [0.05, -0.12], "blue_block": [-0.12, 0.05, 0.3], "green_block": None}
    r = Runner(
        RunConfig(task=TASK, seed=3, cubes=cubes, out_dir=out, policy_source="scripted")
    ).run()
    return r, E.load(r.episode)


def test_posed_run_starts_from_the_poses_and_records_them(posed):
    r, ep = posed
    assert r.success, r.message
    scene = ep.meta["scene"]
    assert scene == {
        "cubes": {
            "red_block": [0.05, -0.12],
            "blue_block": [-0.12, 0.05, 0.3],
            "green_block": None,
        },
        "env": "TabletopEnv",
    }
    objs = {o["name"]: o for o in ep.meta["initial_world"]["objects"]}
    assert set(objs) == {"red_block", "blue_block", "green_block"}
    assert objs["red_block"]["pos"][:2] == pytest.approx([0.05, -0.12], abs=1e-3)
    assert objs["blue_block"]["pos"][:2] == pytest.approx([-0.12, 0.05], abs=1e-3)


def test_posed_run_replays_bit_exactly(posed):
    v = replay.verify(posed[1].path)
    assert v.ok, v.message


def test_cli_names_still_work_and_are_recorded(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--cubes",
        "red_block,green",
        "--out",
        str(tmp_path),
        "--json",
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    meta = E.load(json.loads(out)["episode"]).meta
    assert meta["scene"] == {"cubes": ["red_block", "green_block"], "env": "TabletopEnv"}


def test_cli_takes_poses_as_json(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--cubes",
        '{"red": [0.05, -0.12], "blue_block": null}',
        "--out",
        str(tmp_path),
        "--json",
        "--policy-source",
        "scripted",
    )
    assert code == 0, err
    meta = E.load(json.loads(out)["episode"]).meta
    assert meta["scene"]["cubes"] == {"red_block": [0.05, -0.12], "blue_block": None}


@pytest.mark.parametrize(
    "cubes, needle",
    [
        ('{"red_block": [0.9, 0.0]}', "off the table"),
        ('{"red_block": [0.1]}', "pose of red_block must be"),
        ('{"red_block": [0.1, 0.0', "--cubes is not valid JSON"),
        ('{"red_block": [NaN, 0.0]}', "non-finite"),
    ],
)
def test_cli_bad_poses(cubes, needle, tmp_path, monkeypatch, capsys):
    out_dir = tmp_path / "runs"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        TASK,
        "--cubes",
        cubes,
        "--out",
        str(out_dir),
        "--policy-source",
        "scripted",
    )
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and needle in lines[0], err
    assert not out_dir.exists() or not any(out_dir.iterdir())
