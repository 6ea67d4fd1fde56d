"""The validation pipeline: raw planner output -> accepted plan, or reasons.

Stages, each of which only runs if the previous one produced something to check:

1. extract one JSON value (``bridge.extract``);
2. normalise the envelope (a bare list of subgoals or a single subgoal object is accepted
   and wrapped as ``{"steps": [...]}``; all reason paths refer to that wrapped form);
3. structural limits (nesting depth, finite numbers, step count) before any schema work,
   so hostile input stays cheap;
4. JSON Schema (draft 2020-12) with every error collected and mapped to a stable code;
5. pydantic subgoal objects (the only thing that ever reaches a skill);
6. executability: the plan is simulated step by step on the symbolic world with the
   registry's preconditions and effects. Simulation stops at the first failing step,
   since the state after a step that cannot run is unknown;
7. the goal: a stated ``goal`` must hold in the simulated world after the last step
   (a plan that does something other than what it says it is for never runs); without
   one, the goal is what the steps do (``goal_source`` "effects").

``validate`` never raises: an unexpected exception becomes an ``internal_error`` rejection.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from bridge import goals as G
from bridge import reasons as R
from bridge.extract import extract
from bridge.models import DEFAULT_MAX_STEPS, SUBGOAL_MODELS, skill_of, subgoal_json
from bridge.reasons import Reason, clip, did_you_mean, pointer
from bridge.schema import CompiledSchema, Vocabulary, compile_schema
from sim import call_memo, scene
from sim.world import WorldState
from skills.affordance import affordance_repair
from skills.base import SkillParams
from skills.registry import REGISTRY
from skills.success_model import first_low

#: Deepest nesting a plan can need is 5 (plan, steps, step, point, number); allow slack.
MAX_DEPTH = 8
#: Most JSON nodes inspected before the input is declared too large.
MAX_NODES = 5_000
#: Most reasons reported for one output (the first ones are the useful ones).
MAX_REASONS = 20


@dataclass
class BridgeResult:
    """What the bridge decided about one planner output.

    ``accepted`` plans hold subgoal objects in ``plan`` and no reasons. A refusal
    (``{"steps": [], "refuse": "..."}``) is not accepted: ``refusal`` holds the planner's
    reason and ``reasons`` one ``refused`` entry. Every other rejection carries at least
    one reason. ``predicted`` is the symbolic world after an accepted plan; ``goal`` what
    it is for: the goal it stated (``goal_source`` "plan") or, without one, its own
    effects (``goal_source`` "effects"), so the runner can check the outcome either way.
    """

    accepted: bool
    plan: list[SkillParams] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)
    raw: str = ""
    refusal: str | None = None
    predicted: WorldState | None = field(default=None, repr=False)
    latency_s: float = 0.0
    goal: list[str] | None = None
    goal_source: str | None = None

    @property
    def refused(self) -> bool:
        return self.refusal is not None

    @property
    def codes(self) -> list[str]:
        return [r.code for r in self.reasons]

    def plan_json(self) -> list[dict]:
        return [subgoal_json(s) for s in self.plan]

    def to_dict(self) -> dict:
        return {
            "accepted": self.accepted,
            "plan": self.plan_json(),
            "reasons": [r.to_dict() for r in self.reasons],
            "refusal": self.refusal,
            "goal": self.goal,
            "goal_source": self.goal_source,
            "raw": self.raw,
            "latency_s": self.latency_s,
        }


def _reject(text: str, reasons: list[Reason]) -> BridgeResult:
    return BridgeResult(accepted=False, reasons=reasons[:MAX_REASONS], raw=text)


# ------------------------------------------------------------------ structural limits
def _structure(doc: Any) -> list[Reason]:
    """Depth and size limits and finite numbers, iteratively (no recursion on input)."""
    out: list[Reason] = []
    stack: list[tuple[Any, tuple, int]] = [(doc, (), 0)]
    nodes = 0
    while stack:
        v, path, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH or nodes > MAX_NODES:
            return [
                Reason(
                    R.SCHEMA_VIOLATION,
                    pointer(path),
                    "the JSON is nested too deeply or is too large for a plan",
                    'a plan is {"steps": [{"skill": ..., ...}, ...]}',
                )
            ]
        if isinstance(v, float) and not math.isfinite(v):
            out.append(
                Reason(
                    R.WRONG_ARGUMENTS,
                    pointer(path),
                    f"number {v} is not finite",
                    "use finite numbers (metres on the table)",
                )
            )
        elif isinstance(v, dict):
            stack.extend((x, path + (k,), depth + 1) for k, x in v.items())
        elif isinstance(v, (list, tuple)):
            stack.extend((x, path + (i,), depth + 1) for i, x in enumerate(v))
    return out


# ------------------------------------------------------------------ schema error mapping
def _envelope_reasons(cs: CompiledSchema, doc: dict) -> list[Reason]:
    if cs.envelope_is_known_valid(doc):
        return []
    out: list[Reason] = []
    errors = 0
    for e in cs.envelope.iter_errors(doc):
        errors += 1
        where = list(e.absolute_path)
        if where[:1] == ["goal"]:
            continue  # the goal grammar reports these precisely (_goal_reasons)
        if e.validator == "additionalProperties":
            for k in doc:
                if k not in PLAN_KEYS:
                    out.append(
                        Reason(
                            R.EXTRA_FIELD,
                            pointer([k]),
                            f"unexpected key {clip(k)}",
                            _envelope_hint(k),
                        )
                    )
        elif e.validator == "required":
            out.append(
                Reason(
                    R.SCHEMA_VIOLATION,
                    "",
                    "the plan has no 'steps'",
                    'a plan is {"steps": [{"skill": ..., ...}, ...]}',
                )
            )
        elif where[:1] == ["steps"] and e.validator == "maxItems":
            out.append(_too_long(len(doc["steps"]), cs.max_steps))
        elif where[:1] == ["steps"]:
            out.append(
                Reason(
                    R.SCHEMA_VIOLATION,
                    "/steps",
                    "'steps' must be a list of subgoals",
                    'e.g. {"steps": [{"skill": "home"}]}',
                )
            )
        else:
            out.append(
                Reason(
                    R.WRONG_ARGUMENTS,
                    pointer(where),
                    R.bounded(e.message),
                    "'refuse' is a short string saying why the task cannot be done",
                )
            )
    if not errors:
        cs.remember_valid_envelope(doc)
    return out


#: Keys of a plan object.
PLAN_KEYS = ("steps", "goal", "refuse")
#: Keys models use for the step list.
STEP_LIST_ALIASES = ("plan", "subgoals", "actions", "tasks", "sequence", "commands")


def _envelope_hint(key: str) -> str:
    if isinstance(key, str) and key.lower() in STEP_LIST_ALIASES:
        return "did you mean 'steps'? plan keys: " + ", ".join(PLAN_KEYS)
    return did_you_mean(key, list(PLAN_KEYS), "plan keys")


def _too_long(n: int, limit: int) -> Reason:
    return Reason(
        R.PLAN_TOO_LONG,
        "/steps",
        f"the plan has {n} steps; the limit is {limit}",
        "merge or drop steps; plan only what the task needs",
    )


def _skill_hint(value: Any) -> str:
    if isinstance(value, str):
        said = value.strip().lower().replace(" ", "_").replace("-", "_")
        # the words models use for skills, as each skill declares them
        syn = next((n for n, s in REGISTRY.items() if said in s.aliases), None)
        if syn:
            return f"did you mean {syn!r}? skills: {', '.join(SUBGOAL_MODELS)}"
    return did_you_mean(value, list(SUBGOAL_MODELS), "skills")


def _name_reason(
    cs: CompiledSchema, skill: str, key: str, domain: str, value: Any, path: str
) -> Reason:
    """A string that is not in the field's domain: hallucinated, or from another domain."""
    valid = list(cs.vocab.domain(domain))
    if not isinstance(value, str):
        return Reason(
            R.WRONG_ARGUMENTS,
            path,
            f"{skill}.{key} must be a name, got {clip(value)}",
            did_you_mean(None, valid, "valid"),
        )
    kind = cs.vocab.kind(value)
    if kind is not None:
        advice = REGISTRY[skill].wrong_kind_hints.get(kind) if skill in REGISTRY else None
        extra = f"; {advice}" if advice else ""
        return Reason(
            R.WRONG_ARGUMENTS,
            path,
            R.bounded(f"{value!r} is a {kind}, not a valid {key} for {skill}"),
            R.bounded(f"valid: {', '.join(valid)}{extra}"),
        )
    code = R.HALLUCINATED_OBJECT if key == "object" else R.HALLUCINATED_TARGET
    return Reason(
        code,
        path,
        f"there is no {clip(value)} in the scene",
        R.bounded(did_you_mean(value, valid, "valid")),
    )


def _point_reason(value: Any, path: str) -> Reason:
    ok_shape = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)
    )
    lo, hi = scene.WORKSPACE_LOW, scene.WORKSPACE_HIGH
    bounds = f"x in [{lo[0]}, {hi[0]}], y in [{lo[1]}, {hi[1]}]"
    if not ok_shape:
        return Reason(
            R.WRONG_ARGUMENTS,
            path,
            f"a point target must be [x, y], got {clip(value)}",
            f"two numbers in metres, {bounds}",
        )
    return Reason(R.OUT_OF_WORKSPACE, path, f"point {clip(value)} is outside the workspace", bounds)


def _unknown_skill(cs: CompiledSchema, base: str, skill: Any) -> Reason | None:
    """Why ``skill`` cannot be a step here: no such skill, or one this scene does not offer
    (a drawer skill where there is no drawer: said so, under the same code); None when it
    can."""
    if isinstance(skill, str) and skill in SUBGOAL_MODELS and skill not in cs.steps:
        return Reason(  # not in this scene's schema, as a name no skill has: a schema code
            R.HALLUCINATED_SKILL,
            base + "/skill",
            f"{skill} needs the {REGISTRY[skill].scene} scene's devices, which this scene "
            "does not have",
            f"skills here: {', '.join(cs.vocab.skills)}",
        )
    if not isinstance(skill, str) or skill not in cs.steps:
        return Reason(
            R.HALLUCINATED_SKILL,
            base + "/skill",
            f"there is no skill {clip(skill)}",
            _skill_hint(skill),
        )
    return None


def _step_reasons(cs: CompiledSchema, i: int, step: Any) -> list[Reason]:
    base = f"/steps/{i}"
    if not isinstance(step, dict):
        return [
            Reason(
                R.SCHEMA_VIOLATION,
                base,
                f"step {i} is {clip(step)}, not an object",
                'a step is an object like {"skill": "pick", "object": "red_block"}',
            )
        ]
    if "skill" not in step:
        return [
            Reason(
                R.WRONG_ARGUMENTS,
                base + "/skill",
                f"step {i} has no 'skill'",
                f"skills: {', '.join(SUBGOAL_MODELS)}",
            )
        ]
    if cs.step_is_known_valid(step):
        return []
    skill = step["skill"]
    unknown = _unknown_skill(cs, base, skill)
    if unknown is not None:
        return [unknown]
    fields = cs.fields[skill]
    out: list[Reason] = []
    for e in cs.steps[skill].iter_errors(step):
        where = list(e.absolute_path)
        key = where[0] if where else None
        path = pointer(["steps", i, *where])
        if e.validator == "additionalProperties":
            for k in step:
                if k != "skill" and k not in fields:
                    owners = [n for n, f in cs.fields.items() if k in f]
                    hint = (
                        did_you_mean(k, list(fields), f"{skill} takes")
                        if fields
                        else (f"{skill} takes no arguments")
                    )
                    if owners:
                        hint += f" ({clip(k)} belongs to {', '.join(owners)})"
                    out.append(
                        Reason(
                            R.EXTRA_FIELD,
                            pointer(["steps", i, k]),
                            f"{skill} has no argument {clip(k)}",
                            R.bounded(hint),
                        )
                    )
        elif e.validator == "required":
            missing = [k for k in fields if k not in step]
            for k in missing:
                valid = cs.vocab.domain(fields[k] or "")
                out.append(
                    Reason(
                        R.WRONG_ARGUMENTS,
                        f"{base}/{k}",
                        f"{skill} needs {k!r}",
                        R.bounded(f"{k}: one of {', '.join(valid)}") if valid else "",
                    )
                )
        elif (
            key in fields
            and fields[key]
            and len(where) == 1
            and e.validator in ("enum", "type", "anyOf")
        ):
            value = step[key]
            if isinstance(value, list) and e.validator == "anyOf":
                out.append(_point_reason(value, path))
            else:
                out.append(_name_reason(cs, skill, key, fields[key] or "", value, path))
        else:
            out.append(
                Reason(
                    R.WRONG_ARGUMENTS,
                    path,
                    R.bounded(f"{skill}: {e.message}"),
                    f"see the schema of {skill}",
                )
            )
    if not out:
        cs.remember_valid(step)
    return out


def _schema_reasons(cs: CompiledSchema, doc: Any) -> list[Reason]:
    if not isinstance(doc, dict):
        return [
            Reason(
                R.SCHEMA_VIOLATION,
                "",
                f"expected a plan object, got {clip(doc)}",
                'a plan is {"steps": [{"skill": ..., ...}, ...]}',
            )
        ]
    out = _envelope_reasons(cs, doc)
    steps = doc.get("steps")
    if isinstance(steps, list):
        for i, step in enumerate(steps):
            out.extend(_step_reasons(cs, i, step))
            if len(out) >= MAX_REASONS:
                break
        refuse = doc.get("refuse")
        if refuse is not None and steps and isinstance(refuse, str):
            out.append(
                Reason(
                    R.WRONG_ARGUMENTS,
                    "/refuse",
                    "a plan either refuses (empty steps) or has steps, not both",
                    "drop 'refuse' to run the steps, or empty 'steps' to decline",
                )
            )
        if not steps and refuse is None:
            out.append(
                Reason(
                    R.EMPTY_PLAN,
                    "/steps",
                    "the plan has no steps",
                    'give the steps, or decline with {"steps": [], "refuse": "<why>"}',
                )
            )
    return out


# ------------------------------------------------------------------ goal
_GOAL_FORM = (
    'a list of predicates, e.g. ["in(red_block, green_bin)", "on(blue_block, '
    'yellow_block)", "at(red_block, table_left)", "held(red_block)", "home"]'
)


def _goal_reasons(goal: Any, world: WorldState) -> tuple[list[G.Literal_], list[Reason]]:
    """The stated goal parsed, or why it cannot be: syntax, or names the scene lacks."""
    if not isinstance(goal, list):
        return [], [
            Reason(R.GOAL_SYNTAX, "/goal", f"goal must be a list, got {clip(goal)}", _GOAL_FORM)
        ]
    if len(goal) > G.MAX_GOAL_LITERALS:
        return [], [
            Reason(
                R.GOAL_SYNTAX,
                "/goal",
                f"the goal has {len(goal)} predicates; the limit is {G.MAX_GOAL_LITERALS}",
                "state only what the instruction asks",
            )
        ]
    lits: list[G.Literal_] = []
    out: list[Reason] = []
    for i, text in enumerate(goal):
        path = pointer(["goal", i])
        try:
            lit = G.parse_literal(text)
        except G.GoalUnknownName as e:
            valid = G.names_of(e.kind, world)
            out.append(
                Reason(
                    R.GOAL_UNKNOWN_OBJECT,
                    path,
                    R.bounded(f"there is no {e.kind} {clip(e.name)} in the scene"),
                    R.bounded(did_you_mean(e.name, valid, f"{e.kind}s")),
                )
            )
            continue
        except G.GoalSyntaxError as e:
            out.append(Reason(R.GOAL_SYNTAX, path, R.bounded(str(e)), _GOAL_FORM))
            continue
        missing = G.absent_names(lit, world)
        if missing:
            kind, name = missing[0]
            valid = G.names_of(kind, world)
            out.append(
                Reason(
                    R.GOAL_UNKNOWN_OBJECT,
                    path,
                    R.bounded(f"{str(lit)!r} names {name}, which is not in the scene"),
                    R.bounded(f"{kind}s: {', '.join(valid) or 'none'}"),
                )
            )
            continue
        lits.append(lit)
    return lits, out[:MAX_REASONS]


def _goal_unmet(goal: list[G.Literal_], predicted: WorldState) -> list[Reason]:
    missed = [(i, lit) for i, lit in enumerate(goal) if not lit.holds(predicted)]
    if not missed:
        return []
    names = ", ".join(str(lit) for _, lit in missed)
    return [
        Reason(
            R.GOAL_NOT_ACHIEVED,
            pointer(["goal", i]),
            R.bounded(f"after the last step {str(lit)!r} would not hold"),
            R.bounded(
                f"unmet: {names}; add the steps that make them true, or state "
                "the goal the instruction asks for"
            ),
        )
        for i, lit in missed
    ][:MAX_REASONS]


# ------------------------------------------------------------------ executability
def _signature(w: WorldState) -> tuple:
    """What a step can change: where each cube is and what holds it, and the gripper."""
    objs = tuple((o.name, o.held, o.in_bin, o.on, o.on_table, o.fallen, o.pos) for o in w.objects)
    return objs, w.held_object, w.grip_pos


def _describe(sub: BaseModel) -> str:
    d = subgoal_json(sub)
    args = ", ".join(f"{k}={clip(v)}" for k, v in d.items() if k != "skill")
    return f"{d['skill']}({args})"


def _simulate(world: WorldState, plan: list[SkillParams]) -> tuple[WorldState, list[Reason]]:
    """The plan run on the symbolic world: per step its preconditions, then its success
    predictor (``low_affordance``), then its effect (and whether it changed anything); the
    first of these to fail, in that order, is the answer.

    The predictors are asked of all the steps at once, after the preconditions and effects
    (``skills.success_model.first_low``: one pass of each network, the distances to the
    obstacles of every step together; issue 25). That is the same answer: the steps'
    preconditions and effects do not read the predictors, so they run as far as the first
    step that fails them (or raises), and a step the predictor rates low before that one,
    or that one itself where its preconditions held, comes first in the order above."""
    w = world
    sig = None  # the signature of w, carried over from the step that made it
    asked: list[tuple[WorldState, str, SkillParams]] = []  # (world, skill, params) per step
    stop: tuple[WorldState, list[Reason]] | BaseException | None = None
    for i, sub in enumerate(plan):
        # (what a step raises is raised in its turn, where no step before it is low)
        try:
            name = skill_of(sub)
            skill = REGISTRY[name]
            violations = skill.preconditions(w, sub)
            if violations:
                stop = w, _violated(i, sub, violations, w)
                break
        except Exception as e:
            stop = e
            break
        asked.append((w, name, sub))
        try:
            nxt = skill.effect(w, sub)
            nxt_sig = _signature(nxt)
            if nxt_sig == (sig if sig is not None else _signature(w)):
                stop = (
                    w,
                    [
                        Reason(
                            R.NO_EFFECT,
                            pointer(["steps", i]),
                            f"step {i} {_describe(sub)} would change nothing",
                            "drop this step",
                        )
                    ],
                )
                break
        except Exception as e:
            stop = e
            break
        w, sig = nxt, nxt_sig
    first = first_low(asked)
    if first is not None:
        i, low = first
        if isinstance(low, Exception):
            raise low
        w, _, sub = asked[i]
        _, hint = affordance_repair(w, subgoal_json(sub))
        msg = (
            f"step {i} {_describe(sub)}: the {REGISTRY[skill_of(sub)].name} skill is "
            f"predicted to succeed with p={low[0]:.2f} here (threshold {low[1]:.2f})"
        )
        return w, [Reason(R.LOW_AFFORDANCE, pointer(["steps", i]), R.bounded(msg), R.bounded(hint))]
    if isinstance(stop, BaseException):
        raise stop
    return stop if stop is not None else (w, [])


def _violated(i: int, sub: SkillParams, violations: list, w: WorldState) -> list[Reason]:
    out = []
    for v in violations:
        code = v.code if v.code in R.CODES else R.PRECONDITION_VIOLATED
        path = pointer(["steps", i] + ([v.field] if v.field else []))
        out.append(
            Reason(
                code,
                path,
                R.bounded(f"step {i} {_describe(sub)}: {v.message}"),
                R.bounded(v.hint or _default_hint(code, w)),
            )
        )
    return out


def simulate(world: WorldState, steps: list[dict]) -> tuple[WorldState, list[Reason]]:
    """Plain subgoal dicts simulated as the bridge does: the world after them, and the
    reasons of the first step that cannot run (then the world before it). One symbolic
    model of the skills for the bridge, the planner and the evaluation."""
    plan = [SUBGOAL_MODELS[st["skill"]].model_validate(st) for st in steps]
    with call_memo.scope():
        return _simulate(world, plan)


def _default_hint(code: str, w: WorldState) -> str:
    if code == R.UNREACHABLE:
        ok = [o.name for o in w.objects if o.reachable and not o.fallen]
        return "reachable objects: " + (", ".join(ok) or "none")
    if code == R.NO_EFFECT:
        return "drop this step"
    return "check the world state before this step"


# ------------------------------------------------------------------ entry point
def normalise(value: Any) -> Any:
    """Accept a bare list of subgoals, a single subgoal object, or a bare refusal
    ``{"refuse": "..."}`` as a plan."""
    if isinstance(value, list):
        return {"steps": value}
    if isinstance(value, dict) and "steps" not in value:
        if "skill" in value:
            return {"steps": [value]}
        if isinstance(value.get("refuse"), str):
            return {"steps": [], **value}
    return value


def validate(raw: Any, world: WorldState, *, max_steps: int = DEFAULT_MAX_STEPS) -> BridgeResult:
    """Check raw planner output against ``world``; never raises.

    Accepted forms: ``{"steps": [...], "refuse"?: str}``, a bare list of subgoals, or a
    single subgoal object; as a string (prose and code fences allowed), a langchain
    message (tool-call arguments or text), a dict/list, or a pydantic model.
    """
    t0 = time.perf_counter()
    try:
        with call_memo.scope():  # answers about one world, computed once per call
            res = _validate(raw, world, max_steps)
    except Exception as e:  # the safety boundary must answer, even about its own bugs
        res = _reject(
            _safe_text(raw),
            [
                Reason(
                    R.INTERNAL_ERROR,
                    "",
                    R.bounded(f"bridge error {type(e).__name__}: {e}"),
                    "the output was rejected; report this input",
                )
            ],
        )
    res.latency_s = time.perf_counter() - t0
    return res


def _effect_step(sub: SkillParams) -> dict[str, Any]:
    """What ``goals.effect_goal`` reads of a step's JSON (its skill, and its object): where
    both are plain strings (or there is no object), what ``subgoal_json`` would give them,
    without dumping the whole model; else the dump itself."""
    skill, obj = skill_of(sub), getattr(sub, "object", None)
    if type(skill) is str and (obj is None or type(obj) is str):
        return {"skill": skill, "object": obj}
    return subgoal_json(sub)


def _safe_text(raw: Any) -> str:
    try:
        return raw if isinstance(raw, str) else repr(raw)[:1000]
    except Exception:
        return "<unprintable>"


def _validate(raw: Any, world: WorldState, max_steps: int) -> BridgeResult:
    ex = extract(raw)
    if not ex.found:
        return _reject(ex.text, ex.reasons)
    doc = normalise(ex.value)
    steps = doc.get("steps") if isinstance(doc, dict) else None
    if isinstance(steps, list) and len(steps) > max_steps:
        return _reject(ex.text, [_too_long(len(steps), max_steps)])
    reasons = _structure(doc)
    if reasons and reasons[0].code == R.SCHEMA_VIOLATION:
        return _reject(ex.text, reasons)
    cs = compile_schema(Vocabulary.of(world), max_steps)
    reasons += _schema_reasons(cs, doc)
    goal_texts = doc.get("goal") if isinstance(doc, dict) else None
    goal: list[G.Literal_] = []
    if goal_texts is not None:
        goal, goal_reasons = _goal_reasons(goal_texts, world)
        reasons += goal_reasons
    if reasons:
        return _reject(ex.text, reasons)
    if doc.get("refuse") is not None:
        text = doc["refuse"]
        return BridgeResult(
            accepted=False,
            raw=ex.text,
            refusal=text,
            reasons=[Reason(R.REFUSED, "/refuse", text, "")],
        )
    plan: list[SkillParams] = []
    for i, step in enumerate(cast(list, steps)):  # a list: the schema checks passed
        try:
            plan.append(SUBGOAL_MODELS[step["skill"]].model_validate(step))
        except ValidationError as e:
            for err in e.errors()[:MAX_REASONS]:
                reasons.append(
                    Reason(
                        R.WRONG_ARGUMENTS,
                        pointer(["steps", i, *err["loc"]]),
                        R.bounded(err["msg"]),
                        f"see the schema of {step['skill']}",
                    )
                )
    if reasons:
        return _reject(ex.text, reasons)
    predicted, reasons = _simulate(world, plan)
    if reasons:
        return _reject(ex.text, reasons)
    if goal_texts is not None:
        reasons = _goal_unmet(goal, predicted)
        if reasons:
            return _reject(ex.text, reasons)
        stated, source = [str(lit) for lit in goal], "plan"
    else:
        stated = G.effect_goal(world, predicted, [_effect_step(s) for s in plan])
        source = "effects"
    return BridgeResult(
        accepted=True, plan=plan, raw=ex.text, predicted=predicted, goal=stated, goal_source=source
    )
