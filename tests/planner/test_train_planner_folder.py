"""`skillbridge train-planner`'s run folder under misuse (issue 23, item 17): resuming a damaged
folder is one line, another corpus never reuses the cached activations, two runs cannot share
a folder, and --install never leaves the shipped adapter missing or half-written.

The runs use the tiny real Llama of tests/planner/tiny_base.py (a second each)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest
from safetensors import safe_open

from planner.embedded import finetune
from planner.embedded import model as em
from sim.util import sha256_file
from tests.cli_helpers import run_cli
from tests.planner.tiny_base import tiny_base

ARGS = ("-n", "60", "--epochs", "0.5", "--layers", "2", "--eval-every", "1", "--threads", "1")
RUN = "seed0-n60-l2-r16"


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setattr(finetune, "load_base", tiny_base)


def _train(monkeypatch, capsys, logdir: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(monkeypatch, capsys, "train-planner", *ARGS, "-f", str(logdir), *extra)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """One finished tiny run folder (copied by each test that damages it)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(finetune, "load_base", tiny_base)
    root = tmp_path_factory.mktemp("finished")
    try:
        cfg = finetune.TuneConfig(corpus_size=60, epochs=0.5, layers=2, eval_every=1, threads=1)
        result = finetune.Tuner(cfg, root / RUN).run()
        finetune.export(result, cfg, root / RUN / "export")
        from skillbridge.cli.train_planner import _plot

        _plot(result["history"], root / RUN / "learning_curve.png")
        (root / RUN / ".lock").write_text("4242")
    finally:
        mp.undo()
    assert (root / RUN / "checkpoint" / "optim.safetensors").is_file()
    return root


def _one_error(err: str) -> str:
    """The one error line of a failed run (progress bars may precede it), no traceback."""
    assert "Traceback" not in err, err
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and err.rstrip().endswith(errors[0]), err
    return errors[0]


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: max(1, p.stat().st_size // 2)])


def _garbage(p: Path) -> None:
    p.write_bytes(b"\x00\xff not what this file should hold \x93" * 3)


FILES = (
    "config.json",
    "cache-train.safetensors",
    "cache-held.safetensors",
    "checkpoint/adapter.safetensors",
    "checkpoint/optim.safetensors",
    "checkpoint/state.json",
    # written anew by every run, never read by --resume
    "export/adapter.safetensors",
    "export/manifest.json",
    "learning_curve.png",
    ".lock",
)
REWRITTEN = ("export/", "learning_curve.png", ".lock")


@pytest.mark.parametrize("damage", [_truncate, _garbage], ids=["truncated", "garbage"])
@pytest.mark.parametrize("name", FILES)
def test_resume_on_a_damaged_file_is_one_line(
    tiny, monkeypatch, capsys, tmp_path, finished, name, damage
):
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    damage(tmp_path / RUN / name)
    code, _, err = _train(monkeypatch, capsys, tmp_path, "--resume")
    assert "Traceback" not in err
    if name.startswith("cache-"):
        # a cache is only a cache: recomputed, and the run resumes
        assert code == 0, err
        with safe_open(str(tmp_path / RUN / name), framework="pt") as f:
            assert f.metadata()["corpus"]
    elif name.startswith(REWRITTEN):
        assert code == 0, err
        export = tmp_path / RUN / "export"
        assert _complete(export) and em.read_manifest(export).lora.first_layer == 2
    else:
        assert code == 2, err
        line = _one_error(err)
        assert Path(name).name in line and "resume" in line


def test_resume_with_a_forged_step_is_one_line(tiny, monkeypatch, capsys, tmp_path, finished):
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    state = tmp_path / RUN / "checkpoint" / "state.json"
    meta = json.loads(state.read_text())
    meta["step"] = 10**9
    state.write_text(json.dumps(meta))
    code, _, err = _train(monkeypatch, capsys, tmp_path, "--resume")
    assert code == 2 and "state.json" in _one_error(err)


def test_crash_between_checkpoint_renames_resumes_from_the_previous(
    tiny, monkeypatch, capsys, tmp_path, finished
):
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    run = tmp_path / RUN
    os.replace(run / "checkpoint", run / "checkpoint.old")
    code, _, err = _train(monkeypatch, capsys, tmp_path, "--resume")
    assert code == 0, err
    assert "training" not in err  # resumed at its last step, not trained over from step 0
    assert (run / "checkpoint" / "state.json").is_file()
    assert not (run / "checkpoint.old").exists()


def _rows(path: Path) -> list[int]:
    with safe_open(str(path), framework="pt") as f:
        return [f.get_slice(str(i)).get_shape()[0] for i in range(len(f.keys()))]


def test_another_profile_does_not_reuse_the_cached_activations(tiny, tmp_path):
    """A run stopped before its first checkpoint leaves its cache; a run with another
    profile in that folder must compute its own (it used to train on the other sentences)."""
    run = tmp_path / RUN
    base = finetune.TuneConfig(corpus_size=60, epochs=0.5, layers=2, eval_every=1, threads=1)
    finetune.Tuner(base, run).run()
    shutil.rmtree(run / "checkpoint")
    lists = finetune.TuneConfig(**{**base.__dict__, "profile": "lists"})
    finetune.Tuner(lists, run).run()
    model = tiny_base()
    from planner import corpus

    train, held = corpus.split(corpus.generate(60, 0, "lists"), lists.held_out)
    for name, samples in (("train", train), ("held", held)):
        enc = finetune.encode(model.tokenizer, samples, lists.max_tokens)
        assert _rows(run / f"cache-{name}.safetensors") == [len(ids) for ids, _ in enc]
        with safe_open(str(run / f"cache-{name}.safetensors"), framework="pt") as f:
            assert f.metadata()["corpus"] == finetune.corpus_key(enc, 2, model.sha256)


def test_a_second_run_in_the_same_folder_is_refused(tiny, monkeypatch, capsys, tmp_path):
    (tmp_path / RUN).mkdir()
    with open(tmp_path / RUN / ".lock", "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("4242")
        held.flush()
        code, _, err = _train(monkeypatch, capsys, tmp_path)
    assert code == 2, err
    line = _one_error(err)
    assert "in use" in line and "4242" in line
    assert not (tmp_path / RUN / "checkpoint").exists()
    code, _, err = _train(monkeypatch, capsys, tmp_path)  # the lock was dropped with its file
    assert code == 0, err


def _complete(shipped: Path) -> bool:
    """Whether ``shipped`` holds a whole adapter (manifest and the weights it names)."""
    try:
        m = json.loads((shipped / "manifest.json").read_text())
        return bool(sha256_file(shipped / "adapter.safetensors") == m["adapter_sha256"])
    except (OSError, ValueError, KeyError):
        return False


def test_install_keeps_a_complete_adapter_at_every_step(
    tiny, monkeypatch, capsys, tmp_path, finished
):
    """Every file-system step of --install is checked before and after: a crash at any of
    them leaves the shipped folder a complete adapter, the old one or the new one."""
    shipped = tmp_path / "pretrained" / "smollm2-135m-commands"
    shutil.copytree(finished / RUN / "export", shipped)  # the "old" adapter
    (shipped / "adapter.safetensors").write_bytes(b"old")  # told apart from the new one
    m = json.loads((shipped / "manifest.json").read_text())
    m["adapter_sha256"] = sha256_file(shipped / "adapter.safetensors")
    (shipped / "manifest.json").write_text(json.dumps(m))
    assert _complete(shipped)
    monkeypatch.setattr(em, "SHIPPED", shipped)
    seen: list[str] = []

    def watched(fn, name):
        def call(*a, **kw):
            seen.append(name)
            assert _complete(shipped), f"shipped adapter incomplete before {name}"
            out = fn(*a, **kw)
            assert _complete(shipped), f"shipped adapter incomplete after {name}"
            return out

        return call

    for mod, name in ((shutil, "rmtree"), (shutil, "copytree"), (shutil, "copy")):
        monkeypatch.setattr(mod, name, watched(getattr(mod, name), name))
    for name in ("rename", "replace"):
        monkeypatch.setattr(os, name, watched(getattr(os, name), name))
    code, out, err = _train(monkeypatch, capsys, tmp_path / "logs", "--install")
    assert code == 0, err
    assert "installed" in out and seen
    new = tmp_path / "logs" / RUN / "export"
    assert sha256_file(shipped / "adapter.safetensors") == sha256_file(new / "adapter.safetensors")
    assert (shipped / "learning_curve.png").is_file()
    assert sorted(p.name for p in shipped.parent.iterdir()) == [shipped.name]


def test_install_that_cannot_write_keeps_the_old_adapter(
    tiny, monkeypatch, capsys, tmp_path, finished
):
    shipped = tmp_path / "pretrained" / "smollm2-135m-commands"
    shutil.copytree(finished / RUN / "export", shipped)
    before = sorted(p.name for p in shipped.iterdir())
    monkeypatch.setattr(em, "SHIPPED", shipped)
    real = shutil.copy

    def full_disk(src, dst, *a, **kw):
        if Path(dst).name == "learning_curve.png":
            raise OSError(28, "No space left on device")
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(shutil, "copy", full_disk)
    code, _, err = _train(monkeypatch, capsys, tmp_path / "logs", "--install")
    assert code == 1, err
    line = _one_error(err)
    assert "No space left" in line and "unchanged" in line
    assert sorted(p.name for p in shipped.iterdir()) == before
