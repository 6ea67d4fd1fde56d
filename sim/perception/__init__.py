"""Perception: the scene as the cameras see it, in the form the rest of the system reads.

Under the world state in the layering (it imports ``sim.scene`` and ``sim.world`` only).
From the top camera's RGB-D image (and the wrist camera's, which sees under the hand) it
estimates each cube's identity (its colour), position and yaw, what the gripper holds,
what is in each bin and the drawer, the drawer's opening, the button and the light
(:mod:`~sim.perception.detect`, :mod:`~sim.perception.tracker`), and gives them as an
observation like ``TabletopEnv.observe()``'s and a :class:`~sim.world.WorldState` built by
the same predicates as physics' (``sim.world.world_from_poses``).

It reads images, the cameras' calibration (their poses), the fixed furniture's map and the
robot's own joints (the grip site's position by forward kinematics, the fingers' opening):
never a cube's pose, a joint of the drawer or the button, the light's state or the
renderer's segmentation. ``TabletopEnv.perception = Perception(env.model)`` makes the env's
``observe()`` and ``world_state()`` answer from it; ``true_world_state()`` stays physics.
"""

from __future__ import annotations

import copy
import math

import mujoco
import numpy as np

from sim import scene
from sim.perception.camera import CameraSpec, Frame, RGBDCameras
from sim.perception.static import StaticMap
from sim.perception.tracker import Belief, Tracker
from sim.world import BinState, ButtonState, DrawerState, WorldState, world_from_poses

__all__ = ["MODES", "Belief", "CameraSpec", "Frame", "Perception", "RGBDCameras", "StaticMap"]

#: Where the skills', planner's and bridge's view of the scene comes from.
MODES = ("state", "camera")
#: Image sizes: the top camera sees the whole workspace at 4 mm a pixel; the wrist camera
#: (under the hand, close) needs few pixels.
TOP = CameraSpec("top", 256, 256)
WRIST = CameraSpec("wrist", 96, 96)
#: The side view, rendered only while a cube is seen in the air with nothing believed
#: under it (a tower's lower cubes show only their sides): about 9 mm a pixel.
FRONT = CameraSpec("front", 160, 120)
#: How far (m) a visible cube's estimate may be off, for a verdict to count as sure: the
#: position error's p95 on held-out renders is 1.8 mm (BENCHMARKS.md, Perception).
SURE = 0.0025
#: Where a cube never seen is reported (as the env parks absent cubes, off the table).
_PARK = [(2.0 + 0.2 * i, 2.0, -0.75 + scene.CUBE_HALF) for i in range(len(scene.CUBE_NAMES))]


class Perception:
    """RGB-D cameras, a tracker and the conversions to the system's formats.

    One estimate per simulator state: ``observe()`` and ``world_state()`` of the same
    control step share it (the key is the data's time and a counter :meth:`invalidate`
    bumps when a state is restored)."""

    def __init__(
        self,
        model: mujoco.MjModel,
        cameras: tuple[CameraSpec, ...] = (TOP, WRIST),
        side: CameraSpec | None = FRONT,
    ):
        self.model = model
        self.cameras = RGBDCameras(model, cameras)
        self.side = None if side is None else RGBDCameras(model, (side,))
        self.static = StaticMap.from_model(model)
        self.tracker = Tracker(self.static)
        self._fingers = [model.jnt_qposadr[model.joint(j).id] for j in scene.FINGER_JOINTS]
        self._site = model.site("grip_site").id
        handle = model.site(f"{scene.DRAWER_HANDLE}_site").id if self.static.lamp else None
        self._handle = None if handle is None else model.site_pos[handle].copy()
        self._gen = 0
        self._key: tuple | None = None
        self.frames: list[Frame] = []
        self.renders = 0
        self.side_renders = 0

    # ------------------------------------------------------------------ episode
    def reset(self) -> None:
        """Forget everything (a new episode)."""
        self.tracker.reset()
        self.invalidate()

    def carry_from(self, other: Perception) -> None:
        """Start from what ``other`` believed last (the same robot going on: a chain's next
        task, whose start is where the last one ended), not from nothing."""
        self.tracker.belief = copy.deepcopy(other.tracker.belief)
        self.tracker._offset = other.tracker._offset.copy()
        self.invalidate()

    def snapshot(self) -> tuple:
        """What is believed now, to :meth:`restore` (several runs from one start)."""
        return copy.deepcopy(self.tracker.belief), self.tracker._offset.copy()

    def restore(self, snap: tuple) -> None:
        self.tracker.belief = copy.deepcopy(snap[0])
        self.tracker._offset = snap[1].copy()
        self.invalidate()

    def invalidate(self) -> None:
        """The state changed without time moving (a restore, a cube set by hand)."""
        self._gen += 1

    def close(self) -> None:
        self.cameras.close()
        if self.side is not None:
            self.side.close()

    # ------------------------------------------------------------------ sensing
    def update(self, env) -> Belief:
        """The belief for ``env``'s current state (rendered and fused once per state)."""
        d = env.data
        key = (id(d), float(d.time), self._gen)
        if key != self._key:
            if env.articulation is not None:  # the lamp's look follows its state
                env.articulation.show(env.model, d)
            self.frames = self.cameras.render(d)
            grip = d.site_xpos[self._site].copy()
            fq = np.array([d.qpos[a] for a in self._fingers])
            side = None
            first = not self.tracker.belief.tracks
            if self.side is not None and (first or self.tracker.unsupported):
                side = self.side.render(d)
                self.side_renders += 1
            self.tracker.update(self.frames, grip, fq, side)
            self._grip, self._opening = grip, float(fq.sum())
            self._key = key
            self.renders += 1
        return self.tracker.belief

    def observation(self, env, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``obs`` (the env's own, whose ``proprio`` is the robot's joints) with the cubes'
        and the articulation's entries replaced by the estimate."""
        b = self.update(env)
        pos = np.array(_PARK, dtype=np.float64)
        quat = np.tile([1.0, 0.0, 0.0, 0.0], (len(scene.CUBE_NAMES), 1))
        present = np.zeros(len(scene.CUBE_NAMES))
        for i, n in enumerate(scene.CUBE_NAMES):
            t = b.tracks.get(n)
            if t is not None:
                pos[i] = t.pos
                quat[i] = (math.cos(t.yaw / 2), 0.0, 0.0, math.sin(t.yaw / 2))
                present[i] = 1.0
        out = dict(obs, object_pos=pos, object_quat=quat, object_present=present)
        if "articulation" in obs:
            out["articulation"] = np.array(
                [b.drawer_opening or 0.0, b.button_depth or 0.0, 1.0 if b.light_on else 0.0]
            )
        return out

    def world_state(
        self, env, shift: dict[str, np.ndarray] | None = None, without: str | None = None
    ) -> WorldState:
        """The world state of the estimate, by the predicates physics' uses; ``shift``
        moves named cubes' estimates by an (x, y) offset (see :meth:`worlds_near`);
        ``without`` leaves one cube out (what a verdict rests on: ``sim.perception.
        confirm``)."""
        b = self.update(env)
        shift = shift or {}
        raw = {}
        for n, t in b.tracks.items():
            if n == without:
                continue
            p = t.pos.copy()
            if n in shift:
                p[:2] += shift[n]
            q = np.array([math.cos(t.yaw / 2), 0.0, 0.0, math.sin(t.yaw / 2)])
            raw[n] = (p.tolist(), q)
        bins = [
            BinState(name=n, color=scene.cube_color(n), pos=(x, y, 0.0))
            for n, x, y in self.static.bins
        ]
        drawer = button = None
        if self.static.drawer_closed_x is not None and self._handle is not None:
            opening = b.drawer_opening or 0.0
            dx, dy = self.static.drawer_closed_x - opening, float(self.static.drawer_y or 0.0)
            drawer = DrawerState(
                opening=opening,
                is_open=opening >= scene.DRAWER_OPEN_MIN,
                is_closed=opening <= scene.DRAWER_CLOSED_MAX,
                pos=(dx, dy, 0.0),
                handle_pos=(
                    dx + float(self._handle[0]),
                    dy + float(self._handle[1]),
                    float(self._handle[2]),
                ),
            )
            assert self.static.button is not None
            depth = b.button_depth or 0.0
            button = ButtonState(
                pos=(self.static.button[0], self.static.button[1], _CAP_TOP),
                depth=depth,
                pressed=depth >= scene.BUTTON_PRESS_DEPTH,
            )
        return world_from_poses(
            raw,
            b.held,
            self._grip,
            self._opening,
            bins,
            drawer,
            button,
            bool(b.light_on) if drawer is not None else None,
        )

    def worlds_near(self, env, names, radius: float = SURE) -> list[WorldState]:
        """The world states with each of ``names``' estimates moved ``radius`` (m) in
        each of 8 directions: a verdict that holds in all of them holds whatever the
        estimate's error (up to ``radius``), one that does not is too close to call."""
        out = []
        for n in names:
            if n not in self.tracker.belief.tracks or n == self.tracker.belief.held:
                continue
            for k in range(8):
                a = k * math.pi / 4
                d = radius * np.array([math.cos(a), math.sin(a)])
                out.append(self.world_state(env, {n: d}))
        return out

    def report(self) -> dict:
        """What is believed and how sure: per cube, whether this frame confirmed it."""
        b = self.tracker.belief
        return {
            "held": b.held,
            "uncertain": sorted(b.uncertain),
            "objects": {
                n: {
                    "pos": [round(float(v), 4) for v in t.pos],
                    "yaw": round(t.yaw, 4),
                    "seen": t.seen,
                    "age": t.age,
                }
                for n, t in sorted(b.tracks.items())
            },
        }


#: The button cap's top at rest (m): the housing's top (3 cm) and the cap (1.2 cm).
_CAP_TOP = 0.042
