import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sim import ENV_ID, scene
from sim.env import TabletopEnv


def test_check_env_passes_on_registered_env():
    e = gym.make(ENV_ID)
    # rendering is exercised separately (check_env would open a window for "human")
    check_env(e.unwrapped, skip_render_check=True)


def test_reset_places_present_cubes_apart_and_reachable(env):
    for seed in range(10):
        env.reset(seed=seed, options={"cubes": ["red_block", "blue_block", "yellow_block"]})
        w = env.world_state()
        assert sorted(w.object_names) == ["blue_block", "red_block", "yellow_block"]
        pos = np.array([o.pos for o in w.objects])
        for i in range(len(pos)):
            assert w.objects[i].on_table and w.objects[i].reachable
            for j in range(i + 1, len(pos)):
                assert np.linalg.norm(pos[i, :2] - pos[j, :2]) >= scene.SPAWN_MIN_DIST - 1e-6


def test_fixed_poses_from_options(env):
    env.reset(seed=0, options={"cubes": {"red_block": [0.05, -0.1], "green_block": None}})
    red = env.world_state().object("red_block")
    assert abs(red.pos[0] - 0.05) < 0.005 and abs(red.pos[1] + 0.1) < 0.005


def test_unknown_cube_in_options_raises(env):
    with pytest.raises(ValueError, match="unknown cube"):
        env.reset(seed=0, options={"cubes": ["purple_block"]})


def _rollout(env, seed, actions):
    env.reset(seed=seed)
    states = []
    for a in actions:
        env.step(a)
        states.append(env.get_state())
    return np.array(states)


def test_same_seed_and_actions_bit_identical():
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1, 1, size=(40, 4))
    a = _rollout(TabletopEnv(), 7, actions)
    b = _rollout(TabletopEnv(), 7, actions)
    assert np.array_equal(a, b)


def test_save_step_restore_step_is_identical(env):
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for a in rng.uniform(-1, 1, size=(10, 4)):
        env.step(a)
    saved = env.get_state()
    actions = rng.uniform(-1, 1, size=(15, 4))
    for a in actions:
        env.step(a)
    first = env.get_state()
    env.set_state(saved)
    for a in actions:
        env.step(a)
    assert np.array_equal(first, env.get_state())


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_action_raises(env, bad):
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite"):
        env.step(np.array([0.0, bad, 0.0, 0.0]))


def test_actions_are_clipped_to_workspace(env):
    env.reset(seed=0)
    for _ in range(60):
        env.step(np.array([1.0, 1.0, 1.0, -1.0]))
    g = env.grip_pos
    assert np.all(g <= scene.WORKSPACE_HIGH + 0.01)
    target = env.controller.target(env.data)
    assert np.all(target <= scene.WORKSPACE_HIGH + 1e-12)
    for _ in range(80):
        env.step(np.array([-1.0, -1.0, -1.0, -1.0]))
    assert np.all(env.controller.target(env.data) >= scene.WORKSPACE_LOW - 1e-12)
    assert env.grip_pos[2] > 0.0  # never through the table


def test_controller_keeps_gripper_pointing_down(env):
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    for a in rng.uniform(-1, 1, size=(50, 4)):
        env.step(a)
        R = env.data.site_xmat[env.controller.site].reshape(3, 3)
        assert R[2, 2] < -0.95  # hand z axis points down


def test_render_rgb_is_not_blank():
    e = TabletopEnv(render_mode="rgb_array", width=160, height=120)
    e.reset(seed=0)
    img = e.render()
    assert img.shape == (120, 160, 3) and img.dtype == np.uint8
    assert img.std() > 10  # real content, not a flat colour
    top = e.render_rgb("top")
    assert top.shape == (120, 160, 3) and not np.array_equal(top, img)
    e.close()


def test_no_interpenetration_at_rest(env):
    """Cubes, bins, table and fingers at rest overlap by less than a millimetre."""
    for seed in range(5):
        env.reset(seed=seed)
        env.step_physics(np.array([0.0, 0.0, 0.0, -1.0]), control_steps=10)
        depths = [c.dist for c in env.data.contact[: env.data.ncon]]
        assert min(depths, default=0.0) > -1e-3, (seed, min(depths))
        for o in env.world_state().objects:  # resting cubes stay put
            assert abs(o.pos[2] - scene.CUBE_HALF) < 2e-3


def test_observe_is_what_reset_and_step_return():
    import numpy as np

    from sim import scene
    from sim.env import TabletopEnv

    env = TabletopEnv()
    obs, _ = env.reset(seed=3)
    again = env.observe()
    assert obs.keys() == again.keys()
    assert all(np.array_equal(obs[k], again[k]) for k in obs)
    assert env.action_space.shape == (scene.ACTION_DIM,)
    obs, *_ = env.step(np.zeros(scene.ACTION_DIM))
    assert all(np.array_equal(obs[k], env.observe()[k]) for k in obs)
    env.close()
