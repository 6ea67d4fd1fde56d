"""Place onto towers and into the drawer, pick from tower tops and from the drawer: success
rates of the scripted experts and the shipped policies on the same starts (articulated scene).

Each start is drawn from its seed, then run once per source from the same saved physics
state; success is the skill's own test on the world extracted from physics, and a tower
must still stand (every level ``on`` the one below) after a second of rest.

    python scripts/eval_towers_drawer.py -n 50 --seed 777 [--json out.json]

A held cube is carried where place's own starts leave it (0.08 to 0.2 m up), low beside a
tower as often as above it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from sim import scene, scripted  # noqa: E402
from sim.env import TabletopEnv  # noqa: E402
from sim.util import wilson  # noqa: E402
from skills.place import DRAWER_SPOTS, grasp_and_carry, upright  # noqa: E402
from skills.policy import load_policy  # noqa: E402
from skills.runtime import SkillExecutor  # noqa: E402

SOURCES = ("scripted", "pretrained")
HALF = scene.CUBE_HALF
#: Rest after the skill (control steps, gripper open and still) before a tower is judged.
SETTLE_STEPS = 25


def _xy(rng: np.random.Generator, away: list[np.ndarray], gap: float = 0.1) -> np.ndarray:
    """A spawn-area point at least ``gap`` from every point of ``away``."""
    for _ in range(200):
        p = rng.uniform(scene.SPAWN_LOW, scene.SPAWN_HIGH)
        if all(np.linalg.norm(p - q) >= gap for q in away):
            return p
    raise RuntimeError("no free spot")


def _arm(rng: np.random.Generator) -> np.ndarray | None:
    if rng.random() < 0.4:
        return None
    xy = rng.uniform([-0.2, -0.28], [0.2, 0.28])
    return np.array([xy[0], xy[1], rng.uniform(0.07, 0.22)])


def _tower(rng: np.random.Generator, names: list[str], xy: np.ndarray) -> dict:
    """Poses of ``names`` stacked at ``xy``, bottom first, each a little turned."""
    return {
        n: [xy[0], xy[1], HALF + i * (2 * HALF + 0.001), rng.uniform(-0.2, 0.2)]
        for i, n in enumerate(names)
    }


def _grasp_and_carry(env: TabletopEnv, cube: str, rng: np.random.Generator) -> bool:
    """The expert picks ``cube`` and carries it to a random point above the table."""
    carry = np.array([*rng.uniform([-0.2, -0.25], [0.2, 0.25]), rng.uniform(0.08, 0.2)])
    held = grasp_and_carry(env, scene.CUBE_NAMES.index(cube), carry, 150)
    return held and env.world_state().held_object == cube


def start_place_tower(height: int) -> Callable:
    """A tower of ``height - 1`` on the table and a held cube: place builds ``height``."""

    def make(env: TabletopEnv, rng: np.random.Generator) -> dict | None:
        names = [str(n) for n in rng.permutation(scene.CUBE_NAMES)]
        base = _xy(rng, [])
        cubes = _tower(rng, names[: height - 1], base)
        held = names[height - 1]
        cubes[held] = list(_xy(rng, [base], 0.12)) + [rng.uniform(-0.3, 0.3)]
        env.reset(seed=int(rng.integers(2**31)), options={"cubes": cubes, "arm": _arm(rng)})
        if not _grasp_and_carry(env, held, rng):
            return None
        if not upright(env.world_state(), names[: height - 1]):
            return None  # the carry knocked it over or askew: draw again
        return {"skill": "place", "target": names[height - 2]}

    return make


def _drawer_xy(env: TabletopEnv, spot: int) -> np.ndarray:
    d = env.world_state().drawer
    assert d is not None
    return np.asarray(d.pos[:2]) + DRAWER_SPOTS[spot]


def start_place_drawer(occupied: bool, picked: bool = False) -> Callable:
    """The drawer open (0.12 to 0.15 m), a held cube; with ``occupied`` another cube lies
    in the drawer's front half already (as two places leave them). With ``picked`` the cube
    lay turned up to 45 degrees and the shipped pick policy took it, as in a task's plan: it
    may hang a little askew in the fingers, unlike the expert's carry."""
    pick = SkillExecutor("pretrained") if picked else None

    def make(env: TabletopEnv, rng: np.random.Generator) -> dict | None:
        names = [str(n) for n in rng.permutation(scene.CUBE_NAMES)]
        opening = float(rng.uniform(scene.DRAWER_OPEN_MIN, scene.DRAWER_TRAVEL))
        env.reset(seed=0, options={"drawer": opening, "cubes": {names[0]: None}})
        turn = 0.785 if picked else 0.3
        cubes: dict = {names[0]: list(_xy(rng, [])) + [rng.uniform(-turn, turn)]}
        if occupied:
            x, y = _drawer_xy(env, 1) + rng.uniform(-0.004, 0.004, 2)
            cubes[names[1]] = [x, y, scene.DRAWER_FLOOR_Z + HALF + 0.001, rng.uniform(-0.2, 0.2)]
        for n in names[2 : 2 + int(rng.integers(0, 3))]:
            cubes[n] = list(_xy(rng, [np.asarray(c[:2]) for c in cubes.values()])) + [0.0]
        env.reset(
            seed=int(rng.integers(2**31)),
            options={"drawer": opening, "cubes": cubes, "arm": _arm(rng)},
        )
        if pick is not None:
            if not pick.run(env, {"skill": "pick", "object": names[0]}).success:
                return None
        elif not _grasp_and_carry(env, names[0], rng):
            return None
        return {"skill": "place", "target": scene.DRAWER_NAME}

    return make


def start_pick_tower(height: int) -> Callable:
    """A tower of ``height`` on the table: pick its top."""

    def make(env: TabletopEnv, rng: np.random.Generator) -> dict | None:
        names = [str(n) for n in rng.permutation(scene.CUBE_NAMES)]
        base = _xy(rng, [])
        cubes = _tower(rng, names[:height], base)
        if height < len(names) and rng.random() < 0.5:
            cubes[names[height]] = list(_xy(rng, [base], 0.12)) + [0.0]
        env.reset(seed=int(rng.integers(2**31)), options={"cubes": cubes, "arm": _arm(rng)})
        for _ in range(10):  # let it settle
            env.step_physics(np.array([0.0, 0.0, 0.0, scripted.OPEN]))
        if not upright(env.world_state(), names[:height]):
            return None
        return {"skill": "pick", "object": names[height - 1]}

    return make


def start_pick_drawer(far: bool = False) -> Callable:
    """A cube where a place into the empty open drawer leaves it (with ``far``, where it
    lands when it tips over as it is dropped: 2 to 4 cm further along -y): pick it out."""

    def make(env: TabletopEnv, rng: np.random.Generator) -> dict | None:
        return _pick_drawer(env, rng, rng.uniform(-0.04, -0.02) if far else 0.0)

    return make


def _pick_drawer(env: TabletopEnv, rng: np.random.Generator, dy: float) -> dict | None:
    names = [str(n) for n in rng.permutation(scene.CUBE_NAMES)]
    opening = float(rng.uniform(scene.DRAWER_OPEN_MIN, scene.DRAWER_TRAVEL))
    env.reset(seed=0, options={"drawer": opening, "cubes": {names[0]: None}})
    x, y = _drawer_xy(env, 0) + rng.uniform(-0.005, 0.005, 2) + [0.0, dy]
    cubes: dict = {names[0]: [x, y, scene.DRAWER_FLOOR_Z + HALF + 0.001, rng.uniform(-0.3, 0.3)]}
    for n in names[1 : 1 + int(rng.integers(0, 4))]:
        cubes[n] = list(_xy(rng, [np.asarray(c[:2]) for c in cubes.values()])) + [0.0]
    env.reset(
        seed=int(rng.integers(2**31)), options={"drawer": opening, "cubes": cubes, "arm": _arm(rng)}
    )
    for _ in range(10):  # let it settle on the drawer's floor
        env.step_physics(np.array([0.0, 0.0, 0.0, scripted.OPEN]))
    return {"skill": "pick", "object": names[0]}


CONDITIONS: dict[str, Callable] = {
    "place_tower3": start_place_tower(3),
    "place_tower4": start_place_tower(4),
    "place_drawer": start_place_drawer(False),
    "place_drawer_second": start_place_drawer(True),
    "place_drawer_picked": start_place_drawer(False, picked=True),
    "pick_tower3_top": start_pick_tower(3),
    "pick_tower4_top": start_pick_tower(4),
    "pick_drawer": start_pick_drawer(),
    "pick_drawer_far": start_pick_drawer(far=True),
}


def run_condition(
    name: str, n: int, seed: int, sources: tuple[str, ...], policies: dict | None = None
) -> dict:
    env = TabletopEnv(scene="articulated")
    ex = {s: SkillExecutor(s, policies if s == "pretrained" else None) for s in sources}
    counts = {s: [0, 0] for s in sources}
    reasons: dict[str, dict[str, int]] = {s: {} for s in sources}
    rng = np.random.default_rng([seed, sum(map(ord, name))])
    drawn = 0
    while drawn < n:
        sub = CONDITIONS[name](env, rng)
        if sub is None:
            continue
        drawn += 1
        start = env.get_state()
        for s in sources:
            env.set_state(start)
            out = ex[s].run(env, dict(sub))
            ok = out.success and still_ok(env, sub, out.before)
            counts[s][0] += ok
            counts[s][1] += 1
            if not ok:
                why = out.reason or "did not stay"
                reasons[s][why] = reasons[s].get(why, 0) + 1
    env.close()
    res = {}
    for s, (k, m) in counts.items():
        lo, hi = wilson(k, m)
        res[s] = {
            "successes": k,
            "episodes": m,
            "success_rate": k / m,
            "ci95": [round(lo, 4), round(hi, 4)],
            "failures": reasons[s],
        }
    return res


def still_ok(env: TabletopEnv, sub: dict, before) -> bool:
    """The result holds after a rest: a placed cube stays in/on its target (every level of
    the tower ``on`` the one below; in the drawer, within the pick's reach), a picked one
    stays held."""
    for _ in range(SETTLE_STEPS):
        a = env.world_state().held_object is not None
        env.step_physics(np.array([0.0, 0.0, 0.0, scripted.CLOSE if a else scripted.OPEN]))
    w = env.world_state()
    if sub["skill"] == "pick":
        return w.held(sub["object"])
    placed, target = before.held_object, sub["target"]
    if target == scene.DRAWER_NAME:  # and where a pick can take it out again
        return w.in_(placed, target) and w.graspable(placed)
    tower = [*before.tower(target), placed]
    return all(w.on(a, b) for b, a in zip(tower, tower[1:], strict=False)) and w.on_table(tower[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=50, help="starts per condition")
    ap.add_argument("--seed", type=int, default=777)
    ap.add_argument("--conditions", nargs="*", default=list(CONDITIONS), choices=list(CONDITIONS))
    ap.add_argument("--sources", nargs="*", default=list(SOURCES), choices=list(SOURCES))
    ap.add_argument("--json", type=Path, help="write the figures here too")
    ap.add_argument("--place-policy", type=Path, help="a place policy folder (default: shipped)")
    args = ap.parse_args(argv)
    policies = {}
    if args.place_policy:
        policies["place"] = load_policy(args.place_policy, "place")[0]
    out = {"n": args.n, "seed": args.seed, "conditions": {}}
    for c in args.conditions:
        r = run_condition(c, args.n, args.seed, tuple(args.sources), policies)
        out["conditions"][c] = r
        line = "  ".join(
            f"{s} {v['successes']}/{v['episodes']} [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"
            for s, v in r.items()
        )
        print(f"{c:22s} {line}", flush=True)
        for s, v in r.items():
            if v["failures"]:
                print(f"    {s} failures: {v['failures']}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
