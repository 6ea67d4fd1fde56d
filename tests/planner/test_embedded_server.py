"""The embedded model's OpenAI-compatible server against hostile clients, for real: a real
``PlannerHTTPServer`` on 127.0.0.1, real sockets, the real langchain-openai client. The
model behind it is a small scripted engine (the real one's bounds are tested in
test_embedded.py), so these run in a second; startup errors and Ctrl-C run the server's
real entry point in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from planner.embedded.model import Rewrite
from planner.embedded.server import MAX_BODY, PlannerHTTPServer
from planner.errors import GenerationTimeout, PromptTooLong
from tests.cli_helpers import sigint_default

ROOT = Path(__file__).resolve().parents[2]


class ScriptedEngine:
    """Answers "put the red block in the blue bin"; counts words as tokens, holds one lock
    like the real model, sleeps ``delay`` seconds per answer and honours the bounds the
    server passes (wait, deadline, cancel) as the real model does."""

    def __init__(self, delay: float = 0.0, limit: int = 50) -> None:
        self.delay = delay
        self.limit = limit
        self.lock = threading.Lock()
        self.seen: list[dict] = []

    def rewrite(self, user, *, temperature=0.0, seed=0, max_new_tokens=72, no_refusal=False,
                deadline_s=None, wait_s=None, cancel=None):  # fmt: skip
        words = len(user.split())
        if words > self.limit:
            raise PromptTooLong(words, self.limit)
        if not self.lock.acquire(timeout=-1 if wait_s is None else wait_s):
            raise GenerationTimeout("busy")
        try:
            self.seen.append({"user": user, "temperature": temperature, "seed": seed,
                              "no_refusal": no_refusal})  # fmt: skip
            t0 = time.monotonic()
            while time.monotonic() - t0 < self.delay:
                if cancel is not None and cancel.is_set():
                    raise GenerationTimeout("cancelled")
                if deadline_s is not None and time.monotonic() - t0 > deadline_s:
                    raise GenerationTimeout(f"past {deadline_s} s")
                time.sleep(0.01)
        finally:
            self.lock.release()
        return Rewrite("put the red block in the blue bin", words, 9, 0.0)


@pytest.fixture
def serve():
    started: list[PlannerHTTPServer] = []

    def start(engine=None, **attrs) -> tuple[str, int, PlannerHTTPServer]:
        httpd = PlannerHTTPServer(("127.0.0.1", 0), engine or ScriptedEngine(), **attrs.pop(
            "kw", {}))  # fmt: skip
        for k, v in attrs.items():
            setattr(httpd, k, v)
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()  # fmt: skip
        started.append(httpd)
        return "127.0.0.1", httpd.server_address[1], httpd

    yield start
    for h in started:
        h.shutdown()
        h.stop(1.0)
        h.server_close()


def post(port: int, body: bytes | str | dict, timeout: float = 5.0) -> tuple[int, dict]:
    import http.client

    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = json.loads(r.read())
    conn.close()
    return r.status, data


GOOD = {"messages": [{"role": "user", "content": "scene: red blue\nred in blue bin"}]}


def test_a_plain_request_is_answered(serve):
    _, port, _ = serve()
    code, data = post(port, GOOD)
    assert code == 200, data
    assert data["choices"][0]["message"]["content"] == "put the red block in the blue bin"


@pytest.mark.parametrize(
    "body, words",
    [
        ('{"messages": [{"role": "user", "content": "x"}], "seed": 1e400}', "seed"),
        ({**GOOD, "seed": 10**30}, "seed"),
        ('{"messages": [{"role": "user", "content": "x"}], "seed": ' + "9" * 5000 + "}", "JSON"),
        ({**GOOD, "seed": True}, "seed"),
        ({**GOOD, "seed": 1.5}, "seed"),
        ('{"messages": [{"role": "user", "content": "x"}], "temperature": NaN}', "JSON"),
        ({**GOOD, "temperature": "hot"}, "temperature"),
        ({**GOOD, "temperature": 7}, "temperature"),
        ("[" * 100_000 + "]" * 100_000, "nested"),
        ("[1, 2]", "object"),
        ('"hello"', "object"),
        ("null", "object"),
        ("{not json", "JSON"),
        (b'{"messages": "\xff\xfe"}', "JSON"),
        ({"messages": "put red in blue"}, "messages"),
        ({"messages": [1, 2]}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages"),
        ({"messages": [{"role": "system", "content": "hi"}]}, "user"),
        ({**GOOD, "no_refusal": "yes"}, "no_refusal"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "text content"),
        ({**GOOD, "max_tokens": -1}, "max_tokens"),
    ],
)
def test_odd_bodies_get_a_400_json_error_and_the_server_lives(serve, body, words):
    """Issue 23 item 12: seven bodies crashed the handler with no HTTP response."""
    _, port, _ = serve()
    code, data = post(port, body)
    assert code == 400, data
    assert words.lower() in data["error"]["message"].lower(), data
    assert post(port, GOOD)[0] == 200  # still serving


@pytest.mark.parametrize(
    "extra, words",
    [
        ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
        ({"tool_choice": "auto"}, "tool"),
        ({"n": 5}, "n"),
        ({"stream_options": {"include_usage": True}}, "stream_options"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"logprobs": True}, "logprobs"),
        ({"top_p": 0.5}, "top_p"),
        ({"stop": ["\n"]}, "stop"),
        ({"frequency_penalty": 1.0}, "frequency_penalty"),
    ],
)
def test_unsupported_fields_are_refused_not_ignored(serve, extra, words):
    _, port, _ = serve()
    code, data = post(port, {**GOOD, **extra})
    assert code == 400 and words in data["error"]["message"], data


def test_harmless_values_of_those_fields_are_accepted(serve):
    _, port, _ = serve()
    for extra in ({"n": 1}, {"stream": False}, {"response_format": {"type": "text"}},
                  {"top_p": 1.0}, {"model": "skillbridge-embedded", "user": "u"}):  # fmt: skip
        assert post(port, {**GOOD, **extra})[0] == 200, extra
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": "red in bin"}]}]}
    assert post(port, parts)[0] == 200


def test_tiny_temperature_huge_seed_and_a_lone_surrogate_are_answered(serve):
    engine = ScriptedEngine()
    _, port, _ = serve(engine)
    body = json.dumps({**GOOD, "temperature": 1e-300, "seed": 2**63 + 5})
    assert post(port, body)[0] == 200
    lone = '{"messages": [{"role": "user", "content": "red \\ud800 in blue bin"}]}'
    code, data = post(port, lone)
    assert code == 200, data
    assert engine.seen[-1]["user"] == "red \ud800 in blue bin"  # the model cleans it


def test_a_prompt_past_the_context_is_a_400_and_a_huge_body_a_413(serve):
    _, port, _ = serve(ScriptedEngine(limit=50))
    code, data = post(port, {"messages": [{"role": "user", "content": "red " * 500}]})
    assert code == 400 and data["error"]["code"] == "context_length_exceeded", data
    code, data = post(port, "x" * (MAX_BODY + 1))
    assert code == 413 and "too large" in data["error"]["message"]


def test_a_busy_model_and_a_long_generation_are_bounded(serve):
    """One client must not hold the model from the others for minutes."""
    engine = ScriptedEngine(delay=2.5)
    _, port, httpd = serve(engine, wait_s=0.2, generation_s=0.3)
    t0 = time.monotonic()
    code, data = post(port, GOOD)
    assert code == 503 and "past" in data["error"]["message"]
    assert time.monotonic() - t0 < 1.2
    httpd.generation_s = 5.0
    first = threading.Thread(target=post, args=(port, GOOD))
    first.start()
    deadline = time.monotonic() + 2.0
    while not engine.lock.locked() and time.monotonic() < deadline:
        time.sleep(0.01)
    t0 = time.monotonic()
    code, data = post(port, GOOD)  # waits 0.2 s for the model, then gives up
    assert code == 503 and data["error"]["type"] == "server_busy"
    assert time.monotonic() - t0 < 1.0
    first.join()


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``sock`` (None if it stayed open)."""
    sock.settimeout(seconds)
    t0 = time.monotonic()
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return None
    except OSError:
        pass
    return time.monotonic() - t0


def test_slowloris_half_requests_are_dropped(serve):
    _, port, _ = serve(request_timeout_s=0.5)
    # headers never finished, trickled one byte at a time faster than the read timeout
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
    t0 = time.monotonic()
    dropped = False
    while time.monotonic() - t0 < 3.0:
        try:
            s.sendall(b"X")
        except OSError:
            dropped = True
            break
        time.sleep(0.1)
    if not dropped:
        dropped = _closed_within(s, 0.5) is not None
    s.close()
    assert dropped and time.monotonic() - t0 < 2.5
    # a body announced and never sent
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: 500\r\n\r\n{")
    assert _closed_within(s, 3.0) is not None
    s.close()
    assert post(port, GOOD)[0] == 200


def test_connections_past_the_cap_are_refused_at_once(serve):
    _, port, _ = serve(kw={"max_connections": 1}, request_timeout_s=2.0)
    idle = socket.create_connection(("127.0.0.1", port))
    time.sleep(0.1)
    code, data = post(port, GOOD)
    assert code == 503 and data["error"]["type"] == "server_busy"
    idle.close()
    deadline = time.monotonic() + 3.0
    while True:  # the slot comes back once the server sees the close
        try:
            if post(port, GOOD)[0] == 200:
                break
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused while the server had not yet seen the close: not yet
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_the_real_openai_client_is_served(serve):
    """What langchain-openai sends (stream false, temperature, seed, extra_body) passes."""
    pytest.importorskip("langchain_openai")
    from langchain_core.messages import HumanMessage

    from planner.backends import make_chat_model, parse_spec

    engine = ScriptedEngine()
    _, port, _ = serve(engine)
    chat = make_chat_model(parse_spec(f"embedded:http://127.0.0.1:{port}/v1"))
    msg = chat.invoke([HumanMessage(content="scene: red\nred to blue bin")], temperature=0.7,
                      seed=3, extra_body={"no_refusal": True})  # fmt: skip
    assert msg.content == "put the red block in the blue bin"
    assert engine.seen[-1] == {"user": "scene: red\nred to blue bin", "temperature": 0.7,
                               "seed": 3, "no_refusal": True}  # fmt: skip


# ----------------------------------------------------------------- the real entry point
SCRIPTED_SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.planner.test_embedded_server import ScriptedEngine
from planner.embedded import server
raise SystemExit(server.serve("127.0.0.1", {port}, engine=ScriptedEngine(delay=30.0)))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_port_in_use_is_one_line_and_exit_2():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run(
            [sys.executable, "-m", "planner.embedded.server", "--port", str(port)],
            cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert r.returncode == 2, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "in use" in lines[0] and "Traceback" not in r.stderr


@pytest.mark.parametrize("damage", ["missing", "tampered"])
def test_a_bad_adapter_is_one_line_and_exit_2(tmp_path, damage):
    import shutil

    from planner.embedded import model as em

    if not em.available():
        pytest.skip("embedded model not installed")
    adapter = tmp_path / "adapter"
    if damage == "tampered":
        shutil.copytree(em.SHIPPED, adapter)
        with (adapter / "adapter.safetensors").open("ab") as f:
            f.write(b"x")
    r = subprocess.run(
        [sys.executable, "-m", "planner.embedded.server", "--port", str(_free_port()),
         "--adapter", str(adapter)],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert ("manifest" if damage == "missing" else "sha256") in lines[0]


def test_ctrl_c_while_answering_exits_cleanly():
    """Issue 23 item 12: Ctrl-C while a request was being answered aborted (exit 134)."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPTED_SERVER.format(root=str(ROOT), port=port)],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=sigint_default,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        box: dict = {}
        client = threading.Thread(target=lambda: box.update(r=post(port, GOOD, timeout=20)))
        client.start()
        time.sleep(0.5)  # the answer is in progress (it would take 30 s)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        took = time.monotonic() - t0
        client.join(5)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (proc.returncode, err)
    assert took < 5.0 and "Traceback" not in err
    assert box["r"][0] == 503 and "shutting down" in box["r"][1]["error"]["message"]


@pytest.mark.slow
def test_ctrl_c_while_the_real_model_answers_exits_cleanly():
    """The abort (134) came from the interpreter exiting under a generation in torch."""
    from planner.embedded import model as em

    if not em.available():
        pytest.skip("embedded model not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "planner.embedded.server", "--port", str(port)],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=sigint_default,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and "serving" not in (proc.stdout.readline() or ""):
            assert proc.poll() is None, proc.communicate()
        long = {"messages": [{"role": "user", "content": "scene: red\n" + "red " * 140}]}
        clients = [threading.Thread(target=post, args=(port, long, 60)) for _ in range(3)]
        for c in clients:
            c.start()
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (proc.returncode, err)
    assert "Traceback" not in err
