import numpy as np

from sim import scene


def _settle(env, n=15, grip=-1.0):
    env.step_physics(np.array([0, 0, 0, grip]), control_steps=n)


def test_cube_in_bin(env):
    b = env.model.body("blue_bin").pos
    env.reset(
        seed=0, options={"cubes": {"red_block": [b[0], b[1], 0.03, 0.0], "green_block": None}}
    )
    _settle(env)
    w = env.world_state()
    assert w.in_("red_block", "blue_bin")
    assert not w.on_table("red_block")
    assert w.on_table("green_block") and w.object("green_block").in_bin is None


def test_stacked_cubes(env):
    env.reset(
        seed=0,
        options={"cubes": {"blue_block": [0.05, -0.1, 0.0], "red_block": [0.05, -0.1, 0.061, 0.0]}},
    )
    _settle(env)
    w = env.world_state()
    assert w.on("red_block", "blue_block")
    assert w.under("blue_block") == "red_block"
    assert w.on_table("blue_block") and not w.on_table("red_block")


def test_fallen_off_table(env):
    env.reset(seed=0, options={"cubes": {"yellow_block": [0.0, -0.1]}})
    a = env._cube_qadr["yellow_block"]
    env.data.qpos[a : a + 3] = (0.0, -0.7, -0.73)  # on the floor beside the table
    env.set_state(env.get_state())
    w = env.world_state()
    o = w.object("yellow_block")
    assert o.fallen and not o.on_table and not o.reachable


def test_held_after_scripted_grasp(env):
    from sim.scripted import is_grasped, pick_action, yaw_of

    env.reset(seed=4, options={"cubes": {"green_block": [0.0, -0.12]}})
    i = scene.CUBE_NAMES.index("green_block")
    for _ in range(80):
        obs = env.observe()
        g, op, c = obs["proprio"][:3], obs["proprio"][6] + obs["proprio"][7], obs["object_pos"][i]
        if is_grasped(g, op, c, yaw_of(obs["object_quat"][i])) and c[2] > 0.1:
            break
        env.step_physics(pick_action(g, op, c, yaw_of(obs["object_quat"][i])))
    w = env.world_state()
    assert w.held("green_block") and w.held_object == "green_block"
    assert not w.on_table("green_block")


def test_unreachable_far_corner(env):
    env.reset(seed=0, options={"cubes": {"red_block": [0.4, 0.4]}})
    assert not env.world_state().reachable("red_block")


def test_world_state_is_json_and_compact(env):
    env.reset(seed=0)
    w = env.world_state()
    text = w.compact_json()
    assert len(text) < 3000
    from sim.world import WorldState

    assert WorldState.model_validate_json(text) == w
    assert "red_block" in w.describe()
