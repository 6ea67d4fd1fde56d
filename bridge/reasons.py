"""Stable reason codes and the ``Reason`` record every rejection is made of.

Rejections are data: the planner turns them into a precise regeneration prompt and the
evaluation counts them by code, so a code, once published here and in ``REASONS.md``, keeps
its meaning. Skills raise a subset of these codes through ``skills.base.Violation``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import skills.base as _skill_codes

# -- the text could not be read as one JSON plan
EMPTY_OUTPUT = "empty_output"
INPUT_TOO_LARGE = "input_too_large"
PARSE_ERROR = "parse_error"
AMBIGUOUS_OUTPUT = "ambiguous_output"
TRUNCATED_OUTPUT = "truncated_output"
TOO_MANY_VALUES = "too_many_values"
# -- the JSON does not fit the scene's schema
SCHEMA_VIOLATION = "schema_violation"
HALLUCINATED_SKILL = "hallucinated_skill"
HALLUCINATED_OBJECT = "hallucinated_object"
HALLUCINATED_TARGET = "hallucinated_target"
WRONG_ARGUMENTS = "wrong_arguments"
EXTRA_FIELD = "extra_field"
EMPTY_PLAN = "empty_plan"
PLAN_TOO_LONG = "plan_too_long"
# -- the plan fits the schema but cannot run in this world
PRECONDITION_VIOLATED = "precondition_violated"
UNREACHABLE = "unreachable"
OUT_OF_WORKSPACE = "out_of_workspace"
NO_EFFECT = "no_effect"
# the pick skill's own violation code, passed through as the bridge's reason code
NOT_GRASPABLE = _skill_codes.NOT_GRASPABLE
LOW_AFFORDANCE = _skill_codes.LOW_AFFORDANCE
# -- the plan's goal: stated wrongly, or not reached by its own steps
GOAL_SYNTAX = "goal_syntax"
GOAL_UNKNOWN_OBJECT = "goal_unknown_object"
GOAL_NOT_ACHIEVED = "goal_not_achieved"
# -- a model plan that moves what the instruction never asked about
NOT_GROUNDED = "not_grounded"
# -- a plan that breaks what the instruction forbids ("don't touch the red block")
FORBIDDEN = "forbidden"
# -- not errors in the plan
REFUSED = "refused"
PLANNER_ERROR = "planner_error"
INTERNAL_ERROR = "internal_error"

#: Every code with a one-line meaning (REASONS.md is the long form; a test keeps them equal).
CODES: dict[str, str] = {
    EMPTY_OUTPUT: "the planner returned nothing (or only whitespace)",
    INPUT_TOO_LARGE: "the raw output exceeds the size limit and was not parsed",
    PARSE_ERROR: "no JSON value could be read from the output",
    AMBIGUOUS_OUTPUT: "several different JSON plans, or duplicate keys, in one output",
    TRUNCATED_OUTPUT: "the output ends inside a JSON value (cut off); no part of it is used",
    TOO_MANY_VALUES: "more JSON values in the output than the bridge reads; the plan is ambiguous",
    SCHEMA_VIOLATION: "the JSON is not a plan object (wrong envelope, type or nesting)",
    HALLUCINATED_SKILL: "a step names a skill the registry does not have",
    HALLUCINATED_OBJECT: "a step names an object that is not in the scene",
    HALLUCINATED_TARGET: "a step names a target that is not in the scene",
    WRONG_ARGUMENTS: "a step's arguments are missing, mistyped, too long, non-finite "
    "or from the wrong domain",
    EXTRA_FIELD: "a key the schema does not allow (extra keys are rejected, never ignored)",
    EMPTY_PLAN: "no steps and no refusal",
    PLAN_TOO_LONG: "more steps than the limit",
    PRECONDITION_VIOLATED: "a step's precondition fails in the simulated state before it",
    UNREACHABLE: "an object or target the arm cannot reach",
    OUT_OF_WORKSPACE: "a numeric target outside the workspace",
    NO_EFFECT: "a step that cannot change anything",
    NOT_GRASPABLE: "a pick whose cube the fingers cannot get around (a neighbour along the "
    "finger axis, a bin wall); the hint names a push that frees it, if one exists",
    LOW_AFFORDANCE: "the skill's learned success predictor rates the step below its threshold",
    GOAL_SYNTAX: "the plan's goal is not a list of predicates in the goal grammar",
    GOAL_UNKNOWN_OBJECT: "a goal predicate names an object, bin or region this scene lacks",
    GOAL_NOT_ACHIEVED: "the steps, simulated, leave a predicate of the plan's goal unmet",
    NOT_GROUNDED: "a model's plan moves a cube or uses a target the instruction never asks about",
    FORBIDDEN: "a plan moves a cube or uses a target that the instruction forbids",
    REFUSED: "the planner declined the task with a reason (not an error)",
    PLANNER_ERROR: "the proposer raised instead of answering (policy level)",
    INTERNAL_ERROR: "a bug in the bridge itself; the input is rejected, never accepted",
}

#: Codes that mean "the planner's text was not a well-formed plan".
FORMAT_CODES = frozenset(
    {
        EMPTY_OUTPUT,
        INPUT_TOO_LARGE,
        PARSE_ERROR,
        AMBIGUOUS_OUTPUT,
        TRUNCATED_OUTPUT,
        TOO_MANY_VALUES,
        SCHEMA_VIOLATION,
    }
)
#: Codes found by the step-by-step symbolic simulation.
EXECUTABILITY_CODES = frozenset(
    {PRECONDITION_VIOLATED, UNREACHABLE, OUT_OF_WORKSPACE, NO_EFFECT, NOT_GRASPABLE, LOW_AFFORDANCE}
)
#: Codes about the plan's stated goal.
GOAL_CODES = frozenset({GOAL_SYNTAX, GOAL_UNKNOWN_OBJECT, GOAL_NOT_ACHIEVED})

#: Longest message/hint we emit: values from the model are echoed truncated, never whole.
MAX_TEXT = 300


@dataclass(frozen=True)
class Reason:
    """One machine-readable cause of a rejection.

    ``path`` is a JSON pointer into the normalised plan ``{"steps": [...]}`` (empty for the
    whole output), so the planner can point at the exact step and field.
    """

    code: str
    path: str = ""
    message: str = ""
    hint: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Reason:
        return cls(
            code=str(d["code"]),
            path=str(d.get("path", "")),
            message=str(d.get("message", "")),
            hint=str(d.get("hint", "")),
        )

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.code}{where}: {self.message}{hint}"


def clip(value: object, n: int = 60) -> str:
    """``repr``-like short text of a model-supplied value, safe to echo in a message."""
    s = value if isinstance(value, str) else repr(value)
    if len(s) > n:
        s = s[: n - 3] + "..."
    return repr(s) if isinstance(value, str) else s


def did_you_mean(value: object, valid: Iterable[str], what: str = "valid") -> str:
    """A hint naming the closest valid names (difflib), then all of them."""
    valid = list(valid)
    close: list[str] = []
    if isinstance(value, str):
        close = difflib.get_close_matches(value[:80].lower(), valid, n=2, cutoff=0.55)
    listing = f"{what}: {', '.join(valid)}" if valid else f"no {what} names"
    if close:
        return f"did you mean {' or '.join(repr(c) for c in close)}? {listing}"
    return listing


def pointer(parts: Iterable[object]) -> str:
    """JSON pointer (RFC 6901) of a path of keys and indices."""
    out = ""
    for p in parts:
        out += "/" + str(p).replace("~", "~0").replace("/", "~1")
    return out


def bounded(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."
