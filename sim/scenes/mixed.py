"""The mixed scene: the tabletop's table, arm and bins with objects of several kinds, a
4 cm cube, a 5 cm cube, an upright cylinder and a ball (``sim.objects.MIXED_OBJECTS``)."""

from sim.objects import MIXED_OBJECTS
from sim.scenes.base import ASSETS, SceneSpec
from sim.scenes.registry import register_scene

MIXED = register_scene(
    SceneSpec(
        name="mixed",
        description="a table, three bins, two cubes of two sizes, a cylinder and a ball",
        mjcf=ASSETS / "tabletop.xml",  # its arena, the objects written from their specs
        objects=MIXED_OBJECTS,
        fixtures=("bins",),
        env_id="skillbridge/TabletopMixed-v0",
        write_objects=True,
    )
)
