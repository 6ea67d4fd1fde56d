"""The hand-written free-language test set (``tests/planner/data/freeform.yaml``).

``load_freeform()`` reads and validates it for tests and the planner benchmark: ids unique,
categories known, every goal literal parsed by the project's goal grammar, the scene valid
(the suite's :class:`~skillbridge.evaluation.suite.SceneSpec`), goals naming only present cubes, and
exactly one of ``goal`` / ``refuse: true``. Each returned entry is a plain dict::

    {"id", "instruction", "category", "scene": SceneSpec, "goal": [str, ...],
     "literals": [Literal_, ...], "refuse": bool, "note": str | None}

``entry["scene"].reset_options()`` gives the ``TabletopEnv.reset`` options;
``goal_holds(entry["literals"], world)`` judges a final world state.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from bridge.goals import Literal_
from skillbridge.evaluation.suite import GoalSyntaxError, SceneSpec, parse_literal

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "freeform.yaml"

#: The categories of the set (the suite's free-language ones plus casual, references, refuse).
CATEGORIES = (
    "typos",
    "synonyms",
    "world_knowledge",
    "casual",
    "goal_state",
    "lists",
    "exclusions",
    "ordering",
    "verbose",
    "references",
    "refuse",
)

_KEYS = {"id", "instruction", "category", "scene", "goal", "refuse", "note", "in_drawer"}


class FreeformError(ValueError):
    """A malformed entry; the message names the entry."""


def check_scene(raw, where: str) -> SceneSpec:
    """The entry's scene as the suite's SceneSpec (FreeformError naming ``where``)."""
    try:
        return SceneSpec.model_validate(raw or {})
    except Exception as e:  # pydantic ValidationError: keep the message, name the entry
        raise FreeformError(f"{where}: bad scene: {e}") from None


def check_in_drawer(raw, scene: SceneSpec, where: str) -> list[str]:
    """Cubes that start in the drawer: cubes of the scene, and only where a drawer is out."""
    in_drawer = raw or []
    if not isinstance(in_drawer, list) or not all(n in scene.names for n in in_drawer):
        raise FreeformError(f"{where}: in_drawer must list cubes of the scene")
    if in_drawer and (scene.model != "articulated" or not scene.drawer):
        raise FreeformError(f"{where}: in_drawer needs an articulated scene with the drawer out")
    return list(in_drawer)


def check_goal(goal: list, scene: SceneSpec, where: str) -> list[Literal_]:
    """Every goal text parsed by the goal grammar; a positive literal names present cubes."""
    literals = []
    for j, text in enumerate(goal):
        try:
            literals.append(parse_literal(text))
        except GoalSyntaxError as e:
            raise FreeformError(f"{where}: goal[{j}]: {e}") from None
    present = set(scene.names)
    for lit in literals:
        if lit.negated:
            continue
        for kind, name in lit.names():
            if kind == "object" and name not in present:
                raise FreeformError(
                    f"{where}: goal {str(lit)!r} names {name}, which is not in the scene"
                )
    return literals


def _entry(raw, index: int) -> dict:  # noqa: C901 - one check per field
    where = f"entries[{index}]"
    if not isinstance(raw, dict):
        raise FreeformError(f"{where}: expected a mapping, got {type(raw).__name__}")
    if isinstance(raw.get("id"), str):
        where += f" (id {raw['id']!r})"
    extra = set(raw) - _KEYS
    if extra:
        raise FreeformError(f"{where}: unknown key(s) {sorted(extra)}")
    for key in ("id", "instruction", "category"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise FreeformError(f"{where}: {key} must be a non-empty string")
    if raw["category"] not in CATEGORIES:
        raise FreeformError(
            f"{where}: unknown category {raw['category']!r}; known: {', '.join(CATEGORIES)}"
        )
    refuse = raw.get("refuse", False)
    if not isinstance(refuse, bool):
        raise FreeformError(f"{where}: refuse must be true or false")
    goal = raw.get("goal") or []
    if isinstance(goal, str):
        goal = [goal]
    if not isinstance(goal, list):
        raise FreeformError(f"{where}: goal must be a list of literals")
    if refuse == bool(goal):
        raise FreeformError(f"{where}: give either a goal or refuse: true (exactly one)")
    if (raw["category"] == "refuse") != refuse:
        raise FreeformError(f"{where}: category 'refuse' and refuse: true go together")
    scene = check_scene(raw.get("scene"), where)
    in_drawer = check_in_drawer(raw.get("in_drawer"), scene, where)
    literals = check_goal(goal, scene, where)
    return {
        "id": raw["id"],
        "instruction": raw["instruction"],
        "category": raw["category"],
        "scene": scene,
        "goal": [" ".join(t.split()) for t in goal],
        "literals": literals,
        "refuse": refuse,
        "note": raw.get("note"),
        "in_drawer": in_drawer,
    }


def load_freeform(path: str | Path | None = None) -> list[dict]:
    """The validated entries of the test set (FreeformError on any malformed entry)."""
    p = Path(path) if path is not None else DEFAULT_PATH
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise FreeformError(f"{p}: expected a mapping with an 'entries' list")
    if data.get("format") == "understanding":
        raise FreeformError(
            f"{p}: an understanding set: load it with tests.planner.understanding_set"
        )
    entries = [_entry(raw, i) for i, raw in enumerate(data["entries"])]
    seen: set[str] = set()
    for e in entries:
        if e["id"] in seen:
            raise FreeformError(f"{p}: duplicate id {e['id']!r}")
        seen.add(e["id"])
    return entries
