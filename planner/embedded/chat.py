"""The embedded model as a langchain-core chat model, for code that speaks that interface
(``make_chat_model``, a chain of one's own).

Why a module of its own: importing langchain-core costs about half a second, and the
planner's own route to the model (:class:`planner.embedded.proposer.InProcessModel`) does
not go through it; only this module, imported when a chat model is asked for, pays it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

from planner.embedded.model import EmbeddedModel, get_model

if TYPE_CHECKING:
    from langchain_core.callbacks import CallbackManagerForLLMRun


class EmbeddedChatModel(BaseChatModel):
    """Chat completions from the embedded model: the last human message is the instruction,
    the reply is its command. ``temperature``, ``seed`` and ``no_refusal`` may be passed
    per call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    adapter_dir: str | None = None
    threads: int | None = None

    @property
    def _llm_type(self) -> str:
        return "skillbridge-embedded"

    def engine(self) -> EmbeddedModel:
        return get_model(Path(self.adapter_dir) if self.adapter_dir else None, self.threads)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = next((str(m.content) for m in reversed(messages) if m.type == "human"), "")
        r = self.engine().rewrite(
            text,
            temperature=float(kwargs.get("temperature", 0.0)),
            seed=int(kwargs.get("seed", 0)),
            no_refusal=bool(kwargs.get("no_refusal", False)),
        )
        msg = AIMessage(
            content=r.text,
            usage_metadata={
                "input_tokens": r.tokens_in,
                "output_tokens": r.tokens_out,
                "total_tokens": r.tokens_in + r.tokens_out,
            },
            response_metadata={"latency_s": r.latency_s, "min_prob": r.min_prob},
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])
