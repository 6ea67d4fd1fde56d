"""Getting one JSON value out of whatever a planner returned.

Chat models wrap JSON in code fences, surround it with prose, or return it as a tool
call; tests and rules planners hand over Python objects. This module turns all of those
into exactly one JSON value or a reason why not. It is deliberately strict where guessing
would be unsafe: two *different* plans in one reply, or a key given twice, are
``ambiguous_output`` rather than "take the last one". A value that fails to parse is never
mined for a plan inside it: a cut-off reply is ``truncated_output`` (its first steps, or a
refusal's steps without the refusal, must not run as if they were the plan), and a reply
with more values than the scan reads is ``too_many_values``, not its first plan.
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
#: At most this many top-level JSON values are read from prose; a reply with more is
#: rejected (``too_many_values``), since the plan meant may be among the unread ones.
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


@dataclass
class _Scan:
    """What a prose scan found: complete top-level values, and why the rest cannot count.

    ``open_at`` is where a value starts that the text never closes (a truncated reply);
    ``broken_at`` where a closed but unparseable value that looks like a plan starts;
    ``over_limit`` says the scan stopped at ``MAX_SCAN_ATTEMPTS`` values without reading
    the rest, so the rest might hold the real plan.
    """

    values: list[tuple[Any, list[str]]] = field(default_factory=list)
    open_at: int | None = None
    broken_at: int | None = None
    broken_error: str = ""
    over_limit: bool = False


_CLOSE = {"{": "}", "[": "]"}
_PLAN_KEY = re.compile(r"""["']?\b(?:steps|skill|refuse)\b["']?\s*:""")


def _segment_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes ``text[start]``, or None if the text ends
    first. JSON strings are skipped (a raw newline ends one, as no JSON string holds one);
    a mismatched closer ends the segment there, which is as far as it can mean anything."""
    stack: list[str] = []
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] not in '"\n':
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                return None
        elif ch in _CLOSE:
            stack.append(_CLOSE[ch])
        elif ch in "}]":
            if ch != stack.pop():
                return i + 1
            if not stack:
                return i + 1
        i += 1
    return None


def _scan(text: str) -> _Scan:
    """Top-level JSON objects/arrays embedded in prose, in order.

    A value that fails to parse is skipped *whole*: nothing inside it is ever a candidate,
    because an inner object of a broken reply is a fragment (a truncated plan's first
    steps, a refusal's steps without the refusal), never the plan the model meant.
    """
    out = _Scan()
    i, n = 0, len(text)
    while i < n:
        j = min((k for k in (text.find("{", i), text.find("[", i)) if k >= 0), default=-1)
        if j < 0:
            break
        if len(out.values) >= MAX_SCAN_ATTEMPTS:
            out.over_limit = True
            break
        end = _segment_end(text, j)
        if end is None:
            out.open_at = j
            break
        # decode the segment alone: an error's line/column count then costs the segment,
        # not the whole text again for every "{" in prose
        dup = _Dup()
        try:
            value, used = _decoder(dup).raw_decode(text[j:end])
            if used != end - j:
                raise ValueError("the value ends before its closing bracket")
        except (ValueError, RecursionError) as e:
            if out.broken_at is None and _PLAN_KEY.search(text, j, end):
                out.broken_at = j
                out.broken_error = str(e) if isinstance(e, ValueError) else "nesting too deep"
            i = end
            continue
        out.values.append((value, dup.keys))
        i = end
    return out


def _unreadable(text: str, scan: _Scan) -> Extracted | None:
    """The rejection for a reply whose JSON is cut off, broken or too many to read."""
    if scan.open_at is not None:
        return _reject(
            text,
            R.TRUNCATED_OUTPUT,
            f"the JSON value starting at character {scan.open_at} is never closed; "
            "the output looks cut off, and no part of it is used",
            "reply with the whole plan as one complete JSON object (a shorter answer fits)",
        )
    if scan.broken_at is not None:
        return _reject(
            text,
            R.PARSE_ERROR,
            R.bounded(
                f"the JSON value starting at character {scan.broken_at} does not parse "
                f"({scan.broken_error}); no part of it is used"
            ),
            _parse_hint(text, None),
        )
    if scan.over_limit:
        return _reject(
            text,
            R.TOO_MANY_VALUES,
            f"more than {MAX_SCAN_ATTEMPTS} JSON values in the output; the rest was not read, "
            "so which one is the plan is unknown",
            'reply with exactly one JSON object {"steps": [...]} and nothing else',
        )
    return None


def _reject(text: str, code: str, message: str, hint: str) -> Extracted:
    return Extracted(text, reasons=[Reason(code, "", message, hint)])


def _parse_hint(text: str, err: Exception | None) -> str:
    hints = ['reply with one JSON object like {"steps": [{"skill": "home"}]}']
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
    """One JSON value from model text: the whole text, else code fences, else prose; but
    nothing at all when any value in it is cut off, or broken while looking like a plan."""
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
    scan = _scan(s)
    bad = _unreadable(s, scan)
    if bad is not None:
        return Extracted(text, reasons=bad.reasons)
    fenced: list[tuple[Any, list[str]]] = []
    for block in _FENCE.findall(s):
        try:
            fenced.append(_loads(block.strip()))
        except (ValueError, RecursionError) as e:
            first_error = e
    if fenced:
        return _choose(text, fenced, "the code blocks")
    if scan.values:
        return _choose(text, scan.values, "the output")
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
