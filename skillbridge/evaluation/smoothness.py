"""How smoothly the arm moves, read from recorded episodes: inside skills and at switches.

A policy that saturates its actions and reverses them from one 40 ms control step to the
next moves the hand in jerks; in simulation the mocap controller hides most of that, on a
real arm it is wear and risk (issue 27). These measures make it a number, from what every
episode records (docs/EPISODE_FORMAT.md), so the same code reads runs of the shipped
policies and of the scripted experts (``policy_source: scripted``) on the same starts:

- **end-effector speed, acceleration and jerk**: the grip site's position at every
  recorded state (forward kinematics of the recorded physics state, the final one
  included), differenced at the control step (1st, 2nd, 3rd differences; magnitudes in
  m/s, m/s², m/s³);
- **commanded-action change**: per step, the norm of the change of the motion command (the
  first three action components, each in [-1, 1]: 2.0 is a full reversal of one axis,
  up to 3.46 of all three) and, apart, the gripper's change;
- **saturation**: the share of motion components at the end of their range
  (``|a_i| >= 0.99``), and the share of steps with at least one such component;
- **time and path length per subgoal**: steps, seconds and the grip site's path (m).

Each per-step figure is classed by *where* it was measured. A *switch* is the control
step at which the active subgoal index changes from one subgoal to the next (both >= 0;
the settling and interjection holds, indices -1 and -2, are no skill). A figure belongs to
``switch`` when the instant it measures lies within ``window`` control steps of a switch,
to ``inside`` when every action it depends on belongs to one subgoal and it is not near a
switch; figures that touch a hold are in neither (but in ``all``). ``boundary`` is the one
action change across each switch itself (the issue's "full reversal at most switches").

Instants, in control steps (state k is recorded before action k; a switch at s is the
instant of state s): the velocity from action k is centred at k + 0.5, the acceleration
from actions k, k+1 at k + 1, the jerk from actions k..k+2 at k + 1.5, the change from
action k-1 to k at k, a saturated action k at k + 0.5.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

#: Control steps either side of a switch whose figures count as "at the switch".
WINDOW = 3
#: An action component this close to its bound (1.0) counts as saturated.
SATURATED = 0.99
#: The motion command: the first three action components (dx, dy, dz); the 4th is the grip.
MOTION = slice(0, 3)
GRIP = 3
CLASSES = ("inside", "switch", "all")
#: quantity -> (unit, what it is), in the order reports list them
QUANTITIES: dict[str, tuple[str, str]] = {
    "speed": ("m/s", "end-effector speed"),
    "accel": ("m/s^2", "end-effector acceleration"),
    "jerk": ("m/s^3", "end-effector jerk"),
    "action_change": ("", "motion command change per step, |a[:3](k) - a[:3](k-1)|"),
    "grip_change": ("", "gripper command change per step, |a[3](k) - a[3](k-1)|"),
    "saturated": ("share", "motion components with |a_i| >= 0.99"),
    "saturated_any": ("share", "steps with at least one motion component saturated"),
}


@dataclass(frozen=True)
class Trajectory:
    """What the measures read from one episode.

    ``positions[k]`` is the grip site at state k (before action k), so there is one more
    position than actions; ``subgoals[k]`` the subgoal action k belongs to."""

    name: str
    positions: np.ndarray  # (N + 1, 3), m
    actions: np.ndarray  # (N, A), each in [-1, 1]
    subgoals: np.ndarray  # (N,), int; -1 / -2: holds (no skill)
    dt: float  # control step, s
    skills: dict[int, str] = field(default_factory=dict)  # subgoal index -> skill name
    succeeded: dict[int, bool] = field(default_factory=dict)  # subgoal index -> success
    source: str = ""  # the episode's policy source (pretrained, scripted)

    def __post_init__(self) -> None:
        n = len(self.actions)
        if self.positions.shape != (n + 1, 3) or self.subgoals.shape != (n,):
            raise ValueError(
                f"{self.name}: {n} actions need {n + 1} positions and {n} subgoal indices, "
                f"got {self.positions.shape} and {self.subgoals.shape}"
            )
        if not self.dt > 0:
            raise ValueError(f"{self.name}: the control step must be positive")

    @property
    def n_steps(self) -> int:
        return len(self.actions)

    def switches(self) -> np.ndarray:
        """The steps s at which one subgoal hands over to the next (action s-1 belongs to
        one subgoal, action s to another, neither a hold)."""
        return switches(self.subgoals)


def switches(subgoals: np.ndarray) -> np.ndarray:
    """Indices s with ``subgoals[s-1] != subgoals[s]``, both >= 0."""
    sg = np.asarray(subgoals)
    if len(sg) < 2:
        return np.empty(0, np.intp)
    a, b = sg[:-1], sg[1:]
    return np.flatnonzero((a != b) & (a >= 0) & (b >= 0)) + 1


# ----------------------------------------------------------------------------- episodes
@lru_cache(maxsize=4)
def _model(scene_name: str) -> Any:
    from sim import physics

    return physics.load_model(scene_name)


def grip_positions(states: np.ndarray, scene_name: str) -> np.ndarray:
    """The grip site's world position at each recorded physics state (forward kinematics
    only: nothing is simulated)."""
    import mujoco

    from sim import physics

    model = _model(scene_name)
    data = mujoco.MjData(model)
    site = model.site("grip_site").id
    out = np.empty((len(states), 3))
    for i, s in enumerate(states):
        mujoco.mj_setState(model, data, s, physics.STATE_SPEC)
        mujoco.mj_kinematics(model, data)
        out[i] = data.site_xpos[site]
    return out


def from_episode(episode: Any, name: str | None = None) -> Trajectory:
    """The trajectory of a loaded :class:`skillbridge.episodes.episode.Episode`.

    An incomplete episode has no state after its last action; that action is dropped."""
    from skillbridge.episodes.episode import scene_name

    states = episode.all_states()
    n = min(episode.n_steps, max(len(states) - 1, 0))
    skills: dict[int, str] = {}
    succeeded: dict[int, bool] = {}
    for r in episode.trace:
        i = r.get("index")
        if not isinstance(i, int) or isinstance(i, bool):
            continue
        if r.get("kind") == "subgoal_start" and isinstance(r.get("subgoal"), dict):
            skills[i] = str(r["subgoal"].get("skill", "?"))
        elif r.get("kind") == "skill_outcome":
            succeeded[i] = bool(r.get("success"))
    dt = float(episode.meta.get("control_dt") or 0.04)
    return Trajectory(
        name=name or str(episode.path),
        positions=grip_positions(states[: n + 1], scene_name(episode.meta)),
        actions=np.asarray(episode.actions[:n], np.float64),
        subgoals=np.asarray(episode.subgoals[:n]),
        dt=dt,
        skills=skills,
        succeeded=succeeded,
        source=str(episode.meta.get("policy_source") or ""),
    )


def load_trajectory(path: Any, name: str | None = None) -> Trajectory:
    """Read the episode folder ``path`` (checked as ``replay`` checks it) into a trajectory."""
    from skillbridge.episodes.episode import load

    return from_episode(load(path), name)


# ----------------------------------------------------------------------------- per step
@dataclass(frozen=True)
class Samples:
    """One quantity's per-step values with the instant each measures and the span of
    actions it depends on (``first``..``first + width - 1``)."""

    values: np.ndarray
    centre: np.ndarray  # in control steps
    first: np.ndarray  # index of the first action the value depends on
    width: int


def kinematics(traj: Trajectory) -> dict[str, np.ndarray]:
    """Velocity (N, 3), acceleration (N-1, 3) and jerk (N-2, 3) of the grip site, by
    finite differences at the control step."""
    vel = np.diff(traj.positions, axis=0) / traj.dt
    acc = np.diff(vel, axis=0) / traj.dt
    jerk = np.diff(acc, axis=0) / traj.dt
    return {"velocity": vel, "acceleration": acc, "jerk": jerk}


def samples(traj: Trajectory) -> dict[str, Samples]:
    """Every quantity of :data:`QUANTITIES`, step by step."""
    k = kinematics(traj)
    a = traj.actions
    n = traj.n_steps
    da = np.diff(a, axis=0)

    def at(values: np.ndarray, offset: float, width: int) -> Samples:
        idx = np.arange(len(values))
        return Samples(np.asarray(values, np.float64), idx + offset, idx, width)

    return {
        "speed": at(np.linalg.norm(k["velocity"], axis=1), 0.5, 1),
        "accel": at(np.linalg.norm(k["acceleration"], axis=1), 1.0, 2),
        "jerk": at(np.linalg.norm(k["jerk"], axis=1), 1.5, 3),
        # the change from action k-1 to action k, listed from k = 1: first = k - 1
        "action_change": at(np.linalg.norm(da[:, MOTION], axis=1), 1.0, 2),
        "grip_change": at(
            np.abs(da[:, GRIP]) if a.shape[1] > GRIP else np.zeros(max(n - 1, 0)), 1.0, 2
        ),
        "saturated": at(np.mean(np.abs(a[:, MOTION]) >= SATURATED, axis=1), 0.5, 1),
        "saturated_any": at(
            np.any(np.abs(a[:, MOTION]) >= SATURATED, axis=1).astype(np.float64), 0.5, 1
        ),
    }


def classify(traj: Trajectory, s: Samples, window: float = WINDOW) -> dict[str, np.ndarray]:
    """Boolean masks over ``s.values``: ``inside`` a skill, at a ``switch``, ``all``."""
    sg = np.asarray(traj.subgoals)
    n = len(s.values)
    if n == 0:
        empty = np.zeros(0, bool)
        return {"inside": empty, "switch": empty, "all": empty}
    span = np.stack([sg[s.first + j] for j in range(s.width)])  # (width, n)
    moving = (span >= 0).all(axis=0)
    one = (span == span[0]).all(axis=0)
    near = np.zeros(n, bool)
    for sw in traj.switches():
        near |= np.abs(s.centre - sw) <= window
    return {"inside": one & moving & ~near, "switch": near & moving, "all": np.ones(n, bool)}


def boundary_changes(traj: Trajectory) -> dict[str, np.ndarray]:
    """The motion and gripper command change across each switch itself."""
    sw = traj.switches()
    a = traj.actions
    d = a[sw] - a[sw - 1] if len(sw) else np.zeros((0, a.shape[1]))
    grip = np.abs(d[:, GRIP]) if a.shape[1] > GRIP else np.zeros(len(sw))
    return {"action_change": np.linalg.norm(d[:, MOTION], axis=1), "grip_change": grip}


# ----------------------------------------------------------------------------- subgoals
def subgoal_segments(traj: Trajectory) -> list[dict]:
    """Each subgoal as it ran (a maximal run of one index >= 0): its skill, steps,
    seconds, the grip site's path length (m) and whether it succeeded."""
    sg = np.asarray(traj.subgoals)
    steps = np.linalg.norm(np.diff(traj.positions, axis=0), axis=1)
    out: list[dict] = []
    start = 0
    for k in range(1, len(sg) + 1):
        if k < len(sg) and sg[k] == sg[start]:
            continue
        i = int(sg[start])
        if i >= 0:
            n = k - start
            out.append(
                {
                    "index": i,
                    "skill": traj.skills.get(i, "?"),
                    "first": start,
                    "steps": n,
                    "seconds": round(n * traj.dt, 6),
                    "path_m": float(steps[start:k].sum()),
                    "success": traj.succeeded.get(i),
                }
            )
        start = k
    return out


# ----------------------------------------------------------------------------- summaries
def stats(values: Iterable[float] | np.ndarray) -> dict[str, Any]:
    """n, p50, p95, max and mean of ``values`` (None for an empty set)."""
    v = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, np.float64)
    if v.size == 0:
        return {"n": 0, "p50": None, "p95": None, "max": None, "mean": None}
    p50, p95 = np.percentile(v, [50, 95])
    return {
        "n": int(v.size),
        "p50": float(p50),
        "p95": float(p95),
        "max": float(v.max()),
        "mean": float(v.mean()),
    }


def _skill_table(segments: list[dict]) -> dict[str, dict]:
    by: dict[str, list[dict]] = {}
    for s in segments:
        by.setdefault(s["skill"], []).append(s)
    out = {}
    for skill in sorted(by):
        segs = by[skill]
        ok = [s for s in segs if s["success"] is not False]
        out[skill] = {
            "subgoals": len(segs),
            "failed": len(segs) - len(ok),
            # time and path over the subgoals that succeeded: a failed one runs to its
            # budget or stops early, either way not the time a skill takes
            "steps": stats([s["steps"] for s in ok]),
            "seconds": stats([s["seconds"] for s in ok]),
            "path_m": stats([s["path_m"] for s in ok]),
        }
    return out


def summarise(trajs: Sequence[Trajectory], window: float = WINDOW) -> dict[str, Any]:
    """Every figure over a set of trajectories, pooled step by step (each step of each
    episode weighs the same).

    ``figures[quantity][class]`` holds :func:`stats` of the per-step values (for
    ``saturated`` and ``saturated_any`` the mean is the share);
    ``figures["action_change"]["boundary"]`` the change across each switch itself;
    ``inside_by_skill[skill][quantity]`` the inside figures of each skill (which skills to
    smooth first); ``switch_pairs["pick->place"]`` the motion command change across the
    switches of each pair of skills; ``subgoals``
    time and path per subgoal, overall and by skill."""
    pools: dict[str, dict[str, list[np.ndarray]]] = {
        q: {c: [] for c in CLASSES} for q in QUANTITIES
    }
    bounds: dict[str, list[np.ndarray]] = {"action_change": [], "grip_change": []}
    by_skill: dict[str, dict[str, list[np.ndarray]]] = {}
    pairs: dict[str, list[float]] = {}
    segments: list[dict] = []
    steps = n_switches = 0
    sources: set[str] = set()
    for t in trajs:
        steps += t.n_steps
        n_switches += len(t.switches())
        sources.add(t.source)
        for q, s in samples(t).items():
            masks = classify(t, s, window)
            for c, mask in masks.items():
                pools[q][c].append(s.values[mask])
            inside = masks["inside"]
            skill_of = np.array([t.skills.get(int(i), "?") for i in t.subgoals[s.first[inside]]])
            for sk in np.unique(skill_of):
                pool = by_skill.setdefault(str(sk), {}).setdefault(q, [])
                pool.append(s.values[inside][skill_of == sk])
        for q, v in boundary_changes(t).items():
            bounds[q].append(v)
        change = boundary_changes(t)["action_change"]
        for sw, v in zip(t.switches(), change, strict=True):
            a, b = (t.skills.get(int(t.subgoals[i]), "?") for i in (sw - 1, sw))
            pairs.setdefault(f"{a}->{b}", []).append(float(v))
        segments.extend(subgoal_segments(t))
    figures: dict[str, dict[str, Any]] = {}
    for q in QUANTITIES:
        figures[q] = {c: stats(_cat(pools[q][c])) for c in CLASSES}
        if q in bounds:
            figures[q]["boundary"] = stats(_cat(bounds[q]))
    ok = [s for s in segments if s["success"] is not False]
    return {
        "episodes": len(trajs),
        "steps": steps,
        "seconds": round(sum(t.n_steps * t.dt for t in trajs), 6),
        "switches": n_switches,
        "window": window,
        "sources": sorted(sources),
        "figures": figures,
        "inside_by_skill": {
            sk: {q: stats(_cat(v)) for q, v in qs.items()} for sk, qs in sorted(by_skill.items())
        },
        "switch_pairs": {k: stats(v) for k, v in sorted(pairs.items())},
        "subgoals": {
            "count": len(segments),
            "failed": len(segments) - len(ok),
            "steps": stats([s["steps"] for s in ok]),
            "seconds": stats([s["seconds"] for s in ok]),
            "path_m": stats([s["path_m"] for s in ok]),
            "by_skill": _skill_table(segments),
        },
    }


def paired(now: Mapping[str, Trajectory], then: Mapping[str, Trajectory]) -> dict[str, Any]:
    """Time and path of the same subgoals in two runs of the same starts (before and after
    a change, policy and expert): the episodes of one key in both whose subgoals ran the
    same skills in the same order and all succeeded in both. Pooled means can move because
    a run does different things (more replans, another plan); this compares like with
    like. Ratios are ``now / then``."""
    episodes = subgoals = 0
    t_now = t_then = p_now = p_then = 0.0
    ratios: list[float] = []
    for key in sorted(set(now) & set(then)):
        a, b = subgoal_segments(now[key]), subgoal_segments(then[key])
        if not a or [s["skill"] for s in a] != [s["skill"] for s in b]:
            continue
        if any(s["success"] is False for s in (*a, *b)):
            continue
        episodes += 1
        subgoals += len(a)
        t_now += sum(s["seconds"] for s in a)
        t_then += sum(s["seconds"] for s in b)
        p_now += sum(s["path_m"] for s in a)
        p_then += sum(s["path_m"] for s in b)
        ratios += [x["steps"] / y["steps"] for x, y in zip(a, b, strict=True) if y["steps"]]
    return {
        "episodes": episodes,
        "subgoals": subgoals,
        "seconds": [round(t_now, 6), round(t_then, 6)],
        "time_ratio": t_now / t_then if t_then else None,
        "path_ratio": p_now / p_then if p_then else None,
        "time_ratio_per_subgoal": stats(ratios),
    }


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0)


def series(traj: Trajectory) -> dict[str, Any]:
    """What a plot of one episode draws: time (s) and value of the speed and jerk at the
    instant each measures, the switch instants and the subgoals' skills in order."""
    s = samples(traj)
    segs = subgoal_segments(traj)
    return {
        "name": traj.name,
        "speed_t": s["speed"].centre * traj.dt,
        "speed": s["speed"].values,
        "jerk_t": s["jerk"].centre * traj.dt,
        "jerk": s["jerk"].values,
        "switches_t": traj.switches() * traj.dt,
        # (start s, end s) of each hold (settling, rest after an interjection)
        "holds": _runs(np.asarray(traj.subgoals) < 0, traj.dt),
        # (skill, start s, end s) of each subgoal as it ran
        "segments": [
            (seg["skill"], seg["first"] * traj.dt, (seg["first"] + seg["steps"]) * traj.dt)
            for seg in segs
        ],
        "duration": traj.n_steps * traj.dt,
    }


def _runs(mask: np.ndarray, dt: float) -> list[tuple[float, float]]:
    """(start, end) times of each run of True in ``mask`` (one entry per step)."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(float(a * dt), float(b * dt)) for a, b in zip(starts, ends, strict=True)]
