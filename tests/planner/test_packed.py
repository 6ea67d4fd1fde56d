"""The packed planner model in the cache (planner.embedded.packed): written atomically with a
manifest, its data aligned for the int kernels, checked before use (made for this base and
adapter, the weights' sha256 and header), and read back to the same forward pass."""

from __future__ import annotations

import json
import struct

import pytest
import torch

from planner.embedded import llama, packed

CFG = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "vocab_size": 96,
    "max_position_embeddings": 128,
    "rms_norm_eps": 1e-5,
    "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
}
BASE, ADAPTER = "b" * 64, "a" * 64


def _state(cfg: llama.LlamaConfig) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    h, i, d = cfg.hidden, cfg.intermediate, cfg.head_dim
    s = {"lm_head.weight": torch.randn(cfg.vocab, h), "model.norm.weight": torch.rand(h) + 0.5}
    shapes = {
        "self_attn.q_proj": (cfg.heads * d, h),
        "self_attn.k_proj": (cfg.kv_heads * d, h),
        "self_attn.v_proj": (cfg.kv_heads * d, h),
        "self_attn.o_proj": (h, cfg.heads * d),
        "mlp.gate_proj": (i, h),
        "mlp.up_proj": (i, h),
        "mlp.down_proj": (h, i),
    }
    for n in range(cfg.layers):
        pre = f"model.layers.{n}."
        s[pre + "input_layernorm.weight"] = torch.rand(h) + 0.5
        s[pre + "post_attention_layernorm.weight"] = torch.rand(h) + 0.5
        for name, shape in shapes.items():
            s[f"{pre}{name}.weight"] = torch.randn(shape) * 0.1
    return s


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLBRIDGE_CACHE", str(tmp_path / "cache"))
    tok = tmp_path / "tokenizer.json"
    tok.write_text("{}")
    return tmp_path, tok


@pytest.mark.parametrize("kind", ["int4", "int8", "fp32"])
def test_written_model_reads_back_aligned_and_equal(cache, kind):
    _, tok = cache
    cfg = llama.LlamaConfig.from_hf(CFG)
    tensors = packed.pack(_state(cfg), cfg, kind)
    dest = packed.folder(BASE, ADAPTER, kind)
    packed.write(dest, tensors, CFG, tok, {"base_sha256": BASE, "adapter_sha256": ADAPTER})
    assert packed.check(dest, BASE, ADAPTER) is None
    with (dest / packed.WEIGHTS).open("rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
    assert (8 + n) % packed.ALIGN == 0
    net, got_cfg, manifest = packed.load(dest)
    assert got_cfg == cfg and manifest["weights_sha256"]
    for b in net.blocks:
        for lin in (b.qkv, b.o, b.gate_up, b.down):
            for t in vars(lin).values():
                if isinstance(t, torch.Tensor) and t.dtype in (torch.int8, torch.uint8):
                    assert t.data_ptr() % packed.ALIGN == 0
    ids = [3, 50, 7, 9]
    want = packed.build(cfg, tensors)
    a = net.head(net.forward(ids, llama.Cache(cfg, 8)))
    b = want.head(want.forward(ids, llama.Cache(cfg, 8)))
    assert torch.equal(a, b)


def _written(cache):
    _, tok = cache
    cfg = llama.LlamaConfig.from_hf(CFG)
    dest = packed.folder(BASE, ADAPTER, "int8")
    meta = {"base_sha256": BASE, "adapter_sha256": ADAPTER}
    packed.write(dest, packed.pack(_state(cfg), cfg, "int8"), CFG, tok, meta)
    return dest


def test_changed_weights_are_found(cache):
    dest = _written(cache)
    p = dest / packed.WEIGHTS
    data = bytearray(p.read_bytes())
    data[-100] ^= 0x01
    p.write_bytes(bytes(data))
    assert "sha256" in (packed.check(dest, BASE, ADAPTER) or "")


def test_truncated_weights_are_found(cache):
    dest = _written(cache)
    p = dest / packed.WEIGHTS
    p.write_bytes(p.read_bytes()[:-64])
    assert "bytes" in (packed.check(dest, BASE, ADAPTER) or "")


@pytest.mark.parametrize(
    "field, value", [("adapter_sha256", "c" * 64), ("base_sha256", "d" * 64), ("version", 0)]
)
def test_a_model_for_something_else_is_not_used(cache, field, value):
    dest = _written(cache)
    m = json.loads((dest / packed.MANIFEST).read_text())
    m[field] = value
    (dest / packed.MANIFEST).write_text(json.dumps(m))
    assert field in (packed.check(dest, BASE, ADAPTER) or "")


def test_a_missing_manifest_is_found(cache):
    dest = _written(cache)
    (dest / packed.MANIFEST).unlink()
    assert "unreadable" in (packed.check(dest, BASE, ADAPTER) or "")


def test_adapter_pairs_are_checked(tmp_path):
    from types import SimpleNamespace

    from safetensors.torch import save_file

    from planner.errors import PlannerError

    cfg = llama.LlamaConfig.from_hf(CFG)
    state = _state(cfg)
    spec = SimpleNamespace(rank=2, alpha=4.0)
    key = "model.layers.1.mlp.down_proj"
    good = {f"{key}.lora_A": torch.randn(2, 128), f"{key}.lora_B": torch.randn(64, 2)}
    p = tmp_path / "a.safetensors"
    save_file(good, str(p))
    pairs = packed.lora_pairs(state, p, spec)
    a, b = pairs[key]
    assert torch.allclose(b, good[f"{key}.lora_B"] * 2.0)
    merged = dict(state)
    packed.merge_lora(merged, pairs)
    assert torch.allclose(merged[f"{key}.weight"], state[f"{key}.weight"] + b @ a)
    for bad, match in (
        ({f"{key}.lora_A": torch.randn(2, 64), f"{key}.lora_B": torch.randn(64, 2)}, "fit"),
        ({f"{key}.lora_A": torch.full((2, 128), float("nan")), f"{key}.lora_B": b}, "finite"),
        ({"model.layers.9.mlp.up_proj.lora_A": torch.randn(2, 64)}, "fit"),
    ):
        save_file(bad, str(p))
        with pytest.raises(PlannerError, match=match):
            packed.lora_pairs(state, p, spec)


class _CharTokens:
    """A stand-in tokenizer for the vocabulary cache: one id per character, and a count of
    the calls, so a test can see whether the cache was read or the texts tokenized."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        self.calls += 1
        return {"input_ids": [ord(c) % 96 for c in text]}


def test_the_command_vocabulary_is_remembered_and_checked(tmp_path):
    from planner.embedded import model as em

    tok = _CharTokens()
    first = em.cached_vocabulary(tok, tmp_path, 96)
    assert first == em.command_vocabulary(_CharTokens()) and tok.calls > 0
    tok.calls = 0
    assert em.cached_vocabulary(tok, tmp_path, 96) == first and tok.calls == 0
    path = tmp_path / em.VOCABULARY_FILE
    data = json.loads(path.read_text())
    for bad in ({**data, "ids": [*data["ids"], 500]}, {**data, "texts_sha256": "0" * 64}):
        path.write_text(json.dumps(bad))
        assert em.cached_vocabulary(tok, tmp_path, 96) == first and tok.calls > 0
        tok.calls = 0
    assert json.loads(path.read_text()) == data


@pytest.mark.slow
def test_the_real_packed_model_is_written_once_and_rebuilt_when_damaged(tmp_path, monkeypatch):
    """With the real base: the first load writes the packed model, the next reads it, and
    one changed byte in its weights is found (sha256) and the model written again."""
    import os
    import shutil

    from planner.embedded import base
    from planner.embedded import model as em

    if not em.available():
        pytest.skip("embedded model not installed (make install)")
    sha = base.file_sha256(base.find_gguf())
    real = base.cache_root() / f"smollm2-135m-{sha[:16]}"
    if not (real / "model.safetensors").is_file():
        pytest.skip("no converted base model cached")
    root = tmp_path / "cache"
    try:
        shutil.copytree(real, root / real.name, copy_function=os.link)
    except OSError:
        pytest.skip("the cache is on another file system (no hard links)")
    monkeypatch.setenv("SKILLBRIDGE_CACHE", str(root))
    first = em.EmbeddedModel()
    assert first.converted
    text = first.rewrite("scene: red green blue\nput the red block in the green bin").text
    again = em.EmbeddedModel()
    assert not again.converted
    weights = packed.folder(sha, first.manifest.adapter_sha256, "int4") / packed.WEIGHTS
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x10
    weights.unlink()
    weights.write_bytes(bytes(data))
    rebuilt = em.EmbeddedModel()
    assert rebuilt.converted
    assert rebuilt.rewrite("scene: red green blue\nput the red block in the green bin").text == text
