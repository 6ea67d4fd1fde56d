"""The cubes of a scene and their poses, as :meth:`sim.env.TabletopEnv.reset` takes them.

One grammar for everyone who speaks it: the env places cubes by it, the task suite checks its
scenes by it at load, and the runner and the CLI check ``--cubes`` by it before anything
runs, so a pose means the same thing (and is refused for the same reason) everywhere.

A scene's ``cubes`` is a list of names (placed at random) or a ``{name: pose}`` mapping; a
pose is ``[x, y]``, ``[x, y, yaw]`` or ``[x, y, z, yaw]`` (metres, radians), or None for a
random place. Names may drop the ``_block`` suffix (``red``) where a person types them.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sim import scene
from sim.world import REACH_MAX_R, REACH_MIN_R, reachable_xy

POSE_FORMS = "[x, y], [x, y, yaw] or [x, y, z, yaw]"
#: Lowest and highest centre height of a cube given a z (m): resting on the table up to the
#: top of the workspace.
CUBE_Z_RANGE = (0.018, 0.32)

Pose = tuple[float, float, float, float]


def cube_pose(name: str, pose: Sequence[Any]) -> Pose:
    """``(x, y, z, yaw)`` of a fixed pose: without a z the cube rests on the table, without
    a yaw it is square to the axes. ValueError names the cube when the pose has no form."""
    v = [float(x) for x in pose]
    if len(v) == 2:
        return (v[0], v[1], scene.CUBE_HALF, 0.0)
    if len(v) == 3:
        return (v[0], v[1], scene.CUBE_HALF, v[2])
    if len(v) == 4:
        return (v[0], v[1], v[2], v[3])
    raise ValueError(f"pose of {name} must be {POSE_FORMS}")


def cube_name(n: object) -> str:
    """``red`` -> ``red_block``; a full name stays as it is."""
    s = str(n).strip()
    return s if s.endswith("_block") else f"{s}_block"


def check_cubes(spec: object) -> list[str] | dict[str, list[float] | None]:
    """The cubes of a run, checked and normalised: full names, poses as float lists.

    ``spec`` is a list of names or a ``{name: pose}`` mapping. Raises ValueError with a
    one-line message naming the cube and the problem: unknown or repeated, a pose of no
    form, off the table or out of the arm's reach, overlapping another."""
    if isinstance(spec, str) or not isinstance(spec, (list, tuple, dict)):
        raise ValueError(
            f"cubes must be a list of names or a {{name: pose}} mapping, not {type(spec).__name__}"
        )
    known = ", ".join(scene.CUBE_NAMES)
    names = [cube_name(n) for n in spec]
    bad = [n for n in names if n not in scene.CUBE_NAMES]
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
    if not reachable_xy(x, y):
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
    edge = 2 * scene.CUBE_HALF - 1e-6  # touching is fine (a stack), interpenetrating not
    fixed = [(n, cube_pose(n, p)) for n, p in poses.items() if p is not None]
    for i, (a, pa) in enumerate(fixed):
        for b, pb in fixed[i + 1 :]:
            if math.hypot(pa[0] - pb[0], pa[1] - pb[1]) < edge and abs(pa[2] - pb[2]) < edge:
                raise ValueError(
                    f"{a} and {b} would overlap: their centres are less than "
                    f"{2 * scene.CUBE_HALF:g} m apart"
                )


def scene_options(cubes: Iterable[str] | Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The :meth:`sim.env.TabletopEnv.reset` options for checked ``cubes`` (None: default)."""
    if cubes is None:
        return None
    return {"cubes": dict(cubes) if isinstance(cubes, dict) else list(cubes)}
