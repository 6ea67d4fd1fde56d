"""Digests of seeded env rollouts, to prove a speed change left every step bit for bit as
it was.

Each rollout resets the env (both scenes, several seeds), then steps it with seeded random
actions, turning the hand now and then (``set_grip_yaw``, the controller's other branch)
and restoring a saved state midway (restore-and-continue). Per step the digest takes every
observation array's bytes, the reward, the flags and the info dict, and at the end the full
physics state and the world state. ``rollouts_fixture.json`` was recorded by the code
before the speed work of issue 25 (``python -m tests.sim.rollouts --write``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).with_name("rollouts_fixture.json")
#: (scene, seed) of each recorded rollout, and its length in control steps.
ROLLOUTS = tuple((s, seed) for s in ("tabletop", "articulated") for seed in (0, 1, 2))
STEPS = 200


def _update(h, obs: dict) -> None:
    for k in sorted(obs):
        v = np.asarray(obs[k])
        h.update(k.encode() + str(v.dtype).encode() + str(v.shape).encode() + v.tobytes())


def rollout(scene: str, seed: int, steps: int = STEPS) -> str:
    """The digest of one seeded rollout."""
    from sim.env import TabletopEnv

    env = TabletopEnv(scene=scene)
    rng = np.random.default_rng(seed)
    h = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    _update(h, obs)
    h.update(repr(sorted(info.items())).encode())
    saved = None
    for i in range(steps):
        if i % 50 == 25:
            env.set_grip_yaw(float(rng.uniform(-1.2, 1.2)) if rng.random() < 0.7 else 0.0)
        if i == steps // 3:
            saved = env.get_state()
        if i == 2 * steps // 3 and saved is not None:
            env.set_state(saved)
        a = rng.uniform(-1, 1, size=4).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(a)
        _update(h, obs)
        h.update(repr((float(reward), bool(terminated), bool(truncated))).encode())
        h.update(repr(sorted(info.items())).encode())
    h.update(env.get_state().tobytes())
    h.update(env.world_state().model_dump_json().encode())
    env.close()
    return h.hexdigest()[:24]


def record() -> dict[str, str]:
    return {f"{s}/{seed}": rollout(s, seed) for s, seed in ROLLOUTS}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"(re)write {FIXTURE.name}")
    a = ap.parse_args(argv)
    out = record()
    if a.write:
        FIXTURE.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
