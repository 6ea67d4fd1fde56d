"""Chat-model backends chosen by one spec string: ``PROVIDER:MODEL[?key=value&...]``.

=========================  ===========================================================
``openai:MODEL``           any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server,
                           LM Studio, Ollama's /v1); base URL from ``--base-url`` or
                           ``OPENAI_BASE_URL``; extra ``skillbridge[openai]``
``ollama:MODEL``           a local Ollama server (``OLLAMA_HOST``); extra ``skillbridge[ollama]``
``anthropic:MODEL``        Anthropic's API (``ANTHROPIC_API_KEY``); extra ``skillbridge[anthropic]``
``local:PATH.gguf``        llama-cpp-python, fully offline, JSON-Schema-constrained decoding;
                           extra ``skillbridge[local]``
``rules``                  the deterministic rules planner, no model at all
=========================  ===========================================================

Options after ``?``: ``mode`` (``json_schema``, ``json_mode``, ``tool``, ``text``),
``timeout`` (seconds per call), ``retries`` (transient-error retries per call),
``temperature``.

Where no spec is given, ``SKILLBRIDGE_LLM`` is read, then a config file (``SKILLBRIDGE_CONFIG``,
``./skillbridge.yaml``, ``~/.config/skillbridge/config.yaml``: ``llm: SPEC`` and optionally
``base_url:``, ``timeout:``), else ``rules``.

Every backend is a langchain-core ``BaseChatModel``. Provider packages are optional imports:
a missing one is a one-line :class:`BackendUnavailable` naming the pip extra; a missing key
names the environment variable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from planner.errors import BackendUnavailable, PlannerError

PROVIDERS = ("openai", "ollama", "anthropic", "local", "rules")
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
    options: dict = field(default_factory=dict)

    @property
    def output_mode(self) -> str:
        return self.mode or DEFAULT_MODE.get(self.provider, "text")

    def __str__(self) -> str:
        return self.provider if self.provider == "rules" else f"{self.provider}:{self.model}"


def parse_spec(spec: str, *, base_url: str | None = None) -> BackendSpec:
    """Parse ``PROVIDER:MODEL[?k=v&...]``; raise :class:`PlannerError` with a usage line."""
    if spec is None or not str(spec).strip():
        raise PlannerError("empty --llm spec; expected PROVIDER:MODEL, e.g. openai:gpt-4o-mini")
    s = str(spec).strip()
    query = ""
    if "?" in s:
        s, query = s.split("?", 1)
    provider, _, model = s.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if provider not in PROVIDERS:
        raise PlannerError(
            f"unknown provider {provider!r} in --llm {spec!r}; expected one of "
            f"{', '.join(PROVIDERS)} (as PROVIDER:MODEL)"
        )
    if provider != "rules" and not model:
        example = "local:/path/model.gguf" if provider == "local" else f"{provider}:MODEL"
        raise PlannerError(f"--llm {spec!r} names no model; write {example}")
    opts = dict(parse_qsl(query, keep_blank_values=True))
    kw: dict[str, Any] = {}
    try:
        if "mode" in opts:
            mode = opts.pop("mode")
            if mode not in MODES:
                raise PlannerError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
            kw["mode"] = mode
        if "timeout" in opts:
            kw["timeout_s"] = float(opts.pop("timeout"))
            if not kw["timeout_s"] > 0:
                raise ValueError("timeout must be positive")
        if "retries" in opts:
            kw["retries"] = int(opts.pop("retries"))
            if kw["retries"] < 0:
                raise ValueError("retries must be >= 0")
        if "temperature" in opts:
            kw["temperature"] = float(opts.pop("temperature"))
    except ValueError as e:
        raise PlannerError(f"bad option in --llm {spec!r}: {e}") from None
    if "base_url" in opts:
        base_url = base_url or opts.pop("base_url")
    return BackendSpec(provider=provider, model=model, base_url=base_url, options=opts, **kw)


def _config_paths() -> list[Path]:
    paths = []
    if os.environ.get(ENV_CONFIG):
        paths.append(Path(os.environ[ENV_CONFIG]))
    paths += [Path("skillbridge.yaml"), Path.home() / ".config" / "skillbridge" / "config.yaml"]
    return paths


def load_config() -> dict:
    """The ``llm`` section of the first config file found (YAML, ``safe_load``)."""
    import yaml

    for p in _config_paths():
        if p.is_file():
            try:
                data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as e:
                raise PlannerError(f"config file {p} is not valid YAML: {e}".splitlines()[0])
            if not isinstance(data, dict):
                raise PlannerError(f"config file {p} must be a mapping")
            llm = data.get("llm", data.get("planner"))
            if isinstance(llm, str):
                return {"spec": llm, "_path": str(p)}
            if isinstance(llm, dict):
                return {**llm, "_path": str(p)}
            return {"_path": str(p)}
    return {}


def resolve_spec(cli_spec: str | None = None, *, base_url: str | None = None) -> BackendSpec:
    """CLI flag, else ``SKILLBRIDGE_LLM``, else the config file, else ``rules``."""
    if cli_spec:
        return parse_spec(cli_spec, base_url=base_url)
    env = os.environ.get(ENV_SPEC, "").strip()
    if env:
        return parse_spec(env, base_url=base_url)
    cfg = load_config()
    if cfg.get("spec"):
        spec = parse_spec(str(cfg["spec"]), base_url=base_url or cfg.get("base_url"))
        if "timeout" in cfg:
            spec = BackendSpec(**{**spec.__dict__, "timeout_s": float(cfg["timeout"])})
        return spec
    return BackendSpec(provider="rules")


# ----------------------------------------------------------------------------- factories
def _need(module: str, extra: str, provider: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise BackendUnavailable(
            f"the {provider} backend needs the {module.replace('_', '-')} package: "
            f"pip install 'skillbridge[{extra}]'"
        ) from None


def make_chat_model(spec: BackendSpec):
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
    if spec.provider == "local":
        from planner.local import LlamaCppChatModel

        return LlamaCppChatModel.from_path(spec.model, temperature=spec.temperature)
    raise PlannerError(f"unknown provider {spec.provider!r}")
