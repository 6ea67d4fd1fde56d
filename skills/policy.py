"""Skill policies as plain tensors: safetensors weights plus a JSON manifest.

Nothing here unpickles: the network is rebuilt from the manifest's declared shape and the
weights are read with safetensors, after checking their sha256 against the manifest. This
is what makes a policy file safe to receive from someone else.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn

FORMAT = "skillbridge.policy/1"
PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
REQUIRED = (
    "format", "skill", "algo", "obs_dim", "act_dim", "net_arch", "activation",
    "obs_mean", "obs_std", "sha256",
)


class PolicyError(Exception):
    """A policy file is missing, tampered, truncated or does not match its manifest."""


class MLPPolicy(nn.Module):
    """Deterministic actor: normalise -> MLP (tanh) -> action mean clipped to [-1, 1].

    ``squash`` puts a tanh on the output, as SAC/TQC actors have (their mean action is
    tanh of the Gaussian mean); PPO's Gaussian mean is clipped instead.
    """

    def __init__(
        self, obs_dim: int, act_dim: int, net_arch: list[int], obs_mean, obs_std,
        squash: bool = False,
    ):
        super().__init__()
        self.squash = bool(squash)
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


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def save_policy(policy: MLPPolicy, directory: str | Path, manifest: dict) -> Path:
    """Write ``model.safetensors`` then ``manifest.json`` atomically (temp files + rename)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    weights = directory / "model.safetensors"
    tmp_w = directory / f".model.safetensors.tmp{os.getpid()}"
    tensors = {k: v.detach().contiguous().cpu() for k, v in policy.state_dict().items()}
    save_file(tensors, str(tmp_w), metadata={"format": FORMAT})
    full = {
        "format": FORMAT,
        "obs_dim": policy.obs_dim,
        "act_dim": policy.act_dim,
        "net_arch": policy.net_arch,
        "activation": "tanh",
        "squash": policy.squash,
        "obs_mean": [float(v) for v in policy.obs_mean],
        "obs_std": [float(v) for v in policy.obs_std],
        **manifest,
        "sha256": _sha256(tmp_w),
    }
    tmp_m = directory / f".manifest.json.tmp{os.getpid()}"
    tmp_m.write_text(json.dumps(full, indent=2) + "\n")
    os.replace(tmp_w, weights)
    os.replace(tmp_m, directory / "manifest.json")
    return directory


def load_manifest(directory: str | Path) -> dict:
    path = Path(directory) / "manifest.json"
    if not path.is_file():
        raise PolicyError(f"{path}: manifest missing")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PolicyError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(manifest, dict):
        raise PolicyError(f"{path}: manifest must be a JSON object")
    missing = [k for k in REQUIRED if k not in manifest]
    if missing:
        raise PolicyError(f"{path}: manifest lacks field(s) {', '.join(missing)}")
    if manifest["format"] != FORMAT:
        raise PolicyError(f"{path}: format {manifest['format']!r}, expected {FORMAT!r}")
    return manifest


def load_policy(directory: str | Path, skill: str | None = None) -> tuple[MLPPolicy, dict]:
    """Load and verify a policy folder. Raises :class:`PolicyError` naming the file."""
    directory = Path(directory)
    manifest = load_manifest(directory)
    weights = directory / "model.safetensors"
    if skill is not None and manifest["skill"] != skill:
        raise PolicyError(f"{directory / 'manifest.json'}: policy is for skill {manifest['skill']!r}, not {skill!r}")
    if skill is not None:
        from skills.registry import get

        want = get(skill).obs_dim
        if int(manifest["obs_dim"]) != want:
            raise PolicyError(
                f"{directory / 'manifest.json'}: policy observes {manifest['obs_dim']} features, "
                f"skill {skill!r} builds {want} (trained for another version of the skill)"
            )
    if not weights.is_file():
        raise PolicyError(f"{weights}: weights file missing")
    digest = _sha256(weights)
    if digest != manifest["sha256"]:
        raise PolicyError(f"{weights}: sha256 {digest[:12]}... does not match the manifest (tampered or truncated)")
    try:
        net_arch = [int(h) for h in manifest["net_arch"]]
        obs_dim, act_dim = int(manifest["obs_dim"]), int(manifest["act_dim"])
        policy = MLPPolicy(
            obs_dim, act_dim, net_arch, manifest["obs_mean"], manifest["obs_std"],
            squash=bool(manifest.get("squash", False)),
        )
    except (TypeError, ValueError) as e:
        raise PolicyError(f"{directory / 'manifest.json'}: bad network description ({e})") from None
    try:
        with safe_open(str(weights), framework="pt") as f:
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:  # safetensors raises its own types for corrupt headers
        raise PolicyError(f"{weights}: unreadable safetensors file ({e})") from None
    expected = policy.state_dict()
    if set(tensors) != set(expected):
        raise PolicyError(f"{weights}: tensor names do not match the manifest's network")
    for k, v in tensors.items():
        if tuple(v.shape) != tuple(expected[k].shape):
            raise PolicyError(
                f"{weights}: tensor {k} has shape {tuple(v.shape)}, manifest implies {tuple(expected[k].shape)}"
            )
        if not torch.isfinite(v).all():
            raise PolicyError(f"{weights}: tensor {k} holds non-finite values")
    policy.load_state_dict(tensors)
    policy.eval()
    return policy, manifest


def pretrained_dir(skill: str) -> Path:
    return PRETRAINED_DIR / skill
