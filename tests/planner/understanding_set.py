"""The hand-written understanding set (``tests/planner/data/understanding.yaml``).

An utterance is not always a command: each entry says what the robot should make of it
(``kind``: plan, answer, clarify, stop, refuse) and what proves it right. ``load_understanding``
reads and validates the set as strictly as :func:`tests.planner.freeform.load_freeform` does
(same scene, goal and ``in_drawer`` checks, reused from there) and adds the fields of the new
kinds. Each returned entry is a plain dict::

    {"id", "instruction", "category", "kind", "scene": SceneSpec, "goal": [str],
     "literals": [Literal_], "unmoved": [cube], "count": [{"predicate", "literal", "n",
     "min", "max"}], "candidates": [name], "answer_has": [[str, ...], ...],
     "lang": str | None, "held": cube | None, "in_drawer": [cube], "refuse": bool,
     "note": str | None}

The field semantics (also in the YAML's header), checked by ``scripts/bench_planner.py``:

- ``unmoved``: no step of the plan picks or pushes these cubes.
- ``count``: the number of present cubes that make the predicate true when substituted for
  its one object ``*`` (:func:`count_of`) is ``n`` (or within ``min``/``max``) afterwards.
- ``answer_has``: a list of groups, each a string or a list of alternatives; the reply must
  contain one alternative of every group (:func:`answer_matches`).
- ``candidates``: the question back must name every candidate's word (its colour, the side
  of a region, "drawer"), or list the candidate itself (:func:`unnamed_candidates`).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bridge.goals import (
    ALL,
    ANY,
    OBJ,
    PREDICATES,
    GoalSyntaxError,
    Literal_,
    names_of,
    parse_literal,
)
from planner.understand import KINDS as U_KINDS
from sim import scene as sim_scene
from sim.world import WorldState
from skillbridge.evaluation.suite import SceneSpec
from tests.planner.freeform import FreeformError, check_goal, check_in_drawer, check_scene

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "understanding.yaml"
#: The top-level ``format:`` that marks an understanding set (the bench picks its judge by it).
FORMAT = "understanding"

#: the kinds an utterance is read as (the planner's own definition, planner.understand)
KINDS = U_KINDS
#: Kinds where nothing may move (a drive home is no motion).
STILL_KINDS = ("answer", "clarify", "stop", "refuse")
CATEGORIES = (
    "questions",
    "prohibitions",
    "ambiguity",
    "spatial",
    "counting",
    "conditionals",
    "corrections",
    "stop",
    "impossible",
    "languages",
    "chatty",
    "articulated",
    "statements",
    "verbs",
    "kinds",
)
LANGS = ("zh", "es", "fr", "de", "ja", "it", "pt")

_KEYS = {
    "id",
    "instruction",
    "category",
    "kind",
    "scene",
    "goal",
    "unmoved",
    "count",
    "candidates",
    "answer_has",
    "lang",
    "held",
    "in_drawer",
    "note",
}
#: Fields that only make sense for one kind.
_ONLY_FOR = {
    "goal": "plan",
    "unmoved": "plan",
    "count": "plan",
    "candidates": "clarify",
    "answer_has": "answer",
}
_REGION_WORDS = {
    "table_center": ("center", "centre", "middle"),
    "table_front": ("front",),
    "table_back": ("back",),
    "table_left": ("left",),
    "table_right": ("right",),
}


class UnderstandingError(FreeformError):
    """A malformed entry of the understanding set; the message names the entry."""


# ----------------------------------------------------------------------------- the checks
def candidate_words(name: str) -> tuple[str, ...]:
    """The words a question back must use to name ``name``: a cube's or bin's colour, a
    region's side, the drawer's own word."""
    if name in _REGION_WORDS:
        return _REGION_WORDS[name]
    if name == sim_scene.DRAWER_NAME:
        return ("drawer",)
    return (sim_scene.cube_color(name),)


def _mentions(text: str, phrase: str) -> bool:
    """``phrase`` occurs in ``text`` (lowercased): as whole words when it is ASCII, as a
    substring otherwise (Chinese and Japanese have no spaces between words)."""
    text, phrase = text.lower(), phrase.lower().strip()
    if not phrase:
        return False
    if phrase.isascii():
        return re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", text) is not None
    return phrase in text


def answer_matches(groups: list[list[str]], text: str | None) -> bool:
    """True when ``text`` contains one alternative of every group (no groups: any text)."""
    if not groups:
        return True
    if not isinstance(text, str) or not text.strip():
        return False
    return all(any(_mentions(text, alt) for alt in group) for group in groups)


def unnamed_candidates(
    candidates: list[str], question: str | None, listed: list[str] | None
) -> list[str]:
    """The expected candidates that neither the question's words nor the outcome's own
    ``candidates`` list name (empty: the question is specific enough)."""
    listed = [str(x) for x in (listed or [])]
    out = []
    for name in candidates:
        words = candidate_words(name)
        if name in listed or any(w in listed for w in words):
            continue
        if isinstance(question, str) and any(_mentions(question, w) for w in words):
            continue
        out.append(name)
    return out


def count_of(literal: Literal_, world: WorldState) -> int:
    """How many present cubes make ``literal`` true when put in place of its one object
    ``*`` (``in(*, green_bin)``: the cubes in the green bin)."""
    slot = literal.args.index(ANY)
    n = 0
    for name in names_of(OBJ, world):
        args = list(literal.args)
        args[slot] = name
        if Literal_(literal.pred, tuple(args), literal.negated).holds(world):
            n += 1
    return n


def count_holds(spec: dict, world: WorldState) -> bool:
    """One ``count`` item holds in ``world``."""
    k = count_of(spec["literal"], world)
    if spec.get("n") is not None:
        return bool(k == spec["n"])
    lo, hi = spec.get("min"), spec.get("max")
    return (lo is None or k >= lo) and (hi is None or k <= hi)


# --------------------------------------------------------------------------- validation
def _names(raw: object, where: str, field: str) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise UnderstandingError(f"{where}: {field} must be a list of names")
    if len(set(raw)) != len(raw):
        raise UnderstandingError(f"{where}: {field} lists a name twice")
    return list(raw)


def _count_item(raw: object, scene: SceneSpec, where: str) -> dict:
    if not isinstance(raw, dict) or set(raw) - {"predicate", "n", "min", "max"}:
        raise UnderstandingError(
            f"{where}: a count is {{predicate: 'in(*, green_bin)', n: 2}} (or min/max for n)"
        )
    text = raw.get("predicate")
    if not isinstance(text, str):
        raise UnderstandingError(f"{where}: a count's predicate is a literal like 'in(*, red_bin)'")
    try:
        lit = parse_literal(text)
    except GoalSyntaxError as e:
        raise UnderstandingError(f"{where}: count predicate: {e}") from None
    kinds = PREDICATES[lit.pred]
    stars = [i for i, a in enumerate(lit.args) if a == ANY]
    if len(stars) != 1 or kinds[stars[0]] != OBJ or ALL in lit.args:
        raise UnderstandingError(
            f"{where}: count predicate {text!r} needs exactly one '*', in a cube's place, "
            "and no 'all'"
        )
    for kind, name in lit.names():
        if kind == OBJ and name not in scene.names:
            raise UnderstandingError(f"{where}: count predicate {text!r} names absent {name}")
    bounds = {k: raw.get(k) for k in ("n", "min", "max")}
    for k, v in bounds.items():
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise UnderstandingError(f"{where}: count {k} must be a whole number >= 0")
    if (bounds["n"] is None) == (bounds["min"] is None and bounds["max"] is None):
        raise UnderstandingError(f"{where}: a count gives n, or min and/or max (not both)")
    if bounds["min"] is not None and bounds["max"] is not None and bounds["min"] > bounds["max"]:
        raise UnderstandingError(f"{where}: count min is above max")
    top = max(v for v in bounds.values() if v is not None)
    if top > len(scene.names):
        raise UnderstandingError(f"{where}: count {top} is more than the scene's cubes")
    return {"predicate": " ".join(text.split()), "literal": lit, **bounds}


def _answer_groups(raw: object, where: str) -> list[list[str]]:
    if not isinstance(raw, list) or not raw:
        raise UnderstandingError(f"{where}: answer_has must be a non-empty list of groups")
    groups = []
    for g in raw:
        alts = [g] if isinstance(g, str) else g
        if isinstance(alts, list) and any(isinstance(a, bool) for a in alts):
            raise UnderstandingError(
                f"{where}: answer_has has a true/false: quote yes, no, on and off in YAML"
            )
        if (
            not isinstance(alts, list)
            or not alts
            or not all(isinstance(a, (str, int)) and str(a).strip() for a in alts)
        ):
            raise UnderstandingError(
                f"{where}: an answer_has group is a word or a list of alternative words"
            )
        alts = [str(a) for a in alts]
        if any(a != a.lower() for a in alts):
            raise UnderstandingError(f"{where}: answer_has words are lowercase: {alts}")
        groups.append(alts)
    return groups


def _candidates(raw: object, scene: SceneSpec, where: str) -> list[str]:
    names = _names(raw, where, "candidates")
    if len(names) < 2:
        raise UnderstandingError(f"{where}: a clarify names at least two candidates")
    known = {*scene.names, *sim_scene.BIN_NAMES, *sim_scene.REGIONS}
    if scene.model == "articulated":
        known.add(sim_scene.DRAWER_NAME)
    bad = [n for n in names if n not in known]
    if bad:
        raise UnderstandingError(f"{where}: candidates {bad} are not in the scene")
    return names


def _entry(raw: object, index: int) -> dict:  # noqa: C901 - one check per field
    where = f"entries[{index}]"
    if not isinstance(raw, dict):
        raise UnderstandingError(f"{where}: expected a mapping, got {type(raw).__name__}")
    if isinstance(raw.get("id"), str):
        where += f" (id {raw['id']!r})"
    extra = set(raw) - _KEYS
    if extra:
        raise UnderstandingError(f"{where}: unknown key(s) {sorted(extra)}")
    for key in ("id", "instruction", "category", "kind"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise UnderstandingError(f"{where}: {key} must be a non-empty string")
    if raw["category"] not in CATEGORIES:
        raise UnderstandingError(
            f"{where}: unknown category {raw['category']!r}; known: {', '.join(CATEGORIES)}"
        )
    kind = raw["kind"]
    if kind not in KINDS:
        raise UnderstandingError(f"{where}: unknown kind {kind!r}; known: {', '.join(KINDS)}")
    for field, only in _ONLY_FOR.items():
        if field in raw and kind != only:
            raise UnderstandingError(f"{where}: {field} belongs to kind {only}, not {kind}")
    lang = raw.get("lang")
    if lang is not None and lang not in LANGS:
        raise UnderstandingError(f"{where}: unknown lang {lang!r}; known: {', '.join(LANGS)}")
    if (raw["category"] == "languages") and lang is None:
        raise UnderstandingError(f"{where}: an entry of category languages names its lang")
    scene = check_scene(raw.get("scene"), where)
    in_drawer = check_in_drawer(raw.get("in_drawer"), scene, where)
    held = raw.get("held")
    if held is not None and (held not in scene.names or held in in_drawer):
        raise UnderstandingError(f"{where}: held must be a cube of the scene (not in the drawer)")
    goal = raw.get("goal") or []
    if isinstance(goal, str):
        goal = [goal]
    if not isinstance(goal, list):
        raise UnderstandingError(f"{where}: goal must be a list of literals")
    literals = check_goal(goal, scene, where)
    unmoved = _names(raw.get("unmoved", []), where, "unmoved")
    if any(n not in scene.names for n in unmoved):
        raise UnderstandingError(f"{where}: unmoved must list cubes of the scene")
    count_raw = raw.get("count", [])
    count_raw = [count_raw] if isinstance(count_raw, dict) else count_raw
    if not isinstance(count_raw, list):
        raise UnderstandingError(f"{where}: count is one {{predicate, n}} or a list of them")
    count = [_count_item(c, scene, where) for c in count_raw]
    if kind == "plan" and not (any(not lit.negated for lit in literals) or count or unmoved):
        raise UnderstandingError(
            f"{where}: a plan needs a goal with a positive literal, a count or unmoved cubes"
        )
    if kind == "plan" and not literals and not count:
        raise UnderstandingError(f"{where}: a plan needs a goal or a count")
    if kind == "clarify" and "candidates" not in raw:
        raise UnderstandingError(f"{where}: a clarify lists the candidates it must name")
    candidates = _candidates(raw["candidates"], scene, where) if kind == "clarify" else []
    answer_has = _answer_groups(raw["answer_has"], where) if "answer_has" in raw else []
    return {
        "id": raw["id"],
        "instruction": raw["instruction"],
        "category": raw["category"],
        "kind": kind,
        "scene": scene,
        "goal": [" ".join(t.split()) for t in goal],
        "literals": literals,
        "unmoved": unmoved,
        "count": count,
        "candidates": candidates,
        "answer_has": answer_has,
        "lang": lang,
        "held": held,
        "in_drawer": in_drawer,
        "refuse": kind == "refuse",
        "note": raw.get("note"),
    }


def is_understanding_set(path: str | Path) -> bool:
    """The file is an understanding set (top-level ``format: understanding``)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def load_understanding(path: str | Path | None = None) -> list[dict]:
    """The validated entries of the set (UnderstandingError on any malformed entry)."""
    p = Path(path) if path is not None else DEFAULT_PATH
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise UnderstandingError(f"{p}: expected a mapping with an 'entries' list")
    if data.get("format") != FORMAT:
        raise UnderstandingError(f"{p}: not an understanding set (needs format: {FORMAT})")
    entries = [_entry(raw, i) for i, raw in enumerate(data["entries"])]
    seen: set[str] = set()
    for e in entries:
        if e["id"] in seen:
            raise UnderstandingError(f"{p}: duplicate id {e['id']!r}")
        seen.add(e["id"])
    return entries
