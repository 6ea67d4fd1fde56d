"""MuJoCo tabletop scene: physics, arm controller, gymnasium env, world state, rendering.

``sim`` knows nothing of skills, bridge or planner (imports point one way).
"""

import os as _os

# Offscreen rendering on machines without a display: MuJoCo reads MUJOCO_GL when its GL
# context module is first imported, so this must happen before any rendering import.
if not _os.environ.get("MUJOCO_GL") and not _os.environ.get("DISPLAY"):
    _os.environ["MUJOCO_GL"] = "egl"

from sim import scenes  # noqa: E402
from sim.env import TabletopEnv  # noqa: E402
from sim.world import WorldState, extract_world_state  # noqa: E402

ENV_ID = scenes.TABLETOP.env_id
#: The articulated scene (a drawer, a button and a lamp added to the tabletop).
ARTICULATED_ENV_ID = scenes.ARTICULATED.env_id


def _register() -> None:
    """A gymnasium id per scene (``sim.scenes``)."""
    import gymnasium as gym

    for s in scenes.SCENES.values():
        if s.env_id not in gym.registry:
            kwargs = {} if s.name == scenes.DEFAULT else {"scene": s.name}
            gym.register(
                id=s.env_id, entry_point="sim.env:TabletopEnv", max_episode_steps=500, kwargs=kwargs
            )


_register()

__all__ = ["ARTICULATED_ENV_ID", "ENV_ID", "TabletopEnv", "WorldState", "extract_world_state"]
