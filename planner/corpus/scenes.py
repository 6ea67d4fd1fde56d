"""Random scenes for the samples: which cubes exist, what is in a bin, stacked or held, and
in the articulated scene the drawer and the light (one line each, as the model sees it)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from planner.corpus.forms import BINS, CUBES
from planner.embedded.prompt import scene_line


@dataclass
class Scene:
    cubes: list[str]
    in_bin: dict[str, str] = field(default_factory=dict)
    on: dict[str, str] = field(default_factory=dict)
    held: str | None = None
    #: the articulated scene's devices ("open" / "closed", the colours in the drawer, the
    #: light on or off); None on the tabletop
    drawer: str | None = None
    in_drawer: list[str] = field(default_factory=list)
    light: bool | None = None

    def line(self) -> str:
        return scene_line(
            self.cubes, self.in_bin, self.on, self.held, self.drawer, self.in_drawer, self.light
        )


def random_scene(r: random.Random, must: tuple[str, ...] = ()) -> Scene:
    """Which cubes exist and where some of them are; ``must`` cubes are present."""
    n = max(len(must), r.choices([4, 3, 2, 1], weights=[58, 22, 14, 6])[0])
    rest = [c for c in CUBES if c not in must]
    chosen = set(must) | set(r.sample(rest, n - len(must)))
    sc = Scene([c for c in CUBES if c in chosen])
    free = [c for c in sc.cubes if c not in must]
    if free and r.random() < 0.2:
        sc.in_bin[free.pop(r.randrange(len(free)))] = r.choice(BINS)
    if len(free) >= 2 and r.random() < 0.12:
        top, base = r.sample(free, 2)
        sc.on[top] = base
        free = [c for c in free if c not in (top, base)]
    if free and r.random() < 0.08:
        sc.held = r.choice(free)
    return sc


def articulated_scene(r: random.Random, must: tuple[str, ...] = ()) -> Scene:
    """A :func:`random_scene` of the articulated scene: a drawer (open or closed) and a light."""
    sc = random_scene(r, must)
    sc.drawer = "open" if r.random() < 0.35 else "closed"
    sc.light = r.random() < 0.4
    return sc
