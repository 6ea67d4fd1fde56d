"""Perception against the simulator's truth: pose error, identity, drawer and light, hold, cost.

Three kinds of held-out states, none used to tune anything:

- ``scenes``: random resets (many seeds) of both scenes, the arm at random heights and
  places over the table (so it hides what it hides), a fresh belief each (one frame);
- ``skills``: every 4th control step of the shipped pick, place and push policies run
  with ``--perception camera`` (the tracked belief, as the skills saw it);
- ``articulated``: random drawer openings and light states.

A cube counts as *visible* where at least 90% of its top face shows in the top camera
(from the renderer's segmentation: the benchmark may look at the truth, perception may
not). Errors are for visible cubes; identity is a visible cube found, in its colour, within
2 cm. Cost: render + estimate per control step on one core (``LP_NUM_THREADS=1``, the
process pinned to one CPU), beside one env control step (20 physics steps, the IK step and
the observation) in the same run.

    python scripts/bench_perception.py --scenes 200 --skill-episodes 10
    python scripts/bench_perception.py --picture docs/perception.png
"""

from __future__ import annotations

import os

os.environ.setdefault("LP_NUM_THREADS", "1")  # the software renderer on one thread
os.environ.setdefault("MUJOCO_GL", "egl")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from sim import scene  # noqa: E402
from sim.env import TabletopEnv  # noqa: E402
from sim.perception import TOP, Perception  # noqa: E402
from sim.perception.detect import fold_yaw  # noqa: E402
from sim.util import wilson  # noqa: E402
from sim.world import yaw_of  # noqa: E402

VISIBLE = 0.9
FOUND = 0.02


class Truth:
    """What the top camera truly shows of each cube (segmentation: the benchmark's eye)."""

    def __init__(self, model: mujoco.MjModel):
        self.r = mujoco.Renderer(model, TOP.height, TOP.width)
        self.r.enable_segmentation_rendering()
        self.geom = {model.geom(f"{n}_geom").id: n for n in scene.CUBE_NAMES}
        self.f = (
            0.5
            * TOP.height
            / math.tan(math.radians(float(model.cam_fovy[model.camera("top").id])) / 2)
        )
        self.cam_z = None

    def visible(self, env: TabletopEnv) -> dict[str, float]:
        """Fraction of each present cube's top face seen by the top camera."""
        self.r.update_scene(env.data, camera="top")
        seg = self.r.render()
        cam = env.data.cam_xpos[env.model.camera("top").id]
        out = {}
        for gid, n in self.geom.items():
            if n not in env.present:
                continue
            p = env.data.xpos[env.model.body(n).id]
            mask = (seg[..., 0] == gid) & (seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM))
            d = cam[2] - (p[2] + scene.CUBE_HALF)
            full = (2 * scene.CUBE_HALF) ** 2 / (d / self.f) ** 2
            # the side faces show too, off the image's centre: count only up to a whole face
            out[n] = min(1.0, float(mask.sum()) / full) if d > 0 else 0.0
        return out


def _truth_pose(env: TabletopEnv, n: str):
    b = env.model.body(n).id
    return env.data.xpos[b].copy(), yaw_of(env.data.xquat[b])


def p95_ci(values: list[float]) -> tuple[float, float, float]:
    """The 95th percentile and a distribution-free 95% interval (binomial order
    statistics)."""
    v = np.sort(np.asarray(values))
    n = len(v)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    q = float(np.percentile(v, 95))
    sd = math.sqrt(n * 0.95 * 0.05)
    lo = max(0, int(math.floor(n * 0.95 - 1.96 * sd)) - 1)
    hi = min(n - 1, int(math.ceil(n * 0.95 + 1.96 * sd)))
    return q, float(v[lo]), float(v[hi])


class Tally:
    def __init__(self) -> None:
        self.pos: list[float] = []
        self.yaw: list[float] = []
        self.found = self.visible = 0
        self.phantoms = 0
        self.drawer_ok = self.drawer_n = self.light_ok = self.light_n = 0
        self.held_ok = self.held_n = 0

    def add(self, env: TabletopEnv, truth: Truth) -> None:
        w = env.world_state()
        tw = env.true_world_state()
        vis = truth.visible(env)
        for n, frac in vis.items():
            p, y = _truth_pose(env, n)
            o = w.object(n)
            if frac < VISIBLE or (tw.object(n) is not None and tw.object(n).held):  # type: ignore[union-attr]
                continue
            self.visible += 1
            if o is not None and math.dist(o.pos, p) < FOUND:
                self.found += 1
            if o is not None:
                self.pos.append(math.dist(o.pos, p))
                self.yaw.append(abs(math.degrees(fold_yaw(o.yaw - y))))
        self.phantoms += sum(1 for n in w.object_names if n not in env.present)
        self.held_n += 1
        self.held_ok += w.held_object == tw.held_object
        if tw.drawer is not None and w.drawer is not None:
            self.drawer_n += 1
            self.drawer_ok += (w.drawer.is_open, w.drawer.is_closed) == (
                tw.drawer.is_open,
                tw.drawer.is_closed,
            )
            self.light_n += 1
            self.light_ok += w.light_on == tw.light_on

    def summary(self) -> dict:
        pq = p95_ci(self.pos)
        yq = p95_ci(self.yaw)
        out = {
            "visible_cubes": self.visible,
            "position_p95_mm": [round(1e3 * v, 2) for v in pq],
            "position_p50_mm": round(1e3 * float(np.median(self.pos)), 2) if self.pos else None,
            "position_max_mm": round(1e3 * max(self.pos), 2) if self.pos else None,
            "yaw_p95_deg": [round(v, 2) for v in yq],
            "yaw_max_deg": round(max(self.yaw), 2) if self.yaw else None,
            "identity": [
                self.found,
                self.visible,
                *[round(v, 4) for v in wilson(self.found, self.visible)],
            ],
            "phantoms": self.phantoms,
            "held": [
                self.held_ok,
                self.held_n,
                *[round(v, 4) for v in wilson(self.held_ok, self.held_n)],
            ],
        }
        if self.drawer_n:
            out["drawer_state"] = [
                self.drawer_ok,
                self.drawer_n,
                *[round(v, 4) for v in wilson(self.drawer_ok, self.drawer_n)],
            ]
            out["light_state"] = [
                self.light_ok,
                self.light_n,
                *[round(v, 4) for v in wilson(self.light_ok, self.light_n)],
            ]
        return out


def bench_scenes(n: int, scene_name: str, seed0: int) -> dict:
    env = TabletopEnv(scene=scene_name)
    env.perception = Perception(env.model)
    truth = Truth(env.model)
    tally = Tally()
    for i in range(n):
        rng = np.random.default_rng(seed0 + i)
        opts: dict = {
            "cubes": [c for c in scene.CUBE_NAMES if rng.random() < 0.8] or ["red_block"],
            "arm": [rng.uniform(-0.2, 0.2), rng.uniform(-0.25, 0.25), rng.uniform(0.08, 0.3)],
        }
        if scene_name == "articulated":
            opts["drawer"] = float(rng.choice([0.0, rng.uniform(0.0, 0.15), 0.15]))
            opts["light"] = bool(rng.random() < 0.5)
        env.reset(seed=seed0 + i, options=opts)
        tally.add(env, truth)
    env.perception.close()
    return tally.summary()


def bench_skills(episodes: int, every: int = 4) -> dict:
    import torch

    from skills.evaluate import attach_perception
    from skills.policy import load_policy, pretrained_dir
    from skills.skill_env import SkillEnv

    torch.set_num_threads(1)
    tally = Tally()
    for skill in ("pick", "place", "push"):
        env = SkillEnv(skill)
        policy, _ = load_policy(pretrained_dir(skill), skill)
        env.smoothing = policy.smoothing
        attach_perception(env)
        truth = Truth(env.sim.model)
        for ep in range(episodes):
            obs, _ = env.reset(seed=90_000 + ep)
            done, k = False, 0
            while not done:
                obs, _, term, trunc, _ = env.step(policy.act(obs))
                done = term or trunc
                k += 1
                if k % every == 0:
                    tally.add(env.sim, truth)
    return tally.summary()


def bench_cost(steps: int) -> dict:
    """Render + estimate per control step against one env control step, one core."""
    env = TabletopEnv()
    env.reset(seed=0)
    p = Perception(env.model)
    rng = np.random.default_rng(0)
    actions = [np.array([*rng.uniform(-0.5, 0.5, 3), -1.0]) for _ in range(steps)]
    base, perc = [], []
    for a in actions:
        t0 = time.perf_counter()
        env.step(a)
        env.true_world_state()
        t1 = time.perf_counter()
        p.update(env)
        t2 = time.perf_counter()
        base.append(t1 - t0)
        perc.append(t2 - t1)
    side = p.side_renders
    p.close()
    b, c = np.array(base) * 1e3, np.array(perc) * 1e3
    return {
        "steps": steps,
        "side_renders": side,  # the front camera, only while a cube stands on nothing known
        "env_step_ms": round(float(np.mean(b)), 3),
        "perception_ms_mean": round(float(np.mean(c)), 2),
        "perception_ms_p95": round(float(np.percentile(c, 95)), 2),
        "perception_ms_ci95_of_mean": [
            round(float(np.mean(c) - 1.96 * np.std(c) / math.sqrt(len(c))), 2),
            round(float(np.mean(c) + 1.96 * np.std(c) / math.sqrt(len(c))), 2),
        ],
        "ratio_to_env_step": round(float(np.mean(c) / np.mean(b)), 1),
    }


def render_table(reps: int = 20) -> list[dict]:
    """Milliseconds per frame of each camera at a few sizes, one core: MuJoCo's Renderer as
    the scene is drawn for videos (shadows on), RGB and depth apart, and the perception
    cameras' single pass (shadows off, colour and depth read back from one render)."""
    from sim.perception import CameraSpec, RGBDCameras

    env = TabletopEnv()
    env.reset(seed=0)
    out = []
    for w, h in ((96, 96), (160, 120), (256, 256), (320, 240), (640, 480)):
        r = mujoco.Renderer(env.model, h, w)
        for cam in ("top", "front", "wrist"):
            row: dict = {"camera": cam, "size": f"{w}x{h}"}
            for key, depth in (("renderer_rgb_ms", False), ("renderer_depth_ms", True)):
                if depth:
                    r.enable_depth_rendering()
                else:
                    r.disable_depth_rendering()
                r.update_scene(env.data, camera=cam)
                r.render()
                t0 = time.perf_counter()
                for _ in range(reps):
                    r.update_scene(env.data, camera=cam)
                    r.render()
                row[key] = round((time.perf_counter() - t0) / reps * 1e3, 2)
            one = RGBDCameras(env.model, (CameraSpec(cam, w, h),))
            one.render(env.data)
            t0 = time.perf_counter()
            for _ in range(reps):
                one.render(env.data)
            row["rgbd_one_pass_ms"] = round((time.perf_counter() - t0) / reps * 1e3, 2)
            one.close()
            out.append(row)
        r.close()
    return out


def picture(path: str) -> None:
    """Four panels: the cube-coloured pixels perception keeps (the bins, the button and the
    lamp left out by the furniture map), the estimated top faces (cyan) and the true ones
    (white) drawn on the top camera's frame, and the wrist camera's view."""
    import imageio.v2 as iio

    from sim.perception.colors import color_masks

    env = TabletopEnv(scene="articulated")
    env.perception = Perception(env.model)
    cubes = {
        "red_block": [0.10, -0.20, 0.3],
        "green_block": [-0.05, 0.25, 0.1],
        "blue_block": [0.02, -0.05, -0.2],
        "yellow_block": [-0.12, -0.15, 0.6],
    }
    opts = {"cubes": cubes, "drawer": 0.14, "light": True, "arm": [0.0, -0.05, 0.12]}
    env.reset(seed=0, options=opts)
    w, tw = env.world_state(), env.true_world_state()
    top, wrist = env.perception.frames
    rgb = top.rgb.copy()
    rows, cols = np.mgrid[0 : rgb.shape[0], 0 : rgb.shape[1]]
    keep = env.perception.static.keep(top.points(rows.ravel(), cols.ravel()))
    keep = keep.reshape(rgb.shape[:2])
    masked = (rgb * 0.25).astype(np.uint8)
    shade = {"red": (255, 40, 40), "green": (40, 255, 40), "blue": (60, 90, 255)}
    for c, m in color_masks(rgb).items():
        masked[m & keep] = shade.get(c, (255, 230, 0))
    est, true = rgb.copy(), rgb.copy()
    for o in w.objects:
        _outline(est, top, o.pos, o.yaw, (0, 255, 255))
    for o in tw.objects:
        _outline(true, top, o.pos, o.yaw, (255, 255, 255))
    up = np.ones((2, 2, 1), np.uint8)
    panels = [np.kron(x, up) for x in (masked, est, true)]
    wr = np.kron(wrist.rgb, np.ones((4, 4, 1), np.uint8))
    h = panels[0].shape[0]
    wr = np.pad(wr[:h], ((0, max(0, h - wr.shape[0])), (0, 0), (0, 0)))
    gap = np.full((h, 8, 3), 255, np.uint8)
    row = [panels[0], gap, panels[1], gap, panels[2], gap, wr]
    iio.imwrite(path, np.concatenate(row, axis=1))
    env.perception.close()


def _outline(img: np.ndarray, frame, pos, yaw: float, color) -> None:
    h = scene.CUBE_HALF
    c, s = math.cos(yaw), math.sin(yaw)
    corners = [
        (pos[0] + c * a - s * b, pos[1] + s * a + c * b, pos[2] + h)
        for a, b in ((h, h), (-h, h), (-h, -h), (h, -h))
    ]
    px = [frame.project(p)[:2] for p in corners]
    for i in range(4):
        (r0, c0), (r1, c1) = px[i], px[(i + 1) % 4]
        for t in np.linspace(0, 1, 40):
            r, cc = int(round(r0 + t * (r1 - r0))), int(round(c0 + t * (c1 - c0)))
            if 0 <= r < img.shape[0] and 0 <= cc < img.shape[1]:
                img[r, cc] = color


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--scenes", type=int, default=200, help="random scenes per scene kind")
    ap.add_argument("--skill-episodes", type=int, default=10, help="episodes per skill")
    ap.add_argument("--cost-steps", type=int, default=300)
    ap.add_argument("--picture", default=None, help="write the picture here and stop")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--render-table", action="store_true", help="render cost per camera and size")
    args = ap.parse_args()
    if args.picture:
        picture(args.picture)
        return
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    if args.render_table:
        for row in render_table():
            print(json.dumps(row) if args.json else row)
        return
    out = {
        "cost": bench_cost(args.cost_steps),
        "scenes_tabletop": bench_scenes(args.scenes, "tabletop", 10_000),
        "scenes_articulated": bench_scenes(args.scenes, "articulated", 20_000),
    }
    if args.skill_episodes:
        out["skills"] = bench_skills(args.skill_episodes)
    if args.json:
        print(json.dumps(out))
        return
    for k, v in out.items():
        print(f"{k}:")
        for kk, vv in v.items():
            print(f"  {kk}: {vv}")


if __name__ == "__main__":
    main()
