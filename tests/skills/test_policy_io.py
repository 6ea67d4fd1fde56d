"""Safe storage: round trip, and clear errors for tampered, truncated or mismatched files."""

import json

import numpy as np
import pytest
import torch

from skills import get
from skills.policy import MLPPolicy, PolicyError, load_policy, save_policy

D = get("pick").obs_dim


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    p = MLPPolicy(D, 4, [32, 32], np.zeros(D), np.ones(D) * 2)
    d = save_policy(p, tmp_path / "pick", {"skill": "pick", "algo": "ppo"})
    return p, d


def test_round_trip_gives_identical_actions(saved):
    p, d = saved
    q, manifest = load_policy(d, "pick")
    obs = np.random.default_rng(0).normal(size=(20, D))
    for o in obs:
        assert np.array_equal(p.act(o), q.act(o))
    assert manifest["net_arch"] == [32, 32] and len(manifest["sha256"]) == 64


def test_tampered_weights_rejected(saved):
    _, d = saved
    w = d / "model.safetensors"
    data = bytearray(w.read_bytes())
    data[-5] ^= 0xFF
    w.write_bytes(bytes(data))
    with pytest.raises(PolicyError, match="sha256.*does not match"):
        load_policy(d)


def test_truncated_weights_rejected(saved):
    _, d = saved
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[:100])
    with pytest.raises(PolicyError, match="model.safetensors"):
        load_policy(d)


def test_wrong_sha_in_manifest_rejected(saved):
    _, d = saved
    m = json.loads((d / "manifest.json").read_text())
    m["sha256"] = "0" * 64
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(PolicyError, match="sha256"):
        load_policy(d)


@pytest.mark.parametrize("field", ["sha256", "net_arch", "obs_mean", "skill"])
def test_missing_manifest_field_rejected(saved, field):
    _, d = saved
    m = json.loads((d / "manifest.json").read_text())
    del m[field]
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(PolicyError, match=f"lacks field.*{field}"):
        load_policy(d)


def test_mismatched_shape_rejected(saved):
    _, d = saved
    m = json.loads((d / "manifest.json").read_text())
    m["net_arch"] = [64, 32]
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(PolicyError, match="shape"):
        load_policy(d)


def test_policy_for_another_observation_layout_rejected(tmp_path):
    p = MLPPolicy(D + 2, 4, [8], np.zeros(D + 2), np.ones(D + 2))
    d = save_policy(p, tmp_path / "old", {"skill": "pick", "algo": "ppo"})
    with pytest.raises(PolicyError, match=f"observes {D + 2} features"):
        load_policy(d, "pick")


def test_wrong_skill_and_missing_files(saved, tmp_path):
    _, d = saved
    with pytest.raises(PolicyError, match="not 'place'"):
        load_policy(d, "place")
    with pytest.raises(PolicyError, match="manifest missing"):
        load_policy(tmp_path / "nowhere")
    (d / "model.safetensors").unlink()
    with pytest.raises(PolicyError, match="weights file missing"):
        load_policy(d)


def test_no_pickle_load_path_in_skills():
    """Loading never unpickles: no pickle/cloudpickle/zip model loading in the package."""
    import pathlib

    import skills

    root = pathlib.Path(skills.__file__).parent
    for f in root.rglob("*.py"):
        text = f.read_text()
        for bad in ("pickle.load", "cloudpickle", "PPO.load", "SAC.load", "load_from_zip"):
            assert bad not in text, f"{f}: {bad}"
        if "torch.load(" in text:
            assert "weights_only=True" in text, f"{f}: torch.load without weights_only"


# ----------------------------------------------------------------------------- issue 10 C
def _edit_manifest(d, **kw):
    m = json.loads((d / "manifest.json").read_text())
    m.update(kw)
    (d / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize(
    "field, value, needle",
    [
        ("net_arch", [1e9, 1e9], "net_arch"),
        ("net_arch", [1_000_000_000, 1_000_000_000], "net_arch"),
        ("net_arch", [4096] * 8, "parameters"),
        ("obs_dim", None, "obs_dim"),
        ("obs_dim", "13", "obs_dim"),
        ("act_dim", -1, "act_dim"),
        ("squash", "false", "squash"),
        ("obs_std", [0.0] * D, "obs_std"),
        ("obs_mean", [1.0], "obs_mean"),
        ("activation", "relu", "activation"),
    ],
)
def test_manifest_fields_are_validated_with_bounds(saved, field, value, needle):
    _, d = saved
    _edit_manifest(d, **{field: value})
    with pytest.raises(PolicyError, match=needle) as e:
        load_policy(d)
    assert "\n" not in str(e.value)


def test_manifest_squash_is_a_real_boolean(saved):
    _, d = saved
    _, m = load_policy(d)
    assert m["squash"] is False


def test_weights_that_give_nan_actions_are_rejected_at_load(tmp_path):
    """obs_std = 0 in the weights (the normaliser is a buffer of the safetensors file)."""
    p = MLPPolicy(D, 4, [8], np.zeros(D), np.ones(D))
    p.obs_std.zero_()
    d = save_policy(p, tmp_path / "nan", {"skill": "pick", "algo": "ppo"})
    _edit_manifest(d, obs_std=[1.0] * D)  # the manifest looks fine; the weights do not
    with pytest.raises(PolicyError, match="obs_std|non-finite"):
        load_policy(d, "pick")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
@pytest.mark.parametrize("name", ["manifest.json", "model.safetensors"])
def test_policy_files_must_be_regular(saved, tmp_path, kind, name):
    import os

    _, d = saved
    (d / name).unlink()
    if kind == "symlink":
        os.symlink("/dev/zero", d / name)
    else:
        os.mkfifo(d / name)
    with pytest.raises(PolicyError, match="not a regular file"):
        load_policy(d)


def test_oversized_manifest_rejected(saved):
    _, d = saved
    m = json.loads((d / "manifest.json").read_text())
    m["padding"] = "x" * (5 << 20)
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(PolicyError, match="allowed"):
        load_policy(d)
