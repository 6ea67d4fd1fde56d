"""What a scene is: an arena file (table, robot, fixtures), the objects on it and the
fixtures it has, under one name.

``TabletopEnv(scene=...)``, ``physics.load_model(...)``, the CLI's ``--scene`` and the
gymnasium ids all read the scene from here, so a scene is one module with one
:class:`SceneSpec` and one :func:`~sim.scenes.registry.register_scene` call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sim.objects import ObjectSpec

#: Where the scenes' MJCF files live.
ASSETS = Path(__file__).resolve().parent.parent / "assets"
#: The robot (arm, gripper, their actuators), included by every scene file.
ROBOT_XML = ASSETS / "robot.xml"

#: The fixtures a scene can have. ``bins``: open-top bins to put objects in; ``drawer``: a
#: drawer that opens along x (its cabinet holds it); ``button``: a push button that flips
#: ``lamp``'s light. The articulated fixtures' state is in ``WorldState`` (``drawer``,
#: ``button``, ``light_on``).
FIXTURES: tuple[str, ...] = ("bins", "drawer", "button", "lamp")


@dataclass(frozen=True)
class SceneSpec:
    """One scene. ``mjcf``: its MJCF file; ``includes``: the files that one includes (by
    their file names, in the order it includes them); ``objects``: what lies on the table,
    its bodies held to their specs by ``tests/sim/test_objects.py``; ``fixtures``: which of
    :data:`FIXTURES` it has; ``env_id``: its gymnasium id."""

    name: str
    description: str
    mjcf: Path
    objects: tuple[ObjectSpec, ...]
    fixtures: tuple[str, ...]
    env_id: str
    includes: tuple[Path, ...] = (ROBOT_XML,)

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"scene name {self.name!r}: letters, digits and _ only")
        unknown = [f for f in self.fixtures if f not in FIXTURES]
        if unknown:
            raise ValueError(f"scene {self.name}: unknown fixture(s) {unknown}; known: {FIXTURES}")
        names = [o.name for o in self.objects]
        if len(set(names)) != len(names):
            raise ValueError(f"scene {self.name}: two objects share a name")

    def has(self, fixture: str) -> bool:
        """Whether the scene has ``fixture`` (one of :data:`FIXTURES`)."""
        if fixture not in FIXTURES:
            raise ValueError(f"unknown fixture {fixture!r}; known: {FIXTURES}")
        return fixture in self.fixtures

    @property
    def articulated(self) -> bool:
        """Whether it has moving fixtures (the drawer, the button and lamp), whose state
        the env tracks (``sim.env.Articulation``)."""
        return any(self.has(f) for f in ("drawer", "button", "lamp"))
