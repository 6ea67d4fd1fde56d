"""What the instruction forbids, enforced on every plan whatever wrote it.

Why in the bridge: "put the blocks in the bin but don't touch the red one" is only safe if
the red block is never moved, and no planner is trusted to remember that. The
understanding layer reads prohibitions into a :class:`Constraints` record; the bridge
rejects any plan (the rules', a model's, a fallback's) that picks or pushes a forbidden
cube, or puts anything where it was told not to, with the reason code ``forbidden``, and
the regeneration prompt names what is off limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bridge import reasons as R
from bridge.reasons import Reason
from skills.registry import REGISTRY


@dataclass(frozen=True)
class Constraints:
    """Prohibitions of one instruction. ``pairs`` are (cube, target) moves that are
    forbidden while the cube and the target are each allowed on their own ("don't put the
    red block in the green bin"); ``ANY`` as the cube forbids the target for every cube."""

    objects: frozenset[str] = field(default_factory=frozenset)
    targets: frozenset[str] = field(default_factory=frozenset)
    pairs: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    #: skills that must not run ("don't open the drawer", "leave the light alone")
    skills: frozenset[str] = field(default_factory=frozenset)

    ANY = "*"

    def __bool__(self) -> bool:
        return bool(self.objects or self.targets or self.pairs or self.skills)

    def to_dict(self) -> dict[str, Any]:
        return {
            "objects": sorted(self.objects),
            "targets": sorted(self.targets),
            "pairs": sorted([list(p) for p in self.pairs]),
            "skills": sorted(self.skills),
        }

    def describe(self) -> str:
        """In words: "do not move the red block; put nothing in the green bin"."""
        parts = [f"do not move {_said(o)}" for o in sorted(self.objects)]
        parts += [f"put nothing on or in {_said(t)}" for t in sorted(self.targets)]
        parts += [
            f"do not put {_said(o)} on or in {_said(t)}"
            if o != self.ANY
            else f"put nothing on or in {_said(t)}"
            for o, t in sorted(self.pairs)
        ]
        parts += [f"do not {s.replace('_', ' the ')}" for s in sorted(self.skills)]
        return "; ".join(parts)

    def check(self, steps: list[dict[str, Any]]) -> list[Reason]:
        """The reasons ``steps`` break these constraints (empty when they keep them)."""
        out: list[Reason] = []
        held: str | None = None
        for i, s in enumerate(steps):
            skill, obj = s.get("skill"), s.get("object")
            target = s.get("target")
            where = f"steps[{i}]"
            if skill in self.skills:
                out.append(self._reason(where, f"the instruction forbids {skill}"))
            # what the step does with the cubes, as its skill declares it
            sk = REGISTRY.get(skill) if isinstance(skill, str) else None
            if sk is None:
                continue
            if sk.grasps:
                held = obj if isinstance(obj, str) else None
            moved = obj if sk.moves_object else held if sk.releases else None
            if sk.moves_object and obj in self.objects:
                out.append(self._reason(where, f"the instruction forbids moving {obj}"))
            if sk.puts_at_target and isinstance(target, str):
                if target in self.targets:
                    out.append(self._reason(where, f"the instruction forbids using {target}"))
                elif (moved, target) in self.pairs or (self.ANY, target) in self.pairs:
                    out.append(
                        self._reason(
                            where, f"the instruction forbids putting {moved} on or in {target}"
                        )
                    )
            if sk.releases:
                held = None
        return out

    def _reason(self, path: str, message: str) -> Reason:  # noqa: D401
        return Reason(R.FORBIDDEN, path, R.bounded(message), f"keep to: {self.describe()}")


def _said(name: str) -> str:
    """ "red_block" -> "the red block", "table_left" -> "the table left"."""
    return "the " + name.replace("_", " ")
