"""``skillbridge export --format minari``: a Minari dataset that minari itself loads, with the
env's own spaces and observations, the env spec (``recover_environment`` makes the env and a
rollout in it continues the recording), the task text, and one-line errors."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.cli_helpers import run_cli

minari = pytest.importorskip("minari")

REPO = Path(__file__).resolve().parents[2]


def _export(monkeypatch, capsys, runs, out, *extra: str) -> tuple[int, str, str]:
    return run_cli(
        monkeypatch, capsys, "export", str(runs), "--format", "minari", "--out", str(out), *extra
    )


def _env_observations(ep, scene: str = "tabletop") -> dict[str, np.ndarray]:
    """What the env itself observes in each recorded state (reset with the episode's cube
    spec first: which cubes are present is env state, not physics state)."""
    from sim.env import TabletopEnv

    env = TabletopEnv(width=64, height=48, scene=scene)
    cubes = (ep.meta.get("scene") or {}).get("cubes")
    try:
        env.reset(seed=ep.meta["seed"], options={"cubes": cubes} if cubes else None)
        rows = []
        for s in ep.all_states():
            env.set_state(s)
            rows.append(env.observe())
    finally:
        env.close()
    return {k: np.stack([r[k] for r in rows]) for k in rows[0]}


def _bits_equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


def test_minari_loads_the_envs_own_observations(runs_dir, episodes, tmp_path, monkeypatch, capsys):
    import gymnasium as gym

    import sim
    from skillbridge.episodes.episode import load

    out = tmp_path / "minari"
    code, so, err = _export(monkeypatch, capsys, runs_dir, out, "--json")
    assert code == 0, err
    assert json.loads(so)["format"] == "minari skillbridge/tabletop-v0"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    ds = minari.load_dataset("skillbridge/tabletop-v0")
    assert ds.total_episodes == 2
    env = gym.make(sim.ENV_ID)
    try:
        assert ds.observation_space == env.observation_space  # Tabletop-v0's, not our own
        assert ds.action_space == env.action_space
    finally:
        env.close()
    metas = list(ds.storage.get_episode_metadata(range(2)))
    for got, meta, path in zip(ds.iterate_episodes(), metas, episodes, strict=True):
        ep = load(path)
        want = _env_observations(ep)
        assert (
            set(got.observations)
            == set(want)
            == {
                "proprio",
                "object_pos",
                "object_quat",
                "object_present",
            }
        )
        for k, v in want.items():
            assert v.shape[0] == ep.n_steps + 1
            assert np.array_equal(got.observations[k].view(np.uint64), v.view(np.uint64)), k
        assert _bits_equal(got.actions, ep.actions.astype(np.float32))  # rounded once
        assert float(np.sum(got.rewards)) == 1.0 and bool(got.terminations[-1])
        assert list(got.infos["task"]) == [ep.meta["task"]] * (ep.n_steps + 1)
        assert meta["task"] == ep.meta["task"] and meta["seed"] == ep.meta["seed"]
        assert meta["skillbridge_episode"] == path.name


def test_recovered_env_continues_the_recording(runs_dir, episodes, tmp_path, monkeypatch, capsys):
    """The env spec is stored: ``recover_environment()`` makes Tabletop-v0, its reset with
    the episode's seed and options starts exactly where the recording starts, and stepping
    it with the recorded actions follows the recorded observations."""
    out = tmp_path / "minari"
    code, _, err = _export(monkeypatch, capsys, episodes[0], out)
    assert code == 0, err
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    ds = minari.load_dataset("skillbridge/tabletop-v0")
    assert ds.spec.env_spec is not None and ds.spec.env_spec.id == "skillbridge/Tabletop-v0"
    got = next(ds.iterate_episodes())
    meta = next(iter(ds.storage.get_episode_metadata([0])))
    env = ds.recover_environment()
    try:
        obs, _ = env.reset(seed=meta["seed"], options=meta.get("options"))
        for k, v in obs.items():
            assert np.array_equal(v, got.observations[k][0]), k  # the same start, exactly
        for t in range(5):
            obs, _, terminated, truncated, _ = env.step(got.actions[t])
            assert env.observation_space.contains(obs) and not (terminated or truncated)
            for k, v in obs.items():  # float32 actions: within rounding of the recording
                np.testing.assert_allclose(v, got.observations[k][t + 1], atol=1e-6, err_msg=k)
    finally:
        env.close()


def test_articulated_episodes_export_with_their_env(articulated_dir, tmp_path, monkeypatch, capsys):
    import sim
    from skillbridge.episodes.episode import load

    out = tmp_path / "minari"
    code, _, err = _export(monkeypatch, capsys, articulated_dir, out)
    assert code == 0, err  # was: TypeError state size should equal mj_stateSize
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    ds = minari.load_dataset("skillbridge/tabletop-v0")
    assert ds.spec.env_spec.id == sim.ARTICULATED_ENV_ID
    got = next(ds.iterate_episodes())
    ep = load(next(p for p in articulated_dir.iterdir() if p.is_dir()))
    want = _env_observations(ep, "articulated")
    assert np.array_equal(got.observations["articulation"], want["articulation"])
    assert got.observations["articulation"][-1, 0] > 0.12  # the drawer ends open
    env = ds.recover_environment()
    try:
        assert env.observation_space == ds.observation_space
    finally:
        env.close()


def test_relative_out_works(runs_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, err = _export(monkeypatch, capsys, runs_dir, "rel")
    assert code == 0, err  # was: "cannot write rel: No such file or directory"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "rel"))
    assert minari.load_dataset("skillbridge/tabletop-v0").total_episodes == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel"]


@pytest.mark.parametrize("case", ["bad_id", "minari_refuses_id", "not_empty", "no_pyarrow"])
def test_bad_minari_input_is_one_line(case, runs_dir, tmp_path, monkeypatch, capsys):
    out = tmp_path / "minari"
    extra: list[str] = []
    if case == "bad_id":
        extra = ["--dataset-id", "../escape"]
    elif case == "minari_refuses_id":
        extra = ["--dataset-id", "a/b-v0"]  # ours accepts it; Minari wants 2+ character namespaces
    elif case == "not_empty":
        out.mkdir()
        (out / "mine.txt").write_text("keep")
    else:
        monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    before = sorted(p.name for p in tmp_path.iterdir())
    code, so, err = _export(monkeypatch, capsys, runs_dir, out, *extra)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if case == "minari_refuses_id":
        assert "Minari refuses it" in err
    if case == "no_pyarrow":
        assert "skillbridge[minari]" in err


def test_the_minari_extra_pulls_what_the_export_needs():
    """``pip install 'skillbridge[minari]'`` must bring pyarrow (minari's arrow format needs
    it and minari alone does not depend on it)."""
    from packaging.requirements import Requirement

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    reqs = [Requirement(r) for r in extras["minari"]]
    assert any(r.name == "minari" for r in reqs)
    assert any(r.name == "pyarrow" or (r.name == "minari" and "arrow" in r.extras) for r in reqs)
