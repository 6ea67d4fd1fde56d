"""What a scene is: an arena file (table, robot, fixtures), the objects on it and the
fixtures it has, under one name.

``TabletopEnv(scene=...)``, ``physics.load_model(...)``, the CLI's ``--scene`` and the
gymnasium ids all read the scene from here, so a scene is one module with one
:class:`SceneSpec` and one :func:`~sim.scenes.registry.register_scene` call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sim import fixtures as _fixtures
from sim.fixtures import Fixture
from sim.objects import ObjectSpec

#: Where the scenes' MJCF files live.
ASSETS = Path(__file__).resolve().parent.parent / "assets"
#: The robot (arm, gripper, their actuators), included by every scene file.
ROBOT_XML = ASSETS / "robot.xml"

#: The fixtures a scene can have, by name (``sim.fixtures``: the registry itself, so a
#: fixture registered later is known here too). ``bins``: open-top bins to put objects in;
#: ``drawer``: a drawer that opens along x (its cabinet holds it); ``button``: a push button
#: that flips ``lamp``'s light. Their state is in ``WorldState.fixtures``.
FIXTURES: Mapping[str, Fixture] = _fixtures.FIXTURES
#: Where an arena's object bodies begin, to the end of that world body: what
#: ``write_objects`` replaces (the tabletop file's comment before its cubes).
OBJECTS_MARKER = "<!-- cubes:"


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
    #: Whether ``mjcf`` is an arena whose own object bodies are replaced by bodies written
    #: from ``objects`` (:meth:`mjcf_text`): a scene that differs from another only in its
    #: objects needs no MJCF file of its own.
    write_objects: bool = False

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"scene name {self.name!r}: letters, digits and _ only")
        unknown = [f for f in self.fixtures if f not in FIXTURES]
        if unknown:
            raise ValueError(
                f"scene {self.name}: unknown fixture(s) {unknown}; known: {', '.join(FIXTURES)}"
            )
        names = [o.name for o in self.objects]
        if len(set(names)) != len(names):
            raise ValueError(f"scene {self.name}: two objects share a name")

    def mjcf_text(self) -> str:
        """The scene's MJCF: ``mjcf`` as it is, or with ``write_objects`` the arena with the
        bodies from its ``OBJECTS_MARKER`` to the end of that world body written from
        ``objects`` instead (``ObjectSpec.body_xml``, set apart along x; ``reset`` places
        them)."""
        text = self.mjcf.read_text()
        if not self.write_objects:
            return text
        start = text.find(OBJECTS_MARKER)
        end = text.find("</worldbody>", start)
        if start < 0 or end < 0:
            raise ValueError(f"scene {self.name}: {self.mjcf.name} has no {OBJECTS_MARKER}")
        bodies = "".join(
            "\n    " + o.body_xml((round(-0.15 + 0.1 * i, 3), -0.1, o.half_height))
            for i, o in enumerate(self.objects)
        )
        note = "<!-- objects: written from the scene's specs (sim.scenes.base) -->"
        return f"{text[:start]}{note}{bodies}\n  {text[end:]}"

    def has(self, fixture: str) -> bool:
        """Whether the scene has ``fixture`` (one of :data:`FIXTURES`)."""
        if fixture not in FIXTURES:
            raise ValueError(f"unknown fixture {fixture!r}; known: {', '.join(FIXTURES)}")
        return fixture in self.fixtures

    @property
    def articulated(self) -> bool:
        """Whether it has moving fixtures (the drawer, the button and lamp), whose state
        the env tracks (``sim.env.Articulation``)."""
        return any(self.has(f) for f in ("drawer", "button", "lamp"))
