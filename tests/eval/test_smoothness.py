"""skillbridge.evaluation.smoothness: the motion figures on trajectories with known answers,
and one real recorded episode read end to end."""

from __future__ import annotations

import numpy as np
import pytest

from skillbridge.evaluation import smoothness as S

DT = 0.04


def _traj(actions, subgoals, positions=None, skills=None, succeeded=None) -> S.Trajectory:
    a = np.asarray(actions, np.float64)
    if positions is None:  # the hand moves as commanded: 0.5 m/s per unit of action
        steps = 0.5 * DT * a[:, :3]
        positions = np.vstack([np.zeros(3), np.cumsum(steps, axis=0)])
    return S.Trajectory(
        name="synthetic",
        positions=np.asarray(positions, np.float64),
        actions=a,
        subgoals=np.asarray(subgoals),
        dt=DT,
        skills=skills or {},
        succeeded=succeeded or {},
    )


def test_constant_velocity_has_no_acceleration_jerk_or_change():
    a = np.tile([0.6, -0.8, 0.0, 1.0], (30, 1))
    r = S.summarise([_traj(a, [0] * 30)])
    f = r["figures"]
    assert f["speed"]["inside"]["p50"] == pytest.approx(0.5)  # |(0.6, -0.8)| * 0.5 m/s
    assert f["speed"]["inside"]["n"] == 30
    for q in ("accel", "jerk", "action_change", "grip_change"):
        assert f[q]["inside"]["max"] == pytest.approx(0.0, abs=1e-9), q
    assert f["jerk"]["inside"]["n"] == 28  # third differences of 31 positions
    assert r["switches"] == 0 and f["action_change"]["switch"]["n"] == 0


def test_a_cubic_path_has_the_jerk_of_its_third_derivative():
    t = np.arange(21) * DT
    pos = np.stack([2.0 * t**3, np.zeros_like(t), -(t**3)], axis=1)  # jerk (12, 0, -6)
    s = S.samples(_traj(np.zeros((20, 4)), [0] * 20, positions=pos))
    np.testing.assert_allclose(s["jerk"].values, np.hypot(12.0, 6.0), rtol=1e-6)
    # the jerk from actions k..k+2 measures the instant k + 1.5
    np.testing.assert_allclose(s["jerk"].centre, np.arange(18) + 1.5)


def test_a_full_reversal_at_the_switch_is_a_change_of_two_there_and_nowhere_else():
    a = np.zeros((20, 4))
    a[:10, 0], a[10:, 0] = 1.0, -1.0
    tr = _traj(a, [0] * 10 + [1] * 10)
    np.testing.assert_array_equal(tr.switches(), [10])
    f = S.summarise([tr])["figures"]["action_change"]
    assert f["boundary"] == {"n": 1, "p50": 2.0, "p95": 2.0, "max": 2.0, "mean": 2.0}
    assert f["switch"]["max"] == 2.0
    assert f["switch"]["n"] == 7  # the changes at steps 7..13: window 3 either side
    assert f["inside"]["max"] == 0.0 and f["inside"]["n"] == 19 - 7
    # the hand's velocity goes from +0.5 to -0.5 m/s in one step: 25 m/s^2, at the switch
    k = S.summarise([tr])["figures"]
    assert k["accel"]["switch"]["max"] == pytest.approx(1.0 / DT)
    assert k["accel"]["inside"]["max"] == pytest.approx(0.0, abs=1e-9)


def test_figures_by_skill_and_by_pair_of_skills_at_the_switch():
    a = np.zeros((30, 4))
    a[:10, 0], a[10:20, 0], a[20:, 1] = 1.0, -1.0, 0.5  # x reversed, then a turn to y
    names = {0: "pick", 1: "place", 2: "pick"}
    r = S.summarise([_traj(a, [0] * 10 + [1] * 10 + [2] * 10, skills=names)])
    assert r["switch_pairs"]["pick->place"]["max"] == 2.0
    assert r["switch_pairs"]["place->pick"]["max"] == pytest.approx(np.hypot(1.0, 0.5))
    inside = r["inside_by_skill"]
    assert sorted(inside) == ["pick", "place"]
    assert inside["pick"]["action_change"]["max"] == 0.0
    assert (
        inside["pick"]["speed"]["n"] + inside["place"]["speed"]["n"]
        == (r["figures"]["speed"]["inside"]["n"])
    )


def test_the_window_is_configurable():
    a = np.zeros((20, 4))
    a[10:, 0] = 1.0
    tr = _traj(a, [0] * 10 + [1] * 10)
    for w, n in ((0, 1), (1, 3), (3, 7)):
        f = S.summarise([tr], window=w)["figures"]["action_change"]
        assert f["switch"]["n"] == n
        assert f["inside"]["n"] + n == 19


def test_holds_are_no_skill_and_no_switch():
    a = np.zeros((16, 4))
    a[:6, 0] = 1.0  # subgoal 0 moves, then the physics settles (-1), then subgoal 1 moves
    a[10:, 1] = 1.0
    sg = [0] * 6 + [-1] * 4 + [1] * 6
    tr = _traj(a, sg)
    assert len(tr.switches()) == 0  # a subgoal handing over to a hold is no switch
    f = S.summarise([tr])["figures"]["action_change"]
    # the stop into the hold and the start after it are in neither class, but in all
    assert f["inside"]["max"] == 0.0 and f["switch"]["n"] == 0
    assert f["all"]["max"] == 1.0 and f["all"]["n"] == 15
    assert f["inside"]["n"] == 5 + 5


def test_saturation_is_the_share_of_motion_components_at_the_bound():
    a = np.array([[1.0, 0.0, -0.995, 1.0], [0.5, 0.98, 0.0, -1.0]] * 5)
    f = S.summarise([_traj(a, [0] * 10)])["figures"]["saturated"]
    assert f["inside"]["mean"] == pytest.approx((2 / 3 + 0) / 2)  # the gripper is not counted
    share = S.summarise([_traj(a, [0] * 10)])["figures"]["saturated_any"]["inside"]["mean"]
    assert share == pytest.approx(0.5)  # every other step has a component at its bound


def test_time_and_path_per_subgoal():
    a = np.zeros((15, 4))
    a[:5, 0] = 1.0  # 5 steps at 0.5 m/s: 0.1 m
    a[5:15, 1] = -0.5  # 10 steps at 0.25 m/s: 0.1 m
    tr = _traj(a, [0] * 5 + [1] * 10, skills={0: "pick", 1: "place"}, succeeded={0: True})
    segs = S.subgoal_segments(tr)
    assert [(s["skill"], s["first"], s["steps"]) for s in segs] == [
        ("pick", 0, 5),
        ("place", 5, 10),
    ]
    assert [s["path_m"] for s in segs] == pytest.approx([0.1, 0.1])
    assert segs[0]["seconds"] == pytest.approx(0.2) and segs[1]["success"] is None
    by = S.summarise([tr])["subgoals"]["by_skill"]
    assert by["place"]["seconds"]["mean"] == pytest.approx(0.4)
    # a failed subgoal is counted, but its time is not a skill's time
    failed = _traj(a, [0] * 5 + [1] * 10, skills={0: "pick", 1: "place"}, succeeded={1: False})
    sub = S.summarise([failed])["subgoals"]
    assert sub["count"] == 2 and sub["failed"] == 1 and sub["steps"]["n"] == 1


def test_paired_time_compares_the_same_subgoals_only():
    def run(steps: list[int], ok: bool = True, skills=("pick", "place")) -> S.Trajectory:
        sg = [i for i, n in enumerate(steps) for _ in range(n)]
        a = np.zeros((len(sg), 4))
        a[:, 0] = 1.0
        names = dict(enumerate(skills))
        return _traj(a, sg, skills=names, succeeded={i: ok for i in names})

    now = {"a": run([10, 20]), "b": run([5, 5]), "c": run([4, 4], ok=False)}
    then = {"a": run([20, 20]), "b": run([5, 5], skills=("push", "place")), "c": run([8, 8])}
    p = S.paired(now, then)
    # only "a": "b" ran other skills, a subgoal of "c" failed
    assert (p["episodes"], p["subgoals"]) == (1, 2)
    assert p["time_ratio"] == pytest.approx(30 / 40)
    assert p["path_ratio"] == pytest.approx(30 / 40)  # at one speed, path goes with time
    assert p["time_ratio_per_subgoal"]["p50"] == pytest.approx(0.75)  # 0.5 and 1.0
    assert S.paired({}, then)["time_ratio"] is None


def test_a_trajectory_needs_one_more_position_than_actions():
    with pytest.raises(ValueError, match="5 actions need 6 positions"):
        S.Trajectory("x", np.zeros((5, 3)), np.zeros((5, 4)), np.zeros(5, int), DT)
    assert S.stats([])["p95"] is None


@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    """A real two-subgoal episode (rules planner, scripted experts), seed 0."""
    from pathlib import Path

    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    out = tmp_path_factory.mktemp("smooth")
    cfg = RunConfig(
        task="put the red block in the green bin",
        seed=0,
        out_dir=out,
        policy_source="scripted",
        llm="rules",
    )
    r = Runner(cfg).run()
    assert str(r.status) == "success"
    return Path(r.episode)


def test_a_recorded_episode_end_to_end(episode):
    from sim import scene
    from sim.env import TabletopEnv
    from skillbridge.episodes.episode import load

    ep = load(episode)
    tr = S.from_episode(ep)
    assert tr.source == "scripted" and tr.n_steps == ep.n_steps
    # the positions are the grip site the env reports at each recorded state
    env = TabletopEnv()
    try:
        for k in (0, tr.n_steps // 2, tr.n_steps):
            env.set_state(ep.all_states()[k])
            np.testing.assert_allclose(tr.positions[k], env.grip_pos, atol=1e-12)
    finally:
        env.close()
    assert [s["skill"] for s in S.subgoal_segments(tr)] == ["pick", "place"]
    assert len(tr.switches()) == 1
    r = S.summarise([tr])
    # the controller drives the hand at most MAX_EE_SPEED per axis
    assert 0 < r["figures"]["speed"]["all"]["max"] <= scene.MAX_EE_SPEED * 3**0.5 + 0.05
    assert r["figures"]["action_change"]["boundary"]["n"] == 1
    assert r["subgoals"]["count"] == 2 and r["subgoals"]["failed"] == 0
    assert r["subgoals"]["path_m"]["max"] > 0.05
    inside = r["figures"]["jerk"]["inside"]["n"]
    at = r["figures"]["jerk"]["switch"]["n"]
    assert inside + at < r["figures"]["jerk"]["all"]["n"]  # the settling hold is in neither


def test_the_plot_draws_several_labelled_trajectories(episode, tmp_path):
    from skillbridge.evaluation.smoothness_plot import plot_trajectories

    tr = S.load_trajectory(episode, "put the red block in the green bin")
    out = plot_trajectories([("expert", tr), ("again", tr)], tmp_path / "f.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.png"]
    with pytest.raises(ValueError, match="must end in .png"):
        plot_trajectories([("x", tr)], tmp_path / "f.jpg")


# ----------------------------------------------------------------------------- the script
def _bench_out(tmp_path, episode, sources=("pretrained", "scripted")):
    """An output folder of scripts/bench_smooth.py holding the one real episode as a suite
    task of each source and as the first link of a chain."""
    import shutil

    out = tmp_path / "bench"
    for src in sources:
        shutil.copytree(episode, out / src / "suite" / "episodes" / "pp-red-green" / episode.name)
        shutil.copytree(episode, out / src / "chains" / "chain-0000" / "0" / episode.name)
    return out


def test_the_bench_measures_an_output_folder_prints_tables_and_plots(episode, tmp_path, capsys):
    import json

    from tests.scripts import load_script

    bench = load_script("bench_smooth")
    out = _bench_out(tmp_path, episode)
    png = tmp_path / "s.png"
    argv = ["--reuse", "--out", str(out), "--plot", str(png), "--compare", f"before={out}"]
    assert bench.main(argv) == 0
    text = capsys.readouterr().out
    assert "| action_change | boundary |" in text and "| pick |" in text
    assert "| p95 policy/before |" in text.splitlines()[0] + " |"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = json.loads((out / "smoothness.json").read_text())
    assert doc["format"] == "skillbridge.smoothness"
    pre = doc["sources"]["pretrained"]
    assert pre["all"]["episodes"] == 2 and pre["suite"]["episodes"] == 1
    assert pre["chains"]["episodes"] == 1
    assert doc["compare"]["before"] == pre["all"]  # the same episodes measure the same
    assert "--policy-source scripted" in doc["config"]["commands"]["scripted"][0]
    # the same episodes under both names: every subgoal paired, ratio 1
    assert doc["paired"]["policy/before"]["time_ratio"] == 1.0
    assert doc["paired"]["policy/expert"]["subgoals"] == 4
    # the table's ratio to the compared run: the same figures, 1.00 wherever defined
    jerk = next(
        line for line in text.splitlines() if line.startswith("| jerk") and "inside" in line
    )
    assert jerk.rstrip(" |").endswith("1.00")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--sources", "neural"], "--sources"),
        (["--plot", "x.jpg"], "must end in .png"),
        (["--compare", "nolabel"], "LABEL=DIR"),
        (["--skip-suite", "--chains", "0"], "nothing to measure"),
        (["--tree", "/nonexistent"], "not a skillbridge checkout"),
        (["--sources", "scripted", "--plot-sources", "pretrained"], "--plot-sources"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    from tests.scripts import load_script

    bench = load_script("bench_smooth")
    assert bench.main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_episodes_that_broke_are_flagged(episode, tmp_path, capsys):
    import json

    from tests.scripts import load_script

    bench = load_script("bench_smooth")
    out = _bench_out(tmp_path, episode, sources=("scripted",))
    summary = {"episodes": 3, "overall": {}, "failures": {"by_cause": {"error": 2}}}
    (out / "scripted" / "suite.json").write_text(json.dumps(summary))
    assert bench.main(["--reuse", "--out", str(out), "--sources", "scripted"]) == 0
    cap = capsys.readouterr()
    assert "warning: 2 suite episode(s) of scripted broke" in cap.err
    assert "| suite episodes that broke | 2 |" in cap.out


def test_the_bench_never_mixes_a_new_run_into_an_old_one(episode, tmp_path, capsys):
    from tests.scripts import load_script

    bench = load_script("bench_smooth")
    out = _bench_out(tmp_path, episode)
    assert bench.main(["--out", str(out)]) == 2  # no --reuse: the old episodes stay alone
    assert "exists: measure it with --reuse" in capsys.readouterr().err
    assert bench.main(["--reuse", "--out", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
    png = tmp_path / "x.png"
    argv = ["--reuse", "--out", str(out), "--plot", str(png), "--episode", "chain-0009/0"]
    assert bench.main(argv) == 2
    assert "no episode 'chain-0009/0'" in capsys.readouterr().err and not png.exists()
    argv = ["--reuse", "--out", str(out), "--plot", str(png), "--plot-sources", "none"]
    assert bench.main(argv) == 2
    assert "nothing to draw" in capsys.readouterr().err and not png.exists()


def test_the_bench_prints_its_json_document(episode, tmp_path, capsys):
    import json

    from tests.scripts import load_script

    bench = load_script("bench_smooth")
    out = _bench_out(tmp_path, episode, sources=("pretrained",))
    argv = ["--reuse", "--out", str(out), "--sources", "pretrained", "--json", "--window", "1"]
    assert bench.main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["window"] == 1.0 and list(doc["sources"]) == ["pretrained"]
    assert doc["paired"] == {}  # no expert run, nothing compared
    assert doc == json.loads((out / "smoothness.json").read_text())


@pytest.mark.slow
def test_the_bench_runs_the_evals_and_is_deterministic(tmp_path):
    """Two real runs of a small set (one suite task, one chain, the experts) measure the
    same figures."""
    import json

    from tests.scripts import load_script

    bench = load_script("bench_smooth")
    docs = []
    for name in ("a", "b"):
        argv = ["--out", str(tmp_path / name), "--only", "pp-red-green-bin", "--chains", "1"]
        argv += ["--sources", "scripted", "--llm", "rules", "--workers", "1"]
        assert bench.main(argv) == 0
        docs.append(json.loads((tmp_path / name / "smoothness.json").read_text()))
    a, b = (d["sources"]["scripted"]["all"] for d in docs)
    assert a["episodes"] >= 2 and a["switches"] >= 1
    assert a == b
