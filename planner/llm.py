"""The model proposer: one chat-model call per proposal, robust and accounted for.

Structured output is used where the provider has it (the plan's JSON Schema, or a forced
tool call), JSON mode otherwise, plain text last; the bridge validates the text in every
case, so nothing here parses or trusts the reply. Transient provider errors (timeouts, 429,
5xx, dropped connections) are retried with exponential backoff *inside* one proposal; they
are not regenerations, which the bridge asks for when a reply is invalid. A provider that
refuses the structured-output format (any 4xx/5xx naming it) is stepped down a mode at once
rather than retried. Regenerations sample (``REGEN_TEMPERATURE``, a new seed each), since
at temperature 0 a model repeats the answer it was just told is wrong. Tokens come from
the reply's ``usage_metadata``; latency is wall time of the whole proposal, retries included.
"""

from __future__ import annotations

import concurrent.futures
import json
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner.backends import DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, MODES, BackendSpec
from planner.errors import BackendCallError, ProviderUnreachable

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable

    from bridge.policy import PlanRequest, Proposal
    from sim.world import WorldState

TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
#: Output mode to fall back to when a provider refuses the stronger one.
DEGRADE = {"json_schema": "json_mode", "tool": "json_mode", "json_mode": "text"}
_TRANSIENT_NAMES = ("Timeout", "RateLimit", "Connection", "ServiceUnavailable", "Overloaded")


#: Seconds a proposer that found its provider unreachable answers at once with that error
#: instead of calling again (the regenerations of one plan, the next plans of a run).
UNREACHABLE_HOLD_S = 30.0
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (a non-UTF-8 byte in argv arrives as one) replaced by
    U+FFFD: tokenizers and JSON encoders refuse them, which broke the model route."""
    return _SURROGATE.sub("\ufffd", text)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen and len(seen) < 16:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def unreachable(exc: BaseException) -> str | None:
    """Why nothing answers, when ``exc`` failed to connect at all (refused, unknown host,
    connect timeout); None for errors of a server that did answer (or dropped a reply)."""
    import socket

    for e in _chain(exc):
        if isinstance(e, ConnectionRefusedError):
            return "connection refused"
        if isinstance(e, ConnectionError) and "failed to connect" in str(e).lower():
            return "cannot connect"  # the ollama client's own error, raised ``from None``
        if isinstance(e, socket.gaierror):
            return f"unknown host ({e.strerror or e})"
        name = type(e).__name__
        if name in ("ConnectTimeout", "ConnectTimeoutError"):
            return "connect timeout"
        if name == "ConnectError":
            text = str(e).lower()
            if "refused" in text:
                return "connection refused"
            if "name or service" in text or "nodename" in text or "resolve" in text:
                return "unknown host"
            return f"cannot connect ({str(e).splitlines()[0][:80] if str(e) else name})"
    return None


def model_address(model: Any) -> str:
    """Where a chat client sends its calls, for messages ("" when it does not say)."""
    for attr in ("openai_api_base", "base_url", "anthropic_api_url"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return ""


def is_transient(exc: BaseException) -> bool:
    """Whether a provider error is worth retrying (timeouts, 429, 5xx, connection drops)."""
    if isinstance(exc, (TimeoutError, concurrent.futures.TimeoutError, ConnectionError)):
        return True
    status = _status(exc)
    if status is not None:
        return status in TRANSIENT_STATUS or status >= 500
    name = type(exc).__name__
    return any(k in name for k in _TRANSIENT_NAMES)


#: Words by which an error body names the structured-output feature of a mode.
_FORMAT_WORDS = {
    "json_schema": ("response_format", "json_schema", "schema", "grammar", "format"),
    "json_mode": ("response_format", "json_object", "json mode", "json_mode", "format"),
    "tool": ("tool", "function"),
}
#: Sampling temperature of regenerations when the spec's is lower.
REGEN_TEMPERATURE = 0.7


def _status(exc: BaseException) -> int | None:
    """The HTTP status an SDK error carries (on itself or its response), if any."""
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _structured_unsupported(exc: BaseException, mode: str = "json_schema") -> bool:
    """Whether the provider refused the output format of ``mode``: a 4xx *or* 5xx (llama.cpp's
    server answers an unsupported ``json_schema`` with 500) whose body names the format, or
    a client-side error naming it. Retrying such a refusal only repeats it."""
    words = _FORMAT_WORDS.get(mode)
    if not words:
        return False
    status = _status(exc)
    if status is None and is_transient(exc):
        return False  # a timeout or dropped connection says nothing about the format
    if status is not None and (not 400 <= status <= 599 or status == 429):
        return False
    text = f"{exc} {getattr(exc, 'body', '') or ''}".lower()
    # whole words: "format" must not match "for more information" in a rate-limit body
    return any(re.search(rf"(?<![a-z]){re.escape(w)}s?(?![a-z])", text) for w in words)


def _sampling_kwargs(model: Any, temperature: float, seed: int) -> dict:
    """Per-call sampling settings in the form each client takes; {} for clients that take
    none (a scripted test model), which then simply answer as they would."""
    name = type(model).__name__
    if name == "ChatOpenAI" or getattr(model, "accepts_sampling_kwargs", False):
        return {"temperature": temperature, "seed": seed}
    if name == "ChatAnthropic":
        return {"temperature": min(temperature, 1.0)}
    if name == "ChatOllama":
        return {"options": {"temperature": temperature, "seed": seed}}
    return {}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for c in content:
            if isinstance(c, str):
                parts.append(c)
            elif isinstance(c, dict) and c.get("type") == "text":
                parts.append(str(c.get("text", "")))
        return "".join(parts)
    return "" if content is None else str(content)


@dataclass
class CallRecord:
    """One try of one proposal (a retry is a new record)."""

    ok: bool
    latency_s: float
    error: str | None = None
    transient: bool = False
    mode: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Usage:
    """Token and latency totals over many calls (per task)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    retries: int = 0
    by_source: dict = field(default_factory=dict)

    def add(
        self, source: str, tokens_in: int, tokens_out: int, latency_s: float, retries: int = 0
    ) -> None:
        self.calls += 1
        self.tokens_in += int(tokens_in)
        self.tokens_out += int(tokens_out)
        self.latency_s += float(latency_s)
        self.retries += int(retries)
        s = self.by_source.setdefault(
            source, {"calls": 0, "tokens_in": 0, "tokens_out": 0, "latency_s": 0.0}
        )
        s["calls"] += 1
        s["tokens_in"] += int(tokens_in)
        s["tokens_out"] += int(tokens_out)
        s["latency_s"] += float(latency_s)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["latency_s"] = round(self.latency_s, 4)
        return d


class LLMProposer:
    """A bridge ``Proposer`` backed by a langchain-core chat model."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        name: str = "llm",
        mode: str = "text",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = 0.5,
        backoff_max_s: float = 8.0,
        history_k: int | None = None,
        max_steps: int = 12,
        sleep: Callable[[float], None] = time.sleep,
        schema_fn: Callable[[WorldState], dict] | None = None,
        catalogue: list[dict] | None = None,
        temperature: float = 0.0,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.model = model
        self.name = name
        self.mode = mode
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self.backoff_max_s = float(backoff_max_s)
        if history_k is None:
            # imported here: the prompts pull in langchain, which only a chat model needs
            from planner.prompting import HISTORY_K

            history_k = HISTORY_K
        self.history_k = history_k
        self.max_steps = max_steps
        self._sleep = sleep
        self._schema_fn = schema_fn
        self._catalogue = catalogue
        self.temperature = float(temperature)
        self._rng = random.Random(0)  # jitter, deterministic per proposer
        self.calls: list[CallRecord] = []
        #: the last proposal's error when the provider could not be reached (None after a
        #: call that got an answer): what the CLI names when the rules planned instead
        self.failure: ProviderUnreachable | None = None
        self._down_until = 0.0

    @classmethod
    def from_spec(cls, spec: BackendSpec, **kw: Any) -> LLMProposer:
        from planner.backends import make_chat_model

        model = make_chat_model(spec)
        return cls(
            model,
            name=str(spec),
            mode=spec.output_mode,
            timeout_s=spec.timeout_s,
            retries=spec.retries,
            temperature=spec.temperature,
            **kw,
        )

    # -- pieces -------------------------------------------------------------------
    def _schema(self, world: WorldState) -> dict:
        if self._schema_fn is not None:
            return self._schema_fn(world)
        import bridge

        return bridge.plan_schema(world, self.max_steps)

    def _catalogue_data(self) -> list[dict]:
        if self._catalogue is None:
            import skills

            self._catalogue = skills.catalogue()
        return self._catalogue

    def _bound(self, mode: str, schema: dict) -> Runnable[Any, Any]:
        """The model with the provider's structured-output switch for ``mode``."""
        if mode == "json_schema":
            if type(self.model).__name__ == "ChatOllama":
                return self.model.bind(format=schema)
            return self.model.bind(
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "plan", "schema": schema, "strict": False},
                }
            )
        if mode == "json_mode":
            if type(self.model).__name__ == "ChatOllama":
                return self.model.bind(format="json")
            return self.model.bind(response_format={"type": "json_object"})
        if mode == "tool":
            tool = {
                "name": "submit_plan",
                "description": "Submit the plan (or a refusal) for the instruction.",
                "input_schema": schema,
            }
            try:
                return self.model.bind_tools([tool], tool_choice="submit_plan")
            except (NotImplementedError, TypeError, ValueError):
                return self.model
        return self.model

    def _raw(self, msg: Any) -> str:
        calls = getattr(msg, "tool_calls", None) or []
        for c in calls:
            if c.get("name") == "submit_plan":
                return json.dumps(c.get("args", {}))
        return _text_of(getattr(msg, "content", msg))

    def _sampled(self, runnable: Runnable[Any, Any], attempt: int) -> Runnable[Any, Any]:
        """``runnable`` sampling for a regeneration (attempt > 0), as configured otherwise."""
        if attempt <= 0:
            return runnable
        kw = _sampling_kwargs(self.model, max(self.temperature, REGEN_TEMPERATURE), attempt)
        return runnable.bind(**kw) if kw else runnable

    def _invoke(self, runnable: Runnable[Any, Any], messages: list[BaseMessage]) -> Any:
        """One call under a wall-clock watchdog (clients also get ``timeout`` natively).

        The call runs on a daemon thread: on a timeout or Ctrl-C the caller returns at once,
        and the process can exit without joining a call that may hang until the provider's
        own timeout (a pool's worker is joined at exit; that made Ctrl-C take 25 s).
        """
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["value"] = runnable.invoke(messages)
            except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                box["error"] = e
            finally:
                done.set()

        threading.Thread(target=work, name="skillbridge-model-call", daemon=True).start()
        if not done.wait(self.timeout_s + 1.0):
            raise TimeoutError(f"model call exceeded {self.timeout_s:.1f}s")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _transient(self, exc: BaseException) -> bool:
        """Retry-worthy, except a timeout of a model that runs one call at a time (local
        llama.cpp): the timed-out generation still holds it, so a retry only queues."""
        if isinstance(exc, TimeoutError) and getattr(self.model, "serial_calls", False):
            return False
        return is_transient(exc)

    def _backoff(self, attempt: int, exc: BaseException) -> float:
        delay = min(self.backoff_max_s, self.backoff_s * (2**attempt))
        retry_after = None
        resp = getattr(exc, "response", None)
        headers = getattr(resp, "headers", None)
        if headers is not None:
            try:
                retry_after = float(headers.get("retry-after"))
            except (TypeError, ValueError):
                retry_after = None
        if retry_after is not None:
            delay = min(self.backoff_max_s, max(delay, retry_after))
        return delay * (1.0 + 0.1 * self._rng.random())

    # -- the Proposer protocol -----------------------------------------------------
    def propose(self, request: PlanRequest) -> Proposal:
        from bridge.policy import Proposal

        if self.failure is not None and time.monotonic() < self._down_until:
            # unreachable a moment ago: asking again now only adds the connect time
            self.calls.append(CallRecord(False, 0.0, str(self.failure), True, mode=self.mode))
            raise ProviderUnreachable(
                str(self.failure), where=self.failure.where, attempts=0
            ) from self.failure
        schema = self._schema(request.world)
        hist = list(getattr(request, "history", None) or [])
        feedback = [
            r for r in (request.feedback or []) if getattr(r, "code", "") != "planner_error"
        ]
        if getattr(request, "attempt", 0) == 0 or not feedback:
            self._last_raw = None
        previous = self._last_raw
        t0 = time.monotonic()
        mode = self.mode
        records: list[CallRecord] = []
        msg = None
        messages = None
        tries = 0
        while True:
            if messages is None or mode != getattr(self, "_built_for", None):
                from planner.prompting import build_messages

                messages = build_messages(
                    task=clean_text(request.task),
                    world_text=request.world.describe(),
                    catalogue=self._catalogue_data(),
                    schema=schema if mode in ("json_mode", "text") else None,
                    max_steps=self.max_steps,
                    history=[h for h in hist if isinstance(h, dict) and "step" in h],
                    feedback=feedback,
                    previous=previous,
                    history_k=self.history_k,
                )
                self._built_for = mode
            t1 = time.monotonic()
            try:
                bound = self._sampled(self._bound(mode, schema), getattr(request, "attempt", 0))
                msg = self._invoke(bound, messages)
                records.append(CallRecord(True, time.monotonic() - t1, mode=mode))
                break
            except Exception as e:  # noqa: BLE001 - classified below, re-raised as ours
                transient = self._transient(e)
                err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
                records.append(CallRecord(False, time.monotonic() - t1, err, transient, mode=mode))
                if mode != "text" and _structured_unsupported(e, mode):
                    mode = self.mode = DEGRADE[mode]  # sticky: later calls skip the refusal
                    continue
                why = unreachable(e)
                if why is not None:  # nobody there: a retry a second later finds nobody too
                    self.calls.extend(records)
                    where = model_address(self.model)
                    self.failure = ProviderUnreachable(
                        f"{self.name} is unreachable ({why}{f' at {where}' if where else ''})",
                        where=where,
                        attempts=tries + 1,
                    )
                    self._down_until = time.monotonic() + UNREACHABLE_HOLD_S
                    raise self.failure from e
                if not transient or tries >= self.retries:
                    self.calls.extend(records)
                    raise BackendCallError(
                        f"{self.name}: {err} (after {tries + 1} tr{'y' if tries == 0 else 'ies'})",
                        transient=transient,
                        attempts=tries + 1,
                    ) from e
                self._sleep(self._backoff(tries, e))
                tries += 1
        self.calls.extend(records)
        self.failure = None
        raw = self._raw(msg)
        self._last_raw = raw
        usage = getattr(msg, "usage_metadata", None) or {}
        from planner.prompting import messages_as_dicts

        return Proposal(
            raw=raw,
            tokens_in=int(usage.get("input_tokens", 0) or 0),
            tokens_out=int(usage.get("output_tokens", 0) or 0),
            latency_s=time.monotonic() - t0,
            meta={
                "source": "model",
                "backend": self.name,
                "mode": mode,
                "retries": tries,
                "calls": [r.to_dict() for r in records],
                "prompt": messages_as_dicts(messages),
            },
        )

    _last_raw: str | None = None


@dataclass
class ModelUnused:
    """Why the model a plan was meant to come from never answered, in one line, and
    whether nothing else planned either (``fatal``: the CLI exits 2 instead of reporting
    an unexplained safe stop)."""

    text: str
    fatal: bool


def model_unused(
    attempts: list[Any], decision: str, source: str | None, model_name: str | None
) -> ModelUnused | None:
    """A notice when every attempt of the model ``model_name`` was an error (unreachable,
    failing, not loadable) and the plan came from elsewhere; None when the model was not
    asked or did answer. ``attempts`` are the negotiation's records (objects or dicts)."""
    if not model_name:
        return None

    def get(a: Any, key: str) -> Any:
        return a.get(key) if isinstance(a, dict) else getattr(a, key, None)

    mine = [a for a in attempts if get(a, "proposer") == model_name]
    if not mine or any(str(get(a, "decision")) != "error" for a in mine):
        return None
    reasons = get(mine[-1], "reasons") or []
    first = reasons[0] if reasons else None
    cause = str((get(first, "message") if first is not None else "") or "it failed")
    for prefix in ("ProviderUnreachable: ", "BackendCallError: "):
        cause = cause.removeprefix(prefix)
    if model_name not in cause:
        cause = f"the model {model_name} failed: {cause}"
    cause = " ".join(cause.split())[:300]
    if decision in ("accepted", "fallback_accepted"):
        return ModelUnused(f"{cause}; the {source or 'rules'} planner planned instead", False)
    if decision == "refused":
        return ModelUnused(f"{cause}; the {source or 'rules'} planner refused instead", False)
    return ModelUnused(f"{cause}; nothing else could plan this task", True)
