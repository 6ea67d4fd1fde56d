"""The scene's fixed furniture, as a map: what in an image is not a cube.

The bins, the button's housing, the cabinet and the lamp never move, so where they stand is
part of the scene's map, read once from the model's geometry (``body_pos`` of bodies fixed
to the world: the model, not the simulation's state). Points that fall on them are dropped
before a cube is looked for, which is how a red cube in the red bin is told from the bin.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from sim import scene

#: Points lower than this (m) are the table, a bin's floor or the drawer's floor: a cube's
#: top face is never this low.
FLOOR_Z = 0.008
#: Points this far below the table top are on the floor: a cube that fell off the table.
FALLEN_BELOW = -0.1
#: How far round the furniture its points are dropped (m): rendering rounds edges.
MARGIN = 0.004


@dataclass(frozen=True)
class StaticMap:
    """Footprints and heights of the fixed furniture (m)."""

    bins: tuple[tuple[str, float, float], ...]  # name, x, y
    button: tuple[float, float] | None  # housing centre (x, y)
    lamp: tuple[float, float, float] | None  # bulb centre
    drawer_closed_x: float | None  # the drawer's inside centre (x) when closed
    drawer_y: float | None

    @classmethod
    def from_model(cls, model: mujoco.MjModel) -> StaticMap:
        bins = tuple(
            (
                n,
                float(model.body_pos[model.body(n).id][0]),
                float(model.body_pos[model.body(n).id][1]),
            )
            for n in scene.BIN_NAMES
        )
        if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, scene.DRAWER_JOINT) < 0:
            return cls(bins, None, None, None, None)
        cab = model.body_pos[model.body("cabinet").id]
        drawer = model.body_pos[model.body(scene.DRAWER_NAME).id]
        lamp = (
            model.body_pos[model.body("lamp").id] + model.geom_pos[model.geom(scene.LAMP_GEOM).id]
        )
        but = model.body_pos[model.body("button_base").id]
        return cls(
            bins,
            (float(but[0]), float(but[1])),
            (float(cab[0] + lamp[0]), float(cab[1] + lamp[1]), float(cab[2] + lamp[2])),
            float(cab[0] + drawer[0]),
            float(cab[1] + drawer[1]),
        )

    def keep(self, p: np.ndarray) -> np.ndarray:
        """Which points (N, 3) may be a cube: above the floors, off the bin walls, the
        button and the lamp."""
        x, y, z = p[:, 0], p[:, 1], p[:, 2]
        ok = (z > FLOOR_Z) | (z < FALLEN_BELOW)  # or fallen to the floor, off the table
        inner = scene.BIN_INNER_HALF - MARGIN
        outer = scene.BIN_INNER_HALF + 0.008 + MARGIN
        wall_top = scene.BIN_WALL_HEIGHT + MARGIN
        for _, bx, by in self.bins:
            dx, dy = np.abs(x - bx), np.abs(y - by)
            on_wall = (dx < outer) & (dy < outer) & ~((dx < inner) & (dy < inner))
            ok &= ~(on_wall & (z < wall_top))
        if self.button is not None:
            h = scene.BUTTON_HOUSING_HALF + MARGIN
            ok &= ~(
                (np.abs(x - self.button[0]) < h) & (np.abs(y - self.button[1]) < h) & (z < 0.06)
            )
        if self.lamp is not None:
            ok &= ~((np.hypot(x - self.lamp[0], y - self.lamp[1]) < 0.03) & (z > scene.CABINET_TOP))
        return ok
