"""Our forward pass (planner.embedded.llama) against transformers, the reference it replaces
at run time: a small random Llama here (logits close, the cache's step-by-step decode equal
to one pass over the whole sequence, the quantised layers close to fp32), and the real base
model in the slow tests (logits close, the same greedy commands on the planner's prompts)."""

from __future__ import annotations

import pytest
import torch

from planner.embedded import llama, packed


def _tiny_hf(seed: int = 0):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=96,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=128,
        rms_norm_eps=1e-5,
        tie_word_embeddings=True,
    )
    model = transformers.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # norms away from 1, so a missing norm weight shows
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return model, llama.LlamaConfig.from_hf(cfg.to_dict())


def _ours(hf, cfg, kind="fp32", lora=None):
    state = {k: v.detach() for k, v in hf.state_dict().items()}
    return packed.build(cfg, packed.pack(state, cfg, kind, lora))


IDS = [5, 17, 3, 88, 41, 41, 9, 60, 2, 33, 71]


def _reference_logits(hf, ids):
    with torch.no_grad():
        return hf(input_ids=torch.tensor([ids])).logits[0]


def test_fp32_logits_match_transformers():
    hf, cfg = _tiny_hf()
    net = _ours(hf, cfg)
    ref = _reference_logits(hf, IDS)
    for n in (1, 4, len(IDS)):  # every prefix length: the causal mask and the rotation
        got = net.head(net.forward(IDS[:n], llama.Cache(cfg, 32)))
        assert torch.allclose(got, ref[n - 1], atol=1e-4, rtol=1e-4), n


def test_step_by_step_decode_equals_one_pass():
    hf, cfg = _tiny_hf(1)
    net = _ours(hf, cfg)
    ref = _reference_logits(hf, IDS)
    cache = llama.Cache(cfg, 32)
    net.forward(IDS[:3], cache)
    for i, t in enumerate(IDS[3:], start=3):
        got = net.head(net.forward([t], cache))
        assert torch.allclose(got, ref[i], atol=1e-4, rtol=1e-4), i
    assert cache.length == len(IDS)


def test_a_cache_too_small_is_refused():
    hf, cfg = _tiny_hf()
    net = _ours(hf, cfg)
    with pytest.raises(ValueError):
        net.forward(IDS, llama.Cache(cfg, 4))


def test_head_over_rows_is_the_full_head_restricted():
    hf, cfg = _tiny_hf()
    net = _ours(hf, cfg)
    hidden = net.forward(IDS, llama.Cache(cfg, 32))
    rows = [2, 9, 40, 95]
    full = net.head(hidden)
    part = net.head(hidden, net.embed[torch.tensor(rows)])
    assert torch.allclose(part, full[rows])


def _four_bit_base(hf) -> dict[str, torch.Tensor]:
    """The tiny model's matrices made exactly 4-bit first, as the shipped base is (Q4_1)."""
    state = {k: v.detach().clone() for k, v in hf.state_dict().items()}
    for key, w in list(state.items()):
        if w.dim() == 2 and "embed" not in key and "lm_head" not in key:
            state[key] = llama.dequantize_groups(*llama.quantize_groups(w))
    return state


@pytest.mark.parametrize("kind, bound", [("int8", 0.05), ("int4", 0.02)])
def test_quantised_logits_stay_close_to_fp32(kind, bound):
    """int8 on any weights; 4 bits on weights that are 4-bit already (the shipped base is
    Q4_1, so its 4-bit copy loses only the bf16 rounding of scales and activations)."""
    hf, cfg = _tiny_hf(2)
    state = _four_bit_base(hf) if kind == "int4" else dict(hf.state_dict())
    ref_net = packed.build(cfg, packed.pack(state, cfg, "fp32"))
    ref = ref_net.head(ref_net.forward(IDS, llama.Cache(cfg, 32)))
    net = packed.build(cfg, packed.pack(state, cfg, kind))
    got = net.head(net.forward(IDS, llama.Cache(cfg, 32)))
    err = (got - ref).abs().max() / ref.abs().max()
    assert err < bound, float(err)
    assert not torch.equal(got, ref)  # the quantised layers were really used


def test_int4_keeps_the_adapter_apart_and_equal_to_merged():
    """A 4-bit model with the adapter beside its matrices computes what the merged fp32
    model computes (up to the 4-bit base), so the adapter is not lost in quantisation."""
    hf, cfg = _tiny_hf(3)
    state = _four_bit_base(hf)
    torch.manual_seed(7)
    lora = {}
    for i in range(cfg.layers):
        for part in ("self_attn.q_proj", "self_attn.v_proj", "mlp.down_proj"):
            w = state[f"model.layers.{i}.{part}.weight"]
            lora[f"model.layers.{i}.{part}"] = (
                torch.randn(4, w.shape[1]) * 0.3,
                torch.randn(w.shape[0], 4) * 0.3,
            )
    merged = dict(state)
    packed.merge_lora(merged, lora)
    ref_net = packed.build(cfg, packed.pack(merged, cfg, "fp32"))
    ref = ref_net.head(ref_net.forward(IDS, llama.Cache(cfg, 32)))
    net = packed.build(cfg, packed.pack(state, cfg, "int4", lora))
    got = net.head(net.forward(IDS, llama.Cache(cfg, 32)))
    without = packed.build(cfg, packed.pack(state, cfg, "int4"))
    bare = without.head(without.forward(IDS, llama.Cache(cfg, 32)))
    err = float((got - ref).abs().max())
    assert err < 0.02 * float(ref.abs().max()), err
    assert float((bare - ref).abs().max()) > 5 * err  # the adapter matters here


def test_weights_that_do_not_fit_are_refused():
    hf, cfg = _tiny_hf()
    t = packed.pack({k: v.detach() for k, v in hf.state_dict().items()}, cfg, "int8")
    t["layers.1.o.q"] = t["layers.1.o.q"][:, :-1].contiguous()
    with pytest.raises(ValueError, match="layers.1.o"):
        packed.build(cfg, t)


# ----------------------------------------------------------------------------- the real base
def _real():
    from planner.embedded import model as em

    if not em.available():
        pytest.skip("embedded model not installed (make install)")
    return em


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::FutureWarning")  # transformers renames past_key_values
def test_real_model_logits_and_greedy_commands_match_transformers():
    """Our fp32 forward over the merged weights against transformers' model with the
    adapter merged the same way: logits close on a planner prompt, and the same greedy
    command (under the command vocabulary) on a sample of the planner's prompts."""
    em = _real()
    from planner.embedded import base
    from planner.embedded import prompt as fmt
    from tests.planner.forward_prompts import planner_prompts

    torch.set_num_threads(2)
    ours = em.EmbeddedModel(weights="fp32")
    ref = base.load_base(2)
    state = dict(ref.model.state_dict())
    pairs = packed.lora_pairs(state, ours.adapter_dir / "adapter.safetensors", ours.manifest.lora)
    with torch.no_grad():
        modules = dict(ref.model.named_modules())
        for key, (a, b) in pairs.items():
            modules[key].weight += b @ a
    mask = torch.full((ours.config.vocab,), float("-inf"))
    mask[ours.allowed] = 0.0
    prompts = planner_prompts()
    text = fmt.prompt(prompts[0])
    ids = ours.tok.encode(text)
    assert ids == ref.tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        want = ref.model(input_ids=torch.tensor([ids])).logits[0, -1]
        got = ours.net.head(ours.net.forward(ids, llama.Cache(ours.config, len(ids))))
        assert torch.allclose(got, want, atol=2e-3, rtol=1e-3)
        for user in prompts:
            ids = ours.tok.encode(fmt.prompt(user))
            out: list[int] = []
            past = None
            step = torch.tensor([ids])
            for _ in range(fmt.MAX_NEW_TOKENS):
                res = ref.model(input_ids=step, past_key_values=past, use_cache=True)
                past = res.past_key_values
                nxt = int(torch.argmax(res.logits[0, -1] + mask))
                if nxt == ours.end_id:
                    break
                out.append(nxt)
                step = torch.tensor([[nxt]])
            want_text = ref.tokenizer.decode(out, skip_special_tokens=True).strip()
            assert ours.rewrite(user).text == want_text, user


@pytest.mark.slow
def test_real_model_quantised_commands_match_fp32():
    """The 4-bit and int8 models write the fp32 model's greedy command on the planner's
    prompts (the accuracy of the sets is measured by scripts/bench_planner.py)."""
    em = _real()
    from tests.planner.forward_prompts import planner_prompts

    torch.set_num_threads(2)
    ref = em.EmbeddedModel(weights="fp32")
    prompts = planner_prompts()
    want = [ref.rewrite(p).text for p in prompts]
    for kind in ("int4", "int8"):
        got = [em.EmbeddedModel(weights=kind).rewrite(p).text for p in prompts]
        same = sum(a == b for a, b in zip(got, want, strict=True))
        assert same >= len(prompts) - 1, (
            kind,
            [(p, a, b) for p, a, b in zip(prompts, got, want, strict=True) if a != b],
        )


def test_tokenizer_matches_transformers():
    em = _real()
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from planner import corpus
    from planner.embedded import base
    from planner.embedded.tokens import Tokens

    dest = base.ensure_converted().dest
    ref = AutoTokenizer.from_pretrained(str(dest))
    ours = Tokens(dest / "tokenizer.json")
    texts = corpus.command_texts()[:300] + [
        "<|im_start|>user\nscene: red green; holding blue\nput it down<|im_end|>\n",
        "déposez le cube rouge 🙂 dans la boîte",
    ]
    for text in texts:
        ids = ours(text)["input_ids"]
        assert ids == ref(text, add_special_tokens=False)["input_ids"], text
        assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=True), text
    assert em.command_vocabulary(ours) == em.command_vocabulary(ref)
