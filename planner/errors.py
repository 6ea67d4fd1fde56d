"""Errors of the planner package.

Every error carries a one-line, actionable message (which pip extra to install, which
environment variable to set), so the CLI can print it without a traceback.
"""

from __future__ import annotations


class PlannerError(Exception):
    """Something the planner cannot do as configured (bad spec, missing extra or key)."""


class BackendUnavailable(PlannerError):
    """A backend's optional package or credential is missing."""


class BackendCallError(PlannerError):
    """A model call failed for good (after retries, or with a non-transient error)."""

    def __init__(self, message: str, *, transient: bool = False, attempts: int = 1):
        super().__init__(message)
        self.transient = transient
        self.attempts = attempts
