"""The planner: natural-language task -> subgoal JSON, rules before models.

- :mod:`planner.rules`: deterministic parser with confidence (and refusals);
- :mod:`planner.backends`: ``PROVIDER:MODEL`` specs -> langchain-core chat models;
- :mod:`planner.llm`: the model proposer (structured output, retries, accounting);
- :mod:`planner.hybrid`: route choice and negotiation through the bridge;
- :mod:`planner.loop`: closed-loop execution with bounded replanning.

The planner never touches physics and never validates plans itself: the bridge does.
"""

from typing import Any

from planner.errors import BackendCallError, BackendUnavailable, PlannerError
from planner.rules import RulesPlanner, RulesResult, parse

__all__ = [
    "BackendCallError",
    "BackendUnavailable",
    "PlannerError",
    "RulesPlanner",
    "RulesResult",
    "parse",
    "HybridPlanner",
    "LLMProposer",
    "RulesProposer",
    "run_closed_loop",
]


def __getattr__(name: str) -> Any:  # lazy: the model side pulls in langchain and the bridge
    if name in ("HybridPlanner", "RulesProposer"):
        from planner import hybrid

        return getattr(hybrid, name)
    if name == "LLMProposer":
        from planner.llm import LLMProposer

        return LLMProposer
    if name == "run_closed_loop":
        from planner.loop import run_closed_loop

        return run_closed_loop
    raise AttributeError(name)
