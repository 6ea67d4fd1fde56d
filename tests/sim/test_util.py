"""The shared helpers in sim/util.py."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from sim import util


def test_atomic_write_json_format_and_no_leftovers(tmp_path):
    p = tmp_path / "x.json"
    util.atomic_write_json(p, {"a": 1, "b": [1, 2]})
    assert p.read_text() == json.dumps({"a": 1, "b": [1, 2]}, indent=2) + "\n"
    util.atomic_write_json(p, {"n": 3}, indent=None)
    assert p.read_text() == '{"n": 3}'
    assert os.listdir(tmp_path) == ["x.json"]


def test_atomic_path_removes_the_temporary_on_error(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"old")
    with pytest.raises(RuntimeError), util.atomic_path(p) as tmp:
        tmp.write_bytes(b"new")
        raise RuntimeError("boom")
    assert p.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["x.bin"]


def test_sha256_helpers_agree_with_hashlib(tmp_path):
    data = os.urandom(3 << 20)
    p = tmp_path / "d"
    p.write_bytes(data)
    want = hashlib.sha256(data).hexdigest()
    assert util.sha256_bytes(data) == want == util.sha256_file(p)


def test_wilson_matches_known_values():
    assert util.wilson(0, 0) == (0.0, 1.0)
    lo, hi = util.wilson(20, 20)
    assert round(lo, 4) == 0.8389 and hi == 1.0
    lo, hi = util.wilson(5, 10)
    assert lo == pytest.approx(1 - hi)


def test_mcnemar_exact_matches_the_binomial_tail():
    assert util.mcnemar_exact(0, 0) == 1.0
    assert util.mcnemar_exact(3, 0) == pytest.approx(0.25)  # 2 * (1/2)^3
    assert util.mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert util.mcnemar_exact(9, 1) == pytest.approx(2 * 11 / 1024)  # C(10,0)+C(10,1)
    assert util.mcnemar_exact(4, 5) == util.mcnemar_exact(5, 4) == 1.0


def test_provenance_keys():
    v = util.library_versions(("numpy", "no-such-dist"), keys={"numpy": "np"})
    assert set(v) == {"python", "np"}
    assert set(util.machine_info()) == {"python", "platform", "processor", "cpus"}
