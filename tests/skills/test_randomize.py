"""Domain randomisation in training: the config names conditions of the perturbation
split, and the skill env really starts, observes and acts under them."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from skills.perturb import YAW_HIGH
from skills.skill_env import SkillEnv
from skills.train import CONFIG_DIR, TrainError, load_config


def _config(tmp_path, randomize) -> str:
    cfg = yaml.safe_load((CONFIG_DIR / "place.yaml").read_text())
    cfg["randomize"] = randomize
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return str(p)


@pytest.mark.parametrize(
    ("skill", "randomize", "msg"),
    [
        ("place", {"sideways": 0.1}, "unknown condition 'sideways'"),
        ("place", {"knocked_out": 0.1}, "no controller can succeed at place"),
        ("place", {"yaw_full": 0.7, "yaw_high": 0.5}, "sum to more than 1"),
        ("place", {"yaw_full": 1.5}, "must be in [0, 1]"),
        ("place", {"row": 0.2}, "condition 'row' does not apply to place"),
    ],
)
def test_bad_randomize_is_one_line(tmp_path, skill, randomize, msg):
    with pytest.raises(TrainError) as e:
        load_config(skill, _config(tmp_path, randomize))
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_the_shipped_place_config_randomizes_yaw():
    r = load_config("place")["randomize"]
    # about a sixth of the episodes turned, besides the nominal starts' own turns, and
    # close to a third left nominal; the split's yaw rows measure whether that suffices
    # (50/50 each with this mix)
    assert r["yaw_full"] > 0 and r["yaw_high"] > 0
    assert r["yaw_full"] + r["yaw_high"] >= 0.15 and sum(r.values()) <= 0.7 + 1e-9


def test_randomized_starts_turn_the_cubes():
    env = SkillEnv("push", randomize={"yaw_high": 1.0})
    for seed in range(3):
        env.reset(seed=seed)
        o = env.before.object(env.params.object)
        assert YAW_HIGH[0] - 0.03 <= abs(o.yaw) <= YAW_HIGH[1] + 0.03
    nominal = SkillEnv("push")
    yaws = []
    for seed in range(6):
        nominal.reset(seed=seed)
        yaws.append(abs(nominal.before.object(nominal.params.object).yaw))
    assert max(yaws) < 0.4  # the nominal distribution stays as it was


def test_observation_noise_reaches_the_policy_but_not_the_expert_labels():
    env = SkillEnv("pick", randomize={"obs_noise_5mm": 1.0})
    obs, _ = env.reset(seed=4)
    raw = env.sim.observe()
    clean = env.skill.observe(raw, env.binding)
    assert 0 < np.abs(obs - clean).max() < 0.05  # the cube offsets are noisy, a few mm
    assert np.array_equal(
        env.expert_action(), env.skill.expert(raw, env.binding).astype(np.float32)
    )


def test_disturbance_episodes_fire_their_event():
    env = SkillEnv("push", randomize={"displaced": 1.0})
    env.reset(seed=0)
    start = env.sim.observe()["object_pos"][env.binding.cube].copy()
    at = env._event.at
    for _ in range(at):
        env.step(np.zeros(4, np.float32))  # the arm holds still: only the event moves it
    moved = env.sim.observe()["object_pos"][env.binding.cube]
    assert env._event.fired and 0.025 < np.hypot(*(moved[:2] - start[:2])) < 0.07


def test_latency_shows_the_observation_one_step_late():
    """Under obs_latency the policy acts on the step before's observation (arm included),
    while rewards and success still read the present."""
    env = SkillEnv("pick", randomize={"obs_latency": 1.0})
    first, _ = env.reset(seed=3)
    seen, _, _, _, _ = env.step(np.array([1.0, 0.0, 0.0, -1.0]))
    assert np.array_equal(seen, first)  # nothing newer than the start had arrived
    now = env.skill.observe(env.sim.observe(), env.binding)
    seen, _, _, _, _ = env.step(np.array([1.0, 0.0, 0.0, -1.0]))
    assert np.allclose(seen, now, atol=1e-6)  # step 1's view, a step late
    assert not np.allclose(seen, env.skill.observe(env.sim.observe(), env.binding), atol=1e-4)


def test_latency_line():
    from skills.perturb import Latency

    late, now = Latency(2), Latency(0)
    assert [late({"t": t})["t"] for t in range(5)] == [0, 0, 0, 1, 2]
    assert [now({"t": t})["t"] for t in range(3)] == [0, 1, 2]
