"""Scripted (non-learned) controllers: a test of the physics and a source of demonstrations.

Each expert is a *stateless* function of what the robot can observe (grip-site position,
finger opening, cube positions) returning an action ``(dx, dy, dz, grip)``. Stateless
experts can label any state, which is what DAgger-style demonstration relabelling and
behaviour-cloning warm starts need.
"""

from __future__ import annotations

import numpy as np

from sim import scene
from sim.cubes import RELEASE_BAND, region_spot
from sim.world import yaw_of

GAIN = 1.0 / (scene.MAX_EE_SPEED * scene.CONTROL_DT)  # metres -> action units per step
TRAVEL_Z = 0.125  # empty-handed travel height of the grip site: fingertips clear a 2-stack
CARRY_Z = 0.14  # travel height of the grip site while carrying (clears bin walls and stacks)
OPEN, CLOSE = -1.0, 1.0
#: Gripper command while approaching a cube to pick: a 6.4 cm opening clears a cube at any
#: yaw the scene uses (at most 5.1 cm across) while keeping the fingers off its neighbours.
APPROACH = -0.6
#: A closed gripper holds a cube when the finger opening is within this margin of the cube's
#: width across the fingers (fully open is 0.08).
GRASP_MARGIN = 0.005
#: Opening the expert requires before descending onto a cube (nearly fully open).
DESCEND_OPENING = 0.060
BIN_RELEASE_Z = 0.085
STACK_RELEASE_DZ = 2 * scene.CUBE_HALF + 0.006
TABLE_RELEASE_Z = scene.CUBE_HALF + 0.006


def _move(grip: np.ndarray, target: np.ndarray, g: float, speed: float = 1.0) -> np.ndarray:
    a = np.clip((target - grip) * GAIN, -speed, speed)
    return np.array([a[0], a[1], a[2], g])


def grasp_width(yaw: float, half: float = scene.CUBE_HALF) -> float:
    """Width across the fingers (world y) of a cube of half side ``half`` turned by ``yaw``
    (a round object of radius ``half`` is never wider)."""
    phi = abs(float(yaw)) % (np.pi / 2)
    return 2 * half * (np.cos(phi) + np.sin(phi))


def is_grasped(
    grip: np.ndarray,
    opening: float,
    cube: np.ndarray,
    yaw: float = 0.0,
    half: float = scene.CUBE_HALF,
) -> bool:
    """Cube between fingers closed on it: a geometric test the experts use to choose a phase.

    The threshold follows the cube's yaw: a cube squeezed at an angle keeps the fingers
    wider apart than one squeezed square, and a fixed threshold would call it "not held".
    ``half``: the object's half width (a larger cube keeps the fingers further apart).
    """
    return opening < grasp_width(yaw, half) + GRASP_MARGIN and bool(
        np.all(np.abs(cube - grip) < [0.02, 0.02, 0.025])
    )


def pick_action(
    grip: np.ndarray,
    opening: float,
    cube: np.ndarray,
    yaw: float = 0.0,
    lift_z: float = 0.12,
    half: float = scene.CUBE_HALF,
):
    """Approach above the cube, descend open, close, lift to ``lift_z`` (``half``: the
    object's half width, for :func:`is_grasped`)."""
    if is_grasped(grip, opening, cube, yaw, half):
        return _move(grip, np.array([grip[0], grip[1], lift_z]), CLOSE)
    dxy = np.linalg.norm(cube[:2] - grip[:2])
    # travel high enough that the fingertips clear a two-cube stack on the way, coming down
    # smoothly on the final approach: a step in the target height would give a learner
    # contradictory labels on either side of it
    low = cube[2] + 0.07
    hover = low + max(TRAVEL_Z - low, 0.0) * float(np.clip((dxy - 0.02) / 0.08, 0.0, 1.0))
    if dxy > 0.008:
        # rise first if low, so the fingers do not sweep other cubes
        z = hover if grip[2] > cube[2] + 0.045 or dxy < 0.02 else grip[2] + 0.05
        tgt = (
            np.array([cube[0], cube[1], z])
            if grip[2] > cube[2] + 0.045
            else np.array([grip[0], grip[1], hover])
        )
        return _move(grip, tgt, APPROACH)
    if grip[2] - cube[2] > 0.006:
        if opening > DESCEND_OPENING:
            return _move(grip, np.array([cube[0], cube[1], cube[2]]), APPROACH)
        # closed too early, above the cube (the fingers would press on its top): open
        # first. The expert never gets here itself, but a learner does, and DAgger needs
        # the label that recovers.
        return _move(grip, np.array([cube[0], cube[1], max(grip[2], cube[2] + 0.03)]), APPROACH)
    return _move(grip, np.array([cube[0], cube[1], cube[2]]), CLOSE)


def place_action(
    grip: np.ndarray, opening: float, cube: np.ndarray, release: np.ndarray, yaw: float = 0.0
):
    """Carry a held cube over ``release`` (grip-site point), lower, open, back off upwards."""
    if not is_grasped(grip, opening, cube, yaw):
        return _move(grip, np.array([grip[0], grip[1], CARRY_Z + 0.04]), OPEN)
    dxy = np.linalg.norm(release[:2] - grip[:2])
    carry = max(CARRY_Z, release[2] + 0.03)
    if dxy > 0.006:
        if grip[2] < carry - 0.03:
            return _move(grip, np.array([grip[0], grip[1], carry]), CLOSE)
        return _move(grip, np.array([release[0], release[1], carry]), CLOSE)
    if grip[2] - release[2] > 0.006:
        return _move(grip, release, CLOSE, speed=0.8)
    return _move(grip, release, OPEN)


#: Drop spots inside a bin, relative to its centre: the centre, then the four quadrants.
BIN_SPOTS = np.array([[0.0, 0.0], [0.03, 0.03], [-0.03, 0.03], [0.03, -0.03], [-0.03, -0.03]])


def release_point(world, target: str) -> np.ndarray:
    """Grip-site point from which dropping a held cube lands it on/in ``target``.

    In a bin that already holds cubes, the drop spot is the one farthest from them, so
    several cubes can share a bin without landing on each other; at a table region, the
    spot :func:`sim.cubes.region_spot` chooses (beside the cubes there).
    """
    b = world.bin(target)
    if b is not None:
        centre = np.asarray(b.pos[:2])
        inside = [
            np.asarray(o.pos[:2])
            for o in world.objects
            if o.name != world.held_object and o.in_bin == target
        ]
        spot = centre
        if inside:
            spots = centre + BIN_SPOTS
            clearance = [min(np.linalg.norm(p - q) for q in inside) for p in spots]
            spot = spots[int(np.argmax(clearance))]
        return np.array([spot[0], spot[1], BIN_RELEASE_Z])
    r = world.region(target)
    if r is not None:  # beside the cubes already there (a region is an area)
        x, y = region_spot(world, target, world.held_object, band=RELEASE_BAND) or r.pos
        return np.array([x, y, TABLE_RELEASE_Z])
    o = world.object(target)
    if o is not None:
        return np.array([o.pos[0], o.pos[1], o.pos[2] + STACK_RELEASE_DZ])
    raise KeyError(target)


def home_action(grip: np.ndarray, opening: float):
    """Open, rise clear of the table, then go to the home pose."""
    if grip[2] < 0.08 and np.linalg.norm(grip[:2] - scene.HOME_POS[:2]) > 0.02:
        return _move(grip, np.array([grip[0], grip[1], 0.12]), OPEN)
    return _move(grip, scene.HOME_POS, OPEN)


PUSH_Z = scene.CUBE_HALF + 0.002
PUSH_BACKOFF = 0.05  # grip-site distance behind the cube centre when pushing
#: Half-width of the closed fingers' footprint around the grip site, along x and along y.
FINGERS_HALF = 0.012
#: Where the fingers may come down behind the cube: distances behind it (m), tried in
#: order, each with these lateral offsets from the push line (m), first the centred ones.
LANDING_BACK = (PUSH_BACKOFF, 0.045, 0.06, 0.04, 0.07)
LANDING_SIDE = (0.0, 0.006, -0.006, 0.012, -0.012)
#: Room (m) wanted between the landing fingers' footprint and any other cube, along x or y:
#: for a few degrees of its yaw and for the descent's overshoot. Where no spot has it, the
#: roomiest one does if it has LANDING_MIN_ROOM.
LANDING_ROOM = 0.008
LANDING_MIN_ROOM = 0.005


def _room(xy: np.ndarray, obstacles) -> float:
    """Gap between the fingers' footprint at ``xy`` and the nearest cube (axis-aligned).

    Per cube the larger of the two axis distances, on Python floats (the same values as
    ``np.max(np.abs(o[:2] - xy))``, NaN included, without three small arrays a cube)."""
    x, y = (float(v) for v in xy[:2])
    gaps = []
    for o in obstacles:
        dx, dy = abs(float(o[0]) - x), abs(float(o[1]) - y)
        gaps.append(dx if dx >= dy or dx != dx else dy)
    return min(gaps, default=np.inf) - FINGERS_HALF - scene.CUBE_HALF


_LOW_XY = tuple(float(v) for v in scene.WORKSPACE_LOW[:2])
_HIGH_XY = tuple(float(v) for v in scene.WORKSPACE_HIGH[:2])


def landing_spots(cube: np.ndarray, u: np.ndarray):
    """The spots behind ``cube`` where the closed fingers may come down to push it along
    ``u``, in the order they are tried: ``(xy, side, reachable)``, with ``side`` the lateral
    offset from the push line and ``reachable`` whether the grip site can get there (inside
    the workspace). The expert and the push's preconditions walk the same spots."""
    perp = np.array([-u[1], u[0]])
    # not so close that the fingers land on the cube itself, whatever the push direction
    nearest = (FINGERS_HALF + scene.CUBE_HALF) * (abs(u[0]) + abs(u[1])) + 0.004
    base = cube[:2]
    # the same products for every side, computed once: (base - u * back) + perp * side
    backs = [base - u * max(back, nearest) for back in LANDING_BACK]
    (lx, ly), (hx, hy) = _LOW_XY, _HIGH_XY
    for side in LANDING_SIDE:
        off = perp * side
        for behind in backs:
            xy = behind + off
            x, y = xy.tolist()
            inside = not (x < lx or y < ly or x > hx or y > hy)
            yield xy, side, inside


def push_landing(cube: np.ndarray, u: np.ndarray, obstacles=()) -> np.ndarray | None:
    """Where the closed fingers come down behind ``cube`` to push it along ``u``: the
    nearest spot to the usual one inside the workspace with room beside every cube of
    ``obstacles``, or None if there is none. Coming down on a neighbour wedges the fingers
    on it."""
    best, best_room = None, LANDING_MIN_ROOM
    for xy, _, inside in landing_spots(cube, u):
        if inside:
            room = _room(xy, obstacles)
            if room >= LANDING_ROOM:
                return xy
            if room >= best_room:
                best, best_room = xy, room
    return best


#: Speed of the fingers in contact (fraction of the top speed), and the slower one within
#: PUSH_SLOW_DIST (m) of the goal: a row pushed fast up to its goal slides on after the
#: fingers stop there, and its cubes tumble over each other.
PUSH_SPEED = (0.6, 0.35)
PUSH_SLOW_DIST = 0.12
#: A push goes on while the grip site is this close to the line through the cube (m): the
#: fingers still meet the face, and the push corrects the drift as it goes.
PUSH_LATERAL = 0.02
#: ... and at least this far behind its centre (m).
PUSH_BEHIND = 0.012
#: Closer than this (m, grip site to cube centre, horizontally) and below the cube's top the
#: closed fingers may be touching the cube: a retreat moves them off it before rising.
TOUCH_RANGE = 0.05


def clear_of(grip: np.ndarray, cube: np.ndarray, g: float = CLOSE) -> np.ndarray | None:
    """Move the fingers horizontally off ``cube`` when they may be touching it, else None.
    Rising while pressed against its face would roll it over (the fingers grip hard):
    a rolled cube lies flat again, but turned in a way a grasp cannot read from its yaw."""
    rel = grip[:2] - cube[:2]
    gap = float(np.linalg.norm(rel))
    if gap >= TOUCH_RANGE or grip[2] > cube[2] + scene.CUBE_HALF + 0.01:
        return None
    away = rel / max(gap, 1e-6)
    tgt = cube[:2] + away * (TOUCH_RANGE + 0.005)
    return _move(grip, np.array([tgt[0], tgt[1], grip[2] + 0.002]), g)


def push_action(grip: np.ndarray, cube: np.ndarray, goal_xy: np.ndarray, obstacles=()):
    """Slide a cube along the table towards ``goal_xy`` with the closed fingers, coming
    down clear of the cubes in ``obstacles`` (those not pushed along)."""
    d = np.asarray(goal_xy) - cube[:2]
    dist = np.linalg.norm(d)
    if dist < 0.012:
        return _move(grip, np.array([grip[0], grip[1], 0.12]), CLOSE)
    u = d / dist
    rel = grip[:2] - cube[:2]
    along = rel @ u  # negative when behind the cube
    lateral = abs(rel @ np.array([-u[1], u[0]]))
    # behind the cube: the leading finger gives way up to a centimetre under a push along
    # y, so a grip site 2 cm behind the centre is a push going well, not a reason to lift
    # (rolling the cube over with the rising fingers) and come down again
    aligned = along < -PUSH_BEHIND and lateral < PUSH_LATERAL
    if aligned and grip[2] < PUSH_Z + 0.015:
        # push: aim the grip at a point past the cube on the line to the goal
        step = min(dist, 0.03)
        tgt_xy = cube[:2] - u * (PUSH_BACKOFF - 0.02) + u * step
        line = cube[:2] - u * PUSH_BACKOFF
        tgt_xy = tgt_xy + (line - grip[:2]) - u * ((line - grip[:2]) @ u)  # lateral fix
        # scaled as a whole, not clipped axis by axis: a clipped push loses its sideways
        # correction, and the cube walks off the fingers
        v = np.array([*(tgt_xy - grip[:2]), PUSH_Z - grip[2]]) * GAIN
        v *= min(1.0, PUSH_SPEED[int(dist < PUSH_SLOW_DIST)] / max(float(np.abs(v).max()), 1e-9))
        return np.array([v[0], v[1], v[2], CLOSE])
    # not pushing: where to come down (searched only here, not on every pushing step)
    behind = push_landing(cube, u, obstacles)
    if behind is None:
        behind = cube[:2] - u * PUSH_BACKOFF
    if np.linalg.norm(grip[:2] - behind) < 0.01:
        return _move(grip, np.array([behind[0], behind[1], PUSH_Z]), CLOSE)
    if grip[2] < 0.07:
        return _move(grip, np.array([grip[0], grip[1], 0.09]), CLOSE)
    return _move(grip, np.array([behind[0], behind[1], 0.09]), CLOSE)


def run_pick_place(env, cube: str, target: str, max_steps: int = 250) -> bool:
    """Pick ``cube`` and place it on ``target`` with the experts; True on success."""
    idx = env.unwrapped.object_names.index(cube)
    for phase in ("pick", "place", "retreat"):
        for _ in range(max_steps):
            obs = env.unwrapped.observe()
            grip, opening = obs["proprio"][:3], float(obs["proprio"][6] + obs["proprio"][7])
            c, yaw = obs["object_pos"][idx], yaw_of(obs["object_quat"][idx])
            if phase == "pick":
                if is_grasped(grip, opening, c, yaw) and c[2] > 0.1:
                    break
                a = pick_action(grip, opening, c, yaw)
            elif phase == "place":
                world = env.unwrapped.world_state()
                rel = release_point(world, target)
                if not is_grasped(grip, opening, c, yaw):
                    break
                a = place_action(grip, opening, c, rel, yaw)
            else:
                if grip[2] > 0.13:
                    break
                a = np.array([0, 0, 1.0, OPEN])
            env.unwrapped.step_physics(a)
    for _ in range(10):  # let it settle
        env.unwrapped.step_physics(np.array([0, 0, 0, OPEN]))
    w = env.unwrapped.world_state()
    return w.in_(cube, target) if w.bin(target) else w.on(cube, target)


# ---------------------------------------------------------------------- the drawer
#: Grip-site height above the knob from which the open fingers come down around it.
KNOB_HOVER = 0.06
#: The grip site counts as at the knob within this distance of its grasp point, per axis.
KNOB_REACH = np.array([0.012, 0.008, 0.008])
#: Fingers closed on the knob (3 cm across them) read at most this opening.
KNOB_HELD_OPENING = 0.036
#: Fingers open enough to come down around the knob.
KNOB_CLEAR_OPENING = 0.06
#: Pulling speed (fraction of the top speed): faster and the knob slips out of the fingers.
PULL_SPEED = 0.4
#: The pull releases the knob once the drawer is out this far (m): past the ``open``
#: threshold with a margin, short of the end stop the fingers would strain against.
PULL_RELEASE = 0.135
#: Closed fingers come down this far in front of the knob's grasp point (m, along -x) to
#: push the drawer shut, and push while they are within PUSH_BOX of that line.
DRAWER_PUSH_BACK = 0.045
DRAWER_PUSH_BOX = (0.06, 0.012, 0.014)  # (farthest back, lateral, vertical), m
#: Pushing speed (fraction of the top speed).
DRAWER_PUSH_SPEED = 0.4


def knob_held(grip: np.ndarray, opening: float, knob: np.ndarray) -> bool:
    """Fingers closed on the knob: the grip site at its grasp point and the fingers stopped
    by it."""
    return opening < KNOB_HELD_OPENING and bool(np.all(np.abs(grip - knob) < KNOB_REACH * 1.5))


def _to_knob(grip: np.ndarray, opening: float, knob: np.ndarray) -> np.ndarray:
    """Open fingers to above the knob, then down around it, then closed on it."""
    dxy = float(np.linalg.norm(knob[:2] - grip[:2]))
    hover = knob + [0.0, 0.0, KNOB_HOVER]
    if dxy > KNOB_REACH[1]:
        if grip[2] < knob[2] + 0.03:  # low beside the drawer: rise first, clear of the knob
            return _move(grip, np.array([grip[0], grip[1], hover[2]]), OPEN)
        # travel high, coming down smoothly on the final approach (no step in the label)
        z = knob[2] + 0.03 + (KNOB_HOVER - 0.03 + 0.04) * float(np.clip(dxy / 0.1, 0, 1))
        return _move(grip, np.array([knob[0], knob[1], z]), OPEN)
    if grip[2] - knob[2] > KNOB_REACH[2]:
        if opening < KNOB_CLEAR_OPENING and grip[2] - knob[2] < 0.03:
            # closed too early on top of the knob: up and open first (DAgger's recovery)
            return _move(grip, np.array([knob[0], knob[1], knob[2] + 0.035]), OPEN)
        return _move(grip, knob, OPEN)
    return _move(grip, knob, CLOSE)


def open_drawer_action(
    grip: np.ndarray, opening: float, knob: np.ndarray, drawer: float, knob_shut_x: float
) -> np.ndarray:
    """Grasp the knob from above, pull it along -x until the drawer is open, let go and
    rise. ``knob`` is the knob's grasp point now, ``drawer`` the opening (m) and
    ``knob_shut_x`` the grasp point's x with the drawer shut: the pull aims past full
    travel. Stateless: every phase is read from the grip, the fingers and the drawer."""
    if drawer >= PULL_RELEASE or (
        drawer >= scene.DRAWER_OPEN_MIN and not knob_held(grip, opening, knob)
    ):
        if opening < KNOB_CLEAR_OPENING and grip[2] < knob[2] + 0.03:
            return np.array([0.0, 0.0, 0.0, OPEN])  # let go where it is
        return _move(grip, np.array([grip[0], grip[1], knob[2] + KNOB_HOVER]), OPEN)
    if knob_held(grip, opening, knob):
        far = np.array([knob_shut_x - scene.DRAWER_TRAVEL - 0.01, knob[1], knob[2]])
        return _move(grip, far, CLOSE, speed=PULL_SPEED)
    return _to_knob(grip, opening, knob)


def close_drawer_action(
    grip: np.ndarray, knob: np.ndarray, drawer: float, knob_shut_x: float
) -> np.ndarray:
    """Closed fingers down in front of the knob, then push along +x until the drawer is
    shut, then rise. Stateless, like :func:`open_drawer_action`."""
    if drawer <= 0.5 * scene.DRAWER_CLOSED_MAX:
        return _move(grip, np.array([grip[0] - 0.01, grip[1], knob[2] + KNOB_HOVER]), CLOSE)
    rel = grip - knob
    back, lateral, vertical = DRAWER_PUSH_BOX
    if -back < rel[0] < -0.015 and abs(rel[1]) < lateral and abs(rel[2]) < vertical:
        tgt = np.array([knob_shut_x + 0.01, knob[1], knob[2]])
        return _move(grip, tgt, CLOSE, speed=DRAWER_PUSH_SPEED)
    start = knob + [-DRAWER_PUSH_BACK, 0.0, 0.0]
    if float(np.linalg.norm(start[:2] - grip[:2])) < 0.01:
        return _move(grip, start, CLOSE)  # down in front of the knob
    if grip[2] < knob[2] + 0.03:
        return _move(grip, np.array([grip[0], grip[1], knob[2] + KNOB_HOVER]), CLOSE)
    return _move(grip, start + [0.0, 0.0, KNOB_HOVER], CLOSE)
