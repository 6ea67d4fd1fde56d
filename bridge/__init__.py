"""The bridge: the only path from a planner's words to a skill's motion.

``validate`` turns raw planner output into an accepted plan of subgoal objects or
machine-readable reasons; ``plan_schema`` is the per-scene JSON Schema the planner hands to
a model; ``policy.negotiate`` regenerates, falls back and finally stops safely.
"""

from bridge import policy
from bridge.models import (
    DEFAULT_MAX_STEPS,
    SUBGOAL_MODELS,
    HomeSubgoal,
    PickSubgoal,
    PlaceSubgoal,
    Plan,
    PushSubgoal,
    Subgoal,
    subgoal_json,
)
from bridge.policy import AttemptRecord, Negotiation, PlanRequest, Proposal, Proposer, negotiate
from bridge.reasons import CODES, Reason
from bridge.schema import plan_schema
from bridge.validate import BridgeResult, validate

__all__ = [
    "AttemptRecord",
    "Negotiation",
    "PlanRequest",
    "Proposal",
    "Proposer",
    "negotiate",
    "policy",
    "CODES",
    "DEFAULT_MAX_STEPS",
    "SUBGOAL_MODELS",
    "BridgeResult",
    "HomeSubgoal",
    "PickSubgoal",
    "PlaceSubgoal",
    "Plan",
    "PushSubgoal",
    "Reason",
    "Subgoal",
    "plan_schema",
    "subgoal_json",
    "validate",
]
