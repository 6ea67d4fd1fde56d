"""The embedded model as a langchain-core chat model and as a bridge ``Proposer``.

Why two steps: the model rewrites the user's words into the command language; the rules
planner grounds that command in the scene (which cubes exist, what is already done, what
"every block" covers) and writes the plan JSON, goal included; the bridge then validates the
plan like any model's. A regeneration samples (temperature 0.7, a new seed per attempt), so
it is never the same answer word for word.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

from planner import rules
from planner.embedded.model import EmbeddedModel, get_model
from planner.embedded.prompt import scene_of, user_text
from planner.rules import MAX_REFUSAL

#: Temperature of regenerations (the first answer is greedy).
REGEN_TEMPERATURE = 0.7
REFUSE_PREFIX = "refuse:"


class EmbeddedChatModel(BaseChatModel):
    """Chat completions from the embedded model: the last human message is the instruction,
    the reply is its command. ``temperature`` and ``seed`` may be passed per call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    adapter_dir: str | None = None
    threads: int | None = None

    @property
    def _llm_type(self) -> str:
        return "skillbridge-embedded"

    def engine(self) -> EmbeddedModel:
        return get_model(Path(self.adapter_dir) if self.adapter_dir else None, self.threads)

    def _generate(
        self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any
    ) -> ChatResult:
        text = next((str(m.content) for m in reversed(messages) if m.type == "human"), "")
        r = self.engine().rewrite(
            text, temperature=float(kwargs.get("temperature", 0.0)), seed=int(kwargs.get("seed", 0))
        )
        msg = AIMessage(
            content=r.text,
            usage_metadata={
                "input_tokens": r.tokens_in,
                "output_tokens": r.tokens_out,
                "total_tokens": r.tokens_in + r.tokens_out,
            },
            response_metadata={"latency_s": r.latency_s},
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


def command_to_plan(command: str, world) -> tuple[dict, dict]:
    """(plan JSON, notes) for a command: a refusal, or what the rules planner makes of it."""
    text = command.strip()
    if text.lower().startswith(REFUSE_PREFIX):
        why = text[len(REFUSE_PREFIX) :].strip() or "the request cannot be done here"
        return {"steps": [], "refuse": why[:MAX_REFUSAL]}, {"refused_by": "model"}
    r = rules.parse(text, world)
    if r.confident:
        return r.to_dict(), {"rules_notes": list(r.notes)}
    # the model wrote something the command grammar does not cover: an empty plan, which
    # the bridge rejects, so the model is asked again
    return {"steps": []}, {"rules_notes": list(r.notes), "not_a_command": True}


class EmbeddedProposer:
    """The embedded model as a ``bridge.policy.Proposer``."""

    def __init__(self, chat: EmbeddedChatModel | None = None, name: str = "embedded"):
        self.chat = chat or EmbeddedChatModel()
        self.name = name
        self._loaded = False

    def propose(self, request):
        from bridge.policy import Proposal

        load_s = None
        if isinstance(self.chat, EmbeddedChatModel) and not self._loaded:
            # loading is once per process and reported apart, not as the plan's latency
            t_load = time.monotonic()
            engine = self.chat.engine()
            load_s = engine.load_s if time.monotonic() - t_load > 0.01 else 0.0
            self._loaded = True
        t0 = time.monotonic()
        attempt = int(getattr(request, "attempt", 0) or 0)
        kw = {"temperature": REGEN_TEMPERATURE, "seed": attempt} if attempt else {}
        user = user_text(request.task, scene_of(request.world))
        msg = self.chat.invoke([HumanMessage(content=user)], **kw)
        command = str(msg.content)
        plan, notes = command_to_plan(command, request.world)
        usage = msg.usage_metadata or {}
        return Proposal(
            raw=json.dumps(plan, separators=(",", ":")),
            tokens_in=int(usage.get("input_tokens", 0)),
            tokens_out=int(usage.get("output_tokens", 0)),
            latency_s=time.monotonic() - t0,
            meta={
                "source": "model",
                "model": "embedded",
                "command": command,
                "temperature": kw.get("temperature", 0.0),
                **({"load_s": round(load_s, 3)} if load_s else {}),
                **notes,
            },
        )
