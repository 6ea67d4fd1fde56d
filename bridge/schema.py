"""The per-scene JSON Schema (draft 2020-12) of a plan, and its compiled validators.

The schema is generated from the subgoal models: each field that declares a ``domain`` in
the skill's parameter model becomes an enum of the names actually present in the world
(objects, bins, regions), so a model using structured output cannot even spell a missing
object. The same dict is handed to the planner and used by ``jsonschema`` here. Compiling
validators is the expensive part, so it is done once per scene vocabulary and cached.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import lru_cache

from jsonschema import Draft202012Validator

from bridge.models import DEFAULT_MAX_STEPS, MAX_REFUSAL_CHARS, SUBGOAL_MODELS
from sim import scene
from sim.world import WorldState
from skills.base import DOMAIN_OBJECT, DOMAIN_PLACE_TARGET, DOMAIN_PUSH_TARGET
from skills.registry import REGISTRY

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: Bound of the per-scene memory of valid steps.
MAX_REMEMBERED_STEPS = 4096


def scene_skills(world: WorldState) -> tuple[str, ...]:
    """The skills the world's scene offers: every tabletop skill, and those that need the
    articulated scene's drawer, button and lamp where the world has them."""
    articulated = world.drawer is not None or world.light_on is not None
    return tuple(n for n, s in REGISTRY.items() if s.scene == scene.DEFAULT_SCENE or articulated)


@dataclass(frozen=True)
class Vocabulary:
    """The names a scene offers; the cache key of its schema."""

    objects: tuple[str, ...]
    bins: tuple[str, ...]
    regions: tuple[str, ...]
    #: Containers of the articulated scene (the drawer); empty on the default scene, whose
    #: schema is therefore what it always was.
    containers: tuple[str, ...]

    #: the skills the scene offers (a drawer skill only where there is a drawer)
    skills: tuple[str, ...]

    @classmethod
    def of(cls, world: WorldState) -> Vocabulary:
        return cls(
            tuple(world.object_names),
            tuple(world.bin_names),
            tuple(world.region_names),
            tuple(world.container_names),
            skills=scene_skills(world),
        )

    def domain(self, name: str) -> tuple[str, ...]:
        """Names a parameter of this domain may take (numeric push targets aside)."""
        if name == DOMAIN_OBJECT:
            return self.objects
        if name == DOMAIN_PLACE_TARGET:
            return self.bins + self.objects + self.regions + self.containers
        if name == DOMAIN_PUSH_TARGET:
            return self.regions
        return ()

    def kind(self, value: str) -> str | None:
        """What a scene name is (``object``, ``bin``, ``region``), if it is one."""
        if value in self.objects:
            return "object"
        if value in self.bins:
            return "bin"
        if value in self.regions:
            return "region"
        if value in self.containers:
            return "drawer"
        return None


def _point_schema() -> dict:
    lo, hi = scene.WORKSPACE_LOW, scene.WORKSPACE_HIGH
    axis = [{"type": "number", "minimum": float(lo[i]), "maximum": float(hi[i])} for i in range(2)]
    return {
        "type": "array",
        "description": "[x, y] on the table, metres",
        "prefixItems": axis,
        "items": False,
        "minItems": 2,
        "maxItems": 2,
    }


def _domain_schema(domain: str, vocab: Vocabulary) -> dict:
    names = list(vocab.domain(domain))
    if domain == DOMAIN_PUSH_TARGET:
        return {"anyOf": [{"type": "string", "enum": names}, _point_schema()]}
    return {"type": "string", "enum": names}


def _clean(fragment: dict) -> dict:
    """A pydantic property schema without titles and our private ``domain`` marker."""
    out = {}
    for k, v in fragment.items():
        if k in ("title", "domain"):
            continue
        out[k] = _clean(v) if isinstance(v, dict) else v
    return out


def _step_schema(name: str, vocab: Vocabulary) -> dict:
    model = SUBGOAL_MODELS[name]
    src = model.model_json_schema()
    props: dict = {"skill": {"const": name, "description": REGISTRY[name].description}}
    for key, frag in src.get("properties", {}).items():
        if key == "skill":
            continue
        domain = frag.get("domain")
        if domain:
            props[key] = _domain_schema(domain, vocab)
            if frag.get("description"):
                props[key]["description"] = frag["description"]
        else:
            props[key] = _clean(frag)
    required = ["skill"] + [r for r in src.get("required", []) if r != "skill"]
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def _goal_schema(vocab: Vocabulary) -> dict:
    """The optional ``goal``: predicate strings over this scene's names. The pattern guides
    constrained decoders; the bridge checks goals with the grammar itself (kinds, arity), so
    every string the grammar accepts for this scene, spaced with plain spaces, matches it."""
    import re

    from bridge.goals import MAX_GOAL_LITERALS, MAX_LITERAL_CHARS, PREDICATES

    # plain groups and spaces only: grammar-constrained decoders (llama.cpp) convert this
    names = "|".join(re.escape(n) for n in (*vocab.objects, *vocab.bins, *vocab.regions))
    arg = f"({names + '|' if names else ''}all|[*])"
    preds = "|".join(p for p, kinds in PREDICATES.items() if kinds)
    pattern = f"^ *(not +)?(home( *[(] *[)])?|({preds}) *[(] *{arg}( *, *{arg})? *[)]) *$"
    return {
        "type": "array",
        "maxItems": MAX_GOAL_LITERALS,
        "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_LITERAL_CHARS,
            "pattern": pattern,
        },
        "description": (
            "what the instruction asks to be true at the end, one predicate per item: "
            "in(cube, bin), on(cube, cube), at(cube, region), held(cube), home; "
            "'not ' negates; the steps must make every predicate true"
        ),
    }


def _build(vocab: Vocabulary, max_steps: int) -> dict:
    defs = {name: _step_schema(name, vocab) for name in vocab.skills}
    return {
        "$schema": DIALECT,
        "title": "Plan",
        "description": (
            "Subgoals executed in order by the robot's skills. To decline a task that cannot "
            "be done in this scene, give an empty steps list and the reason in refuse."
        ),
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "maxItems": max_steps,
                "items": {"oneOf": [{"$ref": f"#/$defs/{n}"} for n in defs]},
            },
            "goal": _goal_schema(vocab),
            "refuse": {
                "type": ["string", "null"],
                "minLength": 1,
                "maxLength": MAX_REFUSAL_CHARS,
                "description": "why the task cannot be done (only with an empty steps list); "
                "null or absent otherwise",
            },
        },
        "required": ["steps"],
        "additionalProperties": False,
        "$defs": defs,
    }


@dataclass
class CompiledSchema:
    """A scene's schema and the validators the pipeline uses.

    ``full`` validates a whole plan (the reference); ``envelope`` the plan object without
    its steps and ``steps[name]`` one step of a known skill, which is how the pipeline
    reports precise per-step errors: the ``oneOf`` branches are told apart by the ``skill``
    constant, so dispatching on it is equivalent to ``full`` (a test checks this).
    """

    vocab: Vocabulary
    max_steps: int
    schema: dict
    full: Draft202012Validator
    envelope: Draft202012Validator
    steps: dict[str, Draft202012Validator]
    fields: dict[str, dict[str, str | None]] = field(default_factory=dict)
    #: ``repr`` of steps already found valid: planners repeat the same few subgoals, and
    #: ``repr`` tells apart every type distinction jsonschema makes (list/tuple, 1/1.0/True).
    valid_steps: set[str] = field(default_factory=set)

    def step_is_known_valid(self, step: dict) -> bool:
        return repr(step) in self.valid_steps

    def remember_valid(self, step: dict) -> None:
        if len(self.valid_steps) >= MAX_REMEMBERED_STEPS:
            self.valid_steps.clear()
        self.valid_steps.add(repr(step))

    #: Envelopes (:func:`envelope_key`) already found without any error: the envelope
    #: schema reads the plan's keys other than ``steps``, and of ``steps`` only its type
    #: and length (its items are checked step by step).
    valid_envelopes: set[str] = field(default_factory=set)

    def envelope_is_known_valid(self, doc: dict) -> bool:
        return envelope_key(doc) in self.valid_envelopes

    def remember_valid_envelope(self, doc: dict) -> None:
        if len(self.valid_envelopes) >= MAX_REMEMBERED_STEPS:
            self.valid_envelopes.clear()
        self.valid_envelopes.add(envelope_key(doc))


def envelope_key(doc: dict) -> str:
    """What the envelope schema sees of a plan object, as text: ``repr`` of every key and
    value but the steps' items, and the steps' type and length."""
    steps = doc.get("steps")
    rest = repr({k: v for k, v in doc.items() if k != "steps"})
    if isinstance(steps, list | tuple):
        return f"{'steps' in doc} {type(steps).__name__} {len(steps)} {rest}"
    return f"{'steps' in doc} {steps!r} {rest}"


@lru_cache(maxsize=64)
def compile_schema(vocab: Vocabulary, max_steps: int = DEFAULT_MAX_STEPS) -> CompiledSchema:
    schema = _build(vocab, max_steps)
    Draft202012Validator.check_schema(schema)
    env = copy.deepcopy(schema)
    del env["properties"]["steps"]["items"]
    env.pop("$defs")
    steps = {n: Draft202012Validator(s) for n, s in schema["$defs"].items()}
    fields = {}
    for name, model in SUBGOAL_MODELS.items():
        props = model.model_json_schema().get("properties", {})
        fields[name] = {k: v.get("domain") for k, v in props.items() if k != "skill"}
    return CompiledSchema(
        vocab=vocab,
        max_steps=max_steps,
        schema=schema,
        full=Draft202012Validator(schema),
        envelope=Draft202012Validator(env),
        steps=steps,
        fields=fields,
    )


def plan_schema(world: WorldState, max_steps: int = DEFAULT_MAX_STEPS) -> dict:
    """The JSON Schema of a plan in ``world`` (a fresh copy the caller may modify)."""
    return copy.deepcopy(compile_schema(Vocabulary.of(world), max_steps).schema)
