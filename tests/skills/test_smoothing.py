"""The low-pass action filter a policy is executed with, and the smoothness reward terms
(issue 27): old policies act exactly as before, the filter's state carries the arm's motion
into a subgoal, and what the executor records is what it applied."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sim import scene
from sim.env import TabletopEnv
from skills import get
from skills.base import Binding, Smoothing, arm_motion, smoothed
from skills.policy import MLPPolicy, load_policy, save_policy
from skills.runtime import SkillExecutor
from skills.skill_env import SkillEnv


def _obs(vel: tuple[float, float, float]) -> dict:
    proprio = np.zeros(14)
    proprio[3:6] = vel
    return {"proprio": proprio}


def test_no_smoothing_returns_the_action_itself():
    a = np.array([1.0, -1.0, 0.5, 1.0])
    b = Binding()
    assert smoothed(a, _obs((0.3, 0.0, 0.0)), b, Smoothing()) is a
    assert b.motion is None and b.grip is None


def test_the_filter_starts_from_the_arms_motion_and_leaves_the_gripper():
    b = Binding()
    v = (0.5 * scene.MAX_EE_SPEED, 0.0, -scene.MAX_EE_SPEED)  # half speed in x, full down
    s = Smoothing(alpha=0.5)
    out = smoothed(np.array([-1.0, 1.0, 1.0, -1.0]), _obs(v), b, s)
    np.testing.assert_allclose(out, [0.5 * 0.5 - 0.5, 0.5, 0.0, -1.0])
    out2 = smoothed(np.array([-1.0, 1.0, 1.0, 1.0]), _obs((0, 0, 0)), b, s)
    np.testing.assert_allclose(out2[:3], 0.5 * out[:3] + 0.5 * np.array([-1.0, 1.0, 1.0]))
    assert out2[3] == 1.0  # without grip_filter the gripper is never filtered


def test_the_rate_limit_bounds_every_change_and_the_grip_filter_lags_the_fingers():
    b = Binding()
    s = Smoothing(alpha=0.5, rate=0.3, grip=0.6)
    obs = _obs((scene.MAX_EE_SPEED, 0.0, 0.0))  # full speed in +x
    xs, grips = [1.0], []
    for k in range(12):
        out = smoothed(np.array([-1.0, 0.0, 0.0, 1.0 if k else -1.0]), obs, b, s)
        xs.append(out[0])
        grips.append(out[3])
    assert np.max(np.abs(np.diff(xs))) <= 0.3 + 1e-12  # a full reversal, 0.3 at a time
    assert xs[-1] == pytest.approx(-1.0, abs=0.01)
    assert grips[0] == -1.0  # the gripper's state starts at its first command
    assert grips[1] == pytest.approx(0.6 * -1.0 + 0.4 * 1.0)
    assert all(g1 > g0 for g0, g1 in zip(grips, grips[1:], strict=False))


def test_arm_motion_is_clipped_to_the_action_range():
    np.testing.assert_allclose(arm_motion(_obs((2.0, -2.0, 0.0))), [1.0, -1.0, 0.0])


def _policy(smoothing: Smoothing | None = None) -> MLPPolicy:
    d = get("home").obs_dim
    rng = np.random.default_rng(3)
    return MLPPolicy(d, 4, [8], rng.normal(size=d), np.ones(d), smoothing=smoothing)


def test_manifest_without_the_field_loads_unfiltered_and_the_field_round_trips(tmp_path):
    old = save_policy(_policy(), tmp_path / "old", {"skill": "home", "algo": "ppo"})
    assert "action_filter" not in json.loads((old / "manifest.json").read_text())
    p, m = load_policy(old, "home")
    assert p.smoothing == Smoothing() and not p.smoothing.active and m["action_filter"] == 0.0
    s = Smoothing(0.4, 0.3, 0.5)
    new = save_policy(_policy(s), tmp_path / "new", {"skill": "home", "algo": "ppo"})
    p, _ = load_policy(new, "home")
    assert p.smoothing == s


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("action_filter", 1.0),
        ("action_filter", -0.1),
        ("action_filter", "0.5"),
        ("action_rate", 3.0),
        ("grip_filter", None),
    ],
)
def test_a_bad_smoothing_field_is_refused(tmp_path, field, value):
    from skills.policy import PolicyError

    d = save_policy(_policy(Smoothing(0.4)), tmp_path / "p", {"skill": "home", "algo": "ppo"})
    m = json.loads((d / "manifest.json").read_text())
    m[field] = value
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(PolicyError, match=field):
        load_policy(d, "home")


def test_skill_env_filters_and_pays_for_the_change():
    env = SkillEnv("home", smoothing=Smoothing(0.5), action_change_cost=0.1, jerk_cost=0.2)
    env.reset(seed=2)
    start = env._motion.copy()
    _, reward, _, _, info = env.step(np.array([1.0, 0.0, 0.0, -1.0], dtype=np.float32))
    applied = 0.5 * start + 0.5 * np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(env._motion, applied)
    t = info["reward_terms"]
    assert t["smoothness"] == pytest.approx(-0.1 * np.sum((applied - start) ** 2))
    assert sum(t.values()) == pytest.approx(reward, abs=1e-12)
    env.close()


def test_skill_env_step_cost_is_paid_every_step_on_top_of_the_time_cost():
    """``step_cost`` (a filtered policy paid to win back its lag's time) is in the
    smoothness term of every step, the usual time cost unchanged."""
    env = SkillEnv("home", smoothing=Smoothing(0.5), step_cost=0.04)
    env.reset(seed=2)
    for _ in range(2):
        _, reward, _, _, info = env.step(np.array([0.3, 0.0, 0.0, -1.0], dtype=np.float32))
        t = info["reward_terms"]
        assert t["smoothness"] == pytest.approx(-0.04) and t["time"] == pytest.approx(-0.01)
        assert sum(t.values()) == pytest.approx(reward, abs=1e-12)
    env.close()


def test_skill_env_pays_for_the_grip_sites_jerk():
    """The jerk term is the third difference of the last four grip positions, in units of a
    full-speed step; it is paid from the third step on."""
    env = SkillEnv("home", jerk_cost=0.5)
    env.reset(seed=2)
    pos = [env.sim.observe()["proprio"][:3].copy()]
    terms = []
    for a in ([1.0, 0, 0, -1.0], [-1.0, 0, 0, -1.0], [1.0, 1.0, 0, -1.0]):
        _, _, done, _, info = env.step(np.array(a, dtype=np.float32))
        assert not done
        pos.append(env.sim.observe()["proprio"][:3].copy())
        terms.append(info["reward_terms"]["smoothness"])
    assert terms[:2] == [0.0, 0.0]
    unit = scene.MAX_EE_SPEED * scene.CONTROL_DT
    jerk = (pos[3] - 3 * pos[2] + 3 * pos[1] - pos[0]) / unit
    assert terms[2] == pytest.approx(-0.5 * np.sum(jerk**2)) and terms[2] < 0


class _Recorder:
    def __init__(self, env: TabletopEnv) -> None:
        self.env, self.actions = env, []
        self._step = env.step_physics
        env.step_physics = self._applied  # type: ignore[method-assign]
        self.applied: list[np.ndarray] = []

    def _applied(self, action, control_steps: int = 1) -> None:
        self.applied.append(np.array(action, dtype=np.float64))
        self._step(action, control_steps)


def test_the_executor_records_the_filtered_action_it_applies():
    """A filtered home policy: each recorded action is the applied one (replay repeats the
    physics), its motion moves by at most ``1 - alpha`` of a full range per step."""
    env = TabletopEnv()
    env.reset(seed=5, options={"cubes": ["red_block"], "arm": np.array([0.1, 0.1, 0.12])})
    rec = _Recorder(env)
    policy = _policy(Smoothing(0.6))
    ex = SkillExecutor(policies={"home": policy})
    out = ex.run(env, {"skill": "home"}, on_step=rec.actions.append, max_steps=12)
    assert out.steps == len(rec.actions) == len(rec.applied) > 2
    for r, a in zip(rec.actions, rec.applied, strict=True):
        np.testing.assert_array_equal(r, a)
    motion = np.array(rec.applied)[:, :3]
    assert np.max(np.abs(np.diff(motion, axis=0))) <= 2 * (1 - 0.6) + 1e-9
    env.close()
