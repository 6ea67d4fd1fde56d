"""Subgoal and plan models, derived from the skill registry.

Each subgoal model is the skill's own parameter model plus a ``skill`` discriminator, so a
validated subgoal *is* an instance of the skill's ``Params`` (its preconditions accept it as
is) and no field outside the declaration can reach a skill: the models forbid extra keys
and are frozen. Adding a skill to the registry adds its subgoal here without bridge edits.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Required, TypedDict, Union, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from skills.base import Skill, SkillParams
from skills.registry import REGISTRY

#: Default and hard limit of steps in one plan.
DEFAULT_MAX_STEPS = 12
#: Longest refusal text kept.
MAX_REFUSAL_CHARS = 200


def _subgoal_model(skill: Skill) -> type[SkillParams]:
    # Literal of a runtime name: a valid type to pydantic, not to a static checker
    literal = cast(Any, Literal[skill.name])
    model = create_model(
        f"{skill.name.capitalize()}Subgoal",
        __base__=skill.Params,
        __doc__=skill.description,
        skill=(literal, Field(..., description=f"always {skill.name!r}")),
    )
    return model


class _SubgoalModels(Mapping[str, type[SkillParams]]):
    """Subgoal model per registered skill name, in registry order: built on first use for
    each skill and kept, so a skill registered later (a plugin's, a test's) has its subgoal
    model here too, with no edit of the bridge."""

    def __init__(self) -> None:
        self._built: dict[str, tuple[Skill, type[SkillParams]]] = {}

    def __getitem__(self, name: str) -> type[SkillParams]:
        skill = REGISTRY[name]  # KeyError for a name no skill has
        got = self._built.get(name)
        if got is None or got[0] is not skill:
            got = self._built[name] = (skill, _subgoal_model(skill))
        return got[1]

    def __iter__(self) -> Iterator[str]:
        return iter(list(REGISTRY))

    def __len__(self) -> int:
        return len(REGISTRY)


#: Subgoal model per skill name, in registry order (live: see :class:`_SubgoalModels`).
SUBGOAL_MODELS: Mapping[str, type[SkillParams]] = _SubgoalModels()

PickSubgoal = SUBGOAL_MODELS["pick"]
PlaceSubgoal = SUBGOAL_MODELS["place"]
PushSubgoal = SUBGOAL_MODELS["push"]
HomeSubgoal = SUBGOAL_MODELS["home"]

#: Any subgoal of the built-in skills, discriminated by ``skill`` (the bridge validates a
#: step by its own skill's model in :data:`SUBGOAL_MODELS`, so later skills need no union).
if TYPE_CHECKING:  # statically, a subgoal is a skill's parameter model
    Subgoal = SkillParams
else:
    # Union[...] of a runtime tuple: the `X | Y` spelling cannot be built from a tuple
    Subgoal = Annotated[Union[tuple(SUBGOAL_MODELS.values())], Field(discriminator="skill")]  # noqa: UP007
SUBGOAL_ADAPTER: TypeAdapter[Subgoal] = TypeAdapter(Subgoal)


class SubgoalDict(TypedDict, total=False):
    """A subgoal as the JSON the planner, the bridge and the runner pass between them
    (:func:`subgoal_json` of an accepted :data:`Subgoal`), ``skill`` first. Only ``skill``
    is always there; the parameters are the skill's (those of the shipped skills here; a
    skill added to the registry brings its own keys, which a static checker cannot see)."""

    skill: Required[str]
    object: str
    #: a place target (bin, cube, table region) or a push target: a region or ``[x, y]``
    target: str | list[float]


class Plan(BaseModel):
    """A plan: steps run in order, or an explicit refusal with the reason (and no steps)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: list[Subgoal] = Field(default_factory=list, max_length=DEFAULT_MAX_STEPS)
    refuse: str | None = Field(None, min_length=1, max_length=MAX_REFUSAL_CHARS)


def subgoal_json(sub: BaseModel) -> dict[str, Any]:
    """Plain JSON of a subgoal, ``skill`` first (the form the schema and prompts use)."""
    d = sub.model_dump(mode="json")
    return {"skill": d.pop("skill"), **d}


def skill_of(sub: BaseModel) -> str:
    name: str = sub.skill  # type: ignore[attr-defined]
    return name


def safe_stop_steps() -> list[SkillParams]:
    """The safe stop: open the gripper and return home. Executable in every state."""
    return [HomeSubgoal(skill="home")]  # type: ignore[call-arg]  # `skill` is added at run time
