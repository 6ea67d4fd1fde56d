"""Preconditions, effects and success tests on constructed world states."""

import pytest

from sim import scene
from sim.world import ObjectState
from skills import get
from tests import worlds


def world(objects, held=None, grip=worlds.HOME_GRIP):
    return worlds.world(objects, held=held, grip=grip)


def cube(name, pos=(0.0, -0.1, 0.02), **kw):
    kw.setdefault("on_table", True)
    return ObjectState(name=name, color=name.split("_")[0], pos=pos, **kw)


def codes(violations):
    return [v.code for v in violations]


def test_pick_needs_empty_hand_and_free_cube():
    pick = get("pick")
    w = world([cube("red_block"), cube("blue_block", (0.1, -0.1, 0.02))])
    assert pick.preconditions(w, pick.Params(object="red_block")) == []
    held = world(
        [cube("red_block", held=True, on_table=False), cube("blue_block")], held="red_block"
    )
    assert codes(pick.preconditions(held, pick.Params(object="blue_block"))) == [
        "precondition_violated"
    ]
    stacked = world(
        [cube("blue_block"), cube("red_block", (0.0, -0.1, 0.06), on_table=False, on="blue_block")]
    )
    v = pick.preconditions(stacked, pick.Params(object="blue_block"))
    assert codes(v) == ["precondition_violated"] and "red_block" in v[0].message
    far = world([cube("red_block", (0.4, 0.4, 0.02), reachable=False)])
    assert codes(pick.preconditions(far, pick.Params(object="red_block"))) == ["unreachable"]
    assert codes(pick.preconditions(w, pick.Params(object="purple_block"))) == [
        "hallucinated_object"
    ]


def test_place_preconditions():
    place = get("place")
    empty = world([cube("red_block")])
    assert codes(place.preconditions(empty, place.Params(target="green_bin"))) == [
        "precondition_violated"
    ]
    w = world([cube("red_block", held=True, on_table=False), cube("blue_block")], held="red_block")
    assert place.preconditions(w, place.Params(target="green_bin")) == []
    assert place.preconditions(w, place.Params(target="blue_block")) == []
    assert codes(place.preconditions(w, place.Params(target="red_block"))) == [
        "precondition_violated"
    ]
    in_bin = world(
        [
            cube("red_block", held=True, on_table=False),
            cube("blue_block", (0.0, 0.25, 0.02), on_table=False, in_bin="green_bin"),
        ],
        held="red_block",
    )
    assert "precondition_violated" in codes(
        place.preconditions(in_bin, place.Params(target="blue_block"))
    )


def test_push_preconditions_and_workspace():
    push = get("push")
    w = world([cube("red_block")])
    assert push.preconditions(w, push.Params(object="red_block", target="table_front")) == []
    assert codes(push.preconditions(w, push.Params(object="red_block", target=(0.9, 0.0)))) == [
        "out_of_workspace"
    ]
    assert codes(push.preconditions(w, push.Params(object="red_block", target="table_center"))) == [
        "no_effect"
    ]
    with pytest.raises(ValueError):
        push.Params(object="red_block", target=(float("nan"), 0.0))


def test_effects_then_success_tests_agree():
    pick, place = get("pick"), get("place")
    w0 = world([cube("red_block"), cube("blue_block", (0.1, -0.1, 0.02))])
    w1 = pick.effect(w0, pick.Params(object="red_block"))
    assert w1.held_object == "red_block" and pick.success(w0, w1, pick.Params(object="red_block"))
    w2 = place.effect(w1, place.Params(target="blue_block"))
    assert w2.on("red_block", "blue_block") and w2.held_object is None
    w3 = place.effect(w1, place.Params(target="green_bin"))
    assert w3.in_("red_block", "green_bin")


def test_place_success_requires_gripper_clear():
    place = get("place")
    before = world([cube("red_block", held=True, on_table=False)], held="red_block")
    placed = cube("red_block", (0.0, 0.25, 0.025), on_table=False, in_bin="green_bin")
    low = world([placed], grip=(0.0, 0.25, 0.05))
    high = world([placed], grip=(0.0, 0.25, 0.15))
    p = place.Params(target="green_bin")
    assert not place.success(before, low, p)
    assert place.success(before, high, p)


def test_home_success_and_no_effect():
    home = get("home")
    at_home = world([cube("red_block")], grip=tuple(scene.HOME_POS))
    assert codes(home.preconditions(at_home, home.Params())) == ["no_effect"]
    away = world([cube("red_block")], grip=(0.1, 0.1, 0.1))
    assert home.preconditions(away, home.Params()) == []
    assert home.success(away, at_home, home.Params())
    assert not home.success(at_home, away, home.Params())


def test_params_reject_extra_keys():
    with pytest.raises(ValueError):
        get("pick").Params(object="red_block", force=100)


@pytest.mark.parametrize("skill", ["pick", "place", "push", "home"])
def test_skill_envs_registered_and_pass_check_env(skill):
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    env = gym.make(f"skillbridge/Skill-{skill}-v0")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert obs.shape == (get(skill).obs_dim,) and "is_success" in info
