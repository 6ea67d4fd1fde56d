"""Evaluation task suites: YAML files of instructions with goals over the final world state.

A suite file (``skillbridge/tasks/*.yaml``, read with :func:`sim.safeyaml.load`, which is
``yaml.safe_load`` without anchors or aliases, validated by pydantic)::

    suite: stacking                      # a name for reports
    description: one cube on another     # optional
    tasks:
      - id: stack-red-on-blue            # unique across the loaded files
        instruction: stack the red block on the blue block
        category: stacking
        scene:                           # optional: TabletopEnv reset options
          cubes: [red_block, blue_block] #   names (random poses per seed), or
                                         #   {name: [x, y] | [x, y, yaw] | [x, y, z, yaw] | null}
          model: tabletop                #   or articulated (a drawer, a button, a lamp),
          # drawer: 0.0                  #   then the drawer's opening (m)
          # light: false                 #   and the light at the start
        goal:                            # all must hold at the end (a conjunction)
          - on(red_block, blue_block)
          - not held(*)
        refuse: false                    # true: the system must decline the instruction

Goal literals are ``[not] PREDICATE(ARG, ...)`` over :class:`sim.world.WorldState`:

========================  ======================================================
``in(OBJ, BIN)``          the cube lies in the bin
``on(OBJ, OBJ)``          the first cube rests on the second
``held(OBJ)``             the gripper holds the cube
``on_table(OBJ)``         the cube rests on the table (not in a bin, not stacked)
``in_region(OBJ, REGION)``  on the table, within the named region's radius (also ``at``)
``reachable(OBJ)``        the arm can reach the cube
``home``                  the gripper is empty and the arm at its rest pose
========================  ======================================================

An argument is a scene name, ``*`` (*some* present name of that kind makes the literal
true: ``held(*)`` is "something is held", ``not held(*)`` "nothing is held") or ``all``
(*every* present name of that kind: ``in(all, blue_bin)``). Goals are parsed once, here, by a
small grammar (:mod:`bridge.goals`, shared with plans, the runner and the
evaluation); nothing in a suite file is ever evaluated as code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from bridge.goals import (  # noqa: F401  (re-exported: the suite's goals use this grammar)
    ALL,
    ANY,
    BIN,
    OBJ,
    PREDICATES,
    REGION,
    GoalSyntaxError,
    Literal_,
    goal_holds,
    parse_literal,
    unmet,
)
from sim import safeyaml, scene, scenes
from sim.cubes import check_cubes, cube_pose
from sim.world import WorldState

#: Where the shipped suite lives (a folder of YAML files).
DEFAULT_SUITE = Path(__file__).resolve().parent.parent / "tasks"

Category = Literal[
    "pick_place",
    "stacking",
    "push",
    "sequence",
    "quantifier",
    "paraphrase",
    "refuse",
    # free-language categories (issue 11): meant for a language-model planner
    "typos",
    "synonyms",
    "world_knowledge",
    "goal_state",
    "lists",
    "exclusions",
    "ordering",
    "verbose",
    # what was said (issue 24): not every utterance is a command; references in the world
    "questions",
    "prohibitions",
    "ambiguity",
    "spatial",
    "counting",
    "conditionals",
    "corrections",
    "languages",
    # the articulated scene (issue 15): the drawer, the button and light, towers
    "drawer",
    "light",
    "towers",
    # the mixed scene (issue 26): objects named by kind and by size
    "kinds",
    "sizes",
]
CATEGORIES: tuple[str, ...] = get_args(Category)
#: Categories the rules planner is not expected to plan (free phrasing, for a model).
FREE_LANGUAGE_CATEGORIES = CATEGORIES[CATEGORIES.index("typos") : CATEGORIES.index("drawer")]


# ----------------------------------------------------------------------------- models
def _check_goal_text(v: str) -> str:
    parse_literal(v)  # raises with the reason; pydantic adds the list index to the location
    return " ".join(v.split())


#: A goal literal as written in a suite file, checked by the grammar at load time.
GoalText = Annotated[str, AfterValidator(_check_goal_text)]


class SceneSpec(BaseModel):
    """Reset options of the scene (see :class:`sim.env.TabletopEnv`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cubes: list[str] | dict[str, list[float] | None] | None = None
    #: the scene model (``sim.scenes``): "articulated" adds a drawer, a button and a lamp;
    #: "mixed" holds objects of several kinds
    model: str = "tabletop"
    #: articulated scene: how far the drawer is pulled out at the start (m), light on/off
    drawer: float | None = Field(default=None, ge=0.0, le=scene.DRAWER_TRAVEL)
    light: bool | None = None

    @model_validator(mode="after")
    def _devices_need_their_scene(self):
        if self.model not in scene.SCENE_NAMES:
            raise ValueError(f"unknown scene {self.model!r}; known: {', '.join(scene.SCENE_NAMES)}")
        held = {o.name for o in scenes.get(self.model).objects}
        if self.cubes is not None and (bad := [n for n in self.cubes if n not in held]):
            raise ValueError(f"the {self.model} scene has no {', '.join(bad)}")
        if not scenes.get(self.model).articulated and (
            self.drawer is not None or self.light is not None
        ):
            raise ValueError("drawer and light are options of the articulated scene (model)")
        return self

    @field_validator("cubes")
    @classmethod
    def _known(cls, v):
        if v is None:
            return v
        names = list(v)
        if not names:
            raise ValueError("at least one cube")
        bad = [n for n in names if n not in scenes.object_names()]
        if bad:
            raise ValueError(f"unknown cube(s) {bad}; known: {', '.join(scenes.object_names())}")
        if len(set(names)) != len(names):
            raise ValueError("a cube is listed twice")
        if isinstance(v, dict):
            for n, pose in v.items():
                if pose is not None:
                    cube_pose(n, pose)
            # the checks a run applies to --cubes (finite, on the table and in reach, not
            # overlapping), here at load: a bad pose is the suite's error, not an episode's
            check_cubes(v)
        return v

    @property
    def names(self) -> list[str]:
        if self.cubes is not None:
            return list(self.cubes)
        return [o.name for o in scenes.get(self.model).objects]

    @property
    def poses(self) -> dict[str, list[float] | None] | None:
        """The fixed poses, or None when only the set of cubes is given."""
        if isinstance(self.cubes, dict) and any(p is not None for p in self.cubes.values()):
            return dict(self.cubes)
        return None

    def reset_options(self) -> dict | None:
        """Reset options for a :class:`sim.env.TabletopEnv` built on ``model``."""
        out: dict = {} if self.cubes is None else {"cubes": self.cubes}
        if self.drawer is not None:
            out["drawer"] = self.drawer
        if self.light is not None:
            out["light"] = self.light
        return out or None


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
    instruction: str = Field(..., min_length=1, max_length=500)
    category: Category
    scene: SceneSpec = Field(default_factory=SceneSpec)
    goal: tuple[GoalText, ...] = ()
    refuse: bool = False
    #: with ``refuse``: the utterance is no command, and the robot must answer it, ask back
    #: which thing was meant, or stop, with nothing moved (planner.understand)
    expect: Literal["answer", "clarify", "stop"] | None = None
    note: str | None = None

    @field_validator("instruction")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the instruction is blank")
        return v

    @field_validator("goal", mode="before")
    @classmethod
    def _goal_list(cls, v):
        if isinstance(v, str):
            return (v,)
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if not self.refuse and not self.goal:
            raise ValueError("a task that is not to be refused needs a goal")
        if self.category == "refuse" and not self.refuse:
            raise ValueError("category 'refuse' needs refuse: true")
        if self.expect is not None and not self.refuse:
            raise ValueError("expect: (answer, clarify, stop) goes with refuse: true")
        present = set(self.scene.names)
        for lit in self.literals:
            if lit.negated or self.refuse:
                continue
            for kind, name in lit.names():
                if kind == OBJ and name not in present:
                    raise ValueError(f"goal {str(lit)!r} names {name}, which is not in the scene")
        return self

    @property
    def literals(self) -> tuple[Literal_, ...]:
        return tuple(parse_literal(t) for t in self.goal)

    def achieved(self, world: WorldState) -> bool:
        return goal_holds(self.literals, world)


class SuiteFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str = Field(..., min_length=1, max_length=80)
    description: str | None = None
    tasks: list[Task] = Field(..., min_length=1)


@dataclass
class Suite:
    """Tasks from one or more files, ids unique across them."""

    name: str
    tasks: list[Task]
    files: list[Path]
    origin: dict[str, Path]  # task id -> file

    def __len__(self) -> int:
        return len(self.tasks)

    def by_category(self) -> dict[str, list[Task]]:
        out: dict[str, list[Task]] = {}
        for t in self.tasks:
            out.setdefault(t.category, []).append(t)
        return out


class SuiteError(ValueError):
    """A suite that cannot be used; the message names the file and the field."""


def _loc(loc: tuple, data) -> str:
    """``("tasks", 3, "goal", 1)`` -> ``tasks[3] (id 'x').goal[1]``."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
            continue
        if isinstance(part, int) and isinstance(node, dict) and isinstance(node.get("id"), str):
            out += f" (id {node['id']!r})"
    return out or "(top level)"


def load_file(path: str | Path) -> SuiteFile:
    from sim.safeio import MiB, UnsafeFile, read_regular

    p = Path(path)
    try:  # a regular file only: a FIFO given as --suite would hang
        text = read_regular(p, 16 * MiB).decode("utf-8")
    except FileNotFoundError:
        raise SuiteError(f"{p}: no such suite file") from None
    except UnsafeFile as e:
        raise SuiteError(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise SuiteError(f"{p}: cannot read: {e}") from None
    too_deep = SuiteError(
        f"{p}: nested too deeply to be a suite file (a suite is a few "
        "levels deep: suite, tasks, scene, cubes)"
    )
    try:
        data = safeyaml.load(text)
    except safeyaml.YamlTooDeep:  # the YAML composer recurses once per nesting level
        raise too_deep from None
    except safeyaml.YamlError as e:
        raise SuiteError(f"{p}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise SuiteError(
            f"{p}: expected a mapping with 'suite' and 'tasks', found {type(data).__name__}"
        )
    try:
        return SuiteFile.model_validate(data)
    except RecursionError:  # parsed, but too deep for validation and error reporting
        raise too_deep from None
    except ValidationError as e:
        lines = []
        for err in e.errors()[:5]:
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"{p}: {_loc(tuple(err['loc']), data)}: {msg}")
        more = len(e.errors()) - 5
        if more > 0:
            lines.append(f"{p}: ... and {more} more error(s)")
        raise SuiteError("\n".join(lines)) from None


def load_suite(path: str | Path | None = None) -> Suite:
    """A suite from a YAML file or a folder of them (``*.yaml``/``*.yml``, sorted)."""
    p = Path(path) if path is not None else DEFAULT_SUITE
    if p.is_dir():
        files = sorted([*p.glob("*.yaml"), *p.glob("*.yml")])
        if not files:
            raise SuiteError(f"{p}: no *.yaml suite files in this folder")
        name = p.name
    elif p.exists():
        files, name = [p], p.stem
    else:
        raise SuiteError(f"{p}: no such suite file or folder")
    tasks: list[Task] = []
    origin: dict[str, Path] = {}
    for f in files:
        sf = load_file(f)
        for i, t in enumerate(sf.tasks):
            if t.id in origin:
                raise SuiteError(
                    f"{f}: tasks[{i}].id: duplicate task id {t.id!r} (also in {origin[t.id]})"
                )
            origin[t.id] = f
            tasks.append(t)
        if len(files) == 1:
            name = sf.suite
    return Suite(name=name, tasks=tasks, files=files, origin=origin)
