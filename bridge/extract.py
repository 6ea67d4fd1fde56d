"""Getting one JSON value out of whatever a planner returned.

Chat models wrap JSON in code fences, surround it with prose, or return it as a tool
call; tests and rules planners hand over Python objects. This module turns all of those
into exactly one JSON value or a reason why not. It is deliberately strict where guessing
would be unsafe: two *different* plans in one reply, or a key given twice, are
``ambiguous_output`` rather than "take the last one".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from bridge import reasons as R
from bridge.reasons import Reason

#: Raw outputs longer than this are not parsed at all (a plan is a few hundred bytes).
MAX_RAW_CHARS = 64_000
#: At most this many start positions are tried when scanning prose for JSON.
MAX_SCAN_ATTEMPTS = 64

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+.-]*[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_ENVELOPE_KEYS = ("steps", "skill", "refuse")


@dataclass
class Extracted:
    """The JSON value found (``value``; ``found`` tells None from JSON null) and the text."""

    text: str
    value: Any = None
    found: bool = False
    reasons: list[Reason] = field(default_factory=list)


class _Dup:
    """Collects keys seen twice in one JSON object while parsing."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def hook(self, pairs: list[tuple[str, Any]]) -> dict:
        d: dict = {}
        for k, v in pairs:
            if k in d:
                self.keys.append(k)
            d[k] = v
        return d


def _decoder(dup: _Dup) -> json.JSONDecoder:
    return json.JSONDecoder(object_pairs_hook=dup.hook)


def _loads(text: str) -> tuple[Any, list[str]]:
    dup = _Dup()
    dec = _decoder(dup)
    value, end = dec.raw_decode(text)
    if text[end:].strip():
        raise json.JSONDecodeError("Extra data", text, end)
    return value, dup.keys


def _plan_like(v: Any) -> bool:
    if isinstance(v, dict):
        return any(k in v for k in _ENVELOPE_KEYS)
    if isinstance(v, list):
        return bool(v) and all(isinstance(x, dict) and "skill" in x for x in v)
    return False


def _scan(text: str) -> list[tuple[Any, list[str]]]:
    """Outermost JSON objects/arrays embedded in prose, in order."""
    found: list[tuple[Any, list[str]]] = []
    i, attempts = 0, 0
    n = len(text)
    while i < n and attempts < MAX_SCAN_ATTEMPTS:
        j = min((k for k in (text.find("{", i), text.find("[", i)) if k >= 0), default=-1)
        if j < 0:
            break
        attempts += 1
        dup = _Dup()
        try:
            value, end = _decoder(dup).raw_decode(text, j)
        except (ValueError, RecursionError):
            i = j + 1
            continue
        if isinstance(value, (dict, list)):
            found.append((value, dup.keys))
        i = end
    return found


def _parse_hint(text: str, err: Exception) -> str:
    hints = ["reply with one JSON object like {\"steps\": [{\"skill\": \"home\"}]}"]
    if "'" in text and '"' not in text:
        hints.append("JSON needs double quotes")
    if re.search(r",\s*[}\]]", text):
        hints.append("remove trailing commas")
    if text.count("{") > text.count("}") or text.count("[") > text.count("]"):
        hints.append("the output looks truncated")
    if "//" in text or "/*" in text:
        hints.append("JSON has no comments")
    return "; ".join(hints)


def _choose(text: str, cands: list[tuple[Any, list[str]]], where: str) -> Extracted:
    plans = [c for c in cands if _plan_like(c[0])]
    pool = plans or [c for c in cands if isinstance(c[0], dict)] or cands
    distinct: list[tuple[Any, list[str]]] = []
    for c in pool:
        if all(c[0] != d[0] for d in distinct):
            distinct.append(c)
    if len(distinct) == 1:
        return _found(text, *distinct[0])
    return Extracted(
        text,
        reasons=[
            Reason(
                R.AMBIGUOUS_OUTPUT,
                "",
                f"{len(distinct)} different JSON values in {where}; which one is the plan?",
                'reply with exactly one JSON object {"steps": [...]} holding all the steps',
            )
        ],
    )


def _found(text: str, value: Any, dups: list[str]) -> Extracted:
    if dups:
        keys = ", ".join(sorted(set(dups)))
        return Extracted(
            text,
            reasons=[
                Reason(
                    R.AMBIGUOUS_OUTPUT,
                    "",
                    R.bounded(f"key(s) given twice in one object: {keys}"),
                    "give each key once per object",
                )
            ],
        )
    return Extracted(text, value=value, found=True)


def from_text(text: str) -> Extracted:
    """One JSON value from model text: the whole text, else code fences, else prose."""
    if len(text) > MAX_RAW_CHARS:
        return Extracted(
            text[:MAX_RAW_CHARS],
            reasons=[
                Reason(
                    R.INPUT_TOO_LARGE,
                    "",
                    f"output has {len(text)} characters; the limit is {MAX_RAW_CHARS}",
                    "reply with the JSON plan only",
                )
            ],
        )
    s = text.strip()
    if not s:
        return Extracted(
            text,
            reasons=[Reason(R.EMPTY_OUTPUT, "", "the output is empty", _parse_hint("", None))],
        )
    try:
        return _found(text, *_loads(s))
    except (ValueError, RecursionError) as e:
        first_error: Exception = e
    fenced: list[tuple[Any, list[str]]] = []
    for block in _FENCE.findall(s):
        try:
            fenced.append(_loads(block.strip()))
        except (ValueError, RecursionError) as e:
            first_error = e
    if fenced:
        return _choose(text, fenced, "the code blocks")
    cands = _scan(s)
    if cands:
        return _choose(text, cands, "the output")
    msg = str(first_error) if isinstance(first_error, ValueError) else "nesting too deep"
    return Extracted(
        text,
        reasons=[
            Reason(
                R.PARSE_ERROR,
                "",
                R.bounded(f"no JSON plan found: {msg}"),
                _parse_hint(s, first_error),
            )
        ],
    )


def _message_parts(msg: Any) -> tuple[str, list[dict]]:
    """Text content and tool-call arguments of a langchain message (duck-typed)."""
    content = getattr(msg, "content", "")
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        content = "".join(parts)
    elif not isinstance(content, str):
        content = str(content)
    calls = getattr(msg, "tool_calls", None) or []
    args = [c.get("args") for c in calls if isinstance(c, dict)]
    return content, [a for a in args if a is not None]


def _dump(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)[:MAX_RAW_CHARS]
    return text[:MAX_RAW_CHARS]


def extract(raw: Any) -> Extracted:
    """One JSON value from a string, bytes, langchain message, dict, list or pydantic model.

    A message's tool-call arguments win over its text (structured output arrives there);
    several differing tool calls are ambiguous. Anything else is a ``parse_error``.
    """
    if raw is None:
        return Extracted("", reasons=[Reason(R.EMPTY_OUTPUT, "", "the output is None", "")])
    if isinstance(raw, str):
        return from_text(raw)
    if isinstance(raw, (bytes, bytearray)):
        try:
            return from_text(bytes(raw[: MAX_RAW_CHARS * 4 + 1]).decode("utf-8"))
        except UnicodeDecodeError as e:
            return Extracted(
                "", reasons=[Reason(R.PARSE_ERROR, "", f"not UTF-8 text: {e.reason}", "")]
            )
    if isinstance(raw, (dict, list)):
        return Extracted(_dump(raw), value=raw, found=True)
    if hasattr(raw, "model_dump") and not hasattr(raw, "content"):
        try:
            value = raw.model_dump(mode="json", exclude_none=True)
        except Exception as e:  # a foreign model that cannot dump itself
            return Extracted(
                "", reasons=[Reason(R.PARSE_ERROR, "", R.bounded(f"cannot dump model: {e}"), "")]
            )
        return Extracted(_dump(value), value=value, found=True)
    if hasattr(raw, "content"):
        text, args = _message_parts(raw)
        if args:
            distinct = [a for i, a in enumerate(args) if a not in args[:i]]
            if len(distinct) > 1:
                return Extracted(
                    _dump(args),
                    reasons=[
                        Reason(
                            R.AMBIGUOUS_OUTPUT,
                            "",
                            f"{len(distinct)} different tool calls in one reply",
                            "make one tool call holding the whole plan",
                        )
                    ],
                )
            return Extracted(_dump(distinct[0]), value=distinct[0], found=True)
        return from_text(text)
    return Extracted(
        "",
        reasons=[
            Reason(
                R.PARSE_ERROR,
                "",
                f"unsupported output type {type(raw).__name__}",
                "pass a string, a langchain message, a dict or a list",
            )
        ],
    )
