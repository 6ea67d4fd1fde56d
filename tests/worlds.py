"""World states built directly (no physics) for tests that need a scene but not MuJoCo.

One home for the scene's layout in tests: the bins and regions sit where the compiled scene
puts them (``tests/sim/test_scene_layout.py`` pins that), so a test's world is never a
different table from the one the robot sees."""

from __future__ import annotations

from sim import scene
from sim.world import BinState, ObjectState, RegionState, WorldState

#: Bin centres (x, y) as in ``sim/assets/tabletop.xml``.
BIN_XY: dict[str, tuple[float, float]] = {
    "red_bin": (-0.16, 0.25),
    "green_bin": (0.0, 0.25),
    "blue_bin": (0.16, 0.25),
}
#: Where the arm rests between skills.
HOME_GRIP = (-0.08, 0.0, 0.22)
#: A resting cube's centre height.
CUBE_Z = 0.02


def bins(names=scene.BIN_NAMES) -> list[BinState]:
    return [BinState(name=n, color=scene.cube_color(n), pos=(*BIN_XY[n], 0.0)) for n in names]


def regions() -> list[RegionState]:
    return [RegionState(name=k, pos=v) for k, v in scene.REGIONS.items()]


def cube(name: str, pos=(0.0, -0.1, CUBE_Z), **kw) -> ObjectState:
    """A cube; on the table unless held, binned or stacked."""
    kw.setdefault("on_table", not (kw.get("held") or kw.get("in_bin") or kw.get("on")))
    return ObjectState(name=name, color=scene.cube_color(name), pos=pos, **kw)


def world(objects, *, held=None, grip=HOME_GRIP, bin_names=scene.BIN_NAMES) -> WorldState:
    return WorldState(
        objects=list(objects),
        bins=bins(bin_names),
        regions=regions(),
        held_object=held,
        grip_pos=grip,
    )
