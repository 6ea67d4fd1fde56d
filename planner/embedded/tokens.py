"""The base model's tokenizer, read by the ``tokenizers`` library from its ``tokenizer.json``.

Why not transformers' tokenizer: importing transformers costs seconds; the fast tokenizer it
wraps is this same file and library. Called as transformers' tokenizer is called
(``tok(text, add_special_tokens=False)["input_ids"]``, ``tok.decode(ids, ...)``), so the code
that builds the command vocabulary reads either; ``tests/planner/test_forward.py`` checks both
give the same ids and text.
"""

from __future__ import annotations

from pathlib import Path


class Tokens:
    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(path))

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
        return {"input_ids": self.encode(text, add_special_tokens)}

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=add_special_tokens).ids)

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [list(e.ids) for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return str(self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens))
