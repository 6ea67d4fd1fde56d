"""The skill registry: the single catalogue the bridge, the planner and the CLI read."""

from __future__ import annotations

from skills.base import Skill
from skills.drawer import CloseDrawer, OpenDrawer
from skills.home import Home
from skills.pick import Pick
from skills.place import Place
from skills.press_button import PressButton
from skills.push import Push

REGISTRY: dict[str, Skill] = {
    s.name: s for s in (Pick(), Place(), Push(), Home(), OpenDrawer(), CloseDrawer(), PressButton())
}


def get(name: str) -> Skill:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown skill {name!r}; known: {', '.join(REGISTRY)}") from None


def names() -> list[str]:
    return list(REGISTRY)


def catalogue() -> list[dict]:
    """Declarations of every skill as plain data (for prompts, schema and the CLI)."""
    return [s.catalogue_entry() for s in REGISTRY.values()]
