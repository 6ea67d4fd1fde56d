"""Prompts built from data: the skill catalogue, the scene, the history, the bridge's reasons.

The wording lives in ``planner/prompts/`` (one file per message part); this module only fills
the langchain-core templates. Nothing here is specific to a provider.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
#: Executed subgoals shown to the model (the last k; older ones cost tokens and rarely help).
HISTORY_K = 4


@cache
def load_text(name: str) -> str:
    return (PROMPT_DIR / name).read_text(encoding="utf-8")


@cache
def examples() -> list[dict]:
    return json.loads(load_text("examples.json"))


@lru_cache(maxsize=1)
def plan_prompt() -> ChatPromptTemplate:
    """System + user messages; variables: catalogue, max_steps, schema_block, examples,
    world, history, task."""
    return ChatPromptTemplate.from_messages(
        [("system", load_text("system.md")), ("human", load_text("user.md"))]
    )


@lru_cache(maxsize=1)
def feedback_prompt() -> PromptTemplate:
    return PromptTemplate.from_template(load_text("feedback.md"))


def format_catalogue(catalogue: Iterable[dict]) -> str:
    lines = []
    for entry in catalogue:
        params = entry.get("parameters", {})
        sig = ", ".join(params)
        lines.append(f"- {entry['skill']}({sig}): {entry.get('description', '')}")
        for name, p in params.items():
            lines.append(f"    {name}: {p.get('description', '')} [{p.get('domain')}]")
        pre = entry.get("preconditions") or []
        if pre:
            lines.append("    requires: " + "; ".join(pre))
    return "\n".join(lines)


def format_examples(items: Iterable[dict] | None = None) -> str:
    items = examples() if items is None else items
    return "\n".join(
        f"Instruction: {e['task']}\nAnswer: {json.dumps(e['plan'], separators=(', ', ': '))}"
        for e in items
    )


def format_history(history: list[dict] | None, k: int = HISTORY_K) -> str:
    if not history:
        return "(nothing yet)"
    shown = history[-k:]
    lines = []
    if len(history) > k:
        lines.append(f"({len(history) - k} earlier steps omitted)")
    for h in shown:
        step = h.get("step", h)
        ok = h.get("success")
        outcome = "succeeded" if ok else ("FAILED" if ok is not None else "?")
        detail = f" ({h['detail']})" if h.get("detail") else ""
        lines.append(f"- {json.dumps(step, separators=(',', ':'))} {outcome}{detail}")
    return "\n".join(lines)


def format_reasons(reasons: Iterable[Any]) -> str:
    out = []
    for r in reasons:
        code = getattr(r, "code", None) or (r.get("code") if isinstance(r, dict) else str(r))
        path = getattr(r, "path", "") if not isinstance(r, dict) else r.get("path", "")
        msg = getattr(r, "message", "") if not isinstance(r, dict) else r.get("message", "")
        hint = getattr(r, "hint", "") if not isinstance(r, dict) else r.get("hint", "")
        where = f" at {path}" if path else ""
        tail = f" Hint: {hint}" if hint else ""
        out.append(f"- {code}{where}: {msg}.{tail}".replace("..", "."))
    return "\n".join(out) or "- (no reasons given)"


def build_messages(
    *,
    task: str,
    world_text: str,
    catalogue: list[dict],
    schema: dict | None,
    max_steps: int,
    history: list[dict] | None = None,
    feedback: list[Any] | None = None,
    previous: str | None = None,
    history_k: int = HISTORY_K,
) -> list[BaseMessage]:
    """The full message list for one planner call.

    ``schema`` is spelled out in the prompt only when given (text and JSON-mode backends);
    with native structured output the provider receives it out of band, which saves tokens.
    """
    schema_block = ""
    if schema is not None:
        schema_block = load_text("schema_block.md").format(
            schema=json.dumps(schema, separators=(",", ":"))
        )
    msgs = plan_prompt().format_messages(
        catalogue=format_catalogue(catalogue),
        max_steps=max_steps,
        schema_block=schema_block,
        examples=format_examples(),
        world=world_text,
        history=format_history(history, history_k),
        task=task,
    )
    if feedback:
        from langchain_core.messages import HumanMessage

        msgs.append(AIMessage(content=(previous or "(empty answer)")[:2000]))
        msgs.append(
            HumanMessage(content=feedback_prompt().format(reasons=format_reasons(feedback)))
        )
    return msgs


def messages_as_dicts(msgs: list[BaseMessage]) -> list[dict]:
    """Prompt as plain data for the trace."""
    return [{"role": m.type, "content": m.content} for m in msgs]
