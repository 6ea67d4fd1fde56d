"""The tabletop: a table, the arm, three open-top bins and four 4 cm cubes."""

from sim.objects import TABLETOP_OBJECTS
from sim.scenes.base import ASSETS, SceneSpec
from sim.scenes.registry import register_scene

TABLETOP = register_scene(
    SceneSpec(
        name="tabletop",
        description="a table, four cubes and three bins",
        mjcf=ASSETS / "tabletop.xml",
        objects=TABLETOP_OBJECTS,
        fixtures=("bins",),
        env_id="skillbridge/Tabletop-v0",
    )
)
