"""Skill policies as plain tensors: safetensors weights plus a JSON manifest.

Nothing here unpickles: the network is rebuilt from the manifest's declared shape and the
weights are read with safetensors, after checking their sha256 against the manifest. This
is what makes a policy file safe to receive from someone else.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import torch
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, model_validator
from safetensors.torch import load as load_safetensors
from safetensors.torch import save_file
from torch import nn

from sim import util
from sim.safeio import MiB, UnsafeFile, read_regular
from skills.base import Smoothing

FORMAT = "skillbridge.policy/1"
PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
REQUIRED = (
    "format",
    "skill",
    "algo",
    "obs_dim",
    "act_dim",
    "net_arch",
    "activation",
    "obs_mean",
    "obs_std",
    "sha256",
)


#: The manifest is not covered by the weights' sha256, so its fields are bounded here: a
#: received ``"net_arch": [1e9, 1e9]`` must not allocate 52 GB before anything is checked.
MAX_DIM = 4096
MAX_LAYERS = 8
MAX_PARAMS = 8_000_000
MANIFEST_LIMIT = 4 * MiB
WEIGHTS_LIMIT = 4 * MAX_PARAMS + 4 * MiB  # float32 tensors plus the safetensors header


class PolicyError(Exception):
    """A policy file is missing, tampered, truncated or does not match its manifest."""


class Manifest(BaseModel):
    """The fields of ``manifest.json`` the network is rebuilt from, strictly typed and bounded
    (``"squash": "false"`` must not read as true, ``obs_dim: null`` must not reach torch).
    Other fields (training records, evaluation) are kept as they are."""

    model_config = ConfigDict(extra="allow", strict=True)

    format: Literal["skillbridge.policy/1"]
    skill: str = Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_-]*$")
    algo: str = Field(min_length=1, max_length=32)
    obs_dim: int = Field(ge=1, le=MAX_DIM)
    act_dim: int = Field(ge=1, le=64)
    net_arch: list[int] = Field(max_length=MAX_LAYERS)
    activation: Literal["tanh"]
    squash: StrictBool = False
    #: How the policy's actions are smoothed (``skills.base.Smoothing``); a manifest
    #: without these is a policy trained without, executed as it was.
    action_filter: float = Field(default=0.0, ge=0.0, le=0.95)
    action_rate: float = Field(default=0.0, ge=0.0, le=2.0)
    grip_filter: float = Field(default=0.0, ge=0.0, le=0.95)
    obs_mean: list[float]
    obs_std: list[float]
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _shapes(self) -> Manifest:
        if any(not 1 <= h <= MAX_DIM for h in self.net_arch):
            raise ValueError(f"net_arch layer sizes must be 1-{MAX_DIM}")
        dims = [self.obs_dim, *self.net_arch, self.act_dim]
        params = sum((a + 1) * b for a, b in zip(dims, dims[1:], strict=False))
        if params > MAX_PARAMS:
            raise ValueError(f"the network would have {params} parameters (at most {MAX_PARAMS})")
        for name in ("obs_mean", "obs_std"):
            v = getattr(self, name)
            if len(v) != self.obs_dim:
                raise ValueError(f"{name} has {len(v)} values, obs_dim is {self.obs_dim}")
            if not all(math.isfinite(x) for x in v):
                raise ValueError(f"{name} holds non-finite values")
        # a zero (or denormal) scale turns every observation into inf/NaN actions at step 1
        if not all(x >= 1e-8 for x in self.obs_std):
            raise ValueError("obs_std must be > 0 (a zero scale gives NaN actions)")
        return self


class MLPPolicy(nn.Module):
    """Deterministic actor: normalise -> MLP (tanh) -> action mean clipped to [-1, 1].

    ``squash`` puts a tanh on the output, as SAC/TQC actors have (their mean action is
    tanh of the Gaussian mean); PPO's Gaussian mean is clipped instead.
    """

    #: The observation normaliser (buffers: saved with the weights, never trained).
    obs_mean: torch.Tensor
    obs_std: torch.Tensor

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        net_arch: list[int],
        obs_mean: npt.ArrayLike,
        obs_std: npt.ArrayLike,
        squash: bool = False,
        smoothing: Smoothing | None = None,
    ) -> None:
        super().__init__()
        self.squash = bool(squash)
        #: Executed through ``skills.base.smoothed`` with this (none by default).
        self.smoothing = smoothing or Smoothing()
        layers: list[nn.Module] = []
        d = obs_dim
        for h in net_arch:
            layers += [nn.Linear(d, h), nn.Tanh()]
            d = h
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, act_dim)
        self.register_buffer("obs_mean", torch.as_tensor(np.asarray(obs_mean), dtype=torch.float32))
        self.register_buffer("obs_std", torch.as_tensor(np.asarray(obs_std), dtype=torch.float32))
        self.obs_dim, self.act_dim, self.net_arch = obs_dim, act_dim, list(net_arch)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        out = self.head(self.body((obs - self.obs_mean) / self.obs_std))
        return torch.tanh(out) if self.squash else out

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32)).unsqueeze(0)
        return np.clip(self.forward(x)[0].numpy().astype(np.float64), -1.0, 1.0)


def save_policy(policy: MLPPolicy, directory: str | Path, manifest: dict) -> Path:
    """Write ``model.safetensors`` then ``manifest.json`` atomically (temp files + rename)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    weights = directory / "model.safetensors"
    tensors = {k: v.detach().contiguous().cpu() for k, v in policy.state_dict().items()}
    with util.atomic_path(weights) as tmp_w:
        save_file(tensors, str(tmp_w), metadata={"format": FORMAT})
        full = {
            "format": FORMAT,
            "obs_dim": policy.obs_dim,
            "act_dim": policy.act_dim,
            "net_arch": policy.net_arch,
            "activation": "tanh",
            "squash": policy.squash,
            **smoothing_fields(policy.smoothing),
            "obs_mean": [float(v) for v in policy.obs_mean],
            "obs_std": [float(v) for v in policy.obs_std],
            **manifest,
            "sha256": util.sha256_file(tmp_w),
        }
    util.atomic_write_json(directory / "manifest.json", full)
    return directory


def smoothing_fields(s: Smoothing) -> dict:
    """The manifest fields of ``s``; none for no smoothing, so such a manifest reads as
    every policy's did before smoothing existed."""
    if not s.active:
        return {}
    return {"action_filter": s.alpha, "action_rate": s.rate, "grip_filter": s.grip}


def _read(path: Path, limit: int, what: str) -> bytes:
    try:
        return read_regular(path, limit)
    except FileNotFoundError:
        raise PolicyError(f"{path}: {what} missing") from None
    except UnsafeFile as e:
        raise PolicyError(f"{e}") from None
    except OSError as e:
        raise PolicyError(f"{path}: cannot read the {what} ({e.strerror or e})") from None


def first_error(e: ValidationError, whole: str) -> tuple[str, str, Any]:
    """Where (dotted, ``whole`` for the top level), what and the value of a validation
    error's first complaint, for a one-line message."""
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or whole
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return loc, msg, err.get("input")


def load_manifest(directory: str | Path) -> dict:
    """Read and validate ``manifest.json`` (a regular file, bounded size, bounded fields)."""
    path = Path(directory) / "manifest.json"
    try:
        manifest = json.loads(_read(path, MANIFEST_LIMIT, "manifest").decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise PolicyError(f"{path}: not valid JSON ({str(e).splitlines()[0][:200]})") from None
    if not isinstance(manifest, dict):
        raise PolicyError(f"{path}: manifest must be a JSON object")
    missing = [k for k in REQUIRED if k not in manifest]
    if missing:
        raise PolicyError(f"{path}: manifest lacks field(s) {', '.join(missing)}")
    if manifest["format"] != FORMAT:
        raise PolicyError(f"{path}: format {manifest['format']!r}, expected {FORMAT!r}")
    try:
        checked = Manifest.model_validate(manifest)
    except ValidationError as e:
        loc, msg, _ = first_error(e, "manifest")
        raise PolicyError(f"{path}: {loc}: {msg}") from None
    return {**manifest, **checked.model_dump(include=set(Manifest.model_fields))}


def load_policy(directory: str | Path, skill: str | None = None) -> tuple[MLPPolicy, dict]:
    """Load and verify a policy folder. Raises :class:`PolicyError` naming the file."""
    directory = Path(directory)
    manifest = load_manifest(directory)
    weights = directory / "model.safetensors"
    if skill is not None and manifest["skill"] != skill:
        raise PolicyError(
            f"{directory / 'manifest.json'}: policy is for skill {manifest['skill']!r}, "
            f"not {skill!r}"
        )
    if skill is not None:
        from skills.registry import get

        want = get(skill).obs_dim
        if int(manifest["obs_dim"]) != want:
            raise PolicyError(
                f"{directory / 'manifest.json'}: policy observes {manifest['obs_dim']} features, "
                f"skill {skill!r} builds {want} (trained for another version of the skill)"
            )
    data = _read(weights, WEIGHTS_LIMIT, "weights file")
    digest = util.sha256_bytes(data)
    if digest != manifest["sha256"]:
        raise PolicyError(
            f"{weights}: sha256 {digest[:12]}... does not match the manifest "
            "(tampered or truncated)"
        )
    try:
        policy = MLPPolicy(
            manifest["obs_dim"],
            manifest["act_dim"],
            manifest["net_arch"],
            manifest["obs_mean"],
            manifest["obs_std"],
            squash=manifest["squash"],
            smoothing=Smoothing(
                manifest["action_filter"], manifest["action_rate"], manifest["grip_filter"]
            ),
        )
    except (TypeError, ValueError) as e:
        raise PolicyError(f"{directory / 'manifest.json'}: bad network description ({e})") from None
    try:
        tensors = load_safetensors(data)
    except Exception as e:  # safetensors raises its own types for corrupt headers
        raise PolicyError(f"{weights}: unreadable safetensors file ({e})") from None
    expected = policy.state_dict()
    if set(tensors) != set(expected):
        raise PolicyError(f"{weights}: tensor names do not match the manifest's network")
    for k, v in tensors.items():
        if tuple(v.shape) != tuple(expected[k].shape):
            raise PolicyError(
                f"{weights}: tensor {k} has shape {tuple(v.shape)}, "
                f"manifest implies {tuple(expected[k].shape)}"
            )
        if not torch.isfinite(v).all():
            raise PolicyError(f"{weights}: tensor {k} holds non-finite values")
    policy.load_state_dict(tensors)
    policy.eval()
    _check_finite_actions(policy, weights)
    return policy, manifest


def _check_finite_actions(policy: MLPPolicy, weights: Path) -> None:
    """Finite weights can still give NaN actions (a zero scale in the normaliser buffers, an
    overflow): probe the network on the mean observation and a few spread around it, so such
    a policy is refused at load instead of crashing the controller at step 1."""
    mean = policy.obs_mean.detach().cpu().numpy().astype(np.float64)
    std = policy.obs_std.detach().cpu().numpy().astype(np.float64)
    if not (np.all(np.isfinite(std)) and np.all(std > 0)):
        raise PolicyError(f"{weights}: obs_std must be finite and > 0 (gives NaN actions)")
    rng = np.random.default_rng(0)
    probes = np.concatenate([mean[None], mean + std * rng.standard_normal((8, mean.size))])
    with torch.no_grad():
        out = policy(torch.as_tensor(probes, dtype=torch.float32))
    if not torch.isfinite(out).all():
        raise PolicyError(f"{weights}: the network produces non-finite actions")


def pretrained_dir(skill: str) -> Path:
    return PRETRAINED_DIR / skill


def install(skill: str, run: str | Path) -> Path:
    """Make ``run``'s best policy the shipped one for ``skill`` (with its learning curve,
    ``evaluations.json``): copied beside the old one, then swapped in by a rename, so a
    failure leaves the shipped policy as it was. Returns the shipped folder."""
    import os
    import shutil

    run = Path(run)
    dest = pretrained_dir(skill)
    tmp = dest.with_name(f".{skill}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(run / "best", tmp)
    # the learning curve travels with the policy: steps and wall time to reach the bar
    if (run / "evaluations.json").is_file():
        shutil.copy2(run / "evaluations.json", tmp / "evaluations.json")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    return dest


def record_evaluation(directory: str | Path, evaluation: dict) -> Path:
    """Store ``evaluation`` (an ``eval-skill`` result with its seed and command) in the
    policy's manifest, written atomically. Returns the manifest's path; ``OSError`` when it
    cannot be written."""
    path = Path(directory) / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    m["evaluation"] = dict(evaluation)
    util.atomic_write_json(path, m)
    return path
