"""The goal grammar on the articulated scene: the drawer as a container, open/closed,
light_on, towers (clear, above); on the default scene those names are absent."""

import pytest

from bridge.goals import absent_names, evaluate, goal_holds, parse_literal
from sim.env import TabletopEnv


@pytest.fixture(scope="module")
def art():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


def test_drawer_and_light(art):
    art.reset(seed=0, options={"drawer": 0.15, "light": True})
    w = art.world_state()
    assert goal_holds(["open(drawer)", "not closed(drawer)", "light_on"], w)
    art.reset(seed=0, options={"drawer": 0.0, "light": False})
    w = art.world_state()
    assert goal_holds(["closed(drawer)", "not open(drawer)", "not light_on"], w)
    assert evaluate(["light_on"], w) == [{"predicate": "light_on", "met": False}]


def test_tower_of_three(art):
    art.reset(
        seed=0,
        options={
            "cubes": {
                "red_block": [0.0, -0.08, 0.02, 0.0],
                "green_block": [0.0, -0.08, 0.0605, 0.0],
                "blue_block": [0.0, -0.08, 0.101, 0.0],
            }
        },
    )
    art.step_physics([0.0, 0.0, 0.0, -1.0], control_steps=10)
    w = art.world_state()
    assert goal_holds(
        [
            "on(green_block, red_block)",
            "on(blue_block, green_block)",
            "above(blue_block, red_block)",
            "clear(blue_block)",
            "not clear(red_block)",
        ],
        w,
    )


def test_drawer_names_are_absent_on_the_default_scene(env):
    env.reset(seed=0)
    w = env.world_state()
    assert absent_names(parse_literal("in(red_block, drawer)"), w) == [("bin", "drawer")]
    assert absent_names(parse_literal("open(drawer)"), w) == [("drawer", "drawer")]
    assert not goal_holds(["light_on"], w)
    # "in some container" is "in some bin" there, as before
    assert not goal_holds(["in(red_block, *)"], w)
