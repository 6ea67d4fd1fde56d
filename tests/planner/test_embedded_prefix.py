"""The decode step and the prompt-prefix cache (planner.embedded.llama, .prefix): a decode
step of 4-bit weights with an adapter computes what one pass over the whole sequence does
and exactly what the general forward pass computes for one position, and a prompt whose
segments come from the cache gives exactly the keys, values and final state computing them
gives, whatever was asked before."""

from __future__ import annotations

import pytest
import torch

from planner.embedded import llama, packed, prefix
from tests.planner.test_forward import _four_bit_base, _tiny_hf

IDS = [5, 17, 3, 88, 41, 41, 9, 60, 2, 33, 71]


def _int4_with_adapter(seed: int = 4) -> tuple[llama.Llama, llama.LlamaConfig]:
    hf, cfg = _tiny_hf(seed)
    state = _four_bit_base(hf)
    torch.manual_seed(seed)
    lora = {}
    for i in range(cfg.layers):
        for part in ("self_attn.q_proj", "self_attn.o_proj", "mlp.up_proj", "mlp.down_proj"):
            w = state[f"model.layers.{i}.{part}.weight"]
            lora[f"model.layers.{i}.{part}"] = (
                torch.randn(4, w.shape[1]) * 0.3,
                torch.randn(w.shape[0], 4) * 0.3,
            )
    return packed.build(cfg, packed.pack(state, cfg, "int4", lora)), cfg


def test_int4_decode_steps_equal_one_pass():
    net, cfg = _int4_with_adapter()
    whole = [net.head(net.forward(IDS[: i + 1], llama.Cache(cfg, 32))) for i in range(len(IDS))]
    cache = llama.Cache(cfg, 32)
    net.forward(IDS[:2], cache)
    for i, t in enumerate(IDS[2:], start=2):
        got = net.head(net.forward([t], cache))
        # bf16 activations into the 4-bit kernel: equal up to their rounding
        assert torch.allclose(got, whole[i], atol=2e-2 * float(whole[i].abs().max())), i
        assert int(got.argmax()) == int(whole[i].argmax()), i
    assert cache.length == len(IDS)


def test_the_decode_step_is_the_general_pass_of_one_position():
    """The decode path (:meth:`Llama._step`) does the arithmetic of the general one
    (:meth:`Llama._prefill`) in the same order: the same numbers, so it changes no answer."""
    net, cfg = _int4_with_adapter(6)
    fast, slow = llama.Cache(cfg, 32), llama.Cache(cfg, 32)
    net.forward(IDS[:4], fast)
    net.forward(IDS[:4], slow)
    for t in IDS[4:]:
        assert torch.equal(net.forward([t], fast), net._prefill([t], slow))
    assert fast.length == slow.length == len(IDS)
    assert torch.equal(fast.k[:, :, : fast.length], slow.k[:, :, : slow.length])
    assert torch.equal(fast.v[:, :, : fast.length], slow.v[:, :, : slow.length])


def _state(net, cfg, segments, memo):
    cache = llama.Cache(cfg, 40)
    hidden = prefix.run_prompt(net, segments, cache, memo)
    n = cache.length
    return hidden, cache.k[:, :, :n].clone(), cache.v[:, :, :n].clone()


def test_a_segment_from_the_cache_is_what_computing_it_gives():
    net, cfg = _int4_with_adapter()
    head, tails = IDS[:5], [IDS[5:], [7, 8, 9, 10], [60]]
    memo = prefix.PrefixCache()
    fresh = [_state(net, cfg, [head, t], None) for t in tails]
    # asked in another order, each after others that share the head: the head comes from
    # the cache from the second on, and a repeated prompt entirely
    for t, want in list(zip(tails, fresh, strict=True))[::-1] * 2:
        got = _state(net, cfg, [head, t], memo)
        for a, b in zip(got, want, strict=True):
            assert torch.equal(a, b)
    assert memo.hits >= 2 * len(tails) + len(tails) - 1
    # and a segment never stands for another prompt's: the key is every token up to it
    other = _state(net, cfg, [[1, *head[1:]], tails[0]], memo)
    assert not torch.equal(other[0], fresh[0][0])


def test_the_cache_is_bounded_least_recently_used_first():
    net, cfg = _int4_with_adapter()
    one = _state(net, cfg, [IDS[:4]], prefix.PrefixCache())
    size = sum(t.numel() * t.element_size() for t in one)
    memo = prefix.PrefixCache(max_bytes=int(2.5 * size))
    for first in (1, 2, 3):
        _state(net, cfg, [[first, *IDS[1:4]]], memo)
    assert len(memo) == 2  # the first one went
    memo.get(tuple([2, *IDS[1:4]]))
    _state(net, cfg, [[4, *IDS[1:4]]], memo)
    assert memo.get(tuple([2, *IDS[1:4]])) is not None  # used last, so kept
    assert memo.get(tuple([3, *IDS[1:4]])) is None


def test_a_prompt_is_refused_into_a_used_cache_or_as_no_segment():
    net, cfg = _int4_with_adapter()
    cache = llama.Cache(cfg, 40)
    net.forward(IDS[:3], cache)
    with pytest.raises(ValueError):
        prefix.run_prompt(net, [IDS[3:]], cache, None)
    with pytest.raises(ValueError):
        prefix.run_prompt(net, [IDS, []], llama.Cache(cfg, 40), None)
