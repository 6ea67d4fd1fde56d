"""``TabletopEnv``: the gymnasium environment of the tabletop scene.

The base environment has no task: reward is 0 and it never terminates (a time limit comes
from the registration). Skills wrap it with their goals, rewards and success tests.

Reset options (all optional):

- ``cubes``: which cubes are present, either a list of names (placed at random) or a dict
  ``{name: [x, y]}`` / ``{name: [x, y, yaw]}`` / ``{name: [x, y, z, yaw]}`` fixing poses
  (``None`` as a value places that cube at random). Absent cubes are parked off the table.
- ``arm``: ``[x, y, z]`` start position of the grip site (default: the home pose).
- ``drawer`` (articulated scene only): how far the drawer starts pulled out (m, default 0).
- ``light`` (articulated scene only): whether the light starts on (default off).

``TabletopEnv(scene="articulated")`` loads the articulated scene (``sim/assets/
articulated.xml``): the tabletop plus a drawer, a push button and a lamp. Its observation
has one more key, ``articulation``; everything else is as in the default scene, which is
untouched.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium import spaces

from sim import physics, scene, scenes
from sim import scene as S
from sim.controller import ArmController, doubles_view
from sim.cubes import cube_pose, spawn_xy
from sim.objects import spec as object_spec
from sim.world import WorldState, extract_world_state

N_CUBES = len(scene.CUBE_NAMES)
PROPRIO_DIM = 14  # grip pos (3), grip vel (3), finger positions (2), arm joints (6)
ARTICULATION_DIM = 3  # drawer opening (m), button depth (m), light on (0/1)


class Articulation:
    """The articulated scene's moving parts: the drawer, the button and its light.

    The light's state lives in ``data.userdata`` (with the button's latch), so it is part
    of every saved state; :meth:`update` runs after each control step and is a pure function
    of the state, which keeps restore-and-continue and replay exact. The lamp's look is
    model data, so :meth:`show` derives it from the state before each render: a restored
    state renders as it was recorded."""

    def __init__(self, model: mujoco.MjModel):
        drawer, button = model.joint(S.DRAWER_JOINT).id, model.joint(S.BUTTON_JOINT).id
        self.drawer_q, self.drawer_d = model.jnt_qposadr[drawer], model.jnt_dofadr[drawer]
        self.button_q, self.button_d = model.jnt_qposadr[button], model.jnt_dofadr[button]
        self.lamp = model.geom(S.LAMP_GEOM).id
        self.light = model.light(S.LAMP_LIGHT).id
        self.materials = (model.material("lamp_off").id, model.material("lamp_on").id)

    def set(self, data: mujoco.MjData, drawer: float = 0.0, light: bool = False) -> None:
        """Start state: the drawer pulled out ``drawer`` m and at rest, the button up."""
        if not 0.0 <= drawer <= S.DRAWER_TRAVEL:
            raise ValueError(f"drawer must be in [0, {S.DRAWER_TRAVEL}] m, got {drawer}")
        data.qpos[self.drawer_q], data.qvel[self.drawer_d] = drawer, 0.0
        data.qpos[self.button_q], data.qvel[self.button_d] = 0.0, 0.0
        data.userdata[S.LIGHT_USERDATA] = 1.0 if light else 0.0
        data.userdata[S.LATCH_USERDATA] = 0.0

    def update(self, data: mujoco.MjData) -> None:
        """Latch a press past BUTTON_PRESS_DEPTH; on the release that follows, flip the
        light."""
        depth = -float(data.qpos[self.button_q])
        u = data.userdata
        if u[S.LATCH_USERDATA] == 0.0:
            if depth >= S.BUTTON_PRESS_DEPTH:
                u[S.LATCH_USERDATA] = 1.0
        elif depth <= S.BUTTON_RELEASE_DEPTH:
            u[S.LATCH_USERDATA] = 0.0
            u[S.LIGHT_USERDATA] = 0.0 if u[S.LIGHT_USERDATA] else 1.0

    def show(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Bulb material and lamp light from the state's light_on."""
        on = bool(data.userdata[S.LIGHT_USERDATA])
        model.geom_matid[self.lamp] = self.materials[on]
        model.light_active[self.light] = on

    def observe(self, data: mujoco.MjData) -> np.ndarray:
        return np.array(
            [
                data.qpos[self.drawer_q],
                -data.qpos[self.button_q],
                data.userdata[S.LIGHT_USERDATA],
            ]
        )


_SITE = int(mujoco.mjtObj.mjOBJ_SITE)
_SUBSTEPS = scene.CONTROL_SUBSTEPS
_mj_step, _mj_kinematics = mujoco.mj_step, mujoco.mj_kinematics
_mj_comPos, _mj_comVel = mujoco.mj_comPos, mujoco.mj_comVel


class _ObsViews:
    """Views into one MjData of the rows and spans :meth:`TabletopEnv.observe` copies out
    (None for index sets that are not contiguous: those are gathered on each call)."""

    def __init__(self, env: TabletopEnv):
        d = self.data = env.data
        self.site_pos = d.site_xpos[env._site]
        spans = (env._finger_q, env.controller.q_span, env._cube_rows)
        fq, aq, rows = (s if isinstance(s, slice) else None for s in spans)
        self.finger_q = None if fq is None else d.qpos[fq]
        self.arm_q = None if aq is None else d.qpos[aq]
        self.cubes = None if rows is None else (d.xpos[rows], d.xquat[rows])
        # memoryviews of the proprio's sources where all are spans: slice assignment
        # between memoryviews copies the same doubles as an ndarray setitem, without its
        # setup (None: the ndarray path)
        self.proprio_mv = (
            None
            if fq is None or aq is None
            else tuple(
                doubles_view(a) for a in (self.site_pos, env._lin_vel, self.finger_q, self.arm_q)
            )
        )


def _headless() -> bool:
    if sys.platform in ("darwin", "win32"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def human_render_error() -> str | None:
    """Why MuJoCo's interactive viewer cannot open here, or None when it can.

    The viewer's GLFW start-up failure ends the whole process (``could not initialize
    GLFW``, exit 1) with no Python exception, so it is asked before the viewer starts."""
    if sys.platform in ("darwin", "win32"):
        return None
    if _headless():
        return "no display (DISPLAY/WAYLAND_DISPLAY is not set)"
    try:
        import glfw

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = glfw.init()
            if ok:
                glfw.terminate()
    except Exception as e:  # noqa: BLE001 - a missing or broken GLFW library
        return f"GLFW is unusable ({e})".splitlines()[0]
    return None if ok else "GLFW cannot open the display"


class TabletopEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": int(1 / scene.CONTROL_DT)}

    def __init__(
        self,
        render_mode: str | None = None,
        width: int = 480,
        height: int = 360,
        camera: str = "front",
        scene: str = S.DEFAULT_SCENE,
    ):
        spec = scenes.get(scene)  # ValueError naming the known scenes
        if len(spec.objects) != N_CUBES:
            raise ValueError(
                f"scene {scene} holds {len(spec.objects)} objects; the skills' observation "
                f"has rows for {N_CUBES}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        if _headless():  # "human" is not a mode of this instance (gymnasium's check_env)
            self.metadata = {**self.metadata, "render_modes": ["rgb_array"]}
        if render_mode == "human" and (why := human_render_error()):
            raise ValueError(
                f"render_mode='human' needs MuJoCo's viewer, which cannot open here: {why}; "
                "use render_mode='rgb_array'"
            )
        self.render_mode = render_mode
        self.width, self.height, self.camera = width, height, camera
        self.scene = scene
        self.model = physics.load_model(scene)
        self.data = mujoco.MjData(self.model)
        self.controller = ArmController(self.model)
        #: The scene's objects, in the order of the observation's rows (``scene.CUBE_NAMES``
        #: in the tabletop; an object keeps its row in every scene, ``sim.scenes.row``).
        self.object_names: tuple[str, ...] = tuple(o.name for o in spec.objects)
        names = self.object_names
        self._cube_qadr = {
            n: self.model.jnt_qposadr[self.model.joint(f"{n}_joint").id] for n in names
        }
        self._cube_dadr = {
            n: self.model.jnt_dofadr[self.model.joint(f"{n}_joint").id] for n in names
        }
        self._cube_body = [self.model.body(n).id for n in names]
        self._finger_qadr = [
            self.model.jnt_qposadr[self.model.joint(j).id] for j in S.FINGER_JOINTS
        ]
        self._site = self.model.site("grip_site").id
        self._vel = np.zeros(6)
        self._lin_vel = self._vel[3:]
        self._views: _ObsViews | None = None
        # the same indices as slices where they run contiguously: observe() reads them
        # every step, and a gather through a list costs more than the rest of it
        self._cube_rows = physics.index_span(self._cube_body)
        self._finger_q = physics.index_span(self._finger_qadr)
        self._present_of: tuple[Any, np.ndarray] = (None, np.zeros(N_CUBES))
        self._renderer: mujoco.Renderer | None = None
        self._viewer = None
        self.present: tuple[str, ...] = names
        #: The drawer, button and light (None in the default scene).
        self.articulation = Articulation(self.model) if spec.articulated else None
        #: Seconds spent in ``physics`` (:meth:`step_physics`) and ``world``
        #: (:meth:`world_state`), added up when a caller sets a dict here (the runner's
        #: timing breakdown); ``None`` (the default) times nothing.
        self.timings: dict[str, float] | None = None
        #: Perception (``sim.perception.Perception``) or None: when set, :meth:`observe`'s
        #: cube and articulation entries and :meth:`world_state` are its estimate from the
        #: cameras; :meth:`true_world_state` is always physics.
        self.perception: Any = None

        inf = np.inf
        obs: dict[str, spaces.Space[Any]] = {
            "proprio": spaces.Box(-inf, inf, (PROPRIO_DIM,), np.float64),
            "object_pos": spaces.Box(-inf, inf, (N_CUBES, 3), np.float64),
            "object_quat": spaces.Box(-1.0, 1.0, (N_CUBES, 4), np.float64),
            "object_present": spaces.Box(0.0, 1.0, (N_CUBES,), np.float64),
        }
        if self.articulation is not None:
            obs["articulation"] = spaces.Box(-inf, inf, (ARTICULATION_DIM,), np.float64)
        self.observation_space = spaces.Dict(obs)
        self.action_space = spaces.Box(-1.0, 1.0, (S.ACTION_DIM,), np.float32)

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        if self.perception is not None:
            self.perception.reset()
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        self.controller.set_home(d)
        self._set_articulation(options)
        self._place_cubes(options.get("cubes"))
        mujoco.mj_forward(m, d)
        arm = options.get("arm")
        if arm is not None:
            self.move_arm_to(np.asarray(arm, dtype=np.float64))
        else:
            # let contacts settle under the holding controller
            self.step_physics(np.array([0.0, 0.0, 0.0, -1.0]), control_steps=2)
        return self.observe(), {}

    def step(self, action):
        if self.timings is None and self.articulation is None:
            # the default scene, untimed: step_physics' one control period, inlined (the
            # same calls in the same order; this path runs for every step of training)
            m, d = self.model, self.data
            self.controller.apply(d, action)
            _mj_step(m, d, nstep=_SUBSTEPS)
            _mj_kinematics(m, d)
            _mj_comPos(m, d)
            _mj_comVel(m, d)
        else:
            self.step_physics(action)
        if self.render_mode == "human":
            self.render()
        return self.observe(), 0.0, False, False, {}

    def render(self):
        if self.render_mode == "human":
            return self._render_human()
        return self.render_rgb(self.camera)

    def close(self):
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None

    # ------------------------------------------------------------------ helpers
    def step_physics(self, action, control_steps: int = 1) -> None:
        """Apply ``action`` for ``control_steps`` control periods."""
        t0 = time.perf_counter() if self.timings is not None else 0.0
        m, d = self.model, self.data
        for _ in range(control_steps):
            self.controller.apply(d, action)
            mujoco.mj_step(m, d, nstep=scene.CONTROL_SUBSTEPS)
            # mj_step leaves derived quantities one physics step stale. Refresh what the
            # controller and the observation read (poses, Jacobian terms, body velocities)
            # for the *current* state, as set_state() does: both are then pure functions
            # of the state, which is what makes restore-and-continue exact. Contacts are
            # refreshed only when the world state asks for them.
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_comVel(m, d)
            if self.articulation is not None:
                self.articulation.update(d)
        if self.timings is not None:
            self.timings["physics"] = self.timings.get("physics", 0.0) + time.perf_counter() - t0

    @property
    def grip_yaw(self) -> float:
        """The hand's commanded turn about world z (rad); 0: fingers along world y."""
        return self.controller.grip_yaw(self.data)

    def set_grip_yaw(self, yaw: float) -> None:
        """Turn the hand to ``yaw`` over the next control steps (a controller set-point, part
        of the saved state; an episode records the change so that replay repeats it)."""
        self.controller.set_grip_yaw(self.data, yaw)

    def move_arm_to(self, pos: np.ndarray, grip: float = -1.0, max_steps: int = 60) -> None:
        """Drive the grip site to ``pos`` with the controller (used to set start states)."""
        for _ in range(max_steps):
            err = pos - self.data.site_xpos[self._site]
            if np.linalg.norm(err) < 0.004:
                break
            a = np.clip(err / (scene.MAX_EE_SPEED * scene.CONTROL_DT), -1, 1)
            self.step_physics(np.array([*a, grip]))

    def _set_articulation(self, options: dict[str, Any]) -> None:
        drawer, light = options.get("drawer"), options.get("light")
        if self.articulation is None:
            if drawer is not None or light is not None:
                raise ValueError("the drawer and light options need scene='articulated'")
            return
        self.articulation.set(self.data, float(drawer or 0.0), bool(light))

    def _place_cubes(self, spec) -> None:
        rng = self.np_random
        names = self.object_names
        if spec is None:
            spec = {n: None for n in names}
        elif isinstance(spec, (list, tuple)):
            spec = {n: None for n in spec}
        unknown = [n for n in spec if n not in names]
        if unknown:
            raise ValueError(f"unknown cube(s) {unknown}; known: {list(names)}")
        self.present = tuple(n for n in names if n in spec)
        placed: list[np.ndarray] = []
        fixed = {n: v for n, v in spec.items() if v is not None}
        for v in fixed.values():
            placed.append(np.asarray(v[:2], dtype=np.float64))
        poses: dict[str, tuple[float, float, float, float]] = {}
        for n in names:
            if n not in spec:
                continue
            v = spec[n]
            if v is None:
                xy = self._sample_xy(rng, placed)
                placed.append(xy)
                poses[n] = (xy[0], xy[1], object_spec(n).half_height, rng.uniform(-0.35, 0.35))
            else:
                poses[n] = cube_pose(n, v)
        for i, n in enumerate(names):
            if n in poses:
                x, y, z, yaw = poses[n]
            else:  # parked on the floor far from the table, out of the scene
                x, y, z, yaw = 2.0 + 0.2 * i, 2.0, -0.75 + object_spec(n).half_height, 0.0
            self.put_cube(n, (x, y, z), (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)))

    def put_cube(self, name: str, pos, quat) -> None:
        """Set cube ``name``'s free joint to ``pos`` and ``quat`` (w, x, y, z), at rest.
        Derived quantities are not recomputed (see :meth:`set_state`)."""
        a, d = self._cube_qadr[name], self._cube_dadr[name]
        self.data.qpos[a : a + 3] = pos
        self.data.qpos[a + 3 : a + 7] = quat
        self.data.qvel[d : d + 6] = 0.0

    @staticmethod
    def _sample_xy(rng: np.random.Generator, placed: list[np.ndarray]) -> np.ndarray:
        return spawn_xy(rng, placed)

    def observe(self) -> dict[str, np.ndarray]:
        """The observation of the current state (what ``reset`` and ``step`` return).

        | key              | shape        | content                                          |
        |------------------|--------------|--------------------------------------------------|
        | ``proprio``      | (14,)        | [0:3] grip-site position, [3:6] its linear       |
        |                  |              | velocity, [6:8] finger joints, [8:14] arm joints |
        | ``object_pos``   | (N_CUBES, 3) | centres, in ``object_names`` order             |
        | ``object_quat``  | (N_CUBES, 4) | cube orientations (w, x, y, z)                   |
        | ``object_present`` | (N_CUBES,) | 1.0 for a cube in the scene, 0.0 if parked       |
        | ``articulation`` | (3,)         | articulated scene only: drawer opening (m),      |
        |                  |              | button depth (m), light on (0/1)                 |

        Actions (``scene.ACTION_DIM`` = 4, each in [-1, 1]): the grip-site target's velocity
        x, y, z as a fraction of ``scene.MAX_EE_SPEED``, then the gripper (-1 open, 1 closed).
        """
        v = self._obs_views()
        mujoco.mj_objectVelocity(self.model, self.data, _SITE, self._site, self._vel, 0)
        proprio = np.empty(PROPRIO_DIM)
        if v.proprio_mv is not None:
            site, vel, fingers, arm = v.proprio_mv
            p = doubles_view(proprio)
            p[0:3], p[3:6], p[6:8], p[8:14] = site, vel, fingers, arm
        else:
            proprio[0:3] = v.site_pos
            proprio[3:6] = self._lin_vel
            if v.finger_q is None:
                proprio[6:8] = self.data.qpos[self._finger_q]
            else:
                proprio[6:8] = v.finger_q
            if v.arm_q is None:
                proprio[8:14] = self.data.qpos[self.controller.q_span]
            else:
                proprio[8:14] = v.arm_q
        if v.cubes is None:
            pos, quat = self.data.xpos[self._cube_rows], self.data.xquat[self._cube_rows]
        else:
            pos, quat = v.cubes[0].copy(), v.cubes[1].copy()
        obs = {
            "proprio": proprio,
            "object_pos": pos,
            "object_quat": quat,
            "object_present": self._present_array(),
        }
        if self.articulation is not None:
            obs["articulation"] = self.articulation.observe(self.data)
        if self.perception is not None:
            obs = self.perception.observation(self, obs)
        return obs

    def _obs_views(self) -> _ObsViews:
        """Views of what :meth:`observe` reads, made once per ``self.data`` (its arrays
        never move; a view made through the bindings costs more than the copy out of it)."""
        v = self._views
        if v is None or v.data is not self.data:
            v = self._views = _ObsViews(self)
        return v

    def _present_array(self) -> np.ndarray:
        """``object_present`` (a fresh array), built again only when ``present`` is another
        tuple than last time (callers may set it, e.g. a perturbation)."""
        key, arr = self._present_of
        if key is not self.present or not isinstance(key, tuple):
            arr = np.array([1.0 if n in self.present else 0.0 for n in self.object_names])
            self._present_of = (self.present, arr)
        return arr.copy()

    # ------------------------------------------------------------------ state
    def get_state(self) -> np.ndarray:
        return physics.get_state(self.model, self.data)

    def set_state(self, state: np.ndarray) -> None:
        physics.set_state(self.model, self.data, state)
        if self.perception is not None:
            self.perception.invalidate()

    def world_state(self) -> WorldState:
        """The world state the system acts on: physics', or the perception's estimate where
        :attr:`perception` is set."""
        if self.perception is not None:
            return self.perception.world_state(self)
        return self.true_world_state()

    def true_world_state(self) -> WorldState:
        """The world state from physics (the ground truth), whatever :attr:`perception` is."""
        t0 = time.perf_counter() if self.timings is not None else 0.0
        mujoco.mj_collision(self.model, self.data)  # contacts of the current state
        w = extract_world_state(self.model, self.data)
        if self.timings is not None:
            self.timings["world"] = self.timings.get("world", 0.0) + time.perf_counter() - t0
        return w

    @property
    def grip_pos(self) -> np.ndarray:
        return self.data.site_xpos[self._site].copy()

    # ------------------------------------------------------------------ rendering
    def render_rgb(self, camera: str | None = None) -> np.ndarray:
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.model, self.height, self.width)
        if self.articulation is not None:
            self.articulation.show(self.model, self.data)
        self._renderer.update_scene(self.data, camera=camera or self.camera)
        return self._renderer.render()

    def _render_human(self):
        if self._viewer is None:
            import mujoco.viewer

            self._viewer = mujoco.viewer.launch_passive(self.model, self.data)
        if self.articulation is not None:
            self.articulation.show(self.model, self.data)
        self._viewer.sync()
        return None
