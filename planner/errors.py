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


class ProviderUnreachable(BackendCallError):
    """Nothing answers at the provider's address (connection refused, unknown host, connect
    timeout). Why its own type: asking again a moment later cannot help, so a proposer
    that met it stops calling for a while, and the CLI tells the user the model was not
    used instead of printing one ``planner_error`` per attempt."""

    def __init__(self, message: str, *, where: str = "", attempts: int = 1):
        super().__init__(message, transient=True, attempts=attempts)
        self.where = where


class PromptTooLong(PlannerError):
    """A prompt longer than the model reads: refused before it can hold the model for
    minutes (the HTTP server answers it with a 400)."""

    def __init__(self, tokens: int, limit: int, *, at_least: bool = False):
        size = f"over {tokens}" if at_least else str(tokens)
        super().__init__(f"the prompt is {size} tokens; this model reads at most {limit}")
        self.tokens = tokens
        self.limit = limit


class GenerationTimeout(PlannerError):
    """A generation ran past its wall-clock bound (or the process is shutting down)."""
