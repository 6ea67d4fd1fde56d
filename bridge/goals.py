"""The goal grammar: one small language of predicates over the symbolic world state.

It lives in the bridge because every layer above must agree on it: the suite's YAML goals,
the plan's optional ``goal`` (stated by a planner and checked here before anything moves),
the runner's success test on the world from physics, and the evaluation. One parser, one
evaluator; nothing in a goal is ever evaluated as code.

Literals are ``[not] PREDICATE(ARG, ...)`` over :class:`sim.world.WorldState`:

==========================  ======================================================
``in(OBJ, BIN)``            the cube lies in the bin
``on(OBJ, OBJ)``            the first cube rests on the second
``held(OBJ)``               the gripper holds the cube
``on_table(OBJ)``           the cube rests on the table (not in a bin, not stacked)
``at(OBJ, REGION)``         on the table, within the named region's radius, or beside a
                            cube that is (a region holds blocks side by side)
``in_region(OBJ, REGION)``  the same as ``at`` (the suite's older spelling)
``reachable(OBJ)``          the arm can reach the cube
``home``                    the gripper is empty and the arm at its rest pose
``clear(OBJ)``              nothing is stacked on the cube (the top of its tower)
``above(OBJ, OBJ)``         the first cube is somewhere in the tower on the second
``open(drawer)``            the drawer is pulled out (articulated scene)
``closed(drawer)``          the drawer is shut (articulated scene)
``in(OBJ, drawer)``         the cube lies in the drawer (articulated scene)
``light_on``                the lamp is lit (articulated scene)
==========================  ======================================================

The last four are the fixtures' own (``sim.fixtures``): a fixture declares its predicates,
the kind of argument that names it and whether objects lie in it, and the tables below are
rebuilt whenever a fixture is registered, so a new fixture's goal words need no edit here.

An argument is a scene name, ``*`` (*some* present name of that kind makes the literal
true: ``held(*)`` is "something is held", ``not held(*)`` "nothing is held") or ``all``
(*every* present name of that kind: ``in(all, blue_bin)``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from sim import scene, scenes
from sim.fixtures import registry as fixtures
from sim.world import WorldState

OBJ, BIN, REGION, DRAWER = "object", "bin", "region", "drawer"
#: The grammar's own predicates -> the kind of each argument.
CORE_PREDICATES: dict[str, tuple[str, ...]] = {
    "in": (OBJ, BIN),
    "on": (OBJ, OBJ),
    "held": (OBJ,),
    "on_table": (OBJ,),
    "at": (OBJ, REGION),
    "in_region": (OBJ, REGION),
    "reachable": (OBJ,),
    "home": (),
    "clear": (OBJ,),
    "above": (OBJ, OBJ),
}
#: Every predicate -> the kind of each argument: the grammar's own, then the registered
#: fixtures' (``open``, ``closed``, ``light_on``), in their order. Updated in place when a
#: fixture is registered (modules holding this dict see it).
PREDICATES: dict[str, tuple[str, ...]] = dict(CORE_PREDICATES)
ANY, ALL = "*", "all"
#: Most literals in one stated goal (a plan has at most 12 steps; goals stay short).
MAX_GOAL_LITERALS = 16
#: Longest literal text accepted.
MAX_LITERAL_CHARS = 120
#: Kind -> the names a goal may give it in any scene. A BIN argument may also name a
#: container fixture (``in(red_block, drawer)``): a container either way. Updated with
#: PREDICATES.
_KNOWN: dict[str, set[str]] = {}


def _refresh() -> None:
    """Rebuild the fixtures' part of PREDICATES and _KNOWN from the registry."""
    PREDICATES.clear()
    PREDICATES.update(CORE_PREDICATES)
    for pred, f in fixtures.PREDICATES.items():
        PREDICATES[pred] = f.predicates[pred]
    _KNOWN.clear()
    _KNOWN.update(
        {
            OBJ: set(scenes.object_names()),  # every scene's
            BIN: {
                *scene.BIN_NAMES,
                *(n for f in fixtures.CONTAINERS.values() for n in f.goal_names),
            },
            REGION: set(scene.REGIONS),
        }
    )
    for f in fixtures.STORED.values():
        if f.kind:
            _KNOWN.setdefault(f.kind, set()).update(f.goal_names)


fixtures.RESERVED_PREDICATES.update(CORE_PREDICATES)
fixtures.on_change(_refresh)
_LITERAL_RE = re.compile(r"^\s*(not\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.S)
_BARE_RE = re.compile(r"^\s*(not\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*$")
_NAME_RE = re.compile(r"^(?:[a-z][a-z0-9_]*|\*)$")


class GoalSyntaxError(ValueError):
    """A goal string that does not follow the grammar (the message says what is wrong)."""


class GoalUnknownName(GoalSyntaxError):
    """A well-formed literal naming something that is not a scene name of that kind."""

    def __init__(self, message: str, name: str = "", kind: str = ""):
        super().__init__(message)
        self.name, self.kind = name, kind


@dataclass(frozen=True)
class Literal_:
    """One goal literal: ``[not] pred(args)``. Parsed once, evaluated many times."""

    pred: str
    args: tuple[str, ...]
    negated: bool = False

    def __str__(self) -> str:
        core = self.pred if not PREDICATES[self.pred] else f"{self.pred}({', '.join(self.args)})"
        return f"{'not ' if self.negated else ''}{core}"

    def names(self) -> list[tuple[str, str]]:
        """(kind, name) of every concrete (non-wildcard) argument."""
        kinds = PREDICATES[self.pred]
        return [(k, a) for k, a in zip(kinds, self.args, strict=False) if a not in (ANY, ALL)]

    @property
    def subject(self) -> str | None:
        """The cube the literal is about (its first argument), when it names one."""
        kinds = PREDICATES[self.pred]
        if kinds and kinds[0] == OBJ and self.args[0] not in (ANY, ALL):
            return self.args[0]
        return None

    def holds(self, world: WorldState) -> bool:
        value = _evaluate(self.pred, self.args, world)
        return (not value) if self.negated else value


def parse_literal(text: str) -> Literal_:
    """``"not in(red_block, green_bin)"`` -> :class:`Literal_`; GoalSyntaxError otherwise
    (GoalUnknownName when only a name is wrong)."""
    if not isinstance(text, str):
        raise GoalSyntaxError(
            f"a goal must be a string like 'in(red_block, green_bin)', not {type(text).__name__}"
        )
    if len(text) > MAX_LITERAL_CHARS:
        raise GoalSyntaxError(f"a goal literal is at most {MAX_LITERAL_CHARS} characters")
    m = _LITERAL_RE.match(text)
    bare = None if m else _BARE_RE.match(text)
    if not m and not bare and text.count("(") != text.count(")"):
        raise GoalSyntaxError(
            f"{text!r} has unbalanced parentheses; in a YAML flow list [a, b] the comma "
            "inside in(x, y) splits the item: write one goal per '- ' line or quote it"
        )
    if not m and not bare:
        raise GoalSyntaxError(f"{text!r} is not of the form [not] predicate(arg, ...)")
    g = m or bare
    assert g is not None  # one of the two matched (checked above)
    negated, pred = bool(g.group(1)), g.group(2)
    inner = m.group(3) if m else ""
    if pred not in PREDICATES:
        raise GoalSyntaxError(
            f"unknown predicate {pred!r} in {text!r}; known: {', '.join(PREDICATES)}"
        )
    args = tuple(a.strip() for a in inner.split(",")) if inner.strip() else ()
    kinds = PREDICATES[pred]
    if len(args) != len(kinds):
        raise GoalSyntaxError(
            f"{pred} takes {len(kinds)} argument(s) ({', '.join(kinds) or 'none'}), got "
            f"{len(args)} in {text!r}"
        )
    for kind, a in zip(kinds, args, strict=False):
        if not _NAME_RE.match(a):
            raise GoalSyntaxError(f"bad argument {a!r} in {text!r}")
        if a in (ANY, ALL):
            continue
        if a not in _KNOWN.get(kind, ()):
            raise GoalUnknownName(
                f"{a!r} in {text!r} is not {'an' if kind == OBJ else 'a'} {kind} of the scene; "
                f"known: {', '.join(sorted(_KNOWN.get(kind, ())))}",
                a,
                kind,
            )
    return Literal_(pred, args, negated)


def parse_goal(texts: Iterable[str]) -> tuple[Literal_, ...]:
    """Every literal of a goal, or the first GoalSyntaxError."""
    return tuple(parse_literal(t) for t in texts)


def absent_names(lit: Literal_, world: WorldState) -> list[tuple[str, str]]:
    """(kind, name) of the literal's names this particular world does not have (a scene
    name can be absent from a scene, e.g. a cube parked off the table)."""
    return [(k, n) for k, n in lit.names() if n not in names_of(k, world)]


def names_of(kind: str, world: WorldState) -> list[str]:
    """The names of that kind (object, bin, region, or a fixture's kind: drawer) present in
    ``world``; a container fixture (the drawer) counts as a container only where there is
    one, so ``in(x, *)`` on the default scene still means "in some bin"."""
    if kind == OBJ:
        return world.object_names
    if kind == BIN:
        return [*world.bin_names, *world.container_names]
    if kind == REGION:
        return world.region_names
    states = world.fixtures
    return [n for f in fixtures.of_kind(kind) if f.name in states for n in f.names(states[f.name])]


def _home(world: WorldState) -> bool:
    from skills.home import at_home  # the home skill's own test is what "home" means

    return world.held_object is None and at_home(world)


def _atom(pred: str, args: tuple[str, ...], world: WorldState) -> bool:
    if pred == "in":
        return world.in_(*args)
    if pred == "on":
        return world.on(*args)
    if pred == "held":
        return world.held(*args)
    if pred == "on_table":
        return world.on_table(*args)
    if pred in ("in_region", "at"):
        return world.in_region(args[0], args[1])
    if pred == "reachable":
        return world.reachable(*args)
    if pred == "home":
        return _home(world)
    if pred == "clear":
        return world.clear(*args)
    if pred == "above":
        return world.above(*args)
    fixture = fixtures.PREDICATES.get(pred)
    if fixture is not None:
        return fixture.holds(pred, args, world.fixtures.get(fixture.name))
    raise GoalSyntaxError(f"unknown predicate {pred!r}")  # unreachable after parsing


def _evaluate(pred: str, args: tuple[str, ...], world: WorldState) -> bool:
    """``all`` binds outermost (every name must satisfy), then ``*`` (some name does)."""
    kinds = PREDICATES[pred]
    all_slots = [i for i, a in enumerate(args) if a == ALL]
    any_slots = [i for i, a in enumerate(args) if a == ANY]

    def with_any(bound: list[str]) -> bool:
        if not any_slots:
            return _atom(pred, tuple(bound), world)
        pools = [names_of(kinds[i], world) for i in any_slots]
        for combo in itertools.product(*pools):
            b = list(bound)
            for i, name in zip(any_slots, combo, strict=False):
                b[i] = name
            if _atom(pred, tuple(b), world):
                return True
        return False

    if not all_slots:
        return with_any(list(args))
    pools = [names_of(kinds[i], world) for i in all_slots]
    for combo in itertools.product(*pools):
        b = list(args)
        for i, name in zip(all_slots, combo, strict=False):
            b[i] = name
        if not with_any(b):
            return False
    return True


def _literals(goal: Iterable[Literal_ | str]) -> list[Literal_]:
    return [g if isinstance(g, Literal_) else parse_literal(g) for g in goal]


def goal_holds(goal: Iterable[Literal_ | str], world: WorldState) -> bool:
    return all(lit.holds(world) for lit in _literals(goal))


def unmet(goal: Iterable[Literal_ | str], world: WorldState) -> list[str]:
    """The literals of ``goal`` that do not hold in ``world`` (as text)."""
    return [str(lit) for lit in _literals(goal) if not lit.holds(world)]


def evaluate(goal: Iterable[Literal_ | str], world: WorldState) -> list[dict]:
    """``[{"predicate": text, "met": bool}, ...]``: what ``run`` prints and episodes keep."""
    return [{"predicate": str(lit), "met": bool(lit.holds(world))} for lit in _literals(goal)]


# ----------------------------------------------------------------------------- plan effects
def effect_goal(before: WorldState, after: WorldState, steps: Iterable[dict]) -> list[str]:
    """What a plan without a stated goal is taken to aim at: where it leaves every cube it
    moves, and ``home`` when it ends there. The runner then checks these in physics, so a
    goal-less plan is still judged by the world, only against its own intent."""
    steps = list(steps)
    touched: list[str] = []
    for st in steps:
        o = st.get("object")
        if isinstance(o, str) and o not in touched:
            touched.append(o)
    if before.held_object and before.held_object not in touched:
        touched.append(before.held_object)
    for o in after.objects:
        b = before.object(o.name)
        if (
            b is not None
            and o.name not in touched
            and ((b.in_bin, b.on, b.held, b.pos) != (o.in_bin, o.on, o.held, o.pos))
        ):
            touched.append(o.name)
    out: list[str] = []
    for name in touched:
        o = after.object(name)
        if o is None:
            continue
        if o.held:
            out.append(f"held({name})")
        elif o.in_bin:
            out.append(f"in({name}, {o.in_bin})")
        elif o.on:
            out.append(f"on({name}, {o.on})")
        else:
            region = next((r for r in after.region_names if after.in_region(name, r)), None)
            out.append(f"at({name}, {region})" if region else f"on_table({name})")
    if steps and steps[-1].get("skill") == "home" and _home(after):
        out.append("home")
    return out


def merge(old: Iterable[str], new: Iterable[str]) -> list[str]:
    """``old`` updated by ``new``: a literal of ``new`` about a cube replaces ``old``'s
    literals about that cube (the later plan moves it last); ``home`` is kept once."""
    new = list(new)
    subjects = {parse_literal(t).subject for t in new} - {None}
    kept = [t for t in old if parse_literal(t).subject not in subjects and t not in new]
    return kept + new


def canonical(text: str) -> str:
    """One spelling per literal (spaces, ``in_region`` as ``at``), for comparing goals."""
    lit = parse_literal(text)
    if lit.pred == "in_region":
        lit = Literal_("at", lit.args, lit.negated)
    return str(lit)


def same_goal(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether two goals ask for the same literals (order and spelling aside)."""
    return {canonical(t) for t in a} == {canonical(t) for t in b}


#: Predicates a planner states about a cube's destination (what instructions ask for).
_STATED = ("in", "on", "at", "in_region", "held")


def _expand(lit: Literal_, world: WorldState) -> list[str]:
    """Concrete canonical texts of a positive literal; ``all`` in the subject expands over
    the world's cubes; a ``*`` anywhere, or a predicate planners do not state, gives none."""
    if lit.negated or ANY in lit.args:
        return []
    if lit.pred == "home":
        return ["home"]
    if lit.pred not in _STATED:
        return []
    pred = "at" if lit.pred == "in_region" else lit.pred
    subjects = world.object_names if lit.args[0] == ALL else [lit.args[0]]
    if ALL in lit.args[1:]:
        return []
    return [str(Literal_(pred, (s, *lit.args[1:]))) for s in subjects]


def mismatch(
    stated: Iterable[str], required: Iterable[Literal_ | str], world: WorldState
) -> list[str]:
    """How a planner's stated goal differs from the task's (``world``: the scene it was
    stated for): destinations the task asks for that it omits, and destinations of cubes
    the task does not mention. Conditions a suite adds (``not held(*)``, ``on_table``) and
    a stated ``home`` are not differences. Empty when the goals agree."""
    req = _literals(required)
    need: list[str] = []
    mentioned: set[str] = set()
    for lit in req:
        need += _expand(lit, world)
        kinds = PREDICATES[lit.pred]
        if kinds and kinds[0] == OBJ:
            if lit.args[0] in (ALL, ANY):
                mentioned |= set(world.object_names)
            else:
                mentioned.add(lit.args[0])
    have: list[str] = []
    for text in stated:
        lit = parse_literal(text)
        have += _expand(lit, world)
    out = [f"missing {t}" for t in need if t not in have]
    for t in have:
        lit = parse_literal(t)
        if lit.subject is not None and lit.subject not in mentioned:
            out.append(f"extra {t}")
    return out
