"""The cubes of a scene and their poses, as :meth:`sim.env.TabletopEnv.reset` takes them.

One grammar for everyone who speaks it: the env places cubes by it, the task suite checks its
scenes by it at load, and the runner and the CLI check ``--cubes`` by it before anything
runs, so a pose means the same thing (and is refused for the same reason) everywhere.

A scene's ``cubes`` is a list of names (placed at random) or a ``{name: pose}`` mapping; a
pose is ``[x, y]``, ``[x, y, yaw]`` or ``[x, y, z, yaw]`` (metres, radians), or None for a
random place. Names may drop the ``_block`` suffix (``red``) where a person types them.

Where a person would rather name a place than a pose, :func:`place_cubes` turns places into
poses before the checks: ``red_block@green_bin`` (in a bin), ``blue_block@red_block`` (stacked),
``red_block@drawer`` (in the articulated scene's drawer) and ``red_block@table_left`` (at a
table region, side by side with the others there). :func:`free_spot` is also how a skill
chooses where a block goes in a region that already holds one (a region is an area).
"""

from __future__ import annotations

import math
import numbers
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sim import scene, scenes
from sim.objects import spec as object_spec
from sim.world import FINGER_X_HALF, REACH_MAX_R, REACH_MIN_R, REGION_BESIDE, reachable_xy

if TYPE_CHECKING:
    from sim.world import WorldState

POSE_FORMS = "[x, y], [x, y, yaw] or [x, y, z, yaw]"
#: Lowest and highest centre height of a cube given a z (m): resting on the table up to the
#: top of the workspace.
CUBE_Z_RANGE = (0.018, 0.32)

Pose = tuple[float, float, float, float]


def cube_pose(name: str, pose: Sequence[Any]) -> Pose:
    """``(x, y, z, yaw)`` of a fixed pose: without a z the cube rests on the table, without
    a yaw it is square to the axes. ValueError names the cube when the pose has no form."""
    v = [float(x) for x in pose]
    if len(v) in (2, 3):
        rest = object_spec(name).half_height
        return (v[0], v[1], rest, 0.0) if len(v) == 2 else (v[0], v[1], rest, v[2])
    if len(v) == 4:
        return (v[0], v[1], v[2], v[3])
    raise ValueError(f"pose of {name} must be {POSE_FORMS}")


def cube_name(n: object) -> str:
    """``red`` -> ``red_block``; a full name (``red_block``, ``yellow_ball``) stays."""
    s = str(n).strip()
    return s if s.endswith("_block") or s in scenes.object_names() else f"{s}_block"


def check_cubes(spec: object) -> list[str] | dict[str, list[float] | None]:
    """The cubes of a run, checked and normalised: full names, poses as float lists.

    ``spec`` is a list of names or a ``{name: pose}`` mapping. Raises ValueError with a
    one-line message naming the cube and the problem: unknown or repeated, a pose of no
    form, off the table or out of the arm's reach, overlapping another."""
    if isinstance(spec, str) or not isinstance(spec, (list, tuple, dict)):
        raise ValueError(
            f"cubes must be a list of names or a {{name: pose}} mapping, not {type(spec).__name__}"
        )
    known = ", ".join(scenes.object_names())
    names = [cube_name(n) for n in spec]
    bad = [n for n in names if n not in scenes.object_names()]
    if bad or not names:
        raise ValueError(f"unknown cube(s) {', '.join(bad) or '(none)'}; known: {known}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"cube(s) listed twice: {', '.join(dup)}")
    if not isinstance(spec, dict):
        return names
    poses = {full: _check_pose(full, spec[raw]) for raw, full in zip(spec, names, strict=False)}
    _check_overlap(poses)
    return poses


def _check_pose(name: str, pose: Any) -> list[float] | None:
    if pose is None:
        return None
    shape = f"{POSE_FORMS} (metres, radians) or null"
    if (
        isinstance(pose, (str, bytes, dict))
        or not hasattr(pose, "__len__")
        or len(pose) not in (2, 3, 4)
    ):
        raise ValueError(f"pose of {name} must be {shape}, not {pose!r}")
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in pose):
        raise ValueError(f"pose of {name} must be numbers: {shape}, not {pose!r}")
    vals = [float(v) for v in pose]
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"pose of {name} has a non-finite number: {pose!r}")
    x, y = vals[0], vals[1]
    if not reachable_xy(x, y) and not _in_drawer_pose(vals):
        lo, hi = scene.WORKSPACE_LOW, scene.WORKSPACE_HIGH
        raise ValueError(
            f"{name} at ({x:g}, {y:g}) is off the table or out of the arm's reach: x in "
            f"[{lo[0]:g}, {hi[0]:g}], y in [{lo[1]:g}, {hi[1]:g}], {REACH_MIN_R:g}-"
            f"{REACH_MAX_R:g} m from the arm base at ({scene.BASE_XY[0]:g}, "
            f"{scene.BASE_XY[1]:g})"
        )
    if len(vals) == 4 and not CUBE_Z_RANGE[0] <= vals[2] <= CUBE_Z_RANGE[1]:
        raise ValueError(
            f"{name} at height z={vals[2]:g} is below the table or above the "
            f"workspace (z in [{CUBE_Z_RANGE[0]:g}, {CUBE_Z_RANGE[1]:g}])"
        )
    return vals


def _check_overlap(poses: Mapping[str, list[float] | None]) -> None:
    fixed = [(n, cube_pose(n, p)) for n, p in poses.items() if p is not None]
    for i, (a, pa) in enumerate(fixed):
        for b, pb in fixed[i + 1 :]:
            apart = object_spec(a).half_height + object_spec(b).half_height
            edge = apart - 1e-6  # touching is fine (a stack), interpenetrating not
            if math.hypot(pa[0] - pb[0], pa[1] - pb[1]) < edge and abs(pa[2] - pb[2]) < edge:
                raise ValueError(
                    f"{a} and {b} would overlap: their centres are less than {apart:g} m apart"
                )


def scene_options(cubes: Iterable[str] | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The :meth:`sim.env.TabletopEnv.reset` options for checked ``cubes`` (None: default)."""
    if cubes is None:
        return None
    return {"cubes": dict(cubes) if isinstance(cubes, dict) else list(cubes)}


# ----------------------------------------------------------------------------- places
#: The separator of a place in a cube spec: ``red_block@green_bin``.
AT = "@"
#: Where the cubes of one bin go (offsets from its centre, m): one in the middle; two to four
#: in the corners, diagonal ones first, a centimetre from the walls and two apart.
BIN_SPOTS = {1: ((0.0, 0.0),)} | {
    n: ((0.03, 0.03), (-0.03, -0.03), (0.03, -0.03), (-0.03, 0.03))[:n] for n in (2, 3, 4)
}
#: Where the cubes of the drawer go (offsets from its inside's centre, m): the drawer holds
#: two side by side, towards the back (+y) as the place skill sets them down.
DRAWER_SPOTS = {1: ((0.0, 0.018),), 2: ((-0.03, 0.018), (0.03, 0.018))}
#: Centre height of a cube on a bin's floor, and on the drawer's (m).
BIN_CUBE_Z = 0.026
DRAWER_CUBE_Z = scene.DRAWER_FLOOR_Z + scene.CUBE_HALF + 0.001
#: A stacked cube starts this far above resting on the one below (m): it settles at reset.
STACK_GAP = 0.001
#: Centre distance wanted between a cube set down in a region and every other cube (m): a
#: centimetre between their faces, whatever their turn about z.
SPOT_CLEAR = 2 * scene.CUBE_HALF + 0.01
#: A spot chosen inside a region's radius stays this far inside it (m), and one beside a
#: block there this far inside REGION_BESIDE: room for where the cube actually comes to rest.
SPOT_MARGIN = 0.008
#: Where no other cube may stand around a release point (half sizes along x and y, m): the
#: fingers of the hand at rest (along y, as place turns it for a bin or a region) open there
#: to their full travel, and a cube under one is pushed away as the cube is let go.
RELEASE_BAND = (
    FINGER_X_HALF + scene.CUBE_HALF + 0.008,
    scene.FINGER_OPEN + 0.008 + scene.CUBE_HALF + 0.004,
)
#: How close beside a block in a region a pushed cube comes before the push stops (m): inside
#: REGION_BESIDE by SPOT_MARGIN, as far as a cube slides on once the fingers stop.
PUSH_BESIDE = REGION_BESIDE - SPOT_MARGIN
_RING_RADII = (0.015, 0.025, 0.035)
_ANGLES = tuple(2 * math.pi * k / 16 for k in range(16))
#: The candidate offsets of :func:`free_spot`, computed once: each ring inside a region
#: (its radius, then (r cos a, r sin a) per angle) and the spots beside a block there.
_RING = tuple((r, tuple((r * math.cos(a), r * math.sin(a)) for a in _ANGLES)) for r in _RING_RADII)
_BESIDE_STEP = min(SPOT_CLEAR + 0.001, PUSH_BESIDE)
_BESIDE = tuple((_BESIDE_STEP * math.cos(a), _BESIDE_STEP * math.sin(a)) for a in _ANGLES)

XY = tuple[float, float]


def free_spot(
    centre: Sequence[float],
    radius: float,
    others: Iterable[Sequence[float]],
    toward: Sequence[float] | None = None,
    band: tuple[float, float] | None = None,
) -> XY | None:
    """Where a cube goes in the region at ``centre``: the centre when nothing is near; else a
    spot inside the radius clear of ``others`` (xy of every other cube), else one beside a
    block already within the radius (so :meth:`sim.world.WorldState.in_region` holds there
    too), or None when the region is full. Among the candidates of the first kind that has
    one, the one nearest ``toward`` (a pushed cube's position: it then need not pass the
    others) or, without it, nearest the centre. With ``band`` (RELEASE_BAND), no other cube
    may stand within that box around the spot either (the fingers open there)."""
    c = (float(centre[0]), float(centre[1]))
    rest = [(float(p[0]), float(p[1])) for p in others]
    ref = c if toward is None else (float(toward[0]), float(toward[1]))
    # a pure function of these numbers, asked the same question several times per step
    # (the skills' preconditions, effect and features): keyed by their exact bits
    flat = [*c, float(radius), *ref, *(band or (math.nan, math.nan))]
    for q in rest:
        flat.extend(q)
    key = (toward is None, band is None, len(rest), array("d", flat).tobytes())
    if key in _SPOTS:
        return _SPOTS[key]
    if len(_SPOTS) >= MAX_REMEMBERED_SPOTS:
        _SPOTS.clear()
    spot = _SPOTS[key] = _free_spot(c, float(radius), rest, ref, band)
    return spot


#: Answers of :func:`free_spot` remembered (cleared when this many).
MAX_REMEMBERED_SPOTS = 4096
_SPOTS: dict[tuple, XY | None] = {}


def _free_spot(
    c: XY, radius: float, rest: list[XY], ref: XY, band: tuple[float, float] | None
) -> XY | None:
    def free(p: XY) -> bool:
        # the other cubes first: in a crowded region they rule out most candidates, and
        # the answer (all tests pass) does not depend on the order they are asked in
        for q in rest:
            if not math.dist(p, q) >= SPOT_CLEAR:
                return False
            if band is not None and not (
                abs(p[0] - q[0]) >= band[0] or abs(p[1] - q[1]) >= band[1]
            ):
                return False
        return reachable_xy(p[0], p[1])

    if free(c):
        return c
    inner = [
        (c[0] + dx, c[1] + dy) for r, ring in _RING if r <= radius - SPOT_MARGIN for dx, dy in ring
    ]
    members = [q for q in rest if math.dist(q, c) <= radius]

    def key(p: XY) -> tuple[float, XY]:
        return (round(math.dist(p, ref), 9), p)

    # (NaN keys do not order: there, min() over the free ones as it always was)
    ordered = all(math.isfinite(v) for v in (*c, *ref, *(v for q in members for v in q)))
    for kind in ("inner", "beside"):
        group = inner if kind == "inner" else _beside(members)
        if ordered:
            p = _nearest_free(group, ref, free)
            if p is not None:
                return p
            continue
        ok = [p for p in group if free(p)]
        if ok:
            return min(ok, key=key)
    return None


def _nearest_free(group: list[XY], ref: XY, free: Callable[[XY], bool]) -> XY | None:
    """The least free candidate of ``group`` by (its distance to ``ref`` rounded to 9
    places, the point, its place in the group): what min() over the free ones gives,
    without testing the farther ones (all finite). The candidates are taken nearest first
    by their distance alone (rounding is monotone, so that is key order, and the rounding,
    the costly part, is done only from the first free one on); the first free one's key
    is the least, and the free ones with that same key, the tie broken as min() breaks
    it, follow it in that order (``tests/sim/test_free_spot.py`` holds this to a heap of
    all the keys)."""
    dist = math.dist
    ds = [dist(p, ref) for p in group]
    found, chosen = 0.0, None
    for i in sorted(range(len(ds)), key=ds.__getitem__):
        p = group[i]
        if chosen is None:
            if free(p):
                found, chosen = round(ds[i], 9), (p, i)
            continue
        if round(ds[i], 9) != found:
            break
        if (p, i) < chosen and free(p):
            chosen = (p, i)
    return None if chosen is None else chosen[0]


def _beside(members: list[XY]) -> list[XY]:
    """The candidate spots beside each block within a region (asked only when no spot
    inside it is free)."""
    return [(m[0] + dx, m[1] + dy) for m in members for dx, dy in _BESIDE]


def place_of(text: str) -> tuple[str, str]:
    """``"red@green_bin"`` -> ``("red_block", "green_bin")``; a cube as the place gets its
    full name (``blue@red``: on ``red_block``). ValueError for an empty side."""
    name, _, where = text.partition(AT)
    name, where = name.strip(), where.strip()
    if not name or not where:
        raise ValueError(f"{text!r}: a place is NAME@PLACE, e.g. red_block@green_bin")
    return cube_name(name), where


def _where_kind(where: str, drawer: bool, posed: bool) -> str:
    if where in scene.BIN_NAMES:
        return "bin"
    if where in scene.REGIONS:
        return "region"
    if where == scene.DRAWER_NAME:
        if not drawer:
            raise ValueError("the drawer is part of the articulated scene (--scene articulated)")
        return "drawer"
    if cube_name(where) in scenes.object_names():
        return "cube"
    raise ValueError(
        f"unknown place {where!r}: a place is a bin ({', '.join(scene.BIN_NAMES)}), a "
        f"cube to stack on, a table region ({', '.join(scene.REGIONS)})"
        + (" or the drawer" if drawer else "")
        + (f"; or give a pose: {POSE_FORMS} or null" if posed else "")
    )


def place_cubes(
    spec: object, *, scene_name: str = scene.DEFAULT_SCENE, drawer: float = 0.0, seed: int = 0
) -> object:
    """``spec`` with every named place turned into a pose, for :func:`check_cubes`.

    ``spec`` is what :func:`check_cubes` takes, where a list item may also be
    ``NAME@PLACE`` and a mapping value a place (a string). A spec without places comes back
    as it is (checked later). Cubes in one bin share it (up to four), the drawer takes two,
    cubes at one region stand side by side, a stacked cube sits on the cube below wherever
    that one is; a cube under a stack that has no pose is given one at random from ``seed``
    (the env would choose it only after the stack is laid out). ValueError with one line:
    an unknown place, a full bin or drawer, a cube on itself or a cycle of stacks."""
    if isinstance(spec, (list, tuple)):
        if not any(isinstance(v, str) and AT in v for v in spec):
            return spec
        raw: dict[str, Any] = {}
        for item in spec:
            name, where = place_of(item) if isinstance(item, str) and AT in item else (item, None)
            key = cube_name(name)
            if key in raw:
                raise ValueError(f"cube(s) listed twice: {key}")
            raw[key] = where
    elif isinstance(spec, dict):
        if not any(isinstance(v, str) for v in spec.values()):
            return spec
        raw = {}
        for k, v in spec.items():
            key = cube_name(k)
            if key in raw:
                raise ValueError(f"cube(s) listed twice: {key}")
            raw[key] = v.strip() if isinstance(v, str) else v
    else:
        return spec
    known = scenes.get(scene_name).objects
    bad = [n for n in raw if n not in {o.name for o in known}]
    if bad:
        names = ", ".join(o.name for o in known)
        raise ValueError(f"unknown cube(s) {', '.join(bad)}; known: {names}")
    places = {n: w for n, w in raw.items() if isinstance(w, str)}
    posed = isinstance(spec, dict)  # a mapping's value may be a pose instead
    has_drawer = scenes.get(scene_name).has("drawer")
    kinds = {n: _where_kind(w, has_drawer, posed) for n, w in places.items()}
    for n, w in places.items():
        if kinds[n] == "cube":
            places[n] = w = cube_name(w)
            if w == n:
                raise ValueError(f"{n} cannot be stacked on itself")
            if w not in raw:
                raise ValueError(f"{n} is stacked on {w}, which is not in the scene; add it")
    out: dict[str, list[float] | None] = {
        n: (None if v is None else [float(x) for x in v])
        for n, v in raw.items()
        if not isinstance(v, str)
    }
    _fill_spots(out, places, kinds, drawer)
    _fill_stacks(out, raw, places, kinds, seed)
    return {n: out[n] for n in raw}


def _fill_spots(
    out: dict[str, list[float] | None], places: dict[str, str], kinds: dict[str, str], drawer: float
) -> None:
    """Cubes in bins, in the drawer, at regions: their poses into ``out``."""
    groups: dict[str, list[str]] = {}
    for n, w in places.items():
        if kinds[n] != "cube":
            groups.setdefault(w, []).append(n)
    for where, names in groups.items():
        kind = kinds[names[0]]
        if kind == "bin":
            if len(names) > len(BIN_SPOTS[4]):
                raise ValueError(
                    f"{where} holds {len(BIN_SPOTS[4])} cubes side by side, not {len(names)} "
                    "(stack the rest: NAME@CUBE)"
                )
            bx, by = _fixtures()[where]
            for n, (dx, dy) in zip(names, BIN_SPOTS[len(names)], strict=True):
                out[n] = [bx + dx, by + dy, BIN_CUBE_Z, 0.0]
        elif kind == "drawer":
            if len(names) > len(DRAWER_SPOTS[2]):
                raise ValueError(f"the drawer holds two cubes, not {len(names)}")
            dx0, dy0 = _fixtures()[scene.DRAWER_NAME]
            for n, (dx, dy) in zip(names, DRAWER_SPOTS[len(names)], strict=True):
                out[n] = [dx0 - drawer + dx, dy0 + dy, DRAWER_CUBE_Z, 0.0]
        else:
            centre = scene.REGIONS[where]
            for n in names:
                taken = [p[:2] for m, p in out.items() if p is not None and m != n]
                spot = free_spot(centre, scene.REGION_RADIUS, taken, band=RELEASE_BAND)
                if spot is None:
                    raise ValueError(f"{where} has no room left for {n}")
                out[n] = [spot[0], spot[1]]


def _fill_stacks(
    out: dict[str, list[float] | None],
    raw: dict[str, Any],
    places: dict[str, str],
    kinds: dict[str, str],
    seed: int,
) -> None:
    """Stacked cubes onto the cube below (bottom first); a bottom without a pose gets one."""
    import numpy as np

    below = {n: w for n, w in places.items() if kinds[n] == "cube"}
    tops = sorted({w for w in below.values()})
    dup = [w for w in tops if list(below.values()).count(w) > 1]
    if dup:
        raise ValueError(f"only one cube can stand on {dup[0]}")
    rng = np.random.default_rng(seed)
    bottoms = [n for n in raw if n not in below and n in set(below.values())]
    for n in bottoms:
        if out.get(n) is None:
            taken = [np.asarray(p[:2]) for p in out.values() if p is not None]
            xy = spawn_xy(rng, taken)
            out[n] = [float(xy[0]), float(xy[1]), object_spec(n).half_height, 0.0]
    done = set(bottoms)
    while len(done) < len(bottoms) + len(below):
        ready = [n for n, w in below.items() if n not in done and w in done]
        if not ready:
            cycle = sorted(n for n in below if n not in done)
            raise ValueError(f"the stacks go round in a circle: {', '.join(cycle)}")
        for n in ready:
            b = out[below[n]]
            assert b is not None  # a bottom got a pose, a stacked one on it its own
            x, y, z, yaw = cube_pose(below[n], b)
            rest = object_spec(below[n]).half_height + object_spec(n).half_height
            out[n] = [x, y, z + rest + STACK_GAP, yaw]
            done.add(n)


def spawn_xy(rng: np.random.Generator, placed: list[np.ndarray]) -> np.ndarray:
    """A table point in the spawn area at least ``SPAWN_MIN_DIST`` from each of ``placed``,
    drawn as the env's reset draws its cubes (so a stack stands where cubes spawn)."""
    for _ in range(1000):
        xy = rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH)
        if all(np.linalg.norm(xy - p) >= scene.SPAWN_MIN_DIST for p in placed):
            return xy
    raise RuntimeError("could not place cubes without overlap")


_FIXTURES: dict[str, XY] = {}


def _fixtures() -> dict[str, XY]:
    """Table points of the bins and of the shut drawer's inside, from the articulated model
    (the bins stand where they do in the tabletop scene)."""
    if not _FIXTURES:
        import mujoco

        from sim import physics

        model = physics.load_model("articulated")
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        for name in (*scene.BIN_NAMES, scene.DRAWER_NAME):
            p = data.xpos[model.body(name).id]
            _FIXTURES[name] = (float(p[0]), float(p[1]))
    return _FIXTURES


def _in_drawer_pose(vals: list[float]) -> bool:
    """Whether a fixed pose lies inside the drawer at some opening, resting on its floor: the
    drawer reaches beyond the arm when shut, and a cube in it is where it should be."""
    if len(vals) != 4:
        return False
    x0, y0 = _fixtures()[scene.DRAWER_NAME]
    hx, hy = scene.DRAWER_INNER_HALF
    half = scene.CUBE_HALF
    return (
        x0 - scene.DRAWER_TRAVEL - hx + half <= vals[0] <= x0 + hx - half
        and abs(vals[1] - y0) <= hy - half
        and scene.DRAWER_FLOOR_Z + half - 0.002 <= vals[2] <= scene.DRAWER_FLOOR_Z + half + 0.01
    )


def region_spot(
    world: WorldState,
    region: str,
    moving: str | None = None,
    toward: Sequence[float] | None = None,
    band: tuple[float, float] | None = None,
) -> XY | None:
    """Where ``moving`` goes at ``region`` in ``world`` (:func:`free_spot` among the other
    cubes still in the scene): the place skill's release point and the push skill's goal, and
    both skills' predicted effect, so plan, prediction and motion agree. None: the region is
    full, or there is no such region."""
    r = world.region(region)
    if r is None:
        return None
    others = [o.pos[:2] for o in world.objects if o.name != moving and not o.held and not o.fallen]
    return free_spot(r.pos, r.radius, others, toward, band)
