"""Scripted motions in the articulated scene, through ``env.step_physics`` only: a press of
the button flips the light (a second press flips it back), a pull on the drawer's knob
opens the drawer and a push closes it, and save/restore-and-continue stays exact across a
press. They also show the next skills (press_button, open_drawer, close_drawer) are
feasible with the arm as it is: fingers along y, no turn of the hand."""

from __future__ import annotations

import numpy as np
import pytest

from sim import scene
from sim.env import TabletopEnv
from tests.motions import go

OPEN, CLOSED = -1.0, 1.0


@pytest.fixture
def aenv():
    e = TabletopEnv(scene="articulated")
    e.reset(seed=0)
    yield e
    e.close()


def press_button(env: TabletopEnv) -> None:
    """Closed fingers over the cap, down until it is past the press depth, back up."""
    w = env.world_state()
    x, y, top = w.button.pos
    go(env, (x, y, top + 0.06), CLOSED)
    go(env, (x, y, top + 0.025), CLOSED)
    for _ in range(30):
        env.step_physics(np.array([0.0, 0.0, -0.3, CLOSED]))
        if env.world_state().button.pressed:
            break
    assert env.world_state().button.pressed
    go(env, (x, y, top + 0.06), CLOSED, speed=0.5)


def test_each_press_flips_the_light(aenv):
    assert aenv.world_state().light_on is False
    press_button(aenv)
    w = aenv.world_state()
    assert w.light_on is True and not w.button.pressed and w.button.depth < 0.002
    assert aenv.observe()["articulation"][2] == 1.0
    press_button(aenv)
    assert aenv.world_state().light_on is False


def test_holding_the_button_down_does_not_flip_the_light(aenv):
    w = aenv.world_state()
    x, y, top = w.button.pos
    go(aenv, (x, y, top + 0.025), CLOSED)
    for _ in range(20):
        aenv.step_physics(np.array([0.0, 0.0, -0.3, CLOSED]))
    w = aenv.world_state()
    assert w.button.pressed and w.button.depth > scene.BUTTON_PRESS_DEPTH
    assert w.light_on is False  # it flips on the release, not on the press


def test_pulling_the_knob_opens_the_drawer_and_pushing_closes_it(aenv):
    w = aenv.world_state()
    assert w.is_closed()
    h = np.array(w.drawer.handle_pos)
    go(aenv, h + [0.0, 0.0, 0.08], OPEN)  # above the knob
    go(aenv, h, OPEN)  # fingers down on either side of it (along y)
    aenv.step_physics(np.array([0.0, 0.0, 0.0, CLOSED]), control_steps=12)
    go(aenv, h - [scene.DRAWER_TRAVEL + 0.01, 0.0, 0.0], CLOSED, speed=0.4)  # pull along -x
    aenv.step_physics(np.array([0.0, 0.0, 0.0, OPEN]), control_steps=10)
    go(aenv, aenv.grip_pos + [0.0, 0.0, 0.08], OPEN)
    w = aenv.world_state()
    assert w.is_open() and w.drawer.opening > scene.DRAWER_OPEN_MIN, w.drawer
    # close: closed fingers down just beyond the knob, then push along +x
    h = np.array(w.drawer.handle_pos)
    go(aenv, h + [-0.045, 0.0, 0.06], CLOSED)
    go(aenv, h + [-0.045, 0.0, 0.0], CLOSED)
    go(aenv, h + [scene.DRAWER_TRAVEL, 0.0, 0.0], CLOSED, speed=0.4)
    go(aenv, aenv.grip_pos + [-0.03, 0.0, 0.08], CLOSED)
    aenv.step_physics(np.array([0.0, 0.0, 0.0, CLOSED]), control_steps=10)
    w = aenv.world_state()
    assert w.is_closed() and not w.is_open(), w.drawer


def test_a_cube_rides_in_the_drawer(aenv):
    x = aenv.world_state().drawer.pos[0] - scene.DRAWER_TRAVEL  # the inside's centre, open
    z = scene.DRAWER_FLOOR_Z + scene.CUBE_HALF
    aenv.reset(
        seed=0,
        options={"drawer": scene.DRAWER_TRAVEL, "cubes": {"red_block": [x, -0.345, z, 0.0]}},
    )
    aenv.step_physics(np.array([0.0, 0.0, 0.0, OPEN]), control_steps=5)
    assert aenv.world_state().in_("red_block", "drawer")
    h = np.array(aenv.world_state().drawer.handle_pos)
    go(aenv, h + [-0.045, 0.0, 0.06], CLOSED)
    go(aenv, h + [-0.045, 0.0, 0.0], CLOSED)
    go(aenv, h + [scene.DRAWER_TRAVEL, 0.0, 0.0], CLOSED, speed=0.3)
    go(aenv, aenv.grip_pos + [-0.03, 0.0, 0.08], CLOSED)
    w = aenv.world_state()
    assert w.is_closed() and w.in_("red_block", "drawer"), (w.drawer, w.object("red_block"))


def test_save_restore_and_continue_is_exact_across_a_press(aenv):
    rng = np.random.default_rng(0)
    for a in rng.uniform(-1, 1, size=(8, 4)):
        aenv.step(a)
    w = aenv.world_state()
    x, y, top = w.button.pos
    go(aenv, (x, y, top + 0.025), CLOSED)
    saved = aenv.get_state()
    # continue: finish the press (the light flips on release), then random actions
    actions = [np.array([0.0, 0.0, -0.3, CLOSED])] * 8 + [np.array([0.0, 0.0, 0.6, CLOSED])] * 8
    actions += list(rng.uniform(-1, 1, size=(10, 4)))

    def run() -> np.ndarray:
        out = []
        for a in actions:
            aenv.step(a)
            out.append(aenv.get_state())
        return np.array(out)

    first = run()
    assert aenv.data.userdata[scene.LIGHT_USERDATA] == 1.0  # the press went through
    aenv.set_state(saved)
    assert aenv.data.userdata[scene.LIGHT_USERDATA] == 0.0
    assert np.array_equal(run(), first)
