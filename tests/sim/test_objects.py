"""Object specs: their MJCF is the scene's, their geometry is what physics does with them,
and a new kind is one class plus one registration."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import mujoco
import numpy as np
import pytest

from sim import objects, physics, scene, scenes
from sim.objects import KINDS, Cube, Cylinder, ObjectSpec, Sphere, from_dict, to_dict
from sim.objects.registry import register_kind

GEOM_FIELDS = ("type", "size", "mass", "friction", "rgba", "condim", "solref", "solimp")


def _compile(bodies: str, floor: bool = False) -> mujoco.MjModel:
    plane = '<geom name="floor" type="plane" size="1 1 0.1"/>' if floor else ""
    xml = f'<mujoco><option timestep="0.002"/><worldbody>{plane}{bodies}</worldbody></mujoco>'
    return mujoco.MjModel.from_xml_string(xml)


def _geom(model: mujoco.MjModel, name: str) -> dict:
    g = model.geom(name)
    body_mass = float(model.body_mass[g.bodyid[0]])
    return {
        "type": int(g.type[0]),
        "size": np.asarray(g.size).round(12).tolist(),
        "mass": round(body_mass, 12),
        "friction": np.asarray(g.friction).round(12).tolist(),
        "rgba": np.asarray(g.rgba).round(6).tolist(),
        "condim": int(g.condim[0]),
        "solref": np.asarray(g.solref).round(12).tolist(),
        "solimp": np.asarray(g.solimp).round(12).tolist()[:3],
    }


@pytest.mark.parametrize("scene_name", scene.SCENE_NAMES)
def test_scene_bodies_are_the_specs(scene_name):
    held = scenes.get(scene_name).objects
    model = physics.load_model(scene_name)
    own = _compile("".join(o.body_xml() for o in held))
    for o in held:
        got, want = _geom(model, f"{o.name}_geom"), _geom(own, f"{o.name}_geom")
        for f in GEOM_FIELDS:
            assert got[f] == want[f], (o.name, f, got[f], want[f])


def test_scene_names_and_height_come_from_the_specs():
    assert scene.CUBE_NAMES == tuple(o.name for o in objects.TABLETOP_OBJECTS)
    assert scene.CUBE_COLORS == tuple(o.color for o in objects.TABLETOP_OBJECTS)
    assert scene.CUBE_HALF == objects.spec("red_block").half_height == 0.02


KINDS_UNDER_TEST = [
    Cube(name="small_cube", color="red", rgba=(1, 0, 0, 1), half=0.02),
    Cube(name="big_cube", color="red", rgba=(1, 0, 0, 1), half=0.03),
    Cylinder(name="can", color="green", rgba=(0, 1, 0, 1), radius=0.02, half_length=0.03),
    Sphere(name="ball", color="blue", rgba=(0, 0, 1, 1), radius=0.022),
]


@pytest.mark.parametrize("spec", KINDS_UNDER_TEST, ids=lambda s: s.name)
def test_each_kind_rests_at_its_half_height(spec):
    """Dropped from 1 cm above its resting height, the body settles with its centre where
    the spec says (within the contact's softness) and stays inside its footprint's radius."""
    m = _compile(spec.body_xml((0.0, 0.0, spec.half_height + 0.01)), floor=True)
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, nstep=750)
    pos = d.body(spec.name).xpos
    assert abs(pos[2] - spec.half_height) < 0.002, (pos[2], spec.half_height)
    assert math.hypot(pos[0], pos[1]) < 0.002
    assert np.linalg.norm(d.qvel) < 0.05


@pytest.mark.parametrize("spec", KINDS_UNDER_TEST, ids=lambda s: s.name)
def test_footprint_holds_the_outline(spec):
    """Every footprint corner lies at least the outline's distance out, and none beyond
    ``horizontal_radius`` (a round one circumscribes its circle by less than 2%)."""
    for yaw in (0.0, 0.3, -1.1, math.pi / 4):
        pts = spec.footprint(0.1, -0.2, yaw)
        r = [math.hypot(x - 0.1, y + 0.2) for x, y in pts]
        assert max(r) <= spec.horizontal_radius * 1.02 + 1e-12
        assert min(r) >= spec.width_across(0.0) / 2 - 1e-12


def test_cube_width_across_turns_with_yaw():
    c = KINDS_UNDER_TEST[0]
    assert c.width_across(0.0) == pytest.approx(0.04)
    assert c.width_across(math.pi / 4) == pytest.approx(0.04 * math.sqrt(2))
    assert c.width_across(math.pi / 2) == pytest.approx(0.04)
    ball = KINDS_UNDER_TEST[3]
    assert ball.width_across(0.0) == ball.width_across(0.7) == pytest.approx(0.044)


def test_what_stacks_and_what_rolls():
    cube, big, can, ball = KINDS_UNDER_TEST
    assert cube.stackable and can.stackable and not ball.stackable
    assert ball.rolls and not cube.rolls and not can.rolls
    assert big.height == pytest.approx(0.06) and big.top(0.03) == pytest.approx(0.06)


@pytest.mark.parametrize("spec", KINDS_UNDER_TEST, ids=lambda s: s.name)
def test_plain_data_round_trip(spec):
    assert from_dict(to_dict(spec)) == spec


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"kind": "pyramid", "name": "p", "color": "red", "rgba": [1, 0, 0, 1]},
            "unknown object kind",
        ),
        (
            {"kind": "cube", "name": "c", "color": "red", "rgba": [1, 0, 0, 1], "radius": 1},
            "unknown field",
        ),
        ({"kind": "cube", "name": "c", "color": "red"}, "rgba"),
        ({"kind": "cube", "name": "c", "color": "red", "rgba": [1, 0, 0, 1], "mass": -1}, "mass"),
        (
            {"kind": "sphere", "name": "b", "color": "red", "rgba": [1, 0, 0, 1], "radius": 2},
            "sizes",
        ),
        ({"kind": "cube", "name": "a b", "color": "red", "rgba": [1, 0, 0, 1]}, "letters"),
        (["cube"], "mapping"),
    ],
)
def test_bad_object_data_is_one_clear_error(data, message):
    with pytest.raises(ValueError, match=message):
        from_dict(data)


def test_a_new_kind_is_one_class_and_one_registration():
    """A kind written here, in the test, is built from data, compiles and rests at the
    height its spec states: nothing else had to change."""

    @register_kind
    @dataclass(frozen=True)
    class Puck(ObjectSpec):
        radius: float = 0.03
        half_length: float = 0.008

        kind: ClassVar[str] = "puck"
        geom_type: ClassVar[str] = "cylinder"

        @property
        def geom_size(self) -> tuple[float, ...]:
            return (self.radius, self.half_length)

        @property
        def half_height(self) -> float:
            return self.half_length

        @property
        def horizontal_radius(self) -> float:
            return self.radius

        def footprint(self, x, y, yaw):
            return [(x + self.radius, y), (x, y + self.radius), (x - self.radius, y)]

        def width_across(self, yaw):
            return 2 * self.radius

    try:
        puck = from_dict({"kind": "puck", "name": "puck", "color": "black", "rgba": [0, 0, 0, 1]})
        assert isinstance(puck, Puck)
        test_each_kind_rests_at_its_half_height(puck)
        with pytest.raises(ValueError, match="registered already"):

            @register_kind
            @dataclass(frozen=True)
            class OtherPuck(Puck):
                pass

    finally:
        KINDS.pop("puck", None)


def _pose(x, y, z):
    return ([x, y, z], np.array([1.0, 0.0, 0.0, 0.0]))


def test_predicates_read_each_objects_height():
    """A small cube on a big one (8 cm) rests on it at their two halves apart, and a ball
    carries nothing: what one fixed cube height could not say."""
    from sim.world import world_from_poses

    big = Cube(name="big_block", color="red", rgba=(1, 0, 0, 1), half=0.04)
    ball = Sphere(name="blue_ball", color="blue", rgba=(0, 0, 1, 1), radius=0.022)
    small = objects.spec("green_block")
    with objects.defined(big, ball):
        raw = {
            "big_block": _pose(0.0, 0.0, 0.04),
            "green_block": _pose(0.0, 0.0, 0.04 + 0.04 + 0.02),
            "blue_ball": _pose(0.1, 0.0, 0.022),
            "yellow_block": _pose(0.1, 0.0, 0.022 + 0.022 + 0.02),
        }
        w = world_from_poses(raw, None, (0.0, 0.0, 0.3), 0.08, [])
        assert "- blue_ball (sphere): on the table" in w.describe()
    assert w.object("big_block").on_table
    assert w.object("green_block").on == "big_block"
    assert not w.object("green_block").on_table
    assert w.object("blue_ball").on_table
    assert w.object("yellow_block").on is None  # a ball carries nothing
    assert [o.kind for o in w.objects] == ["cube", "cube", "sphere", "cube"]
    dumped = w.model_dump(mode="json")["objects"]
    assert dumped[2]["kind"] == "sphere" and "kind" not in dumped[0]  # cubes read as before
    assert type(w).model_validate_json(w.model_dump_json()).object("blue_ball").kind == "sphere"
    assert small.half_height == 0.02
    with pytest.raises(KeyError, match="no object 'big_block'"):
        objects.spec("big_block")  # known only inside the block


def test_an_object_name_means_one_object():
    other = Cube(name="red_block", color="red", rgba=(1, 0, 0, 1), half=0.03)
    with pytest.raises(ValueError, match="defined already"):
        objects.register_object(other)
    assert objects.register_object(objects.spec("red_block")) is objects.spec("red_block")
