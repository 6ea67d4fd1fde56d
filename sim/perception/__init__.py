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
#: Where a cube never seen is reported (as the env parks absent cubes, off the table).
_PARK = [(2.0 + 0.2 * i, 2.0, -0.75 + scene.CUBE_HALF) for i in range(len(scene.CUBE_NAMES))]


class Perception:
    """RGB-D cameras, a tracker and the conversions to the system's formats.

    One estimate per simulator state: ``observe()`` and ``world_state()`` of the same
    control step share it (the key is the data's time and a counter :meth:`invalidate`
    bumps when a state is restored)."""

    def __init__(self, model: mujoco.MjModel, cameras: tuple[CameraSpec, ...] = (TOP, WRIST)):
        self.model = model
        self.cameras = RGBDCameras(model, cameras)
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

    def invalidate(self) -> None:
        """The state changed without time moving (a restore, a cube set by hand)."""
        self._gen += 1

    def close(self) -> None:
        self.cameras.close()

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
            self.tracker.update(self.frames, grip, fq)
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

    def world_state(self, env) -> WorldState:
        """The world state of the estimate, by the predicates physics' uses."""
        b = self.update(env)
        raw = {
            n: (t.pos.tolist(), np.array([math.cos(t.yaw / 2), 0.0, 0.0, math.sin(t.yaw / 2)]))
            for n, t in b.tracks.items()
        }
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
