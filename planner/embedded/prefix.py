"""Keys and values of prompt segments computed before, reused instead of computed again.

Why: a prompt is the chat frame, one line of scene and the instruction; the scene line is the
same for every instruction asked in one scene (a list's items, a refusal asked again, every
entry of a benchmark set), and a regeneration asks the very same prompt again with sampling.
The prompt is always computed in the same segments (the frame and the scene line, then the
rest, see :meth:`planner.embedded.model.EmbeddedModel.rewrite`), each from the positions
before it, so a segment's keys and values depend only on its tokens and those before it:
taking them from here gives exactly what computing them would, whatever was asked before.
An entry holds one segment's positions and the final state of its last token, keyed by every
token up to its end; the least recently used entries go first once the bound is reached.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import torch

from planner.embedded.llama import Cache, Llama


@dataclass(frozen=True)
class Segment:
    """One computed segment: its positions' keys and values ``[layers, kv_heads, n, d]``
    and the final (normed) state of its last token."""

    k: torch.Tensor
    v: torch.Tensor
    hidden: torch.Tensor

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.k, self.v, self.hidden))


class PrefixCache:
    """Segments by the tokens up to their end, bounded in bytes (a prompt's segment of a
    dozen tokens is about half a megabyte for the 135M model)."""

    def __init__(self, max_bytes: int = 32 << 20) -> None:
        self.max_bytes = int(max_bytes)
        self._entries: OrderedDict[tuple[int, ...], Segment] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[int, ...]) -> Segment | None:
        seg = self._entries.get(key)
        if seg is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return seg

    def put(self, key: tuple[int, ...], seg: Segment) -> None:
        if key in self._entries or seg.nbytes > self.max_bytes:
            return
        self._entries[key] = seg
        self._bytes += seg.nbytes
        while self._bytes > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.nbytes

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0


def run_prompt(
    net: Llama, segments: list[list[int]], cache: Cache, memo: PrefixCache | None
) -> torch.Tensor:
    """The final state of the prompt's last token, its positions written into ``cache``
    (which must be empty): each segment is taken from ``memo`` when it holds it, else
    computed from the positions before it and remembered there."""
    if cache.length != 0 or not segments or not all(segments):
        raise ValueError("a prompt is one or more non-empty segments into an empty cache")
    key: tuple[int, ...] = ()
    hidden = None
    for ids in segments:
        key += tuple(ids)
        start, end = cache.length, cache.length + len(ids)
        seg = memo.get(key) if memo is not None else None
        if seg is not None and end <= cache.size:
            cache.k[:, :, start:end] = seg.k
            cache.v[:, :, start:end] = seg.v
            cache.length = end
            hidden = seg.hidden
            continue
        hidden = net.forward(ids, cache)
        if memo is not None:
            memo.put(
                key,
                Segment(
                    cache.k[:, :, start:end].clone(),
                    cache.v[:, :, start:end].clone(),
                    hidden.clone(),
                ),
            )
    assert hidden is not None
    return hidden
