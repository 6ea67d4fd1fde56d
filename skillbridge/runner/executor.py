"""The skill executor a run drives, built (and its policies checked) before anything runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbridge.errors import UserError
from skillbridge.runner.records import EXIT_INPUT

if TYPE_CHECKING:
    from skills.runtime import SkillExecutor


def control_dt() -> float:
    from sim import scene

    return scene.CONTROL_DT


def make_executor(source: str) -> SkillExecutor:
    """A :class:`skills.runtime.SkillExecutor` for ``source``; for ``pretrained`` every
    registered skill's policy is loaded (and checked) now, so a missing or tampered policy
    is a one-line error before anything runs."""
    from skills.runtime import SOURCES, SkillExecutor

    if source not in SOURCES:
        raise UserError(
            f"policy source must be one of {', '.join(SOURCES)}, not {source!r}", EXIT_INPUT
        )
    ex = SkillExecutor(source=source)
    if source == "pretrained":
        from skills.policy import PolicyError
        from skills.registry import names

        for name in names():
            try:
                ex.policy(name)
            except (PolicyError, OSError, ValueError) as e:
                raise UserError(
                    str(e).splitlines()[0]
                    if str(e)
                    else f"cannot load the pretrained policy of {name!r}",
                    EXIT_INPUT,
                ) from None
    return ex
