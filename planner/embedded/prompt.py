"""The embedded model's prompt and answer format, shared by training and inference.

Why so short: prompt processing dominates latency on a CPU, and the model is specialised by
fine-tuning, so it needs no instructions, no schema and no few-shot block; only the chat
frame its base was instruction-tuned with, around the user's text.
"""

from __future__ import annotations

#: Bumped whenever the prompt or the command language changes; an adapter trained for
#: another version is refused at load.
FORMAT_VERSION = 1
END = "<|im_end|>"
#: Longest instruction given to the model (characters); longer text is cut at a word.
MAX_CHARS = 600
#: Longest command the model may write (tokens); four clauses and a quantifier fit.
MAX_NEW_TOKENS = 72


def clip(text: str) -> str:
    text = " ".join(str(text).split())
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS].rsplit(" ", 1)[0]


def prompt(instruction: str) -> str:
    """The text the model continues."""
    return f"<|im_start|>user\n{clip(instruction)}{END}\n<|im_start|>assistant\n"


def target(command: str) -> str:
    """What training teaches the model to write after :func:`prompt`."""
    return f"{command}{END}"
