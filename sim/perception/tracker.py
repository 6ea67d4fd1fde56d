"""Beliefs about the scene kept between frames: what the cameras saw, and what follows.

Each frame the top camera (and the wrist camera, which sees under the hand) gives the
cubes' top faces (:mod:`sim.perception.detect`). A whole face sets a cube's pose; a face
cut by the arm places the cube with the prior's help (:func:`~sim.perception.detect.
place_partial`); an unseen cube keeps its last pose and is reported uncertain. The
gripper's hold comes from the fingers' own joints (proprioception): closed to a cube's
width next to a tracked cube, it holds that cube, which then moves with the grip site;
opened, it lets it go, and the cube is believed to have dropped onto what is under it
until a camera sees it again. A cube believed in the drawer moves with the drawer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sim import scene
from sim.perception import detect
from sim.perception.camera import Frame
from sim.perception.static import StaticMap
from sim.world import FINGER_TIP_DZ, STACK_DZ, STACK_XY_TOL

#: The fingers' opening (m, both together) that means a cube is between them: a 4 cm cube
#: stops them at 4 cm square to its faces and up to 5.7 cm across a turned one (measured:
#: 4.6-5.5 cm on the shipped pick's turned grasps); open is 8 cm, narrower closed on nothing.
HOLD_OPENING = (0.030, 0.062)
#: A cube this close (m) to the grip site when the fingers close on it is the one held.
HOLD_XY, HOLD_Z = 0.03, 0.04
#: How far off the grip site along the pads (m) a held cube is believed (a pad's half width).
HOLD_SLIDE = 0.01
#: A partly hidden face at least this much of a whole one still updates the belief.
PARTIAL_MIN = 0.15
#: The button's cap top at rest (its housing 3 cm, the cap 1.2 cm), its travel, and how
#: near (m, horizontally) the grip site must be for the fingertips to be on the cap.
CAP_TOP, BUTTON_TRAVEL, BUTTON_UNDER = 0.042, 0.01, 0.02
#: A face seen below this height (m) is on the floor: a cube that fell off the table.
FLOOR_BELOW = -0.1
#: For a cube already tracked, a smaller piece still bounds where it can be.
PARTIAL_TRACKED = 0.03
#: Closed fingers (opening below this, m) are one block 2.4 cm square round the grip site:
#: a cube at their height cannot be nearer the grip site than CONTACT_R (its half size and
#: theirs) horizontally, so closed fingers moving into a cube's believed place push it on
#: (a push, whose hand hides the cube from above).
CLOSED = 0.012
CONTACT_R = scene.CUBE_HALF + 0.012
CONTACT_Z = 0.03
#: The highest a cube's centre can be resting on the table alone (on an edge: half its
#: diagonal), m.
TIPPED_MAX = scene.CUBE_HALF * math.sqrt(2.0)
#: A cube under another: its side points lie within COLUMN_R (m) of the upper one's
#: centre, at least SIDE_MIN of them; a stack's step in height, as the world's predicates
#: read it (``sim.world``).
COLUMN_R, SIDE_MIN = 0.032, 6
#: A cube this near (m, along x or y) a bin's centre may lean on its wall or lie in it.
_NEAR_BIN = scene.BIN_INNER_HALF + 0.02


@dataclass
class Track:
    """What is believed about one cube."""

    pos: np.ndarray
    yaw: float
    seen: bool = True  # confirmed by this frame's images
    age: int = 0  # frames since last confirmed
    #: Placed from its sides, never from its whole top face (a cube under another).
    sides_only: bool = False
    #: The fraction of its top face hidden where this frame placed it from a partly hidden
    #: face, with the prior's help (0: seen whole, held, or not seen): its error is up to
    #: the hidden strip's width (``sim.perception.confirm``).
    hidden: float = 0.0
    #: Where this frame saw the visible part of that face (its mean, x and y), else None.
    face_xy: tuple[float, float] | None = None


@dataclass
class Belief:
    """The perceived scene after one frame."""

    tracks: dict[str, Track] = field(default_factory=dict)
    held: str | None = None
    drawer_opening: float | None = None
    button_depth: float | None = None
    light_on: bool | None = None
    #: Beliefs this frame's images did not confirm (cube names, "drawer", "light", "button").
    uncertain: set[str] = field(default_factory=set)


class Tracker:
    """Fuses frames into a :class:`Belief`; :meth:`reset` at each new episode."""

    def __init__(self, static: StaticMap):
        self.static = static
        self.reset()

    def reset(self) -> None:
        self.belief = Belief()
        self._offset = np.zeros(3)  # the held cube from the grip site (hand frame)
        self._hand: np.ndarray | None = None
        #: After the last update, a cube seen in the air with nothing under it (the side
        #: camera is then worth rendering).
        self.unsupported = False

    def update(
        self,
        frames: list[Frame],
        grip: np.ndarray,
        finger_q: np.ndarray,
        side: list[Frame] | None = None,
    ) -> Belief:
        """Fuse one control step's ``frames`` (the top camera's first); ``side``: frames
        of cameras looking from the side (``front``), read only for the sides of cubes
        under others (:meth:`_stacks`)."""
        b = self.belief
        b.uncertain = set()
        travel = float(finger_q[0])  # the fingers move together (one command)
        # the hand's rotation (the wrist camera's calibration on it): a held cube turns with it
        self._hand = next((f.hand[1] for f in frames if f.hand is not None), None)
        points = [
            detect.colour_points(f, self.static, travel if f.hand is not None else None)
            for f in frames
        ]
        seen_by = [
            detect.cubes(f, self.static, points=pt) for f, pt in zip(frames, points, strict=True)
        ]
        whole_now: set[str] = set()
        top = frames[0]
        self._articulation(top, b, grip)
        opening = float(finger_q[0] + finger_q[1])
        self._release(b, grip, opening, seen_by)
        if opening < CLOSED:
            self._pushed(b, grip)
        for color in scene.CUBE_COLORS:
            name = f"{color}_block"
            t = b.tracks.get(name)
            if name == b.held:
                assert t is not None
                t.pos = grip + (self._offset if self._hand is None else self._hand @ self._offset)
                t.seen, t.age, t.hidden, t.face_xy = True, 0, 0.0, None
                continue
            views = [s[color] for s in seen_by if color in s]
            whole = [v for v in views if v.whole]
            if whole:
                v = max(whole, key=lambda v: v.area)
                pos = np.array([v.xy[0], v.xy[1], self._resting_z(b, name, v.xy, v.z)])
                if t is None:
                    b.tracks[name] = Track(pos, v.yaw)
                else:
                    t.pos, t.yaw, t.seen, t.age = pos, v.yaw, True, 0
                    t.sides_only, t.hidden, t.face_xy = False, 0.0, None
                whole_now.add(name)
                continue
            least = PARTIAL_MIN if t is None else PARTIAL_TRACKED
            part = [v for v in views if v.area >= least]
            if part:
                v = max(part, key=lambda v: v.area)
                # a hidden top's highest visible band is a side's: the cube is no lower
                # than it rests (the table, or as last seen)
                if t is None:
                    z = v.z if v.z < FLOOR_BELOW else max(v.z, scene.CUBE_HALF)
                    b.tracks[name] = Track(np.array([v.xy[0], v.xy[1], z]), v.yaw, False)
                    b.tracks[name].sides_only = True
                    b.uncertain.add(name)
                    continue
                xy = detect.place_partial(part, (float(t.pos[0]), float(t.pos[1])), t.yaw)
                z = v.z if v.z < FLOOR_BELOW else max(v.z, float(t.pos[2]))
                t.pos = np.array([xy[0], xy[1], self._resting_z(b, name, xy, z)])
                t.seen, t.age, t.hidden = True, 0, max(0.0, 1.0 - v.area)
                t.face_xy = (float(v.xy[0]), float(v.xy[1]))
                continue
            if t is not None:
                t.seen, t.age, t.hidden, t.face_xy = False, t.age + 1, 0.0, None
                b.uncertain.add(name)
        if side:
            points += [detect.colour_points(f, self.static) for f in side]
        self.unsupported = self._stacks(b, points, whole_now)
        self._grasp(b, grip, opening)
        return b

    def _stacks(self, b: Belief, points: list[dict], whole_now: set[str]) -> bool:
        """A cube seen up in the air with nothing believed under it stands on a cube the
        cameras see only by its sides: the colour whose points fill the column under it
        (in any view, the side camera's above all) is that cube, placed square under it.
        From the top of a tower down. True where a cube is left with nothing under it."""
        h = scene.CUBE_HALF
        left = False
        done: set[str] = set()
        while True:  # from the top down: a cube placed under one may stand on another
            todo = [
                (n, t)
                for n, t in b.tracks.items()
                if n not in done and n != b.held and 2.5 * h < float(t.pos[2]) < 9 * h
            ]
            if not todo:
                return left
            n, t = max(todo, key=lambda kv: float(kv[1].pos[2]))
            done.add(n)
            x, y, z = (float(v) for v in t.pos)
            if self._in_furniture(b, x, y):
                continue
            under = [
                o
                for m, o in b.tracks.items()
                if m != n
                and math.hypot(float(o.pos[0]) - x, float(o.pos[1]) - y) < STACK_XY_TOL
                and STACK_DZ[0] <= z - float(o.pos[2]) <= STACK_DZ[1]
            ]
            if under:
                for o in under:
                    if o.sides_only:  # its sides' middle is off its centre: the column's
                        o.pos, o.yaw = np.array([x, y, max(z - 2 * h - 0.001, h)]), t.yaw
                        o.hidden, o.face_xy = 0.0, None
                continue
            best, most = None, SIDE_MIN
            for color in scene.CUBE_COLORS:
                m = f"{color}_block"
                if m == n or m == b.held or m in whole_now:
                    continue
                count = 0
                for pt in points:
                    if color in pt:
                        p = pt[color][0]
                        r = np.hypot(p[:, 0] - x, p[:, 1] - y)
                        under = (r < COLUMN_R) & (p[:, 2] < z - h) & (p[:, 2] > z - 3 * h)
                        count += int(np.sum(under))
                if count >= most:
                    best, most = m, count
            if best is None:
                left = True
                continue
            below = np.array([x, y, max(z - 2 * h - 0.001, h)])
            known = b.tracks.get(best)
            if known is None:
                b.tracks[best] = Track(below, t.yaw, sides_only=True)
            else:
                known.pos, known.yaw, known.seen, known.age = below, t.yaw, True, 0
                known.sides_only, known.hidden, known.face_xy = True, 0.0, None
            b.uncertain.discard(best)  # its sides confirm it there

    def _in_furniture(self, b: Belief, x: float, y: float) -> bool:
        """Over a bin or the drawer (where a cube rests on their floors, not on cubes)."""
        for _, bx, by in self.static.bins:
            if abs(x - bx) < _NEAR_BIN and abs(y - by) < _NEAR_BIN:
                return True
        dx = self._drawer_x(b)
        return dx is not None and self._over_drawer(x, y, dx)

    def _resting_z(self, b: Belief, name: str, xy, z: float) -> float:
        """A face's height, but a tipped cube's highest band is an edge above its face:
        with nothing under it (no cube, bin or drawer) a cube rests on the table, where its
        centre is no higher than TIPPED_MAX however it leans."""
        if not TIPPED_MAX < z < TIPPED_MAX + scene.CUBE_HALF:
            return z
        x, y = float(xy[0]), float(xy[1])
        for _, bx, by in self.static.bins:
            if abs(x - bx) < _NEAR_BIN and abs(y - by) < _NEAR_BIN:
                return z
        dx = self._drawer_x(b)
        if dx is not None and self._over_drawer(x, y, dx):
            return z
        for n, o in b.tracks.items():
            if n != name and n != b.held and math.hypot(o.pos[0] - x, o.pos[1] - y) < 0.045:
                return z  # it may lean on that cube
        return TIPPED_MAX

    def _pushed(self, b: Belief, grip: np.ndarray) -> None:
        """Tracks the closed fingers now overlap are moved out to touching them."""
        for n, t in b.tracks.items():
            if n == b.held or abs(float(t.pos[2]) - float(grip[2])) > CONTACT_Z:
                continue
            r = t.pos[:2] - grip[:2]
            d = float(np.hypot(r[0], r[1]))
            if 1e-6 < d < CONTACT_R:
                t.pos = t.pos.copy()
                t.pos[:2] = grip[:2] + r * (CONTACT_R / d)

    # ------------------------------------------------------------------ the hold
    def _release(self, b: Belief, grip: np.ndarray, opening: float, seen_by) -> None:
        """The held cube is let go when the fingers open (or close on nothing), or when a
        camera sees it whole away from the hand."""
        closed_on_cube = HOLD_OPENING[0] < opening < HOLD_OPENING[1]
        if b.held is not None:
            t = b.tracks[b.held]
            color = scene.cube_color(b.held)
            far = [
                s[color]
                for s in seen_by
                if color in s
                and s[color].whole
                and math.dist(s[color].xy, (float(grip[0]), float(grip[1]))) > 0.04
            ]
            if not closed_on_cube or far:
                self._drop(b, t)
                b.held = None

    def _grasp(self, b: Belief, grip: np.ndarray, opening: float) -> None:
        """Fingers stopped at a cube's width with a tracked cube between them: it is held
        (checked after this frame's images, so a cube already lifted counts too)."""
        if b.held is not None or not HOLD_OPENING[0] < opening < HOLD_OPENING[1]:
            return
        best, best_d = None, HOLD_XY
        for n, t in b.tracks.items():
            d = math.hypot(t.pos[0] - grip[0], t.pos[1] - grip[1])
            if d < best_d and abs(t.pos[2] - grip[2]) < HOLD_Z:
                best, best_d = n, d
        if best is not None:
            b.held = best
            off = b.tracks[best].pos - grip
            if self._hand is None:  # no hand pose: straight below the grip site
                self._offset = np.array([0.0, 0.0, float(np.clip(off[2], -0.02, 0.02))])
                return
            # in the hand's frame: the closing fingers centre the cube across them (y);
            # along the pads (x) and down the fingers (z) it stays where it was seen
            h = self._hand.T @ off
            self._offset = np.array(
                [
                    float(np.clip(h[0], -HOLD_SLIDE, HOLD_SLIDE)),
                    0.0,
                    float(np.clip(h[2], -0.02, 0.02)),
                ]
            )

    def _drop(self, b: Belief, t: Track) -> None:
        """A released cube lands on what is under it: a cube's top, a bin's or the
        drawer's floor, or the table (until a camera sees where it went)."""
        x, y = float(t.pos[0]), float(t.pos[1])
        z = scene.CUBE_HALF
        for _, bx, by in self.static.bins:
            if abs(x - bx) < scene.BIN_INNER_HALF and abs(y - by) < scene.BIN_INNER_HALF:
                z = 0.004 + scene.CUBE_HALF
        dx = self._drawer_x(b)
        if dx is not None and self._over_drawer(x, y, dx):
            z = scene.DRAWER_FLOOR_Z + scene.CUBE_HALF
        for o in b.tracks.values():
            if o is t:
                continue
            if math.hypot(o.pos[0] - x, o.pos[1] - y) < 0.025 and o.pos[2] + 0.02 < t.pos[2]:
                z = max(z, float(o.pos[2]) + 2 * scene.CUBE_HALF)
        t.pos = np.array([x, y, z])

    # ------------------------------------------------------------------ the articulation
    def _drawer_x(self, b: Belief) -> float | None:
        if self.static.drawer_closed_x is None or b.drawer_opening is None:
            return None
        return self.static.drawer_closed_x - b.drawer_opening

    def _over_drawer(self, x: float, y: float, dx: float) -> bool:
        assert self.static.drawer_y is not None
        hx, hy = scene.DRAWER_INNER_HALF
        return abs(x - dx) < hx and abs(y - self.static.drawer_y) < hy

    def _pressed_by_hand(self, grip: np.ndarray) -> float:
        """The button's depth under the hand, from the fingertips' height (kinematics):
        on the cap they push it down to where they are; off it, its spring holds it up."""
        assert self.static.button is not None
        bx, by = self.static.button
        if math.hypot(float(grip[0]) - bx, float(grip[1]) - by) > BUTTON_UNDER:
            return 0.0
        tip = float(grip[2]) + FINGER_TIP_DZ
        return float(np.clip(CAP_TOP - tip, 0.0, BUTTON_TRAVEL))

    def _articulation(self, top: Frame, b: Belief, grip: np.ndarray) -> None:
        if self.static.drawer_closed_x is None:
            return
        reading = detect.drawer_reading(top, self.static)
        if reading is None:
            b.uncertain.add(scene.DRAWER_NAME)
        else:
            opening, sure = reading
            old = self._drawer_x(b)
            b.drawer_opening = opening
            near = (scene.DRAWER_OPEN_MIN, scene.DRAWER_CLOSED_MAX)
            if any(abs(opening - v) < sure for v in near):
                b.uncertain.add(scene.DRAWER_NAME)  # open/closed within the error of a pixel
            new = self._drawer_x(b)
            if old is not None and new is not None and new != old:
                for n, t in b.tracks.items():  # what lies in the drawer moves with it
                    if n != b.held and self._over_drawer(float(t.pos[0]), float(t.pos[1]), old):
                        if t.pos[2] < scene.DRAWER_WALL_TOP + scene.CUBE_HALF:
                            t.pos = t.pos + np.array([new - old, 0.0, 0.0])
        depth = detect.button_depth(top, self.static)
        if depth is None:  # the hand over the cap: as deep as the fingertips push it
            b.uncertain.add(scene.BUTTON_NAME)
            b.button_depth = self._pressed_by_hand(grip)
        else:
            b.button_depth = depth
        light = detect.light_on(top, self.static)
        if light is None:
            b.uncertain.add("light")
        else:
            b.light_on = light
