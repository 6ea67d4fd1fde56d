"""What one RGB-D frame shows: cubes' top faces, the drawer's front, the button, the lamp.

Pure functions of a :class:`~sim.perception.camera.Frame` (pixels, depth, calibration) and
the fixed map (:class:`~sim.perception.static.StaticMap`); nothing here sees the
simulator. A cube is found by its colour, back-projected to world points, cleared of the
furniture; its top face is the highest band of those points. A whole face gives the centre
(mean of the face's points) and the yaw (the fourth-order moment of the face: a square's
orientation, modulo a quarter turn); a face partly hidden is returned as it is, for the
tracker to place with its prior (:func:`place_partial`: the least move of the prior that
holds every point seen).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim import scene
from sim.perception.camera import Frame
from sim.perception.colors import color_masks
from sim.perception.static import StaticMap

FACE_AREA = (2 * scene.CUBE_HALF) ** 2
#: A face at least this much of a full face's area counts as whole (a face in full view
#: reads 1.00-1.05, from pixel centres and depth); below, the mean of what shows is pulled
#: away from the hidden part, so the face is placed as a partial one.
WHOLE = 0.97
#: Points this close below the highest (m) are the top face.
FACE_BAND = 0.004
#: Fewer face points than this is no detection.
MIN_POINTS = 6


@dataclass(frozen=True)
class Seen:
    """A cube's top face in one frame."""

    color: str
    xy: tuple[float, float]  # centre (whole face) or mean of the visible part
    z: float  # centre height: the face's height minus the half size
    yaw: float  # in [-pi/4, pi/4)
    area: float  # fraction of a whole face seen
    face: np.ndarray  # (N, 2) the face's points (x, y)

    @property
    def whole(self) -> bool:
        return self.area >= WHOLE


def square_yaw(xy: np.ndarray) -> float:
    """Orientation (rad, in [-pi/4, pi/4)) of a square from points filling it: the phase
    of sum (dx + i dy)^4 is 4 yaw + pi for a filled square."""
    d = xy - xy.mean(axis=0)
    z = d[:, 0] + 1j * d[:, 1]
    m4 = np.sum(z**4)
    a = (math.atan2(m4.imag, m4.real) - math.pi) / 4
    return fold_yaw(a)


def fold_yaw(a: float) -> float:
    """A yaw folded into [-pi/4, pi/4): a cube a quarter turn on is the same cube."""
    q = math.pi / 2
    return (a + q / 2) % q - q / 2


def _face_area(frame: Frame, rows: np.ndarray, cols: np.ndarray) -> float:
    """Area (m^2) the pixels cover on a horizontal plane."""
    rays = frame.rays(rows, cols)
    norm = np.linalg.norm(rays, axis=1)
    uz = np.abs(rays @ frame.mat[2]) / norm  # world z of the unit ray
    d = frame.depth[rows, cols]
    return float(np.sum(d * d / (frame.f * frame.f * norm * np.maximum(uz, 0.2))))


def colour_points(
    frame: Frame, static: StaticMap, fingers: float | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each cube colour's pixels in ``frame`` as world points, the furniture (and, for the
    wrist camera, the finger pads) left out: colour -> (points (N, 3), rows, cols)."""
    masks = color_masks(frame.rgb)
    anyc = masks["red"] | masks["green"] | masks["blue"] | masks["yellow"]
    rows, cols = np.nonzero(anyc)
    out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    if len(rows) < MIN_POINTS:
        return out
    p = frame.points(rows, cols)  # one back-projection for every colour's pixels
    keep = static.keep(p)
    if fingers is not None and frame.hand is not None:
        keep &= ~on_pads(p, frame.hand, fingers)
    p, rows, cols = p[keep], rows[keep], cols[keep]
    for color, mask in masks.items():
        mine = mask[rows, cols]
        if mine.sum() >= MIN_POINTS:
            out[color] = (p[mine], rows[mine], cols[mine])
    return out


def cubes(
    frame: Frame,
    static: StaticMap,
    fingers: float | None = None,
    points: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
) -> dict[str, Seen]:
    """Each cube colour's top face seen in ``frame`` (colours not seen are left out).
    ``fingers``: for the wrist camera, each finger's travel (m, from its joint): the pads
    (orange, in view at the image's sides) are then left out by where they are.
    ``points``: the frame's :func:`colour_points`, where already found."""
    if points is None:
        points = colour_points(frame, static, fingers)
    out: dict[str, Seen] = {}
    for color, (pc, rc, cc) in points.items():
        z = pc[:, 2]
        k = int(0.95 * (len(z) - 1))
        top = float(np.partition(z, k)[k])
        face = z > top - FACE_BAND
        if face.sum() < MIN_POINTS:
            continue
        fp = pc[face]
        area = _face_area(frame, rc[face], cc[face]) / FACE_AREA
        xy = fp[:, :2]
        c = xy.mean(axis=0)
        out[color] = Seen(
            color=color,
            xy=(float(c[0]), float(c[1])),
            z=float(np.mean(fp[:, 2])) - scene.CUBE_HALF,
            yaw=square_yaw(xy),
            area=area,
            face=xy,
        )
    return out


#: The finger pads in the hand's frame (z down the fingers, y across them): their centres'
#: height, their half height and half width (``sim/assets/robot.xml``), and a margin.
_PAD_Z, _PAD_HZ, _PAD_HX, _PAD_MARGIN = 0.095, 0.014, 0.011, 0.003


def on_pads(p: np.ndarray, hand: tuple[np.ndarray, np.ndarray], travel: float) -> np.ndarray:
    """Which world points (N, 3) lie on a finger's pad or outside it, for a hand at
    ``hand`` (position, rotation) with each finger ``travel`` m out: the hand's own body,
    not a cube (a cube between the fingers is inside their gap, its top above the pads)."""
    pos, mat = hand
    h = (p - pos) @ mat  # into the hand's frame
    m = _PAD_MARGIN
    return (
        (np.abs(h[:, 0]) < _PAD_HX + m)
        & (np.abs(h[:, 2] - _PAD_Z) < _PAD_HZ + m)
        & (np.abs(h[:, 1]) > travel - m)
    )


def place_partial(
    views: list[Seen], prior_xy: tuple[float, float], yaw: float
) -> tuple[float, float]:
    """Centre of a cube whose top face is partly hidden in every view: along each of its
    edge directions, the prior's, moved as little as it takes for the face to hold every
    point seen. An edge cut by what stands in front never moves it; a real edge seen
    beyond where the prior puts it (the leading face of a pushed cube) moves it there."""
    u = np.array([math.cos(yaw), math.sin(yaw)])
    v = np.array([-math.sin(yaw), math.cos(yaw)])
    h = scene.CUBE_HALF
    prior = np.asarray(prior_xy, dtype=np.float64)
    centre = []
    for axis in (u, v):
        lo_bound, hi_bound = -math.inf, math.inf
        for seen in views:
            s = seen.face @ axis
            lo_bound = max(lo_bound, float(s.max()) - h)
            hi_bound = min(hi_bound, float(s.min()) + h)
        c = float(prior @ axis)
        if lo_bound <= hi_bound:
            centre.append(min(max(c, lo_bound), hi_bound))
        else:  # the points span more than a face along it (the yaw moved on): their middle
            centre.append(0.5 * (lo_bound + hi_bound))
    xy = centre[0] * u + centre[1] * v
    return float(xy[0]), float(xy[1])


# ---------------------------------------------------------------- the articulated scene
#: The drawer's front wall's top (m) and how far round it a point still counts.
_FRONT_TOP = scene.DRAWER_WALL_TOP
_BAND = 0.006


def _region(frame: Frame, x0: float, x1: float, y0: float, y1: float, z: float):
    """Pixel rows and cols (a box, clipped to the image) that see the table-aligned
    rectangle [x0, x1] x [y0, y1] at height ``z``, for a camera looking down."""
    corners = [frame.project((x, y, z)) for x in (x0, x1) for y in (y0, y1)]
    h, w = frame.shape
    r0 = max(0, int(math.floor(min(c[0] for c in corners))))
    r1 = min(h, int(math.ceil(max(c[0] for c in corners))) + 1)
    c0 = max(0, int(math.floor(min(c[1] for c in corners))))
    c1 = min(w, int(math.ceil(max(c[1] for c in corners))) + 1)
    return slice(r0, r1), slice(c0, c1)


def _points_in(frame: Frame, rs: slice, cs: slice):
    rows, cols = np.mgrid[rs, cs]
    rows, cols = rows.ravel(), cols.ravel()
    return frame.points(rows, cols), frame.rgb[rows, cols].astype(np.int16)


#: How far off (m) an opening read from the front's upright face can be (its points lie on
#: its plane: measured within 0.2 mm on held-out renders), and one read from the top's
#: outermost pixel (about half a pixel, 2 mm).
FACE_SURE, EDGE_SURE = 0.001, 0.0025


def drawer_opening(frame: Frame, static: StaticMap) -> float | None:
    """How far the drawer is pulled out (m); see :func:`drawer_reading`."""
    got = drawer_reading(frame, static)
    return None if got is None else got[0]


def drawer_reading(frame: Frame, static: StaticMap) -> tuple[float, float] | None:
    """How far the drawer is pulled out (m) and how far off that can be (m): from the
    front's upright face where it shows, else from where its front wall's top (light wood,
    at the walls' height) is nearest the robot; None where that cannot be told (the arm over
    the drawer's path)."""
    if static.drawer_closed_x is None or static.drawer_y is None:
        return None
    hy = scene.DRAWER_INNER_HALF[1]
    x_front_closed = static.drawer_closed_x - scene.DRAWER_INNER_HALF[0] - scene.DRAWER_FRONT
    x0, x1 = x_front_closed - scene.DRAWER_TRAVEL - 0.01, scene.CABINET_LOW[0] + 0.012
    y = static.drawer_y
    rs, cs = _region(frame, x0, x1, y - hy, y + hy, _FRONT_TOP)
    p, rgb = _points_in(frame, rs, cs)
    r, g, b = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    inside = (p[:, 1] > y - hy) & (p[:, 1] < y + hy) & (p[:, 0] > x0) & (p[:, 0] < x1)
    wood = (r >= g) & (g >= b) & (b * 100 > r * 72) & (r + g + b > 200)
    front = inside & wood & (np.abs(p[:, 2] - _FRONT_TOP) < _BAND)
    if front.sum() >= 3:
        top_x = float(np.min(p[front, 0]))
        # the front's outer face, upright, seen from above at a slant: its pixels' points
        # all lie on its plane, so their x is the front's (not quantised by the pixels)
        # (upright, it is lit less than the top: the wood's hue, a lower brightness)
        hue = (r >= g) & (g >= b) & (b * 100 > r * 72) & (r + g + b > 90)
        face = (
            inside
            & hue
            & (p[:, 2] < _FRONT_TOP - 0.001)
            & (p[:, 2] > _FRONT_TOP - 0.04)
            & (p[:, 0] < top_x + 0.003)
        )
        if face.sum() >= 3:
            x, sure = float(np.median(p[face, 0])), FACE_SURE
        else:  # the outermost top pixel's centre lies half a pixel inside the edge
            x = top_x - 0.5 * float(np.median(frame.depth[rs, cs])) / frame.f
            sure = EDGE_SURE
        return float(np.clip(x_front_closed - x, 0.0, scene.DRAWER_TRAVEL)), sure
    # no front in view: shut (the cabinet hides it), unless something stands over its path
    above = inside & (p[:, 2] > _FRONT_TOP + _BAND)
    if above.sum() > 0.05 * max(1, inside.sum()):
        return None
    return 0.0, EDGE_SURE


def button_depth(frame: Frame, static: StaticMap) -> float | None:
    """How far the button's cap is pushed down (m), from the height of its middle; None
    where something is over it."""
    if static.button is None:
        return None
    top_up = 2 * 0.015 + 0.012  # housing top plus the cap at rest
    bx, by = static.button
    rs, cs = _region(frame, bx - 0.008, bx + 0.008, by - 0.008, by + 0.008, top_up)
    p, _ = _points_in(frame, rs, cs)
    near = np.hypot(p[:, 0] - bx, p[:, 1] - by) < 0.009
    if near.sum() < 2:
        return None
    z = float(np.median(p[near, 2]))
    if z > top_up + 0.004:
        return None
    return float(np.clip(top_up - z, 0.0, 0.01))


def light_on(frame: Frame, static: StaticMap) -> bool | None:
    """Whether the lamp's bulb glows: its pixels near white-yellow (an emissive material)
    rather than its dull brass; None where the bulb is hidden."""
    if static.lamp is None:
        return None
    lx, ly, lz = static.lamp
    rad = 0.012
    rs, cs = _region(frame, lx - rad, lx + rad, ly - rad, ly + rad, lz + 0.018)
    p, rgb = _points_in(frame, rs, cs)
    bulb = (np.hypot(p[:, 0] - lx, p[:, 1] - ly) < rad) & (np.abs(p[:, 2] - lz) < 0.02)
    if bulb.sum() < 2:
        return None
    c = rgb[bulb].mean(axis=0)
    return bool(c[0] > 200 and c[1] > 170)
