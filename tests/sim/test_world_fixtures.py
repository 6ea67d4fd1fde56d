"""``WorldState.fixtures`` keeps the world's JSON what it was: each fixture's state under its
old top-level key, in the old order, read back from old files; and ``drawer``, ``button``
and ``light_on`` read and write it as the fields they replaced did, without a copy of the
world seeing another's change."""

from __future__ import annotations

import json

import pytest

from sim import fixtures, scene
from sim.env import TabletopEnv
from sim.world import ButtonState, DrawerState, WorldState

#: The world JSON's keys in the articulated scene, in their order (as before fixtures).
KEYS = [
    "objects",
    "bins",
    "regions",
    "held_object",
    "grip_pos",
    "gripper_opening",
    "drawer",
    "button",
    "light_on",
]


@pytest.fixture(scope="module")
def world() -> WorldState:
    e = TabletopEnv(scene="articulated")
    try:
        e.reset(seed=3, options={"drawer": scene.DRAWER_TRAVEL, "light": True})
        return e.world_state()
    finally:
        e.close()


def test_the_json_keeps_its_keys_and_reads_back(world):
    text = world.compact_json()
    data = json.loads(text)
    assert list(data) == KEYS and data["light_on"] is True
    assert data["drawer"]["is_open"] and data["button"]["name"] == "button"
    back = WorldState.model_validate_json(text)
    assert back == world and back.compact_json() == text
    assert list(back.fixtures) == ["drawer", "button", "lamp"]
    # an old file's keys in another order are written back in the usual one
    shuffled = {k: data[k] for k in ["light_on", "drawer", *KEYS[:6], "button"]}
    assert WorldState.model_validate(shuffled).compact_json() == text
    # a tabletop world has no fixture keys at all
    assert list(WorldState().model_dump()) == KEYS[:6]


def test_old_field_names_build_read_and_copy():
    w = WorldState(drawer=DrawerState(opening=0.02), light_on=False)
    assert list(w.fixtures) == ["drawer", "lamp"]
    assert w.drawer.opening == 0.02 and w.button is None and w.light_on is False
    lit = w.model_copy(update={"light_on": True, "button": ButtonState()})
    assert lit.light_on is True and list(lit.fixtures) == ["drawer", "button", "lamp"]
    assert w.light_on is False and w.button is None  # the original stands
    assert w.model_copy(update={"drawer": None}).drawer is None and w.drawer is not None


def test_setting_a_fixture_leaves_a_copy_alone():
    w = WorldState(drawer=DrawerState())
    c = w.model_copy()
    c.drawer = DrawerState(opening=0.1)
    c.light_on = True
    assert w.drawer.opening == 0.0 and w.light_on is None
    assert c.drawer.opening == 0.1 and list(c.fixtures) == ["drawer", "lamp"]
    c.light_on = None
    assert "lamp" not in c.fixtures


def test_grasp_blockers_come_from_the_fixtures(world):
    """The cabinet, the drawer's walls and knob and the button's housing are in the way
    as they were: the drawer's and the button's footprints, in that order."""
    foot = [
        *fixtures.get("drawer").footprints(world.drawer, 0.003),
        *fixtures.get("button").footprints(world.button, 0.003),
    ]
    names = [name for name, _, _ in foot]
    assert names == ["cabinet", "drawer wall", "drawer handle", "button"]
    assert fixtures.get("lamp").footprints(world.light_on, 0.003) == []
