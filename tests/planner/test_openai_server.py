"""A real OpenAI-compatible HTTP server on 127.0.0.1, driven by the real langchain_openai
client: scripted replies, injected 500s and 429s, slow replies, malformed bodies."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("langchain_openai")

from planner.backends import make_chat_model, parse_spec  # noqa: E402
from planner.hybrid import HybridPlanner  # noqa: E402
from planner.llm import LLMProposer  # noqa: E402
from tests.cli_helpers import sigint_default  # noqa: E402
from tests.planner.planner_worlds import make_world  # noqa: E402

VALID = {
    "steps": [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]
}
VAGUE = "wiggle the red block and then put it in the green bin"


def completion(content: str, tin=120, tout=30) -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout},
    }


class Script:
    """Queue of actions: ("ok", content) | ("status", code) | ("slow", seconds, content)
    | ("malformed", body)."""

    def __init__(self, *actions, refuse_formats=()):
        self.actions = list(actions)
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        #: response_format types answered with a 500 naming them, as llama.cpp's server does
        self.refuse_formats = set(refuse_formats)

    def next(self):
        with self.lock:
            return self.actions.pop(0) if self.actions else ("status", 500)


@pytest.fixture
def server():
    state = {"script": Script()}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _send(self, code, body: bytes, ctype="application/json", headers=None):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(n) or b"{}")
            script = state["script"]
            script.requests.append({"path": self.path, "body": body})
            if not self.path.endswith("/chat/completions"):
                return self._send(404, b'{"error": {"message": "not found"}}')
            fmt = (body.get("response_format") or {}).get("type")
            if fmt in script.refuse_formats:
                err = {
                    "error": {
                        "code": 500,
                        "type": "server_error",
                        "message": f"response_format type {fmt} failed to compile",
                    }
                }
                return self._send(500, json.dumps(err).encode())
            act = script.next()
            kind = act[0]
            if kind == "ok":
                return self._send(200, json.dumps(completion(act[1])).encode())
            if kind == "slow":
                time.sleep(act[1])
                return self._send(200, json.dumps(completion(act[2])).encode())
            if kind == "malformed":
                return self._send(200, act[1].encode())
            code = act[1]
            text = act[2] if len(act) > 2 else f"injected {code}"
            err = {"error": {"message": text, "type": "server_error"}}
            headers = {"retry-after": "0"} if code == 429 else None
            return self._send(code, json.dumps(err).encode(), headers=headers)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    t.start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield state
    httpd.shutdown()
    httpd.server_close()


def make_planner(
    server, script, *, mode="json_schema", timeout=2.0, retries=2, regen=1, monkeypatch=None, **kw
):
    server["script"] = script
    spec = parse_spec(
        f"openai:scripted?mode={mode}&timeout={timeout}&retries={retries}", base_url=server["url"]
    )
    model = make_chat_model(spec)
    llm = LLMProposer(
        model,
        name=str(spec),
        mode=spec.output_mode,
        timeout_s=spec.timeout_s,
        retries=spec.retries,
        backoff_s=0.01,
        backoff_max_s=0.05,
    )
    return HybridPlanner(llm, max_regenerations=regen, **kw)


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_valid_reply_with_structured_output_and_usage(server):
    script = Script(("ok", json.dumps(VALID)))
    o = make_planner(server, script).plan(VAGUE, make_world())
    assert o.decision == "accepted" and o.steps() == VALID["steps"]
    assert (o.usage.tokens_in, o.usage.tokens_out) == (120, 30)
    body = script.requests[0]["body"]
    assert body["response_format"]["type"] == "json_schema"
    assert "red_block" in json.dumps(body["response_format"]["json_schema"]["schema"])
    assert body["messages"][0]["role"] in ("system", "developer")


def test_json_mode_request(server):
    script = Script(("ok", json.dumps(VALID)))
    make_planner(server, script, mode="json_mode").plan(VAGUE, make_world())
    assert script.requests[0]["body"]["response_format"] == {"type": "json_object"}


def test_500_then_429_are_retried_within_one_attempt(server):
    script = Script(("status", 500), ("status", 429), ("ok", json.dumps(VALID)))
    o = make_planner(server, script).plan(VAGUE, make_world())
    assert [(a.proposer, a.decision) for a in o.attempts] == [("openai:scripted", "accepted")]
    assert o.usage.retries == 2 and len(script.requests) == 3


def test_slow_reply_times_out_then_retry_succeeds(server):
    script = Script(("slow", 4.0, json.dumps(VALID)), ("ok", json.dumps(VALID)))
    t0 = time.monotonic()
    o = make_planner(server, script, timeout=0.4).plan(VAGUE, make_world())
    assert time.monotonic() - t0 < 3.0  # well under the 4 s reply: the timeout fired
    assert o.decision == "accepted" and o.usage.retries == 1
    calls = o.attempts[0].meta["calls"]
    assert not calls[0]["ok"] and calls[0]["transient"] and "Timeout" in calls[0]["error"]


def test_malformed_body_is_an_error_attempt_then_regeneration(server):
    script = Script(("malformed", "{not json"), ("ok", json.dumps(VALID)))
    o = make_planner(server, script, retries=0).plan(VAGUE, make_world())
    assert [a.decision for a in o.attempts] == ["error", "accepted"]
    assert o.attempts[0].reasons[0].code == "planner_error"


def test_garbage_content_regenerates_with_reasons(server):
    script = Script(("ok", "Sure! I'd pick up the red one."), ("ok", json.dumps(VALID)))
    o = make_planner(server, script).plan(VAGUE, make_world())
    assert [a.decision for a in o.attempts] == ["rejected", "accepted"]
    second = script.requests[1]["body"]["messages"]
    assert second[-2]["role"] == "assistant" and "red one" in second[-2]["content"]
    assert "rejected" in second[-1]["content"]


def test_persistent_failure_falls_back_to_rules_then_safe_stop(server):
    # server keeps answering 500: every attempt errors after its retries
    script = Script()
    o = make_planner(server, script, retries=1, regen=1, route="model").plan(
        "put the red block in the green bin", make_world()
    )
    assert [(a.proposer, a.decision) for a in o.attempts] == [
        ("openai:scripted", "error"),
        ("openai:scripted", "error"),
        ("rules", "accepted"),
    ]
    assert o.decision == "fallback_accepted" and o.steps() == VALID["steps"]
    assert len(script.requests) == 4  # 2 attempts x (1 try + 1 retry)

    script = Script()
    o = make_planner(server, script, retries=0, regen=0).plan(VAGUE, make_world())
    assert o.decision == "safe_stop" and o.steps() == [{"skill": "home"}]


def test_unsupported_response_format_degrades_to_json_mode(server):
    script = Script(
        ("status", 400, "response_format json_schema is not supported"), ("ok", json.dumps(VALID))
    )
    o = make_planner(server, script).plan(VAGUE, make_world())
    assert o.decision == "accepted" and o.attempts[0].meta["mode"] == "json_mode"
    assert script.requests[1]["body"]["response_format"] == {"type": "json_object"}


def test_plain_400_is_not_retried(server):
    script = Script(("status", 400), ("ok", json.dumps(VALID)))
    o = make_planner(server, script, regen=0, route="model", rules_fallback=False).plan(
        VAGUE, make_world()
    )
    assert [a.decision for a in o.attempts] == ["error"] and len(script.requests) == 1


def test_500_naming_the_format_steps_down_instead_of_retrying(server):
    """Issue 11 item 10: llama.cpp's server answers json_schema with a 500; that was retried,
    then fell back to rules with 0 tokens recorded."""
    script = Script(("ok", json.dumps(VALID)), refuse_formats={"json_schema"})
    o = make_planner(server, script, retries=8, route="model").plan(VAGUE, make_world())
    assert o.decision == "accepted" and o.source != "rules"
    assert o.attempts[0].meta["mode"] == "json_mode"
    kinds = [(r["body"].get("response_format") or {}).get("type") for r in script.requests]
    assert kinds == ["json_schema", "json_object"]
    assert (o.usage.tokens_in, o.usage.tokens_out) == (120, 30)


def test_step_down_continues_to_plain_text_and_sticks(server):
    script = Script(
        ("ok", "no plan here"),
        ("ok", json.dumps(VALID)),
        refuse_formats={"json_schema", "json_object"},
    )
    o = make_planner(server, script, retries=8, route="model").plan(VAGUE, make_world())
    assert o.decision == "accepted"
    kinds = [(r["body"].get("response_format") or {}).get("type") for r in script.requests]
    # one refusal of each format, then plain text for the first answer and the regeneration
    assert kinds == ["json_schema", "json_object", None, None]


def test_regenerations_sample_with_new_seeds(server):
    """Issue 11 item 10: at temperature 0 a regeneration repeated the rejected answer word
    for word; regenerations now sample, each with its own seed."""
    script = Script(("ok", "I pick it."), ("ok", "I pick it."), ("ok", json.dumps(VALID)))
    o = make_planner(server, script, regen=2, route="model").plan(VAGUE, make_world())
    assert [a.decision for a in o.attempts] == ["rejected", "rejected", "accepted"]
    bodies = [r["body"] for r in script.requests]
    assert bodies[0]["temperature"] == 0.0 and "seed" not in bodies[0]
    assert bodies[1]["temperature"] >= 0.7 and bodies[2]["temperature"] >= 0.7
    assert bodies[1]["seed"] != bodies[2]["seed"]


def test_ctrl_c_during_a_model_call_exits_at_once_with_a_message(server, tmp_path):
    """Issue 10 D: Ctrl-C waited for the provider's timeout (25 s) and printed nothing."""
    import os
    import signal
    import subprocess
    import sys

    script = Script(("slow", 30.0, json.dumps(VALID)))
    server["script"] = script
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SKILLBRIDGE_"))}
    (tmp_path / "none.yaml").write_text("")  # an empty config: nothing configured
    env.update(MUJOCO_GL="egl", SKILLBRIDGE_CONFIG=str(tmp_path / "none.yaml"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from skillbridge.cli import run; run()",
            "plan",
            VAGUE,
            "--llm",
            "openai:scripted?timeout=60&retries=0",
            "--base-url",
            server["url"],
            "--route",
            "model",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
        env=env,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 120
        while not script.requests and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert script.requests, proc.communicate(timeout=5)
        time.sleep(0.3)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    assert took < 5.0, took
    assert "interrupted" in err and "Traceback" not in err


def test_errors_that_merely_mention_information_are_retried_not_stepped_down(server):
    """'format' in 'For more information' is no refusal of the response format."""
    busy = "Overloaded. For more information on this error, see the docs."
    script = Script(("status", 503, busy), ("status", 429, busy), ("ok", json.dumps(VALID)))
    o = make_planner(server, script, route="model").plan(VAGUE, make_world())
    assert o.decision == "accepted" and o.attempts[0].meta["mode"] == "json_schema"
    assert o.usage.retries == 2


def test_a_non_utf8_byte_in_the_task_reaches_the_provider(server):
    """Issue 23 item 18: a byte that is not UTF-8 arrives from argv as a lone surrogate,
    which the client cannot encode: every attempt was a planner_error."""
    script = Script(("ok", json.dumps(VALID)))
    o = make_planner(server, script, route="model").plan(
        "wiggle the red block\udcff then put it in the green bin", make_world()
    )
    assert o.decision == "accepted" and o.source == "openai:scripted", o.attempts
    sent = json.dumps(script.requests[0]["body"]["messages"], ensure_ascii=False)
    assert "block\ufffd then" in sent


def test_an_unreachable_server_is_asked_once_per_hold(server, monkeypatch):
    """Issue 23 item 5: with nothing listening each of the three attempts retried the
    connection with back-off; now the first failure is remembered for the next ones."""
    import socket

    from planner.errors import ProviderUnreachable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server["url"] = f"http://127.0.0.1:{port}/v1"
    planner = make_planner(server, Script(), retries=2, regen=2, route="model")
    o = planner.plan(VAGUE, make_world())
    model = [a for a in o.attempts if a.proposer == "openai:scripted"]
    assert [a.decision for a in model] == ["error"] * 3
    assert "unreachable" in model[0].reasons[0].message
    assert isinstance(planner.llm.failure, ProviderUnreachable)
    assert [c.latency_s for c in planner.llm.calls][1:] == [0.0, 0.0]
