"""Received episodes are data from someone else (issue 10 C, D): links to devices, FIFOs,
oversized files, deflate bombs and edited fields are one line of error, never a hang, a
runaway allocation or a traceback."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

from skillbridge.episodes import episode as E
from tests.cli_helpers import run_cli


def _meta(ep):
    return json.loads((ep / "meta.json").read_text())


def _write_meta(ep, m):
    (ep / "meta.json").write_text(json.dumps(m))


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "name", ["trace.jsonl", "meta.json", "initial.npz", "states-000000.npz", "events.log.jsonl"]
)
def test_link_to_dev_zero_is_refused(episode_copy, monkeypatch, capsys, name):
    (episode_copy / name).unlink()
    os.symlink("/dev/zero", episode_copy / name)
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy), "--verify")
    assert code == 2
    assert "regular file" in _one_line(err)


def test_link_to_a_regular_file_outside_is_refused(episode_copy, tmp_path, monkeypatch, capsys):
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes((episode_copy / "trace.jsonl").read_bytes())
    (episode_copy / "trace.jsonl").unlink()
    os.symlink(outside, episode_copy / "trace.jsonl")
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy))
    assert code == 2 and "symbolic link" in _one_line(err)


def test_fifo_does_not_hang_verify(episode_copy, monkeypatch, capsys):
    (episode_copy / "trace.jsonl").unlink()
    os.mkfifo(episode_copy / "trace.jsonl")  # nobody ever writes to it
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy), "--verify")
    assert code == 2 and "FIFO" in _one_line(err)


def test_oversized_trace_is_refused(episode_copy, monkeypatch, capsys):
    monkeypatch.setattr(E, "JSONL_LIMIT", 1000)
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy))
    assert code == 2 and "allowed" in _one_line(err)


def test_deflate_bomb_chunk_is_refused(episode_copy, monkeypatch, capsys):
    """A small chunk that inflates past the limit is refused before numpy inflates it."""
    import hashlib

    monkeypatch.setattr(E, "NPZ_UNPACKED_LIMIT", 1 << 20)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("state.npy", b"\0" * (2 << 20))
    data = buf.getvalue()
    (episode_copy / "states-000000.npz").write_bytes(data)
    m = _meta(episode_copy)
    m["chunks"][0]["sha256"] = hashlib.sha256(data).hexdigest()
    _write_meta(episode_copy, m)
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy))
    assert code == 2 and "inflates" in _one_line(err)


def _incomplete(ep):
    m = _meta(ep)
    m["status"] = "incomplete"
    m.pop("final", None)
    m.pop("files", None)
    return m


@pytest.mark.parametrize(
    "field, value",
    [
        ("result", "oops"),
        ("planner", ["x"]),
        ("control_dt", "fast"),
        ("control_dt", 0),
        ("seed", "zero"),
        ("task", {"a": 1}),
        ("result", {"status": 5}),
        ("scene", 3),
    ],
)
def test_edited_meta_fields_are_one_line(episode_copy, monkeypatch, capsys, field, value):
    m = _incomplete(episode_copy)
    m[field] = value
    _write_meta(episode_copy, m)
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy), "--verify")
    assert code == 2 and "tampered" in _one_line(err)


@pytest.mark.parametrize(
    "record",
    [
        {"kind": "plan", "step": "x", "steps": "notalist", "refusal": "[/red]"},
        {"kind": "subgoal_start", "index": "one", "subgoal": [1, 2]},
        {"kind": "skill_outcome", "index": None, "step": 1e300},
        {"kind": "bridge_decision", "reasons": [1, "a", {"code": "[/x]"}]},
        {"kind": "planner_call", "latency_s": "slow", "raw": "there is no [/red] block \x1b[2J"},
        {"kind": ["weird"], "step": -5},
    ],
)
def test_edited_trace_lines_of_incomplete_episodes_do_not_crash(
    episode_copy, monkeypatch, capsys, record
):
    _write_meta(episode_copy, _incomplete(episode_copy))
    with open(episode_copy / "trace.jsonl", "a") as f:
        f.write(json.dumps(record) + "\n")
    code, out, err = run_cli(monkeypatch, capsys, "replay", str(episode_copy), "--verify")
    assert code == 0, err
    assert "Traceback" not in err
    assert "\x1b[2J" not in out


def test_replay_of_a_verified_episode_still_works(episode_copy):
    ep = E.load(episode_copy)
    assert ep.complete and ep.n_steps > 0 and isinstance(ep.states, np.ndarray)
