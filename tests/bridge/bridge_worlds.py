"""World states for bridge tests, built directly (no physics): fast and exact.

A plain module, not ``conftest``: tests import it, the conftest only holds fixtures."""

from __future__ import annotations

from sim import scene
from sim.world import ObjectState, WorldState
from tests import worlds

HOME = tuple(float(v) for v in scene.HOME_POS)
Z = scene.CUBE_HALF
TABLE_XY = {
    "red_block": (0.05, -0.16),
    "green_block": (-0.19, 0.03),
    "blue_block": (0.04, 0.0),
    "yellow_block": (0.17, 0.03),
}


def cube(name: str, xy=None, **kw) -> ObjectState:
    x, y = xy or TABLE_XY[name]
    base = dict(name=name, color=scene.cube_color(name), pos=(x, y, Z), on_table=True)
    base.update(kw)
    return ObjectState(**base)


def make_world(objects=None, held=None, grip=HOME) -> WorldState:
    objects = objects if objects is not None else [cube(n) for n in scene.CUBE_NAMES]
    return WorldState(
        objects=objects,
        bins=worlds.bins(),
        regions=worlds.regions(),
        held_object=held,
        grip_pos=grip,
        gripper_opening=0.08,
    )


def _worlds() -> dict[str, WorldState]:
    fresh = make_world()
    red_held = make_world(
        [cube("red_block", pos=(0.05, -0.16, 0.12), on_table=False, held=True)]
        + [cube(n) for n in scene.CUBE_NAMES[1:]],
        held="red_block",
        grip=(0.05, -0.16, 0.12),
    )
    stacked = make_world(
        [
            cube("red_block"),
            cube(
                "blue_block",
                xy=TABLE_XY["red_block"],
                pos=(0.05, -0.16, 3 * Z),
                on_table=False,
                on="red_block",
            ),
            cube("green_block"),
            cube("yellow_block"),
        ]
    )
    in_bin = make_world(
        [
            cube("red_block", pos=(0.0, 0.25, 0.025), on_table=False, in_bin="green_bin"),
            cube("green_block"),
            cube("blue_block"),
            cube("yellow_block"),
        ]
    )
    far = make_world(
        [
            cube("red_block"),
            cube("green_block"),
            cube("blue_block"),
            cube("yellow_block", xy=(0.45, 0.3), reachable=False),
        ]
    )
    three = make_world([cube(n) for n in scene.CUBE_NAMES[:3]])
    held_far_target = make_world(
        [
            cube("red_block", pos=(0.05, -0.16, 0.12), on_table=False, held=True),
            cube("green_block"),
            cube("blue_block"),
            cube("yellow_block", xy=(0.45, 0.3), reachable=False),
        ],
        held="red_block",
        grip=(0.05, -0.16, 0.12),
    )
    return {
        "fresh": fresh,
        "red_held": red_held,
        "stacked": stacked,
        "in_bin": in_bin,
        "far": far,
        "three": three,
        "held_far_target": held_far_target,
    }


WORLDS = _worlds()


def _affordance_worlds() -> dict[str, WorldState]:
    """Worlds where geometry or a learned success predictor refuses a step (not fuzzed: the
    fuzzer's valid plans know nothing of graspability)."""
    # red touching blue along y and green along x (an L): no grasp axis is free, a push of
    # red frees it; blue and green each have one free axis
    touching = make_world(
        [
            cube("red_block", xy=(0.0, -0.08)),
            cube("green_block", xy=(0.0405, -0.08)),
            cube("blue_block", xy=(0.0, -0.0395)),
            cube("yellow_block"),
        ]
    )
    # red against the outside of the green bin's wall with green touching it along the wall:
    # no grasp, and no push gets either out (the pusher would have to come down in the
    # other's place or against the wall)
    walled = make_world(
        [
            cube("red_block", xy=(0.0, 0.1605)),
            cube("green_block", xy=(0.0405, 0.1605)),
            cube("blue_block"),
            cube("yellow_block"),
        ]
    )
    # a 2x2 block of touching cubes: freed by pushing a row of two out of it
    block = make_world(
        [
            cube("red_block", xy=(0.0, -0.08)),
            cube("green_block", xy=(0.0405, -0.08)),
            cube("blue_block", xy=(0.0, -0.0395)),
            cube("yellow_block", xy=(0.0405, -0.0395)),
        ]
    )
    # red at the far front edge of the workspace: no controller gets the fingers behind it to
    # push it left (the push's preconditions say so; its predictor rated it about 0.01)
    far_edge = make_world(
        [cube("red_block", xy=(0.25, -0.25))] + [cube(n) for n in scene.CUBE_NAMES[1:]]
    )
    # red near the front edge: the fingers get behind it, but the shipped push rarely brings
    # it all the way left (its predictor rates that about 0.1)
    low_push = make_world(
        [cube("red_block", xy=(0.2, -0.3))] + [cube(n) for n in scene.CUBE_NAMES[1:]]
    )
    return {
        "far_edge": far_edge,
        "touching": touching,
        "block": block,
        "walled": walled,
        "low_push": low_push,
    }


AFFORDANCE_WORLDS = _affordance_worlds()
