"""Symbolic world state: a pure function of the physics state.

Everything the planner sees, every skill precondition and success test, and every
evaluation goal is a predicate over this model, so it is computed from MuJoCo's data
alone (positions and contacts), never from what a controller believes it did.
"""

from __future__ import annotations

import json
import math
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import mujoco
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from sim import call_memo, scene, scenes
from sim.fixtures import registry as fixture_registry
from sim.fixtures.base import Furniture as Furniture  # (re-exported)
from sim.fixtures.base import box as _box
from sim.fixtures.button import ButtonState as ButtonState  # (re-exported)
from sim.fixtures.button import button_footprint as _button_footprint
from sim.fixtures.drawer import DrawerState as DrawerState  # (re-exported)
from sim.fixtures.drawer import furniture_footprints as _furniture_footprints
from sim.geometry import square_footprint as square_footprint  # (re-exported)
from sim.objects import spec as object_spec

#: Tolerances of the predicates (m).
#: An object counts as on the table up to this far (m) above its own half height
#: (ON_TABLE_MAX_Z for the tabletop's cubes).
ON_TABLE_ABOVE = 0.012
ON_TABLE_MAX_Z = scene.CUBE_HALF + ON_TABLE_ABOVE
STACK_XY_TOL = 0.025
STACK_DZ = (2 * scene.CUBE_HALF - 0.008, 2 * scene.CUBE_HALF + 0.012)  # (for two cubes)


def stack_dz(lower: str, upper: str) -> tuple[float, float]:
    """How far (m) the centre of ``upper`` may lie above that of ``lower`` for it to rest on
    it: their two half heights, 8 mm less (a cube sunk into the soft contact, or tilted) to
    12 mm more (dropped a little short); STACK_DZ for two of the tabletop's cubes."""
    # (the halves summed first: for equal halves the same double as twice one)
    apart = object_spec(lower).half_height + object_spec(upper).half_height
    return (apart - 0.008, apart + 0.012)


FALLEN_Z = -0.05
ABSENT_X = 1.5  # cubes parked beyond this x are not part of the scene
REACH_MIN_R, REACH_MAX_R = 0.16, 0.70  # grip-site horizontal distance from the arm base
#: A cube on the table this close (centre to centre, m) to one within a region's radius is at
#: the region too (:meth:`WorldState.in_region`): two cube widths and a little play.
REGION_BESIDE = 2 * scene.CUBE_HALF + 0.02

#: The gripper around a cube it is about to grasp, relative to the grasp point (the cube's
#: centre), described for fingers along world y (the hand at rest; a pick may turn it a
#: quarter, and then x and y swap): a
#: finger comes down on each side of the cube along y and closes onto it: it sweeps x within
#: +-FINGER_X_HALF and |y| from the cube's half-width across the fingers out to
#: FINGER_OUTER (the narrowest opening the pick approach descends with, ``DESCEND_OPENING``
#: / 2, plus the finger's thickness), its tip FINGER_TIP_DZ below the grasp point. The palm
#: spans x +-PALM_HALF[0], y +-PALM_HALF[1], from PALM_DZ above it.
FINGER_X_HALF = 0.012
FINGER_OUTER = 0.042
FINGER_TIP_DZ = -0.015
PALM_HALF = (0.02, 0.06)
PALM_DZ = 0.055
#: How far a neighbouring cube gives way along y under a descending finger (m): the fingers
#: still get down with a neighbour 2 cm away along y, not with one 1.6 cm away (measured with
#: the scripted expert and the shipped policy; ``scripts/affordance.py verify``). A cube
#: reaching 2 mm into the finger's x band while touching the cube does not give (measured:
#: both fail). Walls do not give at all.
CUBE_GIVE = 0.002
#: A cube is grasped with the grip site up to this far from its centre (the pads are 2.2 cm
#: wide, the fingers open 2 cm wider than a cube): a cube this far past the workspace box,
#: where the grip site is clipped, can still be picked.
GRASP_SLACK = 0.01
BIN_WALL_THICKNESS = 0.008  # the walls' thickness in sim/assets/tabletop.xml
#: Room the shipped pick policy needs between a finger and a bin wall (m): with the wall
#: 2.2 cm from the cube's side it fails from every arm start, with 2.7 cm it succeeds.
WALL_MARGIN = 0.003
#: The finger axes a pick may use, in order of preference: the hand at rest, then turned a
#: quarter about the vertical (``ArmController.set_grip_yaw``).
GRASP_AXES = ("y", "x")


class ObjectState(BaseModel):
    """One cube as seen from physics."""

    model_config = ConfigDict(extra="forbid")

    name: str
    color: str
    pos: tuple[float, float, float]
    yaw: float = 0.0
    held: bool = False
    on_table: bool = False
    in_bin: str | None = None
    on: str | None = None
    reachable: bool = True
    fallen: bool = False
    #: Its kind (``sim.objects``: cube, cylinder, sphere); left out of the JSON for a cube,
    #: so a world of cubes reads as it always has.
    kind: str = "cube"


class BinState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    color: str
    pos: tuple[float, float, float]
    inner_half: float = scene.BIN_INNER_HALF


class RegionState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    pos: tuple[float, float]
    radius: float = scene.REGION_RADIUS


#: The world JSON keys of the articulated scene's fixtures (``sim.fixtures``), left out of
#: the serialised form when absent so that the default scene's JSON is what it always was.
ARTICULATED_FIELDS = ("drawer", "button", "light_on")


class WorldState(BaseModel):
    """Snapshot of the scene: objects, placement targets, what the gripper holds, and the
    state of each fixture the scene has besides its bins (``fixtures``: fixture name ->
    state, ``sim.fixtures``). A fixture's state is written in the JSON under its own key at
    the top level (``"drawer": {...}``, ``"light_on": true``), as episodes have always had
    it, and read back from there."""

    model_config = ConfigDict(extra="forbid")

    objects: list[ObjectState] = Field(default_factory=list)
    bins: list[BinState] = Field(default_factory=list)
    regions: list[RegionState] = Field(default_factory=list)
    held_object: str | None = None
    grip_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    gripper_opening: float = 0.0
    #: Fixture name -> its state, in the registry's order (none on the tabletop). Replace
    #: the dict rather than change it in place: a shallow copy of the world shares it.
    fixtures: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _fixture_keys(cls, data: Any) -> Any:
        """Each fixture's state from its top-level key (an episode's JSON, or
        ``WorldState(drawer=...)``), into ``fixtures``; a state given as data is validated
        as its fixture's state type."""
        if not isinstance(data, dict):
            return data
        if "fixtures" not in data and fixture_registry.BY_KEY.keys().isdisjoint(data):
            return data  # (the common case: one set test)
        data = dict(data)
        given = dict(data.pop("fixtures", None) or {})
        for key, name in fixture_registry.BY_KEY.items():
            if key in data:
                value = data.pop(key)
                if value is not None:
                    given[name] = value
        unknown = [n for n in given if n not in fixture_registry.STORED]
        if unknown:
            known = ", ".join(fixture_registry.STORED)
            raise ValueError(f"unknown fixture(s) {unknown}; known: {known}")
        data["fixtures"] = {
            n: f.load(given[n]) for n, f in fixture_registry.STORED.items() if n in given
        }
        return data

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler):
        out = handler(self)
        if isinstance(out, dict):
            states = out.pop("fixtures", None) or {}
            for name, f in fixture_registry.STORED.items():
                if name in states and states[name] is not None:
                    out[f.world_key] = states[name]
            for o in out.get("objects") or ():
                if isinstance(o, dict) and o.get("kind") == "cube":
                    del o["kind"]
        return out

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False):
        """pydantic's copy; a fixture's key in ``update`` (``{"drawer": d}``,
        ``{"light_on": True}``) replaces that fixture's state (None removes it)."""
        if update and not fixture_registry.BY_KEY.keys().isdisjoint(update):
            update = dict(update)
            states = dict(update.get("fixtures", self.fixtures))
            for key, name in fixture_registry.BY_KEY.items():
                if key in update:
                    value = update.pop(key)
                    if value is None:
                        states.pop(name, None)
                    else:
                        states[name] = value
            update["fixtures"] = _in_registry_order(states)
        return super().model_copy(update=update, deep=deep)

    def _set_fixture(self, name: str, state: Any) -> None:
        """Replace (None: remove) one fixture's state, the dict copied, not changed."""
        states = dict(self.fixtures)
        if state is None:
            states.pop(name, None)
        else:
            fresh = name not in states
            states[name] = state
            if fresh:
                states = _in_registry_order(states)
        self.fixtures = states

    # ---------------------------------------------------------------- fixtures
    # (the articulated scene's, by their old field names: plain dict reads, the skills and
    # the planner ask them often)
    @property
    def drawer(self) -> DrawerState | None:
        """The drawer's state (``fixtures["drawer"]``), None in a scene without one."""
        return self.fixtures.get("drawer")

    @drawer.setter
    def drawer(self, state: DrawerState | None) -> None:
        self._set_fixture("drawer", state)

    @property
    def button(self) -> ButtonState | None:
        """The button's state (``fixtures["button"]``), None in a scene without one."""
        return self.fixtures.get("button")

    @button.setter
    def button(self, state: ButtonState | None) -> None:
        self._set_fixture("button", state)

    @property
    def light_on(self) -> bool | None:
        """Whether the lamp is lit (``fixtures["lamp"]``), None in a scene without one."""
        return self.fixtures.get("lamp")

    @light_on.setter
    def light_on(self, state: bool | None) -> None:
        self._set_fixture("lamp", state)

    # ---------------------------------------------------------------- lookup
    # (plain loops: the bridge looks names up a few dozen times a step, and a generator
    # costs more than the scan of a handful of entries)
    def object(self, name: str) -> ObjectState | None:
        for o in self.objects:
            if o.name == name:
                return o
        return None

    def bin(self, name: str) -> BinState | None:
        for b in self.bins:
            if b.name == name:
                return b
        return None

    def region(self, name: str) -> RegionState | None:
        for r in self.regions:
            if r.name == name:
                return r
        return None

    @property
    def object_names(self) -> list[str]:
        return [o.name for o in self.objects]

    @property
    def bin_names(self) -> list[str]:
        return [b.name for b in self.bins]

    @property
    def drawer_names(self) -> list[str]:
        """The drawer's name where the scene has one (a container like a bin), else none."""
        d = self.fixtures.get("drawer")
        return [d.name] if d is not None else []

    @property
    def container_names(self) -> list[str]:
        """The names of the fixtures objects can lie in besides the bins (the drawer), where
        the scene has them."""
        fx = self.fixtures
        if not fx:
            return []
        return [
            f.container_name(state)
            for name, f in fixture_registry.CONTAINERS.items()
            if (state := fx.get(name)) is not None
        ]

    def container_of(self, name: str) -> str | None:
        """The container fixture object ``name`` lies in (the drawer), if any: its name."""
        fx = self.fixtures
        if fx:
            for fname, f in fixture_registry.CONTAINERS.items():
                state = fx.get(fname)
                if state is not None and name in f.contents(state):
                    return f.container_name(state)
        return None

    @property
    def region_names(self) -> list[str]:
        return [r.name for r in self.regions]

    # ---------------------------------------------------------------- predicates
    def held(self, name: str) -> bool:
        return self.held_object == name

    def in_(self, name: str, bin_name: str) -> bool:
        """``in(name, bin_name)``; ``bin_name`` may also be a container fixture (the
        drawer)."""
        o = self.object(name)
        fx = self.fixtures
        if fx:  # (the registry's few containers, not the world's fixtures, are scanned)
            for fname, f in fixture_registry.CONTAINERS.items():
                state = fx.get(fname)
                if state is not None and f.container_name(state) == bin_name:
                    return o is not None and name in f.contents(state)
        return o is not None and o.in_bin == bin_name

    def in_drawer(self, name: str) -> bool:
        return self.drawer is not None and name in self.drawer.contents

    def is_open(self, name: str = scene.DRAWER_NAME) -> bool:
        """``open(drawer)``: pulled out at least ``scene.DRAWER_OPEN_MIN``."""
        return self.drawer is not None and self.drawer.name == name and self.drawer.is_open

    def is_closed(self, name: str = scene.DRAWER_NAME) -> bool:
        """``closed(drawer)``: in to ``scene.DRAWER_CLOSED_MAX``; a drawer part way out is
        neither open nor closed."""
        return self.drawer is not None and self.drawer.name == name and self.drawer.is_closed

    def above(self, top: str, bottom: str) -> bool:
        """``top`` is somewhere in the tower standing on ``bottom`` (``on``, transitively)."""
        return bottom in self.stack_below(top)

    def stack_below(self, name: str) -> list[str]:
        """The cubes under ``name``, from the one it rests on down to the tower's base."""
        out: list[str] = []
        o = self.object(name)
        while o is not None and o.on is not None and o.on not in out and o.on != name:
            out.append(o.on)
            o = self.object(o.on)
        return out

    def top_of_stack(self, name: str) -> str | None:
        """The topmost cube of the tower ``name`` is in (``name`` itself when nothing is
        stacked on it; None for an unknown cube)."""
        if self.object(name) is None:
            return None
        seen, top = {name}, name
        while (nxt := self.under(top)) is not None and nxt not in seen:
            seen.add(nxt)
            top = nxt
        return top

    def tower(self, name: str) -> list[str]:
        """The whole tower ``name`` is in, bottom first."""
        top = self.top_of_stack(name)
        return [] if top is None else [*reversed(self.stack_below(top)), top]

    def clear(self, name: str) -> bool:
        """Nothing is stacked on ``name``."""
        return self.object(name) is not None and self.under(name) is None

    def on(self, top: str, bottom: str) -> bool:
        o = self.object(top)
        return o is not None and o.on == bottom

    def on_table(self, name: str) -> bool:
        o = self.object(name)
        return o is not None and o.on_table

    def reachable(self, name: str) -> bool:
        o = self.object(name)
        return o is not None and o.reachable

    def grasp_blockers(self, name: str, axis: str = "y", turn: float = 0.0) -> list[str]:
        """What stands where a finger (or the palm) must go to grasp ``name`` with the fingers
        along world ``axis``: other cubes and bin walls (``"<bin> wall"``), computed from the
        poses alone, so it holds for a predicted world as well as for one extracted from
        physics. Asked of one world by a pick's preconditions and again by its predictor's
        features: remembered within a :func:`sim.call_memo.scope` (a fresh list each)."""
        args = call_memo.key(name, axis, turn)
        got = call_memo.remembered(
            "grasp_blockers", self, args, lambda: self._grasp_blockers(name, axis, turn)
        )
        return list(got)

    def _grasp_blockers(self, name: str, axis: str, turn: float) -> list[str]:
        o = self.object(name)
        if o is None or o.held or o.fallen:
            return []
        furniture: list[Furniture] = []
        if self.fixtures:
            stored = fixture_registry.STORED
            for fname, state in self.fixtures.items():
                if (f := stored.get(fname)) is not None:  # (one unregistered since: none)
                    furniture += f.footprints(state, WALL_MARGIN)
        return grasp_blockers(o, self.objects, self.bins, axis, furniture, turn)

    def grasp_axis(self, name: str) -> str | None:
        """The world axis the fingers can close along on ``name``: ``"y"`` (the hand as it
        rests) when nothing is in the way there, else ``"x"`` (the hand turned a quarter),
        else None. A quarter turn of a square cube is the same cube, so a wall or a neighbour
        beside it along one axis is not a reason to give up."""
        for axis in GRASP_AXES:
            if not self.grasp_blockers(name, axis):
                return axis
        return None

    def blocked_by(self, name: str) -> list[str]:
        """What keeps every grasp of ``name`` out (along y and along x, each named once);
        empty when one axis is free."""
        if self.grasp_axis(name) is not None:
            return []
        return list(dict.fromkeys(b for a in GRASP_AXES for b in self.grasp_blockers(name, a)))

    def graspable(self, name: str) -> bool:
        """The cube is reachable and both fingers can come down beside it along y or along x
        with nothing in the way (no touching neighbour, no bin wall on that axis). A cube
        with another stacked on it is judged by ``under``, not here."""
        o = self.object(name)
        return o is not None and o.reachable and not o.fallen and self.grasp_axis(name) is not None

    def under(self, name: str) -> str | None:
        """The cube stacked on ``name``, if any."""
        return next((o.name for o in self.objects if o.on == name), None)

    def in_region(self, name: str, region: str, beside: float = REGION_BESIDE) -> bool:
        """``at(name, region)``: on the table within the region's radius, or beside (centres
        at most ``beside`` apart) another cube on the table within it. A region is an area: a
        second block set down or pushed there stands beside the first. (A push asks for a
        little less than ``REGION_BESIDE``, so the cube's slide after it stops keeps it there.)"""
        o, r = self.object(name), self.region(region)
        if o is None or r is None or not o.on_table:
            return False
        d = math.dist(o.pos[:2], r.pos)
        if d <= r.radius:
            return True
        return d <= r.radius + beside and any(
            p.name != name
            and p.on_table
            and math.dist(p.pos[:2], r.pos) <= r.radius
            and math.dist(p.pos[:2], o.pos[:2]) <= beside
            for p in self.objects
        )

    # ---------------------------------------------------------------- prompt form
    def describe(self) -> str:
        """Compact text for prompts: one line per object, then the targets."""
        lines = []
        for o in self.objects:
            if o.held:
                where = "held by the gripper"
            elif (container := self.container_of(o.name)) is not None:
                where = f"in {container}"
            elif o.in_bin:
                where = f"in {o.in_bin}"
            elif o.on:
                where = f"on {o.on}"
            elif o.fallen:
                where = "fallen off the table"
            elif o.on_table:
                where = f"on the table at ({o.pos[0]:+.2f}, {o.pos[1]:+.2f})"
            else:
                where = f"at ({o.pos[0]:+.2f}, {o.pos[1]:+.2f}, {o.pos[2]:+.2f})"
            extra = "" if o.reachable else ", unreachable"
            if extra == "" and not o.held:
                blockers = self.blocked_by(o.name)
                if blockers:
                    extra = f", not graspable (blocked by {', '.join(blockers)})"
            kind = "" if o.kind == "cube" else f" ({o.kind})"
            lines.append(f"- {o.name}{kind}: {where}{extra}")
        lines.append("bins: " + ", ".join(self.bin_names))
        lines.append("table regions: " + ", ".join(self.region_names))
        lines.append(f"gripper: {'holding ' + self.held_object if self.held_object else 'empty'}")
        stored = fixture_registry.STORED
        for fname, fstate in self.fixtures.items():
            if (f := stored.get(fname)) is not None:
                lines += f.scene_lines(fstate)
        return "\n".join(lines)

    def compact_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), separators=(",", ":"))


# a fixture's JSON key sits beside the world's own fields: it may not be one of them
fixture_registry.RESERVED_KEYS.update(WorldState.model_fields)


def _in_registry_order(states: dict[str, Any]) -> dict[str, Any]:
    """``states`` ordered as the fixtures were registered (the scene text's order)."""
    return {n: states[n] for n in fixture_registry.STORED if n in states}


class _SceneIndex:
    """Ids resolved once per model so extraction is a few array reads."""

    def __init__(self, model: mujoco.MjModel):
        # the objects of whichever scene the model is, in their rows' order
        names = _objects_of(model)
        self.cube_bodies = {n: model.body(n).id for n in names}
        self.cube_geoms = {model.geom(f"{n}_geom").id: n for n in names}
        self.left = {model.geom(g).id for g in ("finger_left_geom", "finger_left_pad")}
        self.right = {model.geom(g).id for g in ("finger_right_geom", "finger_right_pad")}
        # the bins the scene has (a scene without the bins fixture has none)
        self.bins: dict[str, int] = fixture_registry.get("bins").find(model) or {}
        self.site = model.site("grip_site").id
        self.finger_q = [model.jnt_qposadr[model.joint(j).id] for j in scene.FINGER_JOINTS]
        # the other fixtures the model has, each with what it needs to read its state
        self.fixtures = [
            (f, idx) for f in fixture_registry.STORED.values() if (idx := f.find(model)) is not None
        ]
        #: the registry as this index saw it (a fixture registered later means a new index)
        self.version = fixture_registry.version


def _objects_of(model: mujoco.MjModel) -> list[str]:
    """The names of the scene objects ``model`` has a body for, by their row (every scene's
    objects are candidates: the model does not say which scene it is)."""
    return sorted((n for n in scenes.object_names() if _body_id(model, n) >= 0), key=scenes.row)


def _body_id(model: mujoco.MjModel, name: str) -> int:
    return int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name))


_INDEX: dict[int, tuple[weakref.ref, _SceneIndex]] = {}


def _index(model: mujoco.MjModel) -> _SceneIndex:
    # keyed by id, checked by a weak reference: a freed model's id may come back for a model
    # of another scene (the articulated one has more to index)
    key = id(model)
    entry = _INDEX.get(key)
    if entry is None or entry[0]() is not model or entry[1].version != fixture_registry.version:
        entry = (weakref.ref(model), _SceneIndex(model))
        _INDEX[key] = entry
    return entry[1]


def yaw_of(quat: np.ndarray) -> float:
    """Rotation about world z of a (w, x, y, z) quaternion."""
    w, x, y, z = quat.tolist()
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


_BASE_X, _BASE_Y = (float(v) for v in scene.BASE_XY)
_LOW, _HIGH = scene.WORKSPACE_LOW.tolist(), scene.WORKSPACE_HIGH.tolist()


def reachable_xy(x: float, y: float, low_y: float = _LOW[1]) -> bool:
    """Whether the grip site can be brought over (x, y) pointing down (``low_y``: how far the
    workspace reaches along -y there; further over the open drawer)."""
    r = math.hypot(x - _BASE_X, y - _BASE_Y)
    in_box = _LOW[0] - 1e-9 <= x <= _HIGH[0] + 1e-9 and low_y - 1e-9 <= y <= _HIGH[1] + 1e-9
    return in_box and REACH_MIN_R <= r <= REACH_MAX_R


def _extent(poly: list[tuple[float, float]]) -> tuple[float, float, float, float] | None:
    """(min x, max x, min y, max y) of a corner list; None where a coordinate is NaN or
    infinite (there only the full test answers, as it always did)."""
    if len(poly) == 4:  # the footprints and walls: unrolled, no calls
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = poly
        if (x0 + x1 + x2 + x3 + y0 + y1 + y2 + y3) * 0.0 != 0.0:
            return None
        lo01, hi01 = (x0, x1) if x0 < x1 else (x1, x0)
        lo23, hi23 = (x2, x3) if x2 < x3 else (x3, x2)
        ylo01, yhi01 = (y0, y1) if y0 < y1 else (y1, y0)
        ylo23, yhi23 = (y2, y3) if y2 < y3 else (y3, y2)
        return (
            lo01 if lo01 < lo23 else lo23,
            hi01 if hi01 > hi23 else hi23,
            ylo01 if ylo01 < ylo23 else ylo23,
            yhi01 if yhi01 > yhi23 else yhi23,
        )
    xs = [p[0] for p in poly]
    ys = [p[1] for p in poly]
    if not all(math.isfinite(v) for v in (*xs, *ys)):
        return None
    return min(xs), max(xs), min(ys), max(ys)


def _boxes_apart(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> bool:
    """Whether the bounding boxes of two corner lists are strictly apart (False where a
    coordinate is NaN or infinite)."""
    ea, eb = _extent(a), _extent(b)
    if ea is None or eb is None:
        return False
    return ea[1] < eb[0] or eb[1] < ea[0] or ea[3] < eb[2] or eb[3] < ea[2]


def polygons_overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> bool:
    """Whether two convex polygons (corner lists) overlap: no separating edge normal.

    Most pairs the skills ask about (fingers against bin walls, cube footprints) are far
    apart, so disjoint bounding boxes answer first. That answer is the one the edge normals
    give: convex polygons whose boxes are strictly apart are disjoint, so one of their edge
    normals separates them, and the test below counts a gap (or a touch within its
    tolerance) on any normal as no overlap."""
    if _boxes_apart(a, b):
        return False
    for poly in (a, b):
        for i in range(len(poly)):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
            nx, ny = y0 - y1, x1 - x0
            pa = [nx * x + ny * y for x, y in a]
            pb = [nx * x + ny * y for x, y in b]
            eps = 1e-6 * math.hypot(nx, ny)  # touching (to rounding) is not overlapping
            if max(pa) <= min(pb) + eps or max(pb) <= min(pa) + eps:
                return False
    return True


def bin_walls(b: BinState, grow: float = 0.0) -> list[list[tuple[float, float]]]:
    """The four walls of a bin as footprints (their top is ``scene.BIN_WALL_HEIGHT``),
    each thickened by ``grow`` on both faces."""
    x, y = b.pos[0], b.pos[1]
    i, o = b.inner_half - grow, b.inner_half + BIN_WALL_THICKNESS + grow
    return [
        _box(x - o, x + o, y + i, y + o),
        _box(x - o, x + o, y - o, y - i),
        _box(x + i, x + o, y - i, y + i),
        _box(x - o, x - i, y - i, y + i),
    ]


def furniture_footprints(d: DrawerState, grow: float = WALL_MARGIN) -> list[Furniture]:
    """The drawer fixture's footprints (``sim.fixtures.drawer``), grown by ``grow``."""
    return _furniture_footprints(d, grow)


def button_footprint(b: ButtonState, grow: float = WALL_MARGIN) -> Furniture:
    """The button fixture's footprint (``sim.fixtures.button``), grown by ``grow``."""
    return _button_footprint(b, grow)


def _walls_block(fingers, palm, tip_z: float, palm_z: float, top: float, walls) -> bool:
    """Whether walls of height ``top`` stand where the fingers reach below it or the palm
    does."""
    return (top > tip_z and any(polygons_overlap(f, w) for f in fingers for w in walls)) or (
        top > palm_z and any(polygons_overlap(palm, w) for w in walls)
    )


def grasp_blockers(
    o: ObjectState,
    objects: list[ObjectState],
    bins: list[BinState],
    axis: str = "y",
    furniture: Sequence[Furniture] = (),
    turn: float = 0.0,
) -> list[str]:
    """Cubes, bin walls and furniture (the articulated scene's) in the way of the fingers or
    the palm grasping cube ``o`` with the fingers along world ``axis`` (``"y"`` or ``"x"``),
    or along that axis turned by ``turn`` (rad) about the cube: a grasp square to its faces
    turns by the cube's own yaw (``turn`` = that yaw folded), so the fingers meet faces."""
    if axis not in GRASP_AXES:
        raise ValueError(f"axis must be one of {GRASP_AXES}, got {axis!r}")
    gx, gy, gz = o.pos
    phi = abs(o.yaw - turn) % (math.pi / 2)
    inner = scene.CUBE_HALF * (math.cos(phi) + math.sin(phi))  # half its width along axis
    outer = FINGER_OUTER - CUBE_GIVE  # a cube is pushed aside along the axis, not across
    ct, st = math.cos(turn), math.sin(turn)

    def box(a0: float, a1: float, c0: float, c1: float) -> list[tuple[float, float]]:
        """A footprint from offsets along (a) and across (c) the finger axis."""
        if axis == "y":
            corners = _box(c0, c1, a0, a1)
        else:
            corners = _box(a0, a1, c0, c1)
        return [(gx + ct * x - st * y, gy + st * x + ct * y) for x, y in corners]

    def fingers_to(reach: float) -> list[list[tuple[float, float]]]:
        return [
            box(inner, reach, -FINGER_X_HALF, FINGER_X_HALF),
            box(-reach, -inner, -FINGER_X_HALF, FINGER_X_HALF),
        ]

    fingers = fingers_to(outer)
    palm = box(-PALM_HALF[1], PALM_HALF[1], -PALM_HALF[0], PALM_HALF[0])
    tip_z, palm_z = gz + FINGER_TIP_DZ, gz + PALM_DZ
    out = []
    for n in objects:
        if n.name == o.name or n.held or n.fallen:
            continue
        if abs(n.pos[0] - gx) > 0.15 or abs(n.pos[1] - gy) > 0.15:
            continue
        shape = object_spec(n.name)
        top = shape.top(n.pos[2])
        foot = shape.footprint(n.pos[0], n.pos[1], n.yaw)
        if (top > tip_z and any(polygons_overlap(f, foot) for f in fingers)) or (
            top > palm_z and polygons_overlap(palm, foot)
        ):
            out.append(n.name)
    for b in bins:
        if abs(b.pos[0] - gx) > 0.2 or abs(b.pos[1] - gy) > 0.2:
            continue
        walls = bin_walls(b, WALL_MARGIN)
        if _walls_block(
            fingers_to(FINGER_OUTER), palm, tip_z, palm_z, scene.BIN_WALL_HEIGHT, walls
        ):
            out.append(f"{b.name} wall")
    for name, top, feet in furniture:
        if _walls_block(fingers_to(FINGER_OUTER), palm, tip_z, palm_z, top, feet):
            out.append(name)
    return out


def cube_reachable(x: float, y: float, low_y: float = _LOW[1]) -> bool:
    """Whether the arm can grasp a cube centred at (x, y): the grip site reaches a point
    within ``GRASP_SLACK`` of it (the workspace box clips the grip site, not the cube)."""
    px = min(max(x, _LOW[0]), _HIGH[0])
    py = min(max(y, low_y), _HIGH[1])
    return math.hypot(px - x, py - y) <= GRASP_SLACK and reachable_xy(px, py, low_y)


def _held_cube(ix: _SceneIndex, data: mujoco.MjData) -> str | None:
    """The cube touched by both fingers (the nearest to the grip site if several), or None."""
    n_con = data.ncon
    touching_left: set[str] = set()
    touching_right: set[str] = set()
    if n_con:
        # whole-array reads: indexing contacts one by one is far slower in the bindings
        pairs = zip(
            data.contact.geom1[:n_con].tolist(), data.contact.geom2[:n_con].tolist(), strict=False
        )
        for g1, g2 in pairs:
            for a, b in ((g1, g2), (g2, g1)):
                cube = ix.cube_geoms.get(a)
                if cube is not None:
                    if b in ix.left:
                        touching_left.add(cube)
                    elif b in ix.right:
                        touching_right.add(cube)
    held_set = touching_left & touching_right
    if not held_set:
        return None
    grip = data.site_xpos[ix.site]
    return min(held_set, key=lambda n: np.linalg.norm(data.xpos[ix.cube_bodies[n]] - grip))


def _bin_of(p: list[float], bins: list[BinState], half: float) -> str | None:
    """The (last listed) bin whose inside holds an object of half height ``half`` centred
    at ``p``, or None."""
    in_bin = None
    for b in bins:
        if (
            abs(p[0] - b.pos[0]) < b.inner_half
            and abs(p[1] - b.pos[1]) < b.inner_half
            and p[2] < scene.BIN_WALL_HEIGHT + half
        ):
            in_bin = b.name
    return in_bin


def _support_of(
    n: str, p: list[float], half: float, raw: dict, held: str | None, carriers: dict[str, float]
) -> str | None:
    """The (last listed) object that object ``n`` (half height ``half``) at ``p`` rests on,
    or None: one of ``carriers`` (the objects that can carry another, a ball cannot, by
    their half heights), with the centres :func:`stack_dz` apart."""
    on = None
    for m, (p2, _) in raw.items():
        if m == n or m == held or m not in carriers:
            continue
        dz = p[2] - p2[2]
        apart = carriers[m] + half  # (as stack_dz)
        if (
            math.hypot(p[0] - p2[0], p[1] - p2[1]) < STACK_XY_TOL
            and apart - 0.008 <= dz <= apart + 0.012
        ):
            on = m
    return on


def _xyz(v) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))


def extract_world_state(model: mujoco.MjModel, data: mujoco.MjData) -> WorldState:
    """World state from physics. ``data`` must be forward-computed (after mj_forward/step)."""
    ix = _index(model)
    held = _held_cube(ix, data)
    grip = data.site_xpos[ix.site]

    bins = [
        BinState(name=n, color=scene.cube_color(n), pos=_xyz(data.xpos[b]))
        for n, b in ix.bins.items()
    ]
    raw = {}
    for n, b in ix.cube_bodies.items():
        p = data.xpos[b].tolist()  # plain floats: scalar maths on numpy items is slow
        if p[0] > ABSENT_X:
            continue
        raw[n] = (p, data.xquat[b])

    opening = float(data.qpos[ix.finger_q[0]] + data.qpos[ix.finger_q[1]])
    states = {f.name: f.extract(idx, data) for f, idx in ix.fixtures}
    return world_from_poses(raw, held, grip, opening, bins, fixtures=states)


def world_from_poses(
    raw: dict,
    held: str | None,
    grip,
    gripper_opening: float,
    bins: list[BinState],
    drawer: DrawerState | None = None,
    button: ButtonState | None = None,
    light_on: bool | None = None,
    *,
    fixtures: Mapping[str, Any] | None = None,
) -> WorldState:
    """World state from the cubes' poses (``raw``: name -> (centre as a list of floats,
    (w, x, y, z) quaternion)), what the gripper holds and where, the bins and the other
    fixtures' states (``fixtures``: name -> state; a container's contents are filled in
    here): the predicates of :func:`extract_world_state`, from poses however they were
    obtained (physics, or a camera's estimate: ``sim.perception``). ``drawer``, ``button``
    and ``light_on`` are the articulated scene's states as callers have always passed them
    (read only with a drawer)."""
    states = dict(fixtures) if fixtures else {}
    if drawer is not None:
        legacy = {"drawer": drawer, "button": button, "lamp": light_on}
        states.update((k, v) for k, v in legacy.items() if v is not None)
    # the container fixtures (the drawer), each with the objects found in it
    containers: list[tuple[Any, Any, list[str]]] = [
        (f, st, [])
        for name, st in states.items()
        if (f := fixture_registry.CONTAINERS.get(name)) is not None
    ]
    objects = []
    specs = {n: object_spec(n) for n in raw}
    # half heights of the objects that can carry another (a ball cannot)
    carriers = {n: o.half_height for n, o in specs.items() if o.stackable}
    for n, (p, q) in raw.items():
        half = specs[n].half_height
        is_held = n == held
        fallen = bool(p[2] < FALLEN_Z)
        in_bin = None
        if not is_held and not fallen:
            in_bin = _bin_of(p, bins, half)
        inside = False  # in a container fixture
        low_y = _LOW[1]  # how far the arm reaches along -y over it
        if containers:
            if not is_held and not fallen and in_bin is None:
                for f, st, contents in containers:
                    if f.encloses(st, p, half):
                        contents.append(n)
                        inside = True
                        break
            for f, st, _ in containers:
                if (reach := f.reach_low_y(st, p)) is not None:
                    low_y = reach
                    break
        on = None
        if not is_held and not fallen and in_bin is None and not inside:
            on = _support_of(n, p, half, raw, held, carriers)
        on_table = (
            not is_held
            and not fallen
            and in_bin is None
            and not inside
            and on is None
            and 0.0 < p[2] < half + ON_TABLE_ABOVE
        )
        objects.append(
            ObjectState(
                name=n,
                color=specs[n].color,
                kind=specs[n].kind,
                pos=(float(p[0]), float(p[1]), float(p[2])),
                yaw=yaw_of(q),
                held=is_held,
                on_table=bool(on_table),
                in_bin=in_bin,
                on=on,
                reachable=bool(not fallen and cube_reachable(float(p[0]), float(p[1]), low_y)),
                fallen=fallen,
            )
        )
    regions = [RegionState(name=k, pos=v) for k, v in scene.REGIONS.items()]
    world = WorldState(
        objects=objects,
        bins=bins,
        regions=regions,
        held_object=held,
        grip_pos=_xyz(grip),
        gripper_opening=gripper_opening,
    )
    if states:
        for f, st, contents in containers:
            f.set_contents(st, contents)
        world.fixtures = _in_registry_order(states)
    return world
