"""What the rules planner returns, and the three ways a parse stops early."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

#: The bridge bounds refusal text; longer reasons are cut, not rejected.
MAX_REFUSAL = 200
#: Prefix of the refusal emitted when the world already satisfies the instruction; the
#: closed loop reads it as success, not as a refusal.
NOTHING_TO_DO = "nothing to do"


@dataclass
class RulesResult:
    """What the rules planner made of an instruction."""

    steps: list[dict]
    confident: bool
    confidence: float
    refuse: str | None = None
    notes: list[str] = field(default_factory=list)
    #: What the instruction asks to hold at the end (goal grammar), when every clause can
    #: be said in it (a push to an [x, y] point cannot); None otherwise.
    goal: list[str] | None = None
    #: Why a well-understood instruction cannot be done with these skills (an unsure
    #: result's reason that is about the world, not the words); None otherwise.
    infeasible: str | None = None

    def to_dict(self) -> dict:
        out: dict = {"steps": list(self.steps)}
        if self.refuse:
            out["refuse"] = self.refuse[:MAX_REFUSAL]
        elif self.goal is not None and self.confident:
            out["goal"] = list(self.goal)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))


class Refuse(Exception):
    pass


class Unsure(Exception):
    pass


class Infeasible(Unsure):
    """Understood, but no skill can do it here (a tower of three: ``place`` stacks only
    onto a cube on the table). Unsure for free text, whose parse may be wrong, so the model
    is asked; the model's own command grounded to this is refused with the reason."""
