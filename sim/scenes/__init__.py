"""The scenes, one module each (``tabletop``, ``articulated``, ``mixed``), by name.

A new scene is a module here that registers a :class:`SceneSpec`, and its import below.
"""

from sim.scenes.articulated import ARTICULATED
from sim.scenes.base import FIXTURES, SceneSpec
from sim.scenes.mixed import MIXED
from sim.scenes.registry import SCENES, get, object_names, register_scene, row
from sim.scenes.tabletop import TABLETOP

#: The scene used where none is named.
DEFAULT = TABLETOP.name
#: Every scene's name, the default first.
NAMES: tuple[str, ...] = (DEFAULT, *(n for n in SCENES if n != DEFAULT))

__all__ = [
    "ARTICULATED",
    "DEFAULT",
    "FIXTURES",
    "MIXED",
    "NAMES",
    "SCENES",
    "TABLETOP",
    "SceneSpec",
    "get",
    "object_names",
    "register_scene",
    "row",
]
