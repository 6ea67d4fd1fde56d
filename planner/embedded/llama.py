"""Our own forward pass of the base model's architecture (Llama: RMSNorm, rotary positions,
grouped-query attention, a SiLU-gated MLP, embeddings tied to the output head).

Why our own: importing transformers costs seconds before the first token on this machine,
and building its model allocates every weight again; this module is a few dozen tensor
operations over weights that stay in a memory-mapped file. transformers stays the reference:
``tests/planner/test_forward.py`` checks these logits against its model and the greedy
commands on the planner's prompts against its generation.

Why a head over a few rows: the command language uses a few hundred tokens, every other logit
is masked away, so :meth:`Llama.head` multiplies the final state by those rows only (the
masked logits, the argmax and the softmax over the allowed tokens are what the full head
would give).

A linear layer is fp32 (a plain matrix, the reference), int8 per output channel
(:class:`Int8Linear`) or 4 bits in groups of 32 (:class:`Int4Linear`): a decode step on one
CPU thread is bound by the bytes of weight it reads, and torch's weight-only int4 kernel ran
about 2.5x faster per token than its int8 one here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class LlamaConfig:
    """The shapes a forward pass needs, read from the converted model's config.json by
    :meth:`from_hf` (the base model's own are :data:`planner.embedded.base.ARCHITECTURE`)."""

    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    rope_theta: float
    eps: float
    max_positions: int

    @classmethod
    def from_hf(cls, cfg: dict) -> LlamaConfig:
        """From a transformers ``config.json`` mapping (older files keep ``rope_theta`` at the
        top level, newer ones in ``rope_parameters``)."""
        rope = cfg.get("rope_parameters") or {}
        if (cfg.get("rope_scaling") or {}) or rope.get("rope_type", "default") != "default":
            raise ValueError("rope scaling is not supported by this forward pass")
        return cls(
            hidden=int(cfg["hidden_size"]),
            intermediate=int(cfg["intermediate_size"]),
            layers=int(cfg["num_hidden_layers"]),
            heads=int(cfg["num_attention_heads"]),
            kv_heads=int(cfg["num_key_value_heads"]),
            head_dim=int(cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]),
            vocab=int(cfg["vocab_size"]),
            rope_theta=float(rope.get("rope_theta", cfg.get("rope_theta", 10000.0))),
            eps=float(cfg.get("rms_norm_eps", 1e-6)),
            max_positions=int(cfg.get("max_position_embeddings", 8192)),
        )


class Int8Linear:
    """``x @ W.T`` with W stored as int8 rows and one scale per row (symmetric, per output
    channel). The activations go in as bf16, which is what the int8 kernel is fast for; the
    result comes back as fp32 for the residual stream."""

    def __init__(self, q: torch.Tensor, scale: torch.Tensor):
        if q.dtype != torch.int8 or q.dim() != 2 or scale.shape != (q.shape[0],):
            raise ValueError("an int8 linear needs an int8 matrix and one scale per row")
        if q.data_ptr() % 64 or not q.is_contiguous():
            q = q.contiguous().clone()  # the kernel crashed on a matrix 8 bytes off alignment
        self.q = q
        self.scale = scale.to(torch.bfloat16)
        self.out_features = int(q.shape[0])

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: [n, in] (the forward pass keeps every activation two-dimensional)."""
        return torch._weight_int8pack_mm(x.to(torch.bfloat16), self.q, self.scale).float()


class Int4Linear:
    """``x @ W.T`` with W in 4 bits per weight, in groups of :data:`GROUP` along each row
    with a bf16 scale and zero per group (``torch._weight_int4pack_mm_for_cpu``, its matrix
    packed by ``torch._convert_weight_to_int4pack_for_cpu``), plus an optional low-rank term
    ``(x @ A.T) @ B.T`` in fp32 (the adapter, kept apart so the 4-bit base stays what it
    was: the shipped base is itself 4-bit in groups of 32, see :func:`quantize_groups`)."""

    def __init__(
        self,
        packed: torch.Tensor,
        scale_zero: torch.Tensor,
        lora_a: torch.Tensor | None = None,
        lora_b: torch.Tensor | None = None,
    ):
        n = int(packed.shape[0])
        if packed.dtype != torch.uint8 or packed.dim() != 2 or scale_zero.dim() != 3:
            raise ValueError("an int4 linear needs a packed uint8 matrix and group scales")
        if (lora_a is None) != (lora_b is None):
            raise ValueError("a low-rank term needs both of its factors")
        if packed.data_ptr() % 64 or not packed.is_contiguous():
            packed = packed.contiguous().clone()
        self.packed = packed
        self.scale_zero = scale_zero.to(torch.bfloat16).contiguous()
        # transposed once here, so a call is two plain products
        self.lora_at = lora_a.float().T.contiguous() if lora_a is not None else None
        self.lora_bt = lora_b.float().T.contiguous() if lora_b is not None else None
        self.out_features = n

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: [n, in] (the forward pass keeps every activation two-dimensional)."""
        y = torch._weight_int4pack_mm_for_cpu(
            x.to(torch.bfloat16), self.packed, GROUP, self.scale_zero
        ).float()
        if self.lora_at is not None and self.lora_bt is not None:
            y = torch.addmm(y, x @ self.lora_at, self.lora_bt)
        return y


class Fp32Linear:
    """``x @ W.T`` with W in fp32 (the reference the int8 layers are measured against)."""

    def __init__(self, w: torch.Tensor):
        self.w = w.float()
        self.out_features = int(w.shape[0])

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.w)


Linear = Int8Linear | Int4Linear | Fp32Linear
#: Weights per scale and zero of a 4-bit matrix (the shipped base's Q4_1 block size).
GROUP = 32


def quantize_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 per row: ``w ~= q * scale[:, None]`` with q in [-127, 127]. A row of
    zeros gets scale 1 (and zeros), never a division by zero."""
    w = w.float()
    amax = w.abs().amax(dim=1)
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    q = torch.round(w / scale[:, None]).clamp_(-127, 127).to(torch.int8)
    return q.contiguous(), scale


def quantize_groups(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Asymmetric 4 bits in groups of :data:`GROUP` along each row: per group a scale s and
    zero z (bf16) with ``w ~= (q - 8) * s + z``, q in [0, 15]; returns the matrix packed for
    the int4 kernel and the ``[K / GROUP, N, 2]`` scales and zeros.

    Why min-max: the shipped base is Q4_1 (``w = d * q + m`` per block of 32, with q from
    0 to 15 and d = (max - min) / 15, m = min), so on its weights this finds d and m again and
    the 4-bit matrix is the base as it was shipped, up to rounding d and m to bf16. The
    levels are chosen after that rounding, so each weight is the nearest one it has."""
    n, k = w.shape
    if k % GROUP:
        raise ValueError(f"a 4-bit matrix needs rows of a multiple of {GROUP} weights")
    g = w.float().reshape(n, k // GROUP, GROUP)
    lo, hi = g.amin(-1), g.amax(-1)
    s = ((hi - lo) / 15).to(torch.bfloat16).float()
    s = torch.where(s > 0, s, torch.ones_like(s))
    z = (lo + 8 * s).to(torch.bfloat16).float()
    q = torch.round((g - z[..., None]) / s[..., None] + 8).clamp_(0, 15)
    packed = torch._convert_weight_to_int4pack_for_cpu(q.reshape(n, k).to(torch.int32), 1)
    scale_zero = torch.stack((s, z), dim=-1).transpose(0, 1).contiguous().to(torch.bfloat16)
    return packed.contiguous(), scale_zero


def dequantize_groups(packed_q: torch.Tensor, scale_zero: torch.Tensor) -> torch.Tensor:
    """The fp32 matrix a 4-bit one stands for (through the kernel, on the identity)."""
    k = int(scale_zero.shape[0]) * GROUP
    eye = torch.eye(k, dtype=torch.bfloat16)
    return torch._weight_int4pack_mm_for_cpu(eye, packed_q, GROUP, scale_zero).float().T


@dataclass
class Block:
    """One decoder layer: q, k and v in one matrix, gate and up in another."""

    attn_norm: torch.Tensor
    qkv: Linear
    o: Linear
    mlp_norm: torch.Tensor
    gate_up: Linear
    down: Linear


class Cache:
    """Keys and values of the positions seen so far, preallocated for ``size`` positions
    and written in place (a decode step copies its one new key and value in, never grows a
    tensor). ``layers`` holds each layer's pair of views, made once here rather than sliced
    again at every step of every layer."""

    def __init__(self, cfg: LlamaConfig, size: int):
        shape = (cfg.layers, cfg.kv_heads, size, cfg.head_dim)
        self.k = torch.empty(shape)
        self.v = torch.empty(shape)
        self.layers = list(zip(self.k.unbind(0), self.v.unbind(0), strict=True))
        self.length = 0
        self.size = size


class Llama:
    """The forward pass over given weights (see :func:`planner.embedded.packed.load`)."""

    def __init__(
        self,
        cfg: LlamaConfig,
        embed: torch.Tensor,
        blocks: list[Block],
        norm: torch.Tensor,
    ):
        if len(blocks) != cfg.layers or embed.shape != (cfg.vocab, cfg.hidden):
            raise ValueError("the weights do not fit the configuration")
        self.cfg = cfg
        self.embed = embed
        self.blocks = blocks
        self.norm = norm
        half = cfg.head_dim // 2
        self._inv_freq = 1.0 / (
            cfg.rope_theta ** (torch.arange(0, half, dtype=torch.float32) * 2 / cfg.head_dim)
        )
        self._cos = torch.empty(0, cfg.head_dim)
        self._sin = torch.empty(0, cfg.head_dim)

    # ------------------------------------------------------------------ pieces
    def _rms(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), w, self.cfg.eps)

    def _rope_table(self, n: int) -> None:
        """cos and a signed sin per position, so that rotating is ``x * cos + roll(x) *
        sin`` (``roll`` by half a head is rotate-half without its sign)."""
        if self._cos.shape[0] >= n:
            return
        n = max(n, 2 * self._cos.shape[0], 256)
        freqs = torch.outer(torch.arange(n, dtype=torch.float32), self._inv_freq)
        self._cos = torch.cat((freqs, freqs), dim=-1).cos()
        self._sin = torch.cat((-freqs.sin(), freqs.sin()), dim=-1)

    # ------------------------------------------------------------------ forward
    def forward(self, ids: list[int], cache: Cache) -> torch.Tensor:
        """The final (normed) hidden state of the last of ``ids``, which continue the
        positions in ``cache`` (and are added to it)."""
        n, start = len(ids), cache.length
        if n < 1 or start + n > cache.size:
            raise ValueError("the positions do not fit the cache")
        if n == 1:
            return self._step(int(ids[0]), cache)
        return self._prefill(ids, cache)

    def _prefill(self, ids: list[int], cache: Cache) -> torch.Tensor:
        """:meth:`forward` of any number of new positions (the prompt)."""
        cfg = self.cfg
        n, start = len(ids), cache.length
        self._rope_table(start + n)
        cos, sin = self._cos[start : start + n], self._sin[start : start + n]
        x = self.embed[torch.tensor(ids, dtype=torch.long)].float()  # [n, hidden]
        hq, hk, d = cfg.heads, cfg.kv_heads, cfg.head_dim
        rep = hq // hk
        scale = 1.0 / math.sqrt(d)
        end = start + n
        half = d // 2
        for i, b in enumerate(self.blocks):
            qkv = b.qkv(self._rms(x, b.attn_norm))
            # q and k rotated together: [hq + hk, n, d]
            qk = qkv[:, : (hq + hk) * d].view(n, hq + hk, d).transpose(0, 1)
            qk = qk * cos + qk.roll(half, dims=-1) * sin
            q = qk[:hq]
            cache.k[i, :, start:end] = qk[hq:]
            cache.v[i, :, start:end] = qkv[:, (hq + hk) * d :].view(n, hk, d).transpose(0, 1)
            keys, values = cache.k[i, :, :end], cache.v[i, :, :end]  # [hk, end, d]
            if n == 1:
                # one new position sees every cached one: a plain product per kv head
                qg = q.view(hk, rep, d)
                att = torch.softmax((qg @ keys.transpose(1, 2)) * scale, dim=-1)
                out = (att @ values).reshape(1, hq * d)
            else:
                out = F.scaled_dot_product_attention(
                    q.view(hk, rep, n, d),
                    keys.unsqueeze(1).expand(hk, rep, end, d),
                    values.unsqueeze(1).expand(hk, rep, end, d),
                    attn_mask=_causal(n, start),
                    scale=scale,
                )
                out = out.reshape(hq, n, d).transpose(0, 1).reshape(n, hq * d)
            x = x + b.o(out)
            gu = b.gate_up(self._rms(x, b.mlp_norm))
            inter = gu.shape[-1] // 2
            x = x + b.down(F.silu(gu[:, :inter]) * gu[:, inter:])
        cache.length = end
        return self._rms(x[-1], self.norm)

    def _step(self, token: int, cache: Cache) -> torch.Tensor:
        """:meth:`forward` of one new position (a decode step), in as few tensor operations
        as the same arithmetic allows: at this model's size a step on one CPU thread spends
        about as long dispatching small operations as reading the weights, so every
        operation saved counts. The new key and value are written into the cache in
        place, the attention is one grouped-query call over the cached positions, the
        residual stream is added to in place."""
        cfg = self.cfg
        pos = cache.length
        self._rope_table(pos + 1)
        cos, sin = self._cos[pos], self._sin[pos]
        hq, hk, d = cfg.heads, cfg.kv_heads, cfg.head_dim
        nqk, half, end = (hq + hk) * d, d // 2, pos + 1
        eps, shape = cfg.eps, (cfg.hidden,)
        inter, rep = cfg.intermediate, hq // hk
        scale = 1.0 / math.sqrt(d)
        x = self.embed[token : token + 1].float().clone()  # [1, hidden], ours to add to
        for b, (kc, vc) in zip(self.blocks, cache.layers, strict=True):
            qkv = b.qkv(F.rms_norm(x, shape, b.attn_norm, eps))[0]
            qk = qkv[:nqk].view(hq + hk, d)
            # rotate-half as ``x * cos + roll(x) * sin`` (sin signed, see _rope_table), in
            # the order of operations :meth:`forward` uses: the same numbers
            qk = qk * cos + qk.roll(half, -1) * sin
            kc[:, pos] = qk[hq:]
            vc[:, pos] = qkv[nqk:].view(hk, d)
            # one new position sees every cached one: a plain product per kv head
            att = torch.softmax(
                (qk[:hq].view(hk, rep, d) @ kc[:, :end].transpose(1, 2)).mul_(scale), dim=-1
            )
            x += b.o((att @ vc[:, :end]).view(1, hq * d))
            gu = b.gate_up(F.rms_norm(x, shape, b.mlp_norm, eps))
            x += b.down(F.silu(gu[:, :inter]).mul_(gu[:, inter:]))
        cache.length = end
        return F.rms_norm(x[0], shape, self.norm, eps)

    def head(self, hidden: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Logits of ``hidden`` over the tokens ``rows`` (a precomputed ``embed[ids]``), or
        over the whole vocabulary when None."""
        return (rows if rows is not None else self.embed.float()) @ hidden


def _causal(n: int, start: int) -> torch.Tensor:
    """Which cached positions (``start + n`` in all) each of ``n`` new ones may attend to."""
    return torch.ones(n, start + n, dtype=torch.bool).tril(diagonal=start)
