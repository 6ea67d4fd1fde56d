"""LoRA fine-tuning of the embedded planner model on the generated corpus, on CPU.

Why only the top layers: on two CPU cores a full backward pass through all 30 layers of the
135M model runs at about 200 tokens/s, which buys too few examples in an hour. The adapter
sits on the top ``layers`` decoder layers instead; the frozen bottom of the network is run
once per example (no gradients) and its output cached, so every epoch after that costs only
the top layers' forward and backward. Held-out accuracy is measured with teacher forcing:
when the arg-max token is right at every answer position, greedy decoding writes exactly
that answer, so the exact-match rate needs one batched forward pass, not a decode loop.

Checkpoints (adapter, optimiser state, step) are safetensors plus JSON in the run folder (no
pickle); ``resume`` continues from the last one, and a damaged one is one :class:`PlannerError`
naming the file, never a traceback. The cached activations are keyed on the corpus they were
computed from (a hash of the encoded examples and the frozen stack), so a run with another
profile, size or seed in the same folder recomputes them instead of training on the wrong
sentences; a damaged cache is simply recomputed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from planner import corpus
from planner.embedded import prompt as fmt
from planner.embedded.base import BASE_NAME, load_base
from planner.errors import PlannerError
from sim.util import atomic_write_text, sha256_file

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class TuneConfig:
    """Hyperparameters of one fine-tuning run (saved in the run folder and the manifest)."""

    seed: int = 0
    corpus_size: int = 5000
    held_out: float = 0.04
    layers: int = 10
    rank: int = 16
    alpha: float = 32.0
    lr: float = 1.5e-3
    batch: int = 16
    epochs: float = 2.0
    eval_every: int = 50
    threads: int = 2
    max_tokens: int = 160
    #: corpus profile (planner.corpus.PROFILES)
    profile: str = "base"
    #: an adapter.safetensors to start from (a second stage), or None
    init: str | None = None


@dataclass
class Progress:
    step: int = 0
    total: int = 0
    loss: float = float("nan")
    held_out: float | None = None
    history: list[dict] = field(default_factory=list)


ProgressFn = Callable[[Progress, str], None]
#: (input ids, labels) per sample, as :func:`encode` writes them
Encoded = list[tuple[list[int], list[int]]]


# ----------------------------------------------------------------------------- data
def encode(tok: Any, samples: list[dict], max_tokens: int) -> Encoded:
    """(input ids, labels) per sample; the prompt's labels are masked with -100."""
    out = []
    for s in samples:
        user = fmt.user_text(s["instruction"], s["scene"]) if "scene" in s else s["instruction"]
        p = tok(fmt.prompt(user), add_special_tokens=False)["input_ids"]
        t = tok(fmt.target(s["command"]), add_special_tokens=False)["input_ids"]
        ids = (p + t)[:max_tokens]
        labels = ([-100] * len(p) + t)[:max_tokens]
        out.append((ids, labels))
    return out


def _pad(rows: list[list[int]], value: int) -> torch.Tensor:
    n = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (n - len(r)) for r in rows], dtype=torch.long)


# ----------------------------------------------------------------------------- model
class TopStack:
    """The base model split at decoder layer ``k``: ``bottom`` runs frozen and cached, the
    top ``layers`` carry LoRA adapters and train. Right padding with causal attention means
    no real token ever attends to a pad, so no attention mask is needed."""

    def __init__(self, model: Any, layers: int, rank: int, alpha: float, seed: int) -> None:
        torch.manual_seed(seed)
        self.model = model
        inner = model.model
        n = len(inner.layers)
        self.k = max(0, n - layers)
        self.lora: dict[str, tuple[torch.nn.Parameter, torch.nn.Parameter]] = {}
        self.scale = alpha / rank
        for i in range(self.k, n):
            layer = inner.layers[i]
            for name, mod in layer.named_modules():
                short = name.rsplit(".", 1)[-1]
                if short in TARGETS and isinstance(mod, torch.nn.Linear):
                    a = torch.nn.Parameter(
                        torch.randn(rank, mod.in_features) / math.sqrt(mod.in_features)
                    )
                    b = torch.nn.Parameter(torch.zeros(mod.out_features, rank))
                    key = f"model.layers.{i}.{name}"
                    self.lora[key] = (a, b)
                    # an instance-level override of this Linear alone, by design
                    mod.forward = self._lora_forward(mod, a, b)  # type: ignore[method-assign,assignment]
        for p in model.parameters():
            p.requires_grad_(False)

    def _lora_forward(
        self, mod: torch.nn.Linear, a: torch.nn.Parameter, b: torch.nn.Parameter
    ) -> Callable[[torch.Tensor], torch.Tensor]:
        base = torch.nn.functional.linear
        scale = self.scale

        def forward(x: torch.Tensor) -> torch.Tensor:
            return base(x, mod.weight, mod.bias) + (x @ a.t() @ b.t()) * scale

        return forward

    def parameters(self) -> list[torch.nn.Parameter]:
        return [p for ab in self.lora.values() for p in ab]

    def state(self) -> dict[str, torch.Tensor]:
        out = {}
        for key, (a, b) in self.lora.items():
            out[f"{key}.lora_A"] = a.detach().clone().contiguous()
            out[f"{key}.lora_B"] = b.detach().clone().contiguous()
        return out

    def load_state(self, state: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for key, (a, b) in self.lora.items():
                a.copy_(state[f"{key}.lora_A"])
                b.copy_(state[f"{key}.lora_B"])

    def _run(self, h: torch.Tensor, layers: Iterable[Any]) -> torch.Tensor:
        inner = self.model.model
        pos = torch.arange(h.shape[1]).unsqueeze(0).expand(h.shape[0], -1)
        pe = inner.rotary_emb(h, pos)
        for layer in layers:
            h = layer(h, attention_mask=None, position_ids=pos, position_embeddings=pe)
            if isinstance(h, tuple):
                h = h[0]
        return h

    @torch.no_grad()
    def bottom(self, ids: torch.Tensor) -> torch.Tensor:
        """Hidden states entering layer ``k`` (what the cache holds)."""
        inner = self.model.model
        return self._run(inner.embed_tokens(ids), inner.layers[: self.k])

    def top(self, h: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits, targets) at the answer positions only, from cached hidden states: the
        vocabulary projection is a fifth of the model's arithmetic, and the prompt's
        positions need none."""
        inner = self.model.model
        h = inner.norm(self._run(h, inner.layers[self.k :]))
        h, tgt = h[:, :-1], labels[:, 1:]
        mask = tgt != -100
        return self.model.lm_head(h[mask]), tgt[mask]


def _loss_and_hits(
    stack: TopStack, h: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean answer-token loss, and per-row "every answer token is the arg-max"."""
    logits, tgt = stack.top(h, labels)
    loss = torch.nn.functional.cross_entropy(logits.float(), tgt)
    right = (logits.argmax(-1) == tgt).float()
    rows = (labels[:, 1:] != -100).sum(dim=1).tolist()
    hits = torch.tensor([bool(c.all()) for c in torch.split(right, rows)] if rows else [])
    return loss, hits


# ----------------------------------------------------------------------------- run
class Tuner:
    """One resumable fine-tuning run in ``run_dir``."""

    def __init__(self, cfg: TuneConfig, run_dir: Path, progress: ProgressFn | None = None) -> None:
        self.cfg = cfg
        self.dir = Path(run_dir)
        self.say = progress or (lambda p, msg: None)

    # -- cache ----------------------------------------------------------------------
    def _cache(self, stack: TopStack, enc: Encoded, name: str, base_sha: str) -> list[torch.Tensor]:
        """The frozen bottom's output per example, from the cache when it was computed from
        these very examples (same token ids, same split point, same base file)."""
        path = self.dir / f"cache-{name}.safetensors"
        key = corpus_key(enc, stack.k, base_sha)
        rows = _read_cache(path, key, len(enc))
        if rows is not None:
            return rows
        order = sorted(range(len(enc)), key=lambda i: len(enc[i][0]))
        hs: dict[int, torch.Tensor] = {}
        for j in range(0, len(order), 32):
            idx = order[j : j + 32]
            ids = _pad([enc[i][0] for i in idx], 0)
            h = stack.bottom(ids)
            for r, i in enumerate(idx):
                hs[i] = h[r, : len(enc[i][0])].to(torch.bfloat16).clone()
            self.say(Progress(step=j, total=len(order)), f"caching {name}")
        self.say(Progress(step=len(order), total=len(order)), f"caching {name}")
        rows = [hs[i] for i in range(len(enc))]
        tmp = path.with_suffix(".tmp")
        save_file({str(i): h for i, h in enumerate(rows)}, str(tmp), metadata={"corpus": key})
        os.replace(tmp, path)
        return rows

    def _batch(
        self, enc: Encoded, hs: list[torch.Tensor], idx: list[int]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        n = max(len(enc[i][0]) for i in idx)
        h = torch.zeros(len(idx), n, hs[idx[0]].shape[-1])
        for r, i in enumerate(idx):
            h[r, : hs[i].shape[0]] = hs[i].float()
        labels = _pad([enc[i][1] for i in idx], -100)
        return h, labels

    @torch.no_grad()
    def evaluate(self, stack: TopStack, enc: Encoded, hs: list[torch.Tensor]) -> float:
        order = sorted(range(len(enc)), key=lambda i: len(enc[i][0]))
        hits = 0
        for j in range(0, len(order), 32):
            idx = order[j : j + 32]
            h, labels = self._batch(enc, hs, idx)
            _, ok = _loss_and_hits(stack, h, labels)
            hits += int(ok.sum())
        return hits / max(1, len(enc))

    # -- train ----------------------------------------------------------------------
    def run(self, *, resume: bool = False) -> dict:
        cfg = self.cfg
        self.dir.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(cfg.threads)
        atomic_write_text(self.dir / "config.json", json.dumps(asdict(cfg), indent=2))
        base = load_base(cfg.threads)
        samples = corpus.generate(cfg.corpus_size, cfg.seed, cfg.profile)
        train, held = corpus.split(samples, cfg.held_out)
        stack = TopStack(base.model, cfg.layers, cfg.rank, cfg.alpha, cfg.seed)
        if cfg.init:
            _load_adapter(stack, Path(cfg.init))
        enc_t = encode(base.tokenizer, train, cfg.max_tokens)
        enc_h = encode(base.tokenizer, held, cfg.max_tokens)
        hs_t = self._cache(stack, enc_t, "train", base.sha256)
        hs_h = self._cache(stack, enc_h, "held", base.sha256)
        params = stack.parameters()
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
        steps_per_epoch = math.ceil(len(enc_t) / cfg.batch)
        total = max(1, int(steps_per_epoch * cfg.epochs))
        prog = Progress(total=total)
        if resume:
            prog.step, prog.history = self._restore(stack, opt, total)
        warm = min(30, total // 10 + 1)

        def lr_at(s: int) -> float:
            if s < warm:
                return cfg.lr * (s + 1) / warm
            return cfg.lr * 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm)))

        t0 = time.monotonic()
        while prog.step < total:
            epoch, within = divmod(prog.step, steps_per_epoch)
            order = list(range(len(enc_t)))
            random.Random(cfg.seed * 1000 + epoch).shuffle(order)
            # similar lengths in a batch waste less padding; shuffle the batches themselves
            chunks = [order[i : i + cfg.batch * 8] for i in range(0, len(order), cfg.batch * 8)]
            batches = []
            for c in chunks:
                c = sorted(c, key=lambda i: len(enc_t[i][0]))
                batches += [c[i : i + cfg.batch] for i in range(0, len(c), cfg.batch)]
            random.Random(cfg.seed * 1000 + epoch + 1).shuffle(batches)
            for idx in batches[within:]:
                if prog.step >= total:
                    break
                for g in opt.param_groups:
                    g["lr"] = lr_at(prog.step)
                h, labels = self._batch(enc_t, hs_t, idx)
                loss, _ = _loss_and_hits(stack, h, labels)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                prog.step += 1
                prog.loss = float(loss.detach())
                if prog.step % cfg.eval_every == 0 or prog.step == total:
                    prog.held_out = self.evaluate(stack, enc_h, hs_h)
                    prog.history.append(
                        {
                            "step": prog.step,
                            "loss": round(prog.loss, 4),
                            "held_out": round(prog.held_out, 4),
                            "wall_s": round(time.monotonic() - t0, 1),
                        }
                    )
                    self._checkpoint(stack, opt, prog)
                self.say(prog, "training")
        acc = self.evaluate(stack, enc_h, hs_h)
        return {
            "adapter": stack.state(),
            "held_out_exact": acc,
            "held_out_n": len(enc_h),
            "train_n": len(enc_t),
            "steps": prog.step,
            "history": prog.history,
            "k": stack.k,
            "base_sha256": base.sha256,
            "wall_s": time.monotonic() - t0,
        }

    def _checkpoint(self, stack: TopStack, opt: torch.optim.Optimizer, prog: Progress) -> None:
        ckpt = self.dir / "checkpoint"
        tmp = self.dir / "checkpoint.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        save_file(stack.state(), str(tmp / "adapter.safetensors"))
        tensors, groups = _optim_flat(opt)
        save_file(tensors, str(tmp / "optim.safetensors"))
        state = {"step": prog.step, "history": prog.history, "param_groups": groups}
        (tmp / "state.json").write_text(json.dumps(state))
        old = self.dir / "checkpoint.old"
        if ckpt.exists():
            os.replace(ckpt, old)
        os.replace(tmp, ckpt)
        if old.exists():
            shutil.rmtree(old, ignore_errors=True)

    def _restore(
        self, stack: TopStack, opt: torch.optim.Optimizer, total: int
    ) -> tuple[int, list[dict]]:
        """(step, history) of the last checkpoint, its adapter and optimiser state loaded;
        (0, []) when the folder holds none. A crash between the two renames of
        :meth:`_checkpoint` leaves the previous checkpoint as ``checkpoint.old``: it is used."""
        ckpt = self.dir / "checkpoint"
        old = self.dir / "checkpoint.old"
        if not ckpt.exists() and old.is_dir():
            os.replace(old, ckpt)
        if not ckpt.exists():
            return 0, []
        what = ckpt / "state.json"
        try:
            meta = json.loads(what.read_text(encoding="utf-8"))
            step, history, groups = meta["step"], meta["history"], meta["param_groups"]
            if not (isinstance(step, int) and 0 <= step <= total and isinstance(history, list)):
                raise ValueError(f"step {step!r} outside 0-{total}")
            what = ckpt / "adapter.safetensors"
            _load_adapter(stack, what)
            what = ckpt / "optim.safetensors"
            _optim_load(opt, load_file(str(what)), groups)
        except PlannerError:
            raise
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, SafetensorError) as e:
            raise PlannerError(
                f"cannot resume: {what} is damaged ({_first_line(e)}); "
                f"delete {ckpt} to start the run over"
            ) from None
        return step, [h for h in history if isinstance(h, dict)]


def corpus_key(enc: Encoded, k: int, base_sha: str) -> str:
    """What the cached activations depend on: every example's token ids and labels, the
    split point and the base file (sha256 hex)."""
    h = hashlib.sha256(f"{base_sha}|{k}|".encode())
    h.update(json.dumps(enc, separators=(",", ":")).encode())
    return h.hexdigest()


def _read_cache(path: Path, key: str, n: int) -> list[torch.Tensor] | None:
    """The cached rows when ``path`` holds ``n`` rows computed for ``key``; None otherwise
    (missing, damaged, or from another corpus: the caller recomputes)."""
    if not path.is_file():
        return None
    try:
        with safe_open(str(path), framework="pt") as f:
            if (f.metadata() or {}).get("corpus") != key or len(f.keys()) != n:
                return None
            return [f.get_tensor(str(i)) for i in range(n)]
    except (OSError, ValueError, RuntimeError, SafetensorError):
        return None


def _load_adapter(stack: TopStack, path: Path) -> None:
    """Load LoRA weights into ``stack``; a file that is not this stack's adapter is one line."""
    try:
        state = {k: v.float() for k, v in load_file(str(path)).items()}
        for key, (a, b) in stack.lora.items():
            for name, p in ((f"{key}.lora_A", a), (f"{key}.lora_B", b)):
                if name not in state:
                    raise ValueError(f"no tensor {name}")
                if state[name].shape != p.shape:
                    raise ValueError(f"{name} has shape {tuple(state[name].shape)}")
                if not torch.isfinite(state[name]).all():
                    raise ValueError(f"{name} is not finite")
        stack.load_state(state)
    except (OSError, ValueError, RuntimeError, SafetensorError) as e:
        raise PlannerError(f"{path} is not a usable adapter: {_first_line(e)}") from None


def _optim_flat(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], list[dict]]:
    """The optimiser's state as named tensors and JSON hyperparameters (no pickle)."""
    sd = opt.state_dict()
    tensors = {
        f"{i}.{name}": t.detach().clone().contiguous()
        for i, st in sd["state"].items()
        for name, t in st.items()
    }
    return tensors, json.loads(json.dumps(sd["param_groups"]))


def _optim_load(opt: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], groups: Any) -> None:
    """Inverse of :func:`_optim_flat`, checked against the optimiser's own parameters."""
    params = [p for g in opt.param_groups for p in g["params"]]
    state: dict[int, dict[str, torch.Tensor]] = {}
    for name, t in tensors.items():
        i, _, field_ = name.partition(".")
        if not i.isdigit() or int(i) >= len(params):
            raise ValueError(f"optimiser state names parameter {i!r}")
        if field_ in ("exp_avg", "exp_avg_sq") and t.shape != params[int(i)].shape:
            raise ValueError(f"optimiser state {name} has shape {tuple(t.shape)}")
        state.setdefault(int(i), {})[field_] = t
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise ValueError("param_groups is not a list of objects")
    opt.load_state_dict({"state": state, "param_groups": groups})


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


def export(result: dict, cfg: TuneConfig, out_dir: Path) -> Path:
    """Write the adapter (fp16 safetensors) and its manifest into ``out_dir`` atomically."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    weights = {k: v.to(torch.float16).contiguous() for k, v in result["adapter"].items()}
    save_file(weights, str(tmp / "adapter.safetensors"))
    digest = sha256_file(tmp / "adapter.safetensors")
    manifest = {
        "format": "skillbridge-planner-adapter",
        "format_version": fmt.FORMAT_VERSION,
        "base_model": BASE_NAME,
        "base_file_sha256": result["base_sha256"],
        "adapter_sha256": digest,
        "lora": {
            "rank": cfg.rank,
            "alpha": cfg.alpha,
            "first_layer": result["k"],
            "targets": list(TARGETS),
        },
        "corpus": {
            "generator": "planner.corpus",
            "seed": cfg.seed,
            "size": cfg.corpus_size,
            "profile": cfg.profile,
            "held_out": result["held_out_n"],
            "train": result["train_n"],
        },
        "init_sha256": (sha256_file(cfg.init) if cfg.init else None),
        "training": {**asdict(cfg), "steps": result["steps"], "wall_s": round(result["wall_s"], 1)},
        "eval": {
            "held_out_exact": round(result["held_out_exact"], 4),
            "held_out_n": result["held_out_n"],
            "history": result["history"],
        },
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if out_dir.exists():
        old = out_dir.with_name(out_dir.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out_dir, old)
        os.replace(tmp, out_dir)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out_dir)
    return out_dir
