"""``skillbridge export --format minari``: a Minari dataset that minari itself loads, every
observation and action bit-identical to the episodes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli_helpers import run_cli

minari = pytest.importorskip("minari")


def test_minari_loads_the_export_bit_exact(runs_dir, episodes, tmp_path, monkeypatch, capsys):
    from sim import scene
    from sim.env import TabletopEnv
    from skillbridge.episodes.episode import load

    out = tmp_path / "minari"
    code, so, err = run_cli(
        monkeypatch,
        capsys,
        "export",
        str(runs_dir),
        "--format",
        "minari",
        "--out",
        str(out),
        "--json",
    )
    assert code == 0, err
    assert json.loads(so)["format"] == "minari skillbridge/tabletop-v0"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    ds = minari.load_dataset("skillbridge/tabletop-v0")
    assert ds.total_episodes == 2
    env = TabletopEnv(width=64, height=48)
    m = env.model
    arm = [m.jnt_qposadr[m.joint(j).id] for j in (*scene.ARM_JOINTS, *scene.FINGER_JOINTS)]
    try:
        for got, path in zip(ds.iterate_episodes(), episodes, strict=True):
            ep = load(path)
            states = ep.all_states()
            want = []
            for s in states:
                env.set_state(s)
                want.append(env.data.qpos[arm].copy())
            want = np.array(want)
            obs = np.asarray(got.observations["state"], np.float64)
            assert obs.shape == want.shape == (ep.n_steps + 1, 8)
            assert np.array_equal(obs.view(np.uint64), want.view(np.uint64))
            assert np.array_equal(
                np.asarray(got.actions).view(np.uint64), ep.actions.view(np.uint64)
            )
            assert got.observations["environment_state"].shape == (ep.n_steps + 1, 28)
            assert float(np.sum(got.rewards)) == 1.0 and bool(got.terminations[-1])
    finally:
        env.close()


@pytest.mark.parametrize("case", ["bad_id", "not_empty"])
def test_bad_minari_input_is_one_line(case, runs_dir, tmp_path, monkeypatch, capsys):
    out = tmp_path / "minari"
    args = ["export", str(runs_dir), "--format", "minari", "--out", str(out)]
    if case == "bad_id":
        args += ["--dataset-id", "../escape"]
    else:
        out.mkdir()
        (out / "mine.txt").write_text("keep")
    before = sorted(p.name for p in tmp_path.iterdir())
    code, so, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
