"""Slow checks of the shipped embedded model: the whole hand-written test set, and the
OpenAI-compatible path end to end (a real local HTTP server serving the model, the real
langchain-openai client, ``skillbridge run`` executing the plan in MuJoCo)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.embedded import model as em

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not em.available(), reason="embedded model not installed"),
]


def test_hand_written_set_hybrid_accuracy_and_refusals():
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_planner

    from planner.hybrid import HybridPlanner
    from tests.planner.freeform import load_freeform

    entries = load_freeform()
    worlds = bench_planner.worlds_for(entries, 0)
    rows = bench_planner.run_route(
        "hybrid", entries, worlds, HybridPlanner.from_spec("embedded", route="hybrid")
    )
    s = bench_planner.summarise(rows)
    assert s["refusal_accuracy"] == 1.0, [r["id"] for r in rows if r["refuse"] and not r["ok"]]
    assert s["accuracy"] >= 0.8, s


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_openai_compatible_server_end_to_end_through_run(tmp_path):
    pytest.importorskip("langchain_openai")
    port = _free_port()
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    server = subprocess.Popen(
        [sys.executable, "-m", "planner.embedded.server", "--port", str(port), "--threads", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, server.stdout.read()
            time.sleep(0.5)
        out = tmp_path / "runs"
        r = subprocess.run(
            [
                str(Path(sys.executable).parent / "skillbridge"),
                "run",
                "would you chuck the crimson cube into the grass coloured bin",
                "--llm",
                f"embedded:http://127.0.0.1:{port}/v1",
                "--route",
                "model",
                "--seed",
                "1",
                "--out",
                str(out),
                "--json",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        assert "green_bin" in r.stdout and "red_block" in r.stdout
    finally:
        server.terminate()
        server.wait(timeout=20)
