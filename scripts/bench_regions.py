"""Two blocks to one table region with the shipped policies: how often both end at it.

    python scripts/bench_regions.py                      # 20 seeds x table_left, table_center
    python scripts/bench_regions.py --seeds 5 --regions table_front --verbose

For each seed (a reset with red, blue and green at random) and region, three sequences:
push red there then pick and place blue there; push both; pick and place both. A start the
bridge's simulation rejects (a block already there, a push the fingers cannot make) is
counted apart and not run. After the last skill the physics settles as the runner settles
it (the arm held still, the gripper open), and the run counts when ``at(red, R)`` and
``at(blue, R)`` both hold in the world from physics (issue 23, item 10: regions are areas).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

SEQUENCES = {
    "push+place": lambda r: [
        {"skill": "push", "object": "red_block", "target": r},
        {"skill": "pick", "object": "blue_block"},
        {"skill": "place", "target": r},
    ],
    "push+push": lambda r: [
        {"skill": "push", "object": "red_block", "target": r},
        {"skill": "push", "object": "blue_block", "target": r},
    ],
    "place+place": lambda r: [
        {"skill": "pick", "object": "red_block"},
        {"skill": "place", "target": r},
        {"skill": "pick", "object": "blue_block"},
        {"skill": "place", "target": r},
    ],
}


def settle(env, steps: int = 13) -> None:
    """Hold the arm where it is with the gripper open, as the runner does before judging."""
    from sim import scene

    ctl, data = env.controller, env.data
    speed = scene.MAX_EE_SPEED * scene.CONTROL_DT
    for _ in range(steps):
        back = (ctl.grip_pos(data) - ctl.target(data)) / speed
        env.step_physics(np.array([*np.clip(back, -1.0, 1.0), -1.0]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--regions", default="table_left,table_center")
    ap.add_argument("--verbose", action="store_true", help="print each failed run")
    args = ap.parse_args(argv)

    import sim  # noqa: F401  (sets MUJOCO_GL before mujoco loads)
    from bridge.validate import simulate
    from sim.env import TabletopEnv
    from skills.runtime import SkillExecutor

    ex = SkillExecutor("pretrained")
    t0 = time.perf_counter()
    for name, sequence in SEQUENCES.items():
        ok = tried = rejected = 0
        for region in args.regions.split(","):
            for seed in range(args.seeds):
                env = TabletopEnv()
                env.reset(seed=seed, options={"cubes": ["red_block", "blue_block", "green_block"]})
                steps = sequence(region)
                if simulate(env.world_state(), steps)[1]:
                    rejected += 1
                    env.close()
                    continue
                tried += 1
                failed = None
                for sg in steps:
                    out = ex.run(env, sg)
                    if not out.success:
                        failed = f"{sg['skill']}: {out.reason}"
                        break
                settle(env)
                w = env.world_state()
                good = w.in_region("red_block", region) and w.in_region("blue_block", region)
                ok += good
                if not good and args.verbose:
                    where = [(o.name, np.round(o.pos, 3).tolist()) for o in w.objects]
                    print(f"  failed {name} {region} seed {seed}: {failed or 'not at'} {where}")
                env.close()
        print(f"{name}: both at the region {ok}/{tried} (bridge rejected {rejected} starts)")
    print(f"wall {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
