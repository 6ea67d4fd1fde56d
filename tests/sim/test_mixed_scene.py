"""The mixed scene: objects of several kinds (a 4 cm and a 5 cm cube, an upright cylinder, a
ball) on the tabletop's arena, run by the same env, world state and skills as the others."""

from __future__ import annotations

import numpy as np
import pytest

from bridge import validate
from sim import objects, scenes
from sim.env import TabletopEnv
from sim.scenes import SceneSpec
from sim.scenes.base import ASSETS

KINDS = {
    "red_block": "cube",
    "green_big_block": "cube",
    "blue_cylinder": "cylinder",
    "yellow_ball": "sphere",
}


def _holding(world, name):
    """``world`` with ``name`` in the hand (a place's start, stated without physics)."""
    objs = [
        o.model_copy(update={"held": True, "on_table": False}) if o.name == name else o
        for o in world.objects
    ]
    return world.model_copy(update={"held_object": name, "objects": objs})


@pytest.fixture(scope="module")
def env():
    e = TabletopEnv(scene="mixed")
    yield e
    e.close()


def test_the_mixed_scene_holds_four_kinds_of_object(env):
    assert env.object_names == tuple(KINDS)
    obs, _ = env.reset(seed=3)
    for _ in range(10):
        obs, *_ = env.step(np.zeros(4, dtype=np.float32))
    assert obs["object_pos"].shape == (4, 3)  # the skills' observation keeps its shape
    w = env.world_state()
    assert {o.name: o.kind for o in w.objects} == KINDS
    for o in w.objects:  # each rests on the table at its own half height
        assert o.on_table, o.name
        assert abs(o.pos[2] - objects.spec(o.name).half_height) < 0.002, o.name
    assert "yellow_ball (sphere)" in w.describe()


def test_objects_keep_their_row_in_every_scene():
    tabletop = scenes.TABLETOP.objects
    for i, o in enumerate(scenes.MIXED.objects):
        assert scenes.row(o.name) == i
        assert tabletop[i].color == o.color  # the row of the tabletop cube of its colour
    with pytest.raises(ValueError, match="keeps its place"):
        scenes.register_scene(
            SceneSpec(
                "swapped",
                "",
                ASSETS / "tabletop.xml",
                tuple(reversed(scenes.MIXED.objects)),
                ("bins",),
                "skillbridge/TestSwapped-v0",
            )
        )
    assert "swapped" not in scenes.SCENES
    with pytest.raises(ValueError, match="no scene holds"):
        scenes.row("purple_block")


def test_nothing_is_placed_on_the_ball(env):
    env.reset(seed=0)
    held = _holding(env.world_state(), "red_block")
    ball = validate('[{"skill": "place", "target": "yellow_ball"}]', held)
    assert not ball.accepted
    assert any("sphere cannot carry" in r.message for r in ball.reasons)
    cylinder = validate('[{"skill": "place", "target": "blue_cylinder"}]', held)
    assert "sphere cannot carry" not in " ".join(r.message for r in cylinder.reasons)


def test_a_kind_restricts_the_start_states_to_its_objects():
    from skills.evaluate import evaluate_policy, expert_policy
    from skills.skill_env import SkillEnv

    se = SkillEnv("pick", scene_name="mixed")
    se.sim.subjects = ("yellow_ball",)
    got = evaluate_policy("pick", expert_policy, 3, seed=0, env=se)
    assert got["scene"] == "mixed"
    assert set(got["by_object"]) == {"yellow_ball"}
    assert got["by_object"]["yellow_ball"]["kind"] == "sphere"
    assert got["success_rate"] == 1.0  # the scripted grasp lifts the ball: real physics
    rated = got["by_object"]["yellow_ball"]["predictor"]  # the pick predictor beside it
    assert 0.0 <= rated["ece"] <= 1.0 and 0.0 <= rated["mean_p"] <= 1.0


def test_a_ball_is_not_put_on_another_object_or_pushed(env):
    env.reset(seed=1)
    w = env.world_state()
    held = _holding(w, "yellow_ball")
    on_cube = validate('[{"skill": "place", "target": "red_block"}]', held)
    assert not on_cube.accepted and any("roll off" in r.message for r in on_cube.reasons)
    assert validate('[{"skill": "place", "target": "red_bin"}]', held).accepted
    push = validate('[{"skill": "push", "object": "yellow_ball", "target": "table_left"}]', w)
    assert not push.accepted and any("rolls" in r.message for r in push.reasons)


@pytest.mark.parametrize("skill, subject", [("pick", "blue_cylinder"), ("push", "green_big_block")])
def test_the_split_runs_on_one_kind(skill, subject):
    """``eval-skill --kind K --split``: layouts that move the subject (a push first, a row of
    neighbours) bind it in the mixed scene, and a layout the object cannot have (the ball is
    never pushed) is a row without a start, not a crash."""
    from skills import perturb
    from skills.registry import get

    s = get(skill)
    actors = {"expert": perturb.expert_actor(s)}
    for name in ("after_push", "row"):
        cond = next(c for c in perturb.CONDITIONS if c.name == name)
        row = perturb.evaluate_condition(
            skill, cond, actors, 1, scene_name="mixed", subjects=(subject,)
        )
        assert row["expert"]["episodes"] == 1, row
    ball = next(c for c in perturb.CONDITIONS if c.name == "after_push")
    row = perturb.evaluate_condition(
        "pick", ball, actors, 1, scene_name="mixed", subjects=("yellow_ball",)
    )
    assert "no_start" in row and row["expert"]["episodes"] == 0


def test_the_place_policy_sees_the_fingers_as_around_a_4cm_cube(env):
    from skills.base import as_trained
    from skills.registry import get

    place = get("place")
    env.reset(seed=0)
    w = env.world_state()

    big = place.bind(_holding(w, "green_big_block"), place.Params(target="red_bin"))
    small = place.bind(_holding(w, "red_block"), place.Params(target="red_bin"))
    assert big.finger_offset == pytest.approx(0.005) and small.finger_offset == 0.0
    obs = env.observe()
    seen = as_trained(obs, big)
    assert np.allclose(seen["proprio"][6:8], obs["proprio"][6:8] - 0.005)
    assert as_trained(obs, small) is obs  # the tabletop's cubes: the observation itself
    assert objects.spec("green_big_block").half_width == 0.025
    assert objects.spec("yellow_ball").half_width == objects.spec("red_block").half_width


def test_the_mixed_scene_is_the_tabletop_arena_with_its_objects_written(tmp_path):
    from dataclasses import replace

    assert scenes.TABLETOP.mjcf_text() == scenes.TABLETOP.mjcf.read_text()
    text = scenes.MIXED.mjcf_text()
    assert scenes.MIXED.mjcf == scenes.TABLETOP.mjcf and "<!-- cubes:" not in text
    for o in scenes.MIXED.objects:
        assert f'<body name="{o.name}"' in text
    assert 'name="green_block"' not in text  # the tabletop's own cubes are gone
    bare = tmp_path / "bare.xml"
    bare.write_text("<mujoco><worldbody></worldbody></mujoco>")
    with pytest.raises(ValueError, match="has no <!-- cubes:"):
        replace(scenes.MIXED, mjcf=bare).mjcf_text()
