"""A tiny real base model for the tests of train-planner's run folder (resume, cache, lock,
install): a four-layer Llama from transformers with random weights and a word tokenizer, so
a run takes a second instead of loading the 135M model. What is tested (files, keys,
locking) does not depend on the weights being SmolLM2's; the real model is exercised by
tests/planner/test_train_planner.py."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

from planner.embedded.base import BaseModel

VOCAB = 512


class WordTokenizer:
    """Words and punctuation to ids by a stable hash (the tokenizer's calling convention
    the fine-tuner uses: ``tok(text, add_special_tokens=False)["input_ids"]``)."""

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        words = re.findall(r"<\|[a-z_]+\|>|\w+|[^\w\s]", text)
        return {"input_ids": [zlib.crc32(w.encode()) % VOCAB for w in words]}


def tiny_base(threads: int | None = None) -> BaseModel:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    model = LlamaForCausalLM(cfg).eval()
    return BaseModel(
        model=model,
        tokenizer=WordTokenizer(),
        gguf=Path("tiny.gguf"),
        sha256="0" * 64,
        load_s=0.0,
        converted=False,
    )
