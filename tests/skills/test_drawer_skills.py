"""open_drawer and close_drawer: declarations, preconditions, effects, the success tests on
scripted motions, the experts and the shipped policies from a few chained starts."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from sim import scene, scripted
from sim.env import TabletopEnv
from skills.base import NO_EFFECT, PRECONDITION
from skills.drawer import CloseDrawer, DrawerParams, OpenDrawer, knob_of, shut_geometry
from skills.evaluate import evaluate_policy
from skills.policy import load_policy, pretrained_dir
from skills.registry import REGISTRY
from tests.motions import go

OPEN_D, CLOSE_D = OpenDrawer(), CloseDrawer()
P = DrawerParams()
OPEN, CLOSED = scripted.OPEN, scripted.CLOSE


@pytest.fixture(scope="module")
def aenv():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


def reset(env: TabletopEnv, drawer: float = 0.0, cubes=None) -> None:
    env.reset(seed=0, options={"drawer": drawer, "cubes": cubes or ["red_block"]})


def inside(env: TabletopEnv, drawer: float) -> list:
    """A cube pose at the middle of the drawer's inside, the drawer pulled out ``drawer`` m."""
    c, _ = shut_geometry(env)
    return [float(c[0] - drawer), float(c[1]), scene.DRAWER_FLOOR_Z + scene.CUBE_HALF, 0.0]


# ---------------------------------------------------------------------- declarations
def test_declarations():
    assert REGISTRY["open_drawer"] is not None and REGISTRY["close_drawer"] is not None
    for s in (OPEN_D, CLOSE_D):
        assert s.scene == "articulated" and s.Params is DrawerParams
        entry = s.catalogue_entry()
        assert entry["parameters"] == {} and entry["preconditions"]
    assert DrawerParams.model_validate({}) == P
    with pytest.raises(ValidationError):
        DrawerParams.model_validate({"object": "red_block"})


def test_default_scene_is_refused_clearly():
    e = TabletopEnv()
    try:
        e.reset(seed=0, options={"cubes": ["red_block"]})
        w = e.world_state()
    finally:
        e.close()
    for s in (OPEN_D, CLOSE_D):
        v = s.preconditions(w, P)
        assert [x.message for x in v] == ["this scene has no drawer"] and v[0].code == PRECONDITION


def test_already_open_or_closed_is_no_effect(aenv):
    reset(aenv, drawer=0.0)
    w = aenv.world_state()
    assert OPEN_D.preconditions(w, P) == []
    assert [x.code for x in CLOSE_D.preconditions(w, P)] == [NO_EFFECT]
    reset(aenv, drawer=scene.DRAWER_TRAVEL)
    w = aenv.world_state()
    assert CLOSE_D.preconditions(w, P) == []
    v = OPEN_D.preconditions(w, P)
    assert [x.code for x in v] == [NO_EFFECT] and "already open" in v[0].message
    reset(aenv, drawer=0.06)  # part way: either applies
    w = aenv.world_state()
    assert OPEN_D.preconditions(w, P) == [] and CLOSE_D.preconditions(w, P) == []


def test_a_cube_in_the_path_or_in_the_hand_stops_them(aenv):
    # on the table in front of the shut drawer's face: the pull would push it
    reset(aenv, cubes={"red_block": [0.08, -0.33], "blue_block": None})
    v = OPEN_D.preconditions(aenv.world_state(), P)
    assert [(x.code, x.message) for x in v] == [(PRECONDITION, "red_block is in the drawer's path")]
    # in front of the open drawer's knob, where the closing fingers come down
    knob_x = shut_geometry(aenv)[1][0] - scene.DRAWER_TRAVEL
    reset(aenv, drawer=scene.DRAWER_TRAVEL, cubes={"red_block": [knob_x - 0.05, -0.33]})
    v = CLOSE_D.preconditions(aenv.world_state(), P)
    assert [x.message for x in v] == ["red_block is in the drawer's path"]
    # a cube inside rides along and is no obstacle; one held is
    reset(aenv, drawer=scene.DRAWER_TRAVEL, cubes={"red_block": inside(aenv, scene.DRAWER_TRAVEL)})
    aenv.step_physics(np.array([0.0, 0.0, 0.0, OPEN]), control_steps=5)
    w = aenv.world_state()
    assert w.in_("red_block", "drawer") and CLOSE_D.preconditions(w, P) == []
    held = w.model_copy(update={"held_object": "red_block"})
    assert [x.message for x in CLOSE_D.preconditions(held, P)] == ["the gripper holds red_block"]


# ---------------------------------------------------------------------- effects
def test_effects_move_the_drawer_and_its_contents(aenv):
    reset(aenv, drawer=0.0, cubes={"red_block": inside(aenv, 0.0)})
    aenv.step_physics(np.array([0.0, 0.0, 0.0, OPEN]), control_steps=5)
    w = aenv.world_state()
    assert w.in_("red_block", "drawer") and w.is_closed()
    opened = OPEN_D.effect(w, P)
    assert opened.is_open() and not opened.is_closed() and opened.in_("red_block", "drawer")
    dx = w.object("red_block").pos[0] - opened.object("red_block").pos[0]
    assert dx == pytest.approx(scene.DRAWER_TRAVEL)
    assert opened.drawer.handle_pos[0] == pytest.approx(w.drawer.handle_pos[0] - dx)
    assert opened.grip_pos != w.grip_pos
    assert OPEN_D.success(w, opened, P)
    assert CLOSE_D.preconditions(opened, P) == []
    shut = CLOSE_D.effect(opened, P)
    assert shut.is_closed() and shut.object("red_block").pos == pytest.approx(
        w.object("red_block").pos
    )
    assert CLOSE_D.success(opened, shut, P)
    assert [x.code for x in CLOSE_D.preconditions(shut, P)] == [NO_EFFECT]


# ---------------------------------------------------------------------- success tests
def test_success_on_scripted_pull_and_push(aenv):
    reset(aenv)
    before = aenv.world_state()
    h = np.array(before.drawer.handle_pos)
    go(aenv, h + [0.0, 0.0, 0.08], OPEN)
    go(aenv, h, OPEN)
    aenv.step_physics(np.array([0.0, 0.0, 0.0, CLOSED]), control_steps=12)
    go(aenv, h - [scene.DRAWER_TRAVEL + 0.01, 0.0, 0.0], CLOSED, speed=0.4)
    w = aenv.world_state()
    assert w.is_open() and not OPEN_D.success(before, w, P)  # still holding the knob
    assert OPEN_D.doomed(before, w, P, OPEN_D.bind(before, P)) is None
    aenv.step_physics(np.array([0.0, 0.0, 0.0, OPEN]), control_steps=10)
    w = aenv.world_state()
    assert OPEN_D.success(before, w, P) and not CLOSE_D.success(before, w, P)
    h = np.array(w.drawer.handle_pos)
    go(aenv, aenv.grip_pos + [0.0, 0.0, 0.08], CLOSED)
    go(aenv, h + [-0.045, 0.0, 0.06], CLOSED)
    go(aenv, h + [-0.045, 0.0, 0.0], CLOSED)
    go(aenv, h + [0.06, 0.0, 0.0], CLOSED, speed=0.4, max_steps=8)  # part way in
    w = aenv.world_state()
    assert not w.is_open() and not CLOSE_D.success(before, w, P)
    go(aenv, h + [scene.DRAWER_TRAVEL, 0.0, 0.0], CLOSED, speed=0.4)
    assert CLOSE_D.success(before, aenv.world_state(), P)


# ---------------------------------------------------------------------- expert and policy
def drive(env: TabletopEnv, skill, seed: int, policy=None) -> tuple[bool, object, object]:
    rng = np.random.default_rng(seed)
    params = None
    while params is None:
        params = skill.sample_start(env, rng)
    before = env.world_state()
    b = skill.bind(before, params)
    skill.start(env, b)
    for _ in range(skill.step_budget):
        env.step_physics(skill.act(env.observe(), b, policy))
        if skill.success(before, env.world_state(), params):
            break
    for _ in range(skill.retreat_steps):
        a = skill.retreat(env.observe(), b)
        if a is None:
            break
        env.step_physics(a)
    return skill.success(before, env.world_state(), params), before, b


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_experts_open_and_close_from_chained_starts(aenv, seed):
    ok, before, b = drive(aenv, OPEN_D, seed)
    w = aenv.world_state()
    assert ok and w.is_open(), w.drawer
    assert w.drawer.contents == before.drawer.contents
    assert aenv.grip_pos[2] >= knob_of(aenv.observe(), b)[2] + 0.05  # risen off the knob
    ok, before, _ = drive(aenv, CLOSE_D, seed)
    w = aenv.world_state()
    assert ok and w.is_closed(), w.drawer
    assert w.drawer.contents == before.drawer.contents


def test_expert_shuts_the_drawer_with_a_cube_in_it(aenv):
    reset(aenv, drawer=scene.DRAWER_TRAVEL, cubes={"red_block": inside(aenv, scene.DRAWER_TRAVEL)})
    aenv.step_physics(np.array([0.0, 0.0, 0.0, OPEN]), control_steps=5)
    before = aenv.world_state()
    b = CLOSE_D.bind(before, P)
    for _ in range(CLOSE_D.step_budget):
        aenv.step_physics(CLOSE_D.act(aenv.observe(), b))
        if CLOSE_D.success(before, aenv.world_state(), P):
            break
    w = aenv.world_state()
    assert w.is_closed() and w.in_("red_block", "drawer"), (w.drawer, w.object("red_block"))


@pytest.mark.parametrize("skill", ["open_drawer", "close_drawer"])
def test_shipped_policies_do_it(skill):
    policy, manifest = load_policy(pretrained_dir(skill), skill)
    assert manifest["skill"] == skill and manifest["algo"] == "ppo"
    r = evaluate_policy(skill, policy, episodes=4, seed=777)
    assert r["success_rate"] == 1.0, r
