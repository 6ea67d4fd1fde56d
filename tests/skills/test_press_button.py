"""press_button: its declaration, a scripted press judged by its success test, the shipped
policy (learned by RL from scratch) pressing from a few starts, and the trainer's
``warm_start: none``, which never asks the skill for an expert."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from sim import scene
from sim.env import TabletopEnv
from skills import get
from skills.press_button import NO_BUTTON, PressButtonParams
from skills.train import TrainError, load_config, train

CLOSED = 1.0


@pytest.fixture(scope="module")
def aenv():
    e = TabletopEnv(scene="articulated")
    e.reset(seed=0)
    yield e
    e.close()


def go(env: TabletopEnv, pos, max_steps: int = 150) -> None:
    for _ in range(max_steps):
        err = np.asarray(pos, dtype=np.float64) - env.grip_pos
        if np.linalg.norm(err) < 0.004:
            return
        a = np.clip(err / (scene.MAX_EE_SPEED * scene.CONTROL_DT), -1.0, 1.0)
        env.step_physics(np.array([*a, CLOSED]))


def test_declaration():
    s = get("press_button")
    assert s.scene == "articulated" and not s.has_expert
    assert s.catalogue_entry()["parameters"] == {}
    with pytest.raises(ValueError):
        s.Params(times=2)
    with pytest.raises(NotImplementedError, match="no scripted expert"):
        s.expert({}, s.bind(_articulated_world(), PressButtonParams()))


def _articulated_world(light: bool = False):
    e = TabletopEnv(scene="articulated")
    e.reset(seed=3, options={"light": light})
    w = e.world_state()
    e.close()
    return w


def test_preconditions_refuse_the_default_scene_and_a_held_cube():
    s, p = get("press_button"), PressButtonParams()
    e = TabletopEnv()
    e.reset(seed=0)
    v = s.preconditions(e.world_state(), p)
    e.close()
    assert [x.code for x in v] == ["precondition_violated"] and v[0].message == NO_BUTTON
    assert "articulated" in v[0].hint
    w = _articulated_world()
    assert s.preconditions(w, p) == []
    held = w.model_copy(update={"held_object": "red_block"})
    v = s.preconditions(held, p)
    assert [x.code for x in v] == ["precondition_violated"] and "red_block" in v[0].message


@pytest.mark.parametrize("light", [False, True])
def test_effect_flips_the_light_and_passes_the_success_test(light):
    s, p = get("press_button"), PressButtonParams()
    w = _articulated_world(light)
    after = s.effect(w, p)
    assert after.light_on is (not light) and not after.button.pressed
    assert s.success(w, after, p) and not s.success(w, w, p)
    assert s.effect(after, p).light_on is light  # a second press flips it back


def test_a_scripted_press_succeeds_only_once_released(aenv):
    s, p = get("press_button"), PressButtonParams()
    aenv.reset(seed=1, options={"light": True})
    before = aenv.world_state()
    x, y, top = before.button.pos
    go(aenv, (x, y, top + 0.03))
    for _ in range(30):
        aenv.step_physics(np.array([0.0, 0.0, -0.3, CLOSED]))
        if aenv.world_state().button.pressed:
            break
    held_down = aenv.world_state()
    assert held_down.button.pressed and not s.success(before, held_down, p)
    go(aenv, (x, y, top + 0.06))
    after = aenv.world_state()
    assert after.light_on is False and s.success(before, after, p)


def test_starts_are_valid_and_the_potential_rises_towards_the_press():
    from skills.skill_env import SkillEnv

    env = SkillEnv("press_button")
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        assert obs.shape == (env.skill.obs_dim,) and np.all(np.isfinite(obs))
        assert env.before.held_object is None and env.before.button is not None
    raw = env.sim.observe()
    cap = np.asarray(env.binding.target_xyz)
    far = env.skill.potential(raw, env.binding)
    env.sim.move_arm_to(cap + [0.0, 0.0, 0.03], grip=CLOSED)
    near = env.skill.potential(env.sim.observe(), env.binding)
    assert near > far
    env.close()


def test_shipped_policy_presses_the_button():
    from skills.evaluate import evaluate_policy
    from skills.policy import load_policy, pretrained_dir

    policy, manifest = load_policy(pretrained_dir("press_button"), "press_button")
    assert manifest["warm_start"]["samples"] == 0
    assert not any("DAgger" in a for a in manifest["learning_aids"])
    r = evaluate_policy("press_button", policy, episodes=6, seed=777)
    assert r["success_rate"] >= 5 / 6, r


def test_warm_start_none_is_validated(tmp_path):
    cfg = load_config("press_button")
    assert cfg["warm_start"] == "none" and "dagger" not in cfg
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**cfg, "warm_start": "demos"}))
    with pytest.raises(TrainError, match="warm_start"):
        load_config("press_button", bad)
    bad.write_text(yaml.safe_dump({**cfg, "warm_start": "dagger"}))
    with pytest.raises(TrainError, match="dagger"):  # no dagger section to warm-start with
        load_config("press_button", bad)
    nodagger = {k: v for k, v in load_config("home").items() if k != "dagger"}
    bad.write_text(yaml.safe_dump(nodagger))
    with pytest.raises(TrainError, match="dagger"):
        load_config("home", bad)
    bad.write_text(yaml.safe_dump({**nodagger, "warm_start": "none"}))
    assert load_config("home", bad)["warm_start"] == "none"


def test_training_from_scratch_never_asks_for_the_expert(tmp_path):
    cfg = load_config("press_button")
    tiny = {
        **cfg,
        "net_arch": [8],
        "ppo": {**cfg["ppo"], "n_steps": 32, "batch_size": 32, "n_epochs": 1},
        "timesteps": 64,
        "eval": {"episodes": 1, "freq": 64},
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny))
    run = train("press_button", config=path, logdir=tmp_path / "logs", n_envs=1, seed=1)
    assert not (run / "bc").exists()
    from skills.policy import load_policy

    _, m = load_policy(run / "best", "press_button")
    assert m["learning_aids"][0].startswith("none of the expert's")
    assert m["obs_mean"] == [0.0] * m["obs_dim"] and m["obs_std"] == [1.0] * m["obs_dim"]
