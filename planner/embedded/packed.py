"""The planner model as it runs: base and adapter merged, linear layers in int8, written once
per (base file, adapter) into the cache and memory-mapped by every process after.

Why: loading the base through transformers and merging the adapter cost seconds per process
and 1.5 GB of memory; this file is read by :func:`load` without building anything (a
safetensors file is memory-mapped, so a process touches only what the forward pass reads:
the int8 matrices and the embedding rows of the tokens it sees). It is derived, never
shipped: :func:`ensure` writes it from the converted base (:mod:`planner.embedded.base`) and
the adapter, atomically, with a manifest that records what it was made from and the
sha256 of the weights, and checks both before it is used.

The layout (tensor names): ``embed`` (fp32, tied to the output head), ``norm``, and per layer
``layers.{i}.attn_norm``, ``.mlp_norm``, and for ``qkv`` (q, k and v stacked), ``o``,
``gate_up`` (gate then up) and ``down`` either ``.q`` (int8) with ``.scale`` (fp32, one per
row) or ``.weight`` (fp32).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from planner.embedded.llama import (
    GROUP,
    Block,
    Fp32Linear,
    Int4Linear,
    Int8Linear,
    Linear,
    Llama,
    LlamaConfig,
    quantize_groups,
    quantize_rows,
)
from planner.errors import PlannerError

FORMAT = "skillbridge-planner-packed"
#: Bumped whenever the layout or the quantisation changes (an older cache is rebuilt).
VERSION = 1
WEIGHTS = "weights.safetensors"
MANIFEST = "manifest.json"
TOKENIZER = "tokenizer.json"
#: The linear layers of a block, as stacked from the transformers names.
STACKS = {
    "qkv": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
    "o": ("self_attn.o_proj",),
    "gate_up": ("mlp.gate_proj", "mlp.up_proj"),
    "down": ("mlp.down_proj",),
}


#: The kinds of weights a packed model can hold (see :mod:`planner.embedded.llama`).
KINDS = ("int4", "int8", "fp32")


def pack(
    state: dict[str, torch.Tensor],
    cfg: LlamaConfig,
    kind: str,
    lora: dict[str, tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> dict[str, torch.Tensor]:
    """Our layout from a transformers Llama state dict (``model.layers.{i}...``). ``lora``
    (module name to A and scaled B) is kept beside a 4-bit matrix; an fp32 or int8 one
    must have the adapter merged into ``state`` already."""
    if kind not in KINDS:
        raise ValueError(f"no such kind of weights: {kind}")
    if lora and kind != "int4":
        raise ValueError("only a 4-bit model keeps the adapter apart")
    # tied: the saved model keeps one of the two names for the one matrix
    embed = state.get("model.embed_tokens.weight", state.get("lm_head.weight"))
    if embed is None:
        raise KeyError("model.embed_tokens.weight")
    out: dict[str, torch.Tensor] = {
        "embed": embed.float().contiguous(),
        "norm": state["model.norm.weight"].float().contiguous(),
    }
    for i in range(cfg.layers):
        pre = f"model.layers.{i}."
        out[f"layers.{i}.attn_norm"] = state[pre + "input_layernorm.weight"].float().contiguous()
        out[f"layers.{i}.mlp_norm"] = (
            state[pre + "post_attention_layernorm.weight"].float().contiguous()
        )
        for name, parts in STACKS.items():
            key = f"layers.{i}.{name}"
            w = torch.cat([state[f"{pre}{p}.weight"].float() for p in parts], dim=0)
            if kind == "int8":
                out[f"{key}.q"], out[f"{key}.scale"] = quantize_rows(w)
            elif kind == "int4":
                out[f"{key}.q4"], out[f"{key}.sz"] = quantize_groups(w)
                side = _stacked_lora([f"{pre}{p}" for p in parts], state, lora or {})
                if side is not None:
                    out[f"{key}.lora_a"], out[f"{key}.lora_b"] = side
            else:
                out[f"{key}.weight"] = w.contiguous()
    return out


def _stacked_lora(
    modules: list[str],
    state: dict[str, torch.Tensor],
    lora: dict[str, tuple[torch.Tensor, torch.Tensor]],
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """One low-rank pair for stacked matrices: the A factors one above the other, the B
    factors block-diagonal (each part's outputs see only its own rank), or None when no part
    has one."""
    if not any(m in lora for m in modules):
        return None
    rank = max(lora[m][0].shape[0] for m in modules if m in lora)
    k = state[f"{modules[0]}.weight"].shape[1]
    a_rows, b_blocks = [], []
    for m in modules:
        n = state[f"{m}.weight"].shape[0]
        a, b = lora.get(m, (torch.zeros(rank, k), torch.zeros(n, rank)))
        a_rows.append(a.float())
        b_blocks.append(b.float())
    return torch.cat(a_rows).contiguous(), torch.block_diag(*b_blocks).contiguous()


def build(cfg: LlamaConfig, t: dict[str, torch.Tensor]) -> Llama:
    """The forward pass over tensors in our layout (checked against the shapes)."""
    h, d = cfg.hidden, cfg.head_dim
    shapes = {
        "qkv": ((cfg.heads + 2 * cfg.kv_heads) * d, h),
        "o": (h, cfg.heads * d),
        "gate_up": (2 * cfg.intermediate, h),
        "down": (h, cfg.intermediate),
    }

    def linear(key: str, shape: tuple[int, int]) -> Linear:
        if f"{key}.q4" in t:
            q4, sz = t[f"{key}.q4"], t[f"{key}.sz"]
            if (
                tuple(q4.shape) != (shape[0], shape[1] // 2)
                or q4.dtype != torch.uint8
                or tuple(sz.shape) != (shape[1] // GROUP, shape[0], 2)
            ):
                raise ValueError(f"{key} does not fit the model")
            a, b = t.get(f"{key}.lora_a"), t.get(f"{key}.lora_b")
            if a is not None and b is not None:
                if a.shape[1] != shape[1] or b.shape != (shape[0], a.shape[0]):
                    raise ValueError(f"{key} does not fit the model")
            return Int4Linear(q4, sz, a, b)
        if f"{key}.q" in t:
            q, s = t[f"{key}.q"], t[f"{key}.scale"]
            if tuple(q.shape) != shape or q.dtype != torch.int8 or tuple(s.shape) != shape[:1]:
                raise ValueError(f"{key} does not fit the model")
            return Int8Linear(q, s)
        w = t[f"{key}.weight"]
        if tuple(w.shape) != shape:
            raise ValueError(f"{key} does not fit the model")
        return Fp32Linear(w)

    def vector(key: str) -> torch.Tensor:
        v = t[key]
        if tuple(v.shape) != (h,):
            raise ValueError(f"{key} does not fit the model")
        return v.float()

    blocks = [
        Block(
            attn_norm=vector(f"layers.{i}.attn_norm"),
            qkv=linear(f"layers.{i}.qkv", shapes["qkv"]),
            o=linear(f"layers.{i}.o", shapes["o"]),
            mlp_norm=vector(f"layers.{i}.mlp_norm"),
            gate_up=linear(f"layers.{i}.gate_up", shapes["gate_up"]),
            down=linear(f"layers.{i}.down", shapes["down"]),
        )
        for i in range(cfg.layers)
    ]
    return Llama(cfg, t["embed"], blocks, vector("norm"))


def folder(base_sha256: str, adapter_sha256: str, kind: str) -> Path:
    """Where the packed model of this base file and adapter lives in the cache (the 4-bit
    layout is torch's own, so its folder names the torch version that packed it)."""
    from planner.embedded.base import cache_root

    tag = f"{kind}-torch{torch.__version__.split('+')[0]}" if kind == "int4" else kind
    return cache_root() / f"planner-{base_sha256[:16]}-{adapter_sha256[:16]}-{tag}-v{VERSION}"


def read_manifest(dest: Path) -> dict:
    from sim.safeio import read_regular

    m = json.loads(read_regular(dest / MANIFEST, 64 * 1024))
    if not isinstance(m, dict):
        raise ValueError("the manifest is not a mapping")
    return m


def check(dest: Path, base_sha256: str, adapter_sha256: str) -> str | None:
    """Why the packed model in ``dest`` cannot be used for this base and adapter, or None.
    The weights' sha256 is the one the manifest recorded when they were written (hashed
    once per file version, see :func:`planner.embedded.base.file_sha256`), and their header
    describes the file exactly."""
    from planner.embedded.base import _check_weights, file_sha256
    from sim.safeio import UnsafeFile

    try:
        m = read_manifest(dest)
    except (OSError, UnsafeFile, ValueError) as e:
        return f"{MANIFEST} unreadable ({type(e).__name__})"
    want = {"format": FORMAT, "version": VERSION, "base_sha256": base_sha256}
    want["adapter_sha256"] = adapter_sha256
    for key, value in want.items():
        if m.get(key) != value:
            return f"{MANIFEST} says {key}: {str(m.get(key))[:40]!r}, not {str(value)[:40]!r}"
    if not (dest / TOKENIZER).is_file():
        return f"{TOKENIZER} is missing"
    why = _check_weights(dest / WEIGHTS)
    if why is not None:
        return why
    if file_sha256(dest / WEIGHTS) != m.get("weights_sha256"):
        return f"{WEIGHTS} does not match its manifest's sha256"
    return None


def write(
    dest: Path, tensors: dict[str, torch.Tensor], hf_config: dict, tokenizer: Path, meta: dict
) -> None:
    """Write a packed model into ``dest`` atomically (a half-written one is never seen)."""
    from planner.embedded.base import remember_sha256
    from sim.util import atomic_write_text, sha256_file

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        (tmp / WEIGHTS).write_bytes(_aligned(tensors))
        shutil.copyfile(tokenizer, tmp / TOKENIZER)
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            **meta,
            "config": hf_config,
            "weights_sha256": sha256_file(tmp / WEIGHTS),
        }
        atomic_write_text(tmp / MANIFEST, json.dumps(manifest, indent=1))
        try:
            os.replace(tmp, dest)
        except OSError:
            if check(dest, meta["base_sha256"], meta["adapter_sha256"]) is not None:
                raise  # not another process's finished copy
        else:
            # the renamed file keeps its size and mtime: the check after this need not
            # hash it again
            remember_sha256(dest / WEIGHTS, manifest["weights_sha256"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


#: Where every tensor's bytes start, relative to the file (every tensor of this layout is a
#: multiple of it long, so a data section that starts aligned keeps them all aligned).
ALIGN = 64


def _aligned(tensors: dict[str, torch.Tensor]) -> bytes:
    """The safetensors file of ``tensors`` with its data section starting at a multiple of
    :data:`ALIGN` bytes: the int8 kernel reads its matrices with aligned loads (an int8
    matrix 8 bytes off its alignment crashed it), and a memory-mapped tensor lives where the
    file puts it. The header is padded through a metadata entry (safetensors itself pads it
    to 8 bytes only)."""
    import struct

    from safetensors.torch import save

    for pad in range(ALIGN):
        data = save(tensors, metadata={"format": FORMAT, "pad": " " * pad})
        (n,) = struct.unpack("<Q", data[:8])
        if (8 + n) % ALIGN == 0:
            return data
    raise PlannerError("could not align the packed planner weights")


def load(dest: Path) -> tuple[Llama, LlamaConfig, dict]:
    """The forward pass over the memory-mapped weights in ``dest`` (checked by
    :func:`check` first), its configuration and its manifest."""
    from safetensors.torch import load_file

    m = read_manifest(dest)
    try:
        cfg = LlamaConfig.from_hf(m["config"])
        model = build(cfg, load_file(str(dest / WEIGHTS)))
    except (KeyError, TypeError, ValueError, RuntimeError, OSError) as e:
        raise PlannerError(
            f"the packed planner model in {dest} is unreadable ({type(e).__name__}); "
            "delete that folder and it is rebuilt"
        ) from None
    return model, cfg, m


def lora_pairs(
    state: dict[str, torch.Tensor], path: Path, lora: Any
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The adapter in ``path`` (``{module}.lora_A`` / ``.lora_B`` pairs) as module name to
    (A, B scaled by alpha / rank) in fp32, every pair checked against the base shapes and
    for finite values."""
    from safetensors.torch import load_file

    weights = load_file(str(path))
    scale = lora.alpha / lora.rank
    names = {k[: -len(".lora_A")] for k in weights if k.endswith(".lora_A")}
    if not names:
        raise PlannerError(f"{path}: no adapter tensors")
    pairs = {}
    for key in sorted(names):
        w = state.get(f"{key}.weight")
        a, b = weights.get(f"{key}.lora_A"), weights.get(f"{key}.lora_B")
        if (
            w is None
            or w.dim() != 2
            or a is None
            or b is None
            or a.shape != (lora.rank, w.shape[1])
            or b.shape != (w.shape[0], lora.rank)
        ):
            raise PlannerError(f"{path}: tensor {key} does not fit the base model")
        a, b = a.float(), b.float() * scale
        if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
            raise PlannerError(f"{path}: tensor {key} is not finite")
        if not torch.isfinite(b @ a).all():
            raise PlannerError(f"{path}: tensor {key} is not finite")
        pairs[key] = (a, b)
    return pairs


def merge_lora(state: dict[str, torch.Tensor], pairs: dict) -> None:
    """Fold checked adapter pairs (:func:`lora_pairs`) into the fp32 weights, in place."""
    for key, (a, b) in pairs.items():
        state[f"{key}.weight"] = state[f"{key}.weight"].float() + b @ a


DESCRIBE = {
    "int4": "linear layers in 4 bits (groups of 32, bf16 scale and zero), the adapter "
    "beside them in fp32; fp32 norms and embeddings",
    "int8": "linear layers in int8 per output channel (symmetric), the adapter merged; "
    "fp32 norms and embeddings",
    "fp32": "fp32, the adapter merged",
}


def ensure(base_sha256: str, adapter: Path, manifest: Any, kind: str = "int4") -> tuple[Path, bool]:
    """The folder of the packed model for this base file and adapter (whose weights the
    caller has checked against ``manifest``), written on first use from the converted base;
    a damaged one is moved aside and written again. Returns it and whether it was written."""
    from planner.embedded.base import _discard, ensure_converted

    if kind not in KINDS:
        raise PlannerError(f"no such kind of planner weights: {kind}")
    dest = folder(base_sha256, manifest.adapter_sha256, kind)
    if dest.exists() or dest.is_symlink():
        why = check(dest, base_sha256, manifest.adapter_sha256)
        if why is None:
            return dest, False
        _discard(dest, why)
    conv = ensure_converted()
    if conv.sha256 != base_sha256:
        raise PlannerError(f"the installed base file changed while loading ({conv.gguf})")
    from safetensors.torch import load_file

    try:
        hf_config = json.loads((conv.dest / "config.json").read_text(encoding="utf-8"))
        cfg = LlamaConfig.from_hf(hf_config)
        state = {k: v.float() for k, v in load_file(str(conv.dest / "model.safetensors")).items()}
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:
        raise PlannerError(
            f"the cached planner model in {conv.dest} is unreadable ({type(e).__name__}); "
            "delete that folder and it is rebuilt"
        ) from None
    pairs = lora_pairs(state, adapter / "adapter.safetensors", manifest.lora)
    if kind != "int4":
        merge_lora(state, pairs)
    try:
        tensors = pack(state, cfg, kind, pairs if kind == "int4" else None)
    except KeyError as e:
        raise PlannerError(f"the cached planner model in {conv.dest} lacks {e}") from None
    del state
    meta = {
        "base_sha256": base_sha256,
        "adapter_sha256": manifest.adapter_sha256,
        "weights": DESCRIBE[kind],
        "torch": torch.__version__,
    }
    write(dest, tensors, hf_config, conv.dest / TOKENIZER, meta)
    why = check(dest, base_sha256, manifest.adapter_sha256)
    if why is not None:
        raise PlannerError(f"the packed planner model in {dest} is not usable: {why}")
    return dest, True
