"""The perturbation split: its layouts are what they claim, its pairing is exact, and a
doomed skill stops early with a reason."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sim import scene
from skills import perturb as P
from skills.registry import get
from tests.cli_helpers import run_cli


def _start(skill: str, cond: str, seed: int = 0):
    env = P.PerturbedEnv(P.BY_NAME[cond])
    rng = np.random.default_rng(seed)
    for _ in range(P.MAX_RESAMPLE):
        start = P.sample_start(get(skill), env, rng)
        if start is not None:
            return env, *start
    raise AssertionError("no start")


def test_splits_partition_the_conditions():
    nominal = P.conditions_for("pick", "nominal")
    perturbed = P.conditions_for("pick", "perturbed")
    assert [c.name for c in nominal] == ["nominal"]
    assert "nominal" not in [c.name for c in perturbed]
    assert P.conditions_for("pick", "all") == nominal + perturbed
    # a condition that cannot apply to a skill is left out (home holds no cube)
    assert "yaw_high" not in [c.name for c in P.conditions_for("home", "all")]
    assert "target_moved" in [c.name for c in P.conditions_for("place", "all")]
    with pytest.raises(ValueError, match="split"):
        P.conditions_for("pick", "sideways")


@pytest.mark.parametrize("skill", ["pick", "place", "push"])
def test_yaw_band_turns_every_cube(skill):
    turned_in_hand = 0
    for seed in range(4):
        env, params, world = _start(skill, "yaw_high", seed)
        held = world.held_object
        for o in world.objects:
            if o.name == held:  # turned at reset, then picked: the grasp may square it up
                turned_in_hand += abs(o.yaw) > 0.4
            elif o.on_table:
                assert P.YAW_HIGH[0] - 0.03 <= abs(o.yaw) <= P.YAW_HIGH[1] + 0.03
    if skill == "place":
        assert turned_in_hand >= 3


def test_row_and_block_put_touching_neighbours_on_the_right_axis():
    gap = 2 * scene.CUBE_HALF
    for seed in range(3):
        _, params, world = _start("pick", "row", seed)
        me = np.asarray(world.object(params.object).pos)
        d = [np.asarray(o.pos) - me for o in world.objects if o.name != params.object]
        along_x = [v for v in d if abs(abs(v[0]) - gap) < 0.006 and abs(v[1]) < 0.006]
        assert len(along_x) == 2  # one on each side, across the finger axis
        _, params, world = _start("pick", "block", seed)
        me = np.asarray(world.object(params.object).pos)
        d = [np.asarray(o.pos) - me for o in world.objects if o.name != params.object]
        assert any(abs(abs(v[1]) - gap) < 0.006 and abs(v[0]) < 0.006 for v in d)


def test_wall_condition_puts_the_cube_against_a_bin_wall():
    for seed in range(3):
        _, params, world = _start("pick", "wall_y", seed)
        o = world.object(params.object)
        gaps = [
            b.pos[1] - (scene.BIN_INNER_HALF + 0.008) - (o.pos[1] + scene.CUBE_HALF)
            for b in world.bins
            if abs(o.pos[0] - b.pos[0]) < scene.BIN_INNER_HALF
        ]
        assert gaps and min(abs(g) for g in gaps) < 0.006
        assert o.on_table and o.reachable


def test_edges_put_free_cubes_on_the_spawn_perimeter():
    lo, hi = scene.SPAWN_LOW, scene.SPAWN_HIGH
    n_edge = 0
    for seed in range(3):
        _, params, world = _start("push", "edges", seed)
        o = world.object(params.object)
        x, y = o.pos[:2]
        n_edge += min(abs(x - lo[0]), abs(x - hi[0]), abs(y - lo[1]), abs(y - hi[1])) < 0.01
    assert n_edge == 3


def test_dynamics_are_scaled_on_the_cubes_only():
    nominal = P.PerturbedEnv(P.BY_NAME["nominal"])
    heavy = P.PerturbedEnv(P.BY_NAME["heavy_slippery"])
    b = nominal.model.body("red_block").id
    g = nominal.model.geom("red_block_geom").id
    assert heavy.model.body_mass[b] == pytest.approx(3 * nominal.model.body_mass[b])
    assert heavy.model.geom_friction[g, 0] == pytest.approx(0.5 * nominal.model.geom_friction[g, 0])
    arm = nominal.model.body("ee_target").id
    assert heavy.model.body_mass[arm] == nominal.model.body_mass[arm]


def test_the_same_controller_twice_is_paired_exactly_even_under_noise():
    """Both actors start from the restored state with the same noise: two copies of the
    expert must agree episode by episode (and the whole result is seed-reproducible)."""
    ex = P.expert_actor(get("push"))
    for cond in ("obs_noise_5mm", "action_noise"):
        r = P.evaluate_condition("push", P.BY_NAME[cond], {"a": ex, "b": ex}, 4, seed=5)
        assert r["paired"]["a_only"] == r["paired"]["b_only"] == 0
        assert r["a"] == r["b"]
        again = P.evaluate_condition("push", P.BY_NAME[cond], {"a": ex, "b": ex}, 4, seed=5)
        assert again == r


def test_place_whose_cube_is_knocked_out_stops_at_once_with_a_reason():
    ex = P.expert_actor(get("place"))
    r = P.evaluate_condition("place", P.BY_NAME["knocked_out"], {"expert": ex}, 4, seed=2)
    e = r["expert"]
    assert e["successes"] == 0 and e["aborted"] == 4
    assert e["mean_abort_steps"] < 30  # the budget is 100: it noticed within a few steps
    assert all("left the gripper away from" in k for k in r["abort_reasons"])
    assert r["feasible"] is False


def test_nominal_condition_matches_the_expert_on_its_own_distribution():
    ex = P.expert_actor(get("pick"))
    r = P.evaluate_condition("pick", P.BY_NAME["nominal"], {"expert": ex}, 6, seed=1)
    assert r["expert"]["successes"] == 6 and r["expert"]["aborted"] == 0


def test_cli_split_json_and_bad_input(monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "eval-skill", "pick", "--split", "nominal", "-n", "2", "--json"
    )
    assert code == 0, err
    r = json.loads(out)
    (c,) = r["conditions"]
    assert c["condition"] == "nominal" and c["policy"]["episodes"] == 2
    assert c["expert"]["episodes"] == 2 and "paired" in c
    for args, msg in (
        (["pick", "--split", "bogus"], "--split must be one of"),
        (["pick", "--split", "all", "--expert"], "drop --expert"),
        (["pick", "--split", "all", "--record"], "without --split"),
        (["pick-place", "--split", "nominal", "-f", "/nonexistent"], "nonexistent"),
    ):
        code, out, err = run_cli(monkeypatch, capsys, "eval-skill", *args)
        assert code == 2, (args, err)
        assert msg in err and len(err.strip().splitlines()) == 1


def test_after_push_hands_over_a_pushed_cube_with_the_arm_lifted():
    for seed in range(2):
        env, params, world = _start("pick", "after_push", seed)
        o = world.object(params.object)
        assert o.on_table and world.held_object is None
        assert world.grip_pos[2] - (o.pos[2] + scene.CUBE_HALF) > 0.03


def test_cli_chain_split_pairs_the_policies_with_the_experts(monkeypatch, capsys):
    code, out, err = run_cli(
        monkeypatch, capsys, "eval-skill", "pick-place", "--split", "nominal", "-n", "2", "--json"
    )
    assert code == 0, err
    (c,) = json.loads(out)["conditions"]
    assert c["condition"] == "nominal" and c["policy"]["successes"] == 2
    assert c["expert"]["successes"] == 2 and c["paired"]["both"] == 2


def test_sensing_env_perturbs_what_an_executor_reads_and_sends():
    """The chain's executor reads observe() and sends step_physics() itself: with sense()
    on, the condition's latency shows the step before's view; off, the env is plain."""
    import numpy as np

    from skills.perturb import BY_NAME, PerturbedEnv

    env = PerturbedEnv(BY_NAME["obs_latency"])
    env.reset(seed=0)
    env.sense(np.random.default_rng(0))
    first = env.observe()
    env.step_physics(np.array([1.0, 0.0, 0.0, -1.0]))
    late = env.observe()  # the view from before the step
    assert np.array_equal(late["proprio"], first["proprio"])
    env.sense(None)
    assert not np.allclose(env.observe()["proprio"][:3], first["proprio"][:3], atol=1e-4)

    noisy = PerturbedEnv(BY_NAME["obs_noise_8mm"])
    noisy.reset(seed=0)
    noisy.sense(np.random.default_rng(1))
    seen = noisy.observe()["object_pos"]
    noisy.sense(None)
    true = noisy.observe()["object_pos"]
    assert 0.001 < float(np.abs(seen - true).mean()) < 0.02


def test_each_skill_lists_known_conditions_nominal_first():
    """A skill declares the perturbations it is measured under (skills.base.Skill); they
    must name conditions of the table, start with "nominal", and its infeasible ones must
    be among them."""
    from skills.registry import REGISTRY

    listed = 0
    for name, skill in REGISTRY.items():
        unknown = set(skill.perturbations) - set(P.BY_NAME)
        assert not unknown, f"{name} names unknown conditions {unknown}"
        assert set(skill.infeasible_under) <= set(skill.perturbations), name
        if skill.perturbations:
            listed += 1
            assert skill.perturbations[0] == "nominal", name
            assert [c.name for c in P.conditions_for(name, "all")] == [
                c.name for c in P.CONDITIONS if c.name in skill.perturbations
            ]
    assert listed >= 4  # pick, place, push and home are measured under perturbations
