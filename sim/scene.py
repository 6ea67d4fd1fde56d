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

#: Open-top bins, by colour. Names are ``<colour>_bin``.
BIN_COLORS: tuple[str, ...] = ("red", "green", "blue")
BIN_NAMES: tuple[str, ...] = tuple(f"{c}_bin" for c in BIN_COLORS)
BIN_INNER_HALF = 0.06  # inner half width of a bin (m)
BIN_WALL_HEIGHT = 0.05

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
#: In the articulated scene the grip site also reaches this far along -y (m): over the whole
#: inside of the open drawer (its centre line is at y = -0.351), so that a cube that slid to
#: the drawer's far side when it was dropped in can still be taken out. Only cubes in the
#: drawer are called reachable out there; on the table the tabletop's box still holds.
DRAWER_REACH_Y = -0.38

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

DRAWER_NAME = "drawer"
DRAWER_JOINT = "drawer_joint"
DRAWER_HANDLE = "drawer_handle"  # the knob's geom; ``drawer_handle_site`` is where to grasp
#: Full travel of the drawer (m): pulled out this far its whole inside is clear of the cabinet.
DRAWER_TRAVEL = 0.15
#: The drawer reads ``open`` from this opening on (its inside is then uncovered but for a
#: strip the fingers never need) and ``closed`` up to DRAWER_CLOSED_MAX.
DRAWER_OPEN_MIN = 0.12
DRAWER_CLOSED_MAX = 0.01
#: Half sizes of the drawer's inside (x along its travel, y across), its floor's top and
#: its walls' top (m), in the drawer's frame (the inside's centre at table level).
DRAWER_INNER_HALF = (0.06, 0.046)
DRAWER_FLOOR_Z = 0.016
DRAWER_WALL_TOP = 0.065
#: Thickness of the drawer's front and of its other walls (m).
DRAWER_FRONT = 0.008
DRAWER_WALL = 0.005
#: The knob, relative to the inside's centre: x from the front's outer face outwards
#: (along -x) HANDLE_OUT, y from HANDLE_Y[0] to HANDLE_Y[1], its top at HANDLE_TOP.
HANDLE_OUT = 0.05
HANDLE_Y = (0.0, 0.03)
HANDLE_TOP = 0.05
#: The cabinet's footprint (x, y low and high corners; it does not move) and its top (m).
CABINET_LOW = (0.175, -0.41)
CABINET_HIGH = (0.321, -0.292)
CABINET_TOP = 0.083

BUTTON_NAME = "button"
#: Half the side of the button's square housing (m); the cap stands on it.
BUTTON_HOUSING_HALF = 0.025
BUTTON_JOINT = "button_joint"
#: The button counts as pressed once pushed this far down (m; its travel is 0.01) and as
#: released once back above BUTTON_RELEASE_DEPTH: each press-then-release flips the light.
BUTTON_PRESS_DEPTH = 0.006
BUTTON_RELEASE_DEPTH = 0.002
#: Where the light's state and the button's latch live in ``data.userdata``.
LIGHT_USERDATA = 0
LATCH_USERDATA = 1
LAMP_GEOM = "lamp_bulb"
LAMP_LIGHT = "lamp_light"
