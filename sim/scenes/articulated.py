"""The articulated scene: the tabletop whole, with a drawer in a cabinet, a push button and
a lamp it switches added after the tabletop's bodies."""

from sim.objects import TABLETOP_OBJECTS
from sim.scenes.base import ASSETS, ROBOT_XML, SceneSpec
from sim.scenes.registry import register_scene

ARTICULATED = register_scene(
    SceneSpec(
        name="articulated",
        description="the tabletop with a drawer, a push button and a lamp",
        mjcf=ASSETS / "articulated.xml",
        objects=TABLETOP_OBJECTS,
        fixtures=("bins", "drawer", "button", "lamp"),
        env_id="skillbridge/TabletopArticulated-v0",
        includes=(ASSETS / "tabletop.xml", ROBOT_XML),
    )
)
