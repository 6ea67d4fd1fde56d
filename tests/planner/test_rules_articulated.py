"""The rules planner reads the articulated scene's devices: the drawer, the button and the
light; on the tabletop scene the same words mean what they did (no drawer there)."""

from __future__ import annotations

import pytest

from planner import rules
from sim.env import TabletopEnv


@pytest.fixture(scope="module")
def shut_dark():
    e = TabletopEnv(scene="articulated")
    e.reset(seed=0, options={"drawer": 0.0, "light": False})
    yield e.world_state()
    e.close()


def _skills(r):
    return [
        s["skill"] + (f":{s.get('object') or s.get('target')}" if len(s) > 1 else "")
        for s in r.steps
    ]


@pytest.mark.parametrize(
    "task, steps, goal",
    [
        ("open the drawer", ["open_drawer"], ["open(drawer)"]),
        ("press the button", ["press_button"], ["light_on"]),
        ("turn on the light", ["press_button"], ["light_on"]),
        ("switch on the lamp", ["press_button"], ["light_on"]),
        (
            "put the red block in the drawer",
            ["open_drawer", "pick:red_block", "place:drawer"],
            ["in(red_block, drawer)"],
        ),
        (
            "open the drawer and put the blue block in it",
            ["open_drawer", "pick:blue_block", "place:drawer"],
            ["in(blue_block, drawer)", "open(drawer)"],
        ),
        (
            "put the red block in the drawer, then close the drawer",
            ["open_drawer", "pick:red_block", "place:drawer", "close_drawer"],
            ["in(red_block, drawer)", "closed(drawer)"],
        ),
        (
            "turn on the light, then put the green block in the red bin",
            ["press_button", "pick:green_block", "place:red_bin"],
            ["in(green_block, red_bin)", "light_on"],
        ),
    ],
)
def test_device_commands(shut_dark, task, steps, goal):
    r = rules.parse(task, shut_dark)
    assert r.confident and r.refuse is None, r.notes
    assert _skills(r) == steps and r.goal == goal


@pytest.mark.parametrize("task", ["close the drawer", "turn the light off", "shut the drawer"])
def test_already_so_is_nothing_to_do(shut_dark, task):
    r = rules.parse(task, shut_dark)
    assert r.confident and r.steps == [] and r.refuse.startswith(rules.NOTHING_TO_DO)


def test_unread_device_request_goes_to_the_model(shut_dark):
    r = rules.parse("make the drawer dance", shut_dark)
    assert not r.confident and r.steps == []


@pytest.mark.parametrize(
    "task, reason",
    [
        ("put the red block in the drawer", "there is no drawer in the scene"),
        ("open the drawer", "there is no drawer in the scene"),
        ("turn on the light", "there is no button or light in the scene"),
        ("press the button", "there is no button or light in the scene"),
    ],
)
def test_tabletop_scene_has_no_devices(env, task, reason):
    env.reset(seed=0)
    r = rules.parse(task, env.world_state())
    assert r.confident and r.steps == [] and r.refuse.startswith(reason)
