"""Names and geometry of the tabletop scene.

The MJCF in ``assets/tabletop.xml`` (which includes the robot, ``assets/robot.xml``) is
the source of truth for the fixtures' geometry; the objects' geometry comes from their specs
(``sim.objects``), which the scene file's bodies are held to by tests. This module names
things and holds the constants that are *policy* rather than physics (workspace bounds,
spawn area, named table regions), so that the planner, the bridge and the skills all agree
on one vocabulary.
"""

from __future__ import annotations

import numpy as np

from sim import scenes
from sim.fixtures import bins as _bins
from sim.fixtures import button as _button
from sim.fixtures import drawer as _drawer
from sim.fixtures import lamp as _lamp
from sim.objects import TABLETOP_OBJECTS

ASSET_PATH = scenes.TABLETOP.mjcf
#: The robot (arm, gripper, their actuators), included by the scene file.
ROBOT_PATH = scenes.base.ROBOT_XML

#: The scene's objects, by colour, as their specs give them (``sim.objects``: kind, size,
#: colour, mass, friction). Object names are ``<colour>_block``.
CUBE_COLORS: tuple[str, ...] = tuple(o.color for o in TABLETOP_OBJECTS)
CUBE_NAMES: tuple[str, ...] = tuple(o.name for o in TABLETOP_OBJECTS)
#: Half the height of the tabletop's objects (m), from their specs, for code that reasons
#: about them all alike (thresholds of the predicates, spawn heights). Code about one
#: object asks its spec (``sim.objects.spec(name)``).
CUBE_HALF = TABLETOP_OBJECTS[0].half_height
if any(o.half_height != CUBE_HALF for o in TABLETOP_OBJECTS):
    raise ValueError("the tabletop's objects must share one height")

#: Open-top bins, by colour. Names are ``<colour>_bin`` (``sim.fixtures.bins``).
BIN_COLORS: tuple[str, ...] = _bins.BIN_COLORS
BIN_NAMES: tuple[str, ...] = _bins.BIN_NAMES
BIN_INNER_HALF = _bins.BIN_INNER_HALF  # inner half width of a bin (m)
BIN_WALL_HEIGHT = _bins.BIN_WALL_HEIGHT

ARM_JOINTS: tuple[str, ...] = (
    "j1_base_yaw",
    "j2_shoulder",
    "j3_elbow",
    "j4_wrist_pitch",
    "j5_wrist_tilt",
    "j6_wrist_yaw",
)
FINGER_JOINTS: tuple[str, ...] = ("finger_left_joint", "finger_right_joint")
FINGER_OPEN = 0.04  # per-finger travel when fully open (m): an 8 cm gap
FINGER_PADS: tuple[str, ...] = ("finger_left_pad", "finger_right_pad")
FINGER_GEOMS: tuple[str, ...] = (
    "finger_left_geom",
    "finger_left_pad",
    "finger_right_geom",
    "finger_right_pad",
)
BASE_XY = np.array([-0.42, 0.0])

#: Physics step 2 ms, control at 25 Hz: 20 physics steps per control step.
PHYSICS_DT = 0.002
CONTROL_SUBSTEPS = 20
CONTROL_DT = PHYSICS_DT * CONTROL_SUBSTEPS

#: Maximum end-effector speed (m/s) for an action of magnitude 1 on an axis.
MAX_EE_SPEED = 0.5
#: An action: the grip-site target's velocity (x, y, z) as a fraction of MAX_EE_SPEED, and
#: the gripper command (-1 open .. 1 closed), each in [-1, 1].
ACTION_DIM = 4

#: Workspace of the grip site (m). Targets outside are clipped to it.
WORKSPACE_LOW = np.array([-0.26, -0.34, 0.012])
WORKSPACE_HIGH = np.array([0.26, 0.34, 0.32])

#: Area where reset() may place cubes (x range, y range), clear of the bins.
SPAWN_LOW = np.array([-0.20, -0.26])
SPAWN_HIGH = np.array([0.20, 0.10])
SPAWN_MIN_DIST = 0.075

#: Named table regions (centre x, y) and their radius: targets for push and place.
REGION_RADIUS = 0.05
REGIONS: dict[str, tuple[float, float]] = {
    "table_center": (0.0, -0.08),
    "table_front": (0.17, -0.08),
    "table_back": (-0.17, -0.08),
    "table_left": (0.0, 0.09),
    "table_right": (0.0, -0.25),
}

#: Rest pose of the grip site, used by home() and at reset.
HOME_POS = np.array([-0.08, 0.0, 0.22])

#: Where absent cubes are parked: under the table, out of sight and out of contact.
PARK_Z = -0.6


def cube_color(name: str) -> str:
    """Colour word of a cube or bin name (``red_block`` -> ``red``)."""
    return name.split("_", 1)[0]


# ---------------------------------------------------------------- the articulated scene
#: Scenes by name (``TabletopEnv(scene=...)``, ``physics.load_model(scene)``). The
#: articulated scene includes the tabletop scene whole and adds a drawer, a button and a
#: lamp after its bodies; it is opt-in until its skills ship.
SCENE_NAMES: tuple[str, ...] = scenes.NAMES
DEFAULT_SCENE = scenes.DEFAULT
ARTICULATED_PATH = scenes.ARTICULATED.mjcf

#: The drawer's, the button's and the lamp's names and geometry, as the skills and the env
#: read them: they live with their fixtures (``sim.fixtures.drawer``, ``button``, ``lamp``).
DRAWER_NAME = _drawer.DRAWER_NAME
DRAWER_JOINT = _drawer.DRAWER_JOINT
DRAWER_HANDLE = _drawer.DRAWER_HANDLE
DRAWER_TRAVEL = _drawer.DRAWER_TRAVEL
DRAWER_OPEN_MIN = _drawer.DRAWER_OPEN_MIN
DRAWER_CLOSED_MAX = _drawer.DRAWER_CLOSED_MAX
DRAWER_INNER_HALF = _drawer.DRAWER_INNER_HALF
DRAWER_FLOOR_Z = _drawer.DRAWER_FLOOR_Z
DRAWER_WALL_TOP = _drawer.DRAWER_WALL_TOP
DRAWER_FRONT = _drawer.DRAWER_FRONT
DRAWER_WALL = _drawer.DRAWER_WALL
HANDLE_OUT = _drawer.HANDLE_OUT
HANDLE_Y = _drawer.HANDLE_Y
HANDLE_TOP = _drawer.HANDLE_TOP
CABINET_LOW = _drawer.CABINET_LOW
CABINET_HIGH = _drawer.CABINET_HIGH
CABINET_TOP = _drawer.CABINET_TOP
DRAWER_REACH_Y = _drawer.DRAWER_REACH_Y

BUTTON_NAME = _button.BUTTON_NAME
BUTTON_HOUSING_HALF = _button.BUTTON_HOUSING_HALF
BUTTON_JOINT = _button.BUTTON_JOINT
BUTTON_PRESS_DEPTH = _button.BUTTON_PRESS_DEPTH
BUTTON_RELEASE_DEPTH = _button.BUTTON_RELEASE_DEPTH
LIGHT_USERDATA = _lamp.LIGHT_USERDATA
LATCH_USERDATA = _button.LATCH_USERDATA
LAMP_GEOM = _lamp.LAMP_GEOM
LAMP_LIGHT = _lamp.LAMP_LIGHT
