"""MuJoCo tabletop scene: physics, arm controller, gymnasium env, world state, rendering.

``sim`` knows nothing of skills, bridge or planner (imports point one way).
"""

import os as _os

# Offscreen rendering on machines without a display: MuJoCo reads MUJOCO_GL when its GL
# context module is first imported, so this must happen before any rendering import.
if not _os.environ.get("MUJOCO_GL") and not _os.environ.get("DISPLAY"):
    _os.environ["MUJOCO_GL"] = "egl"

from sim.env import TabletopEnv  # noqa: E402
from sim.world import WorldState, extract_world_state  # noqa: E402

ENV_ID = "skillbridge/Tabletop-v0"
#: The articulated scene (a drawer, a button and a lamp added to the tabletop).
ARTICULATED_ENV_ID = "skillbridge/TabletopArticulated-v0"


def _register() -> None:
    import gymnasium as gym

    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="sim.env:TabletopEnv", max_episode_steps=500)
    if ARTICULATED_ENV_ID not in gym.registry:
        gym.register(
            id=ARTICULATED_ENV_ID,
            entry_point="sim.env:TabletopEnv",
            max_episode_steps=500,
            kwargs={"scene": "articulated"},
        )


_register()

__all__ = ["ARTICULATED_ENV_ID", "ENV_ID", "TabletopEnv", "WorldState", "extract_world_state"]
