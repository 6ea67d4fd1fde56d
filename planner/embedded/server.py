"""A small OpenAI-compatible HTTP server for the embedded planner model.

Why: one loaded model can serve several processes or machines (``eval`` workers, a robot
and a laptop), through the same OpenAI chat-completions protocol every provider client
speaks. Clients use ``--llm embedded:http://HOST:PORT/v1``: the reply is the command, which
the client grounds in its own scene with the rules planner, as with the in-process model.

    python -m planner.embedded.server [--host 127.0.0.1] [--port 8765] [--adapter DIR]

Only ``POST /v1/chat/completions`` and ``GET /v1/models``; bodies over 1 MB are refused.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.embedded.model import EmbeddedModel

MODEL_ID = "skillbridge-embedded"
MAX_BODY = 1 << 20


def make_handler(engine: EmbeddedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "skillbridge-planner/1"

        def log_message(self, fmt: str, *args: Any) -> None:
            """Silent: a planner call is not an event worth a log line."""

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, code: int, message: str) -> None:
            self._send(code, {"error": {"message": message, "type": "invalid_request_error"}})

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": MODEL_ID, "object": "model", "owned_by": "skillbridge"}],
                    },
                )
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                return self._error(404, f"no route {self.path}")
            try:
                n = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                return self._error(400, "bad Content-Length")
            if n <= 0 or n > MAX_BODY:
                return self._error(413 if n > MAX_BODY else 400, "body missing or too large")
            try:
                req = json.loads(self.rfile.read(n))
                msgs = req["messages"]
                text = next(
                    str(m.get("content", "")) for m in reversed(msgs) if m.get("role") == "user"
                )
                temperature = float(req.get("temperature") or 0.0)
                seed = int(req.get("seed") or 0)
            except (ValueError, KeyError, TypeError, StopIteration, AttributeError):
                return self._error(400, "expected {messages: [{role: user, content}]}")
            if not 0.0 <= temperature <= 2.0:
                return self._error(400, "temperature must be in [0, 2]")
            r = engine.rewrite(
                text, temperature=temperature, seed=seed, no_refusal=bool(req.get("no_refusal"))
            )
            self._send(
                200,
                {
                    "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": MODEL_ID,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": r.text},
                        }
                    ],
                    "usage": {
                        "prompt_tokens": r.tokens_in,
                        "completion_tokens": r.tokens_out,
                        "total_tokens": r.tokens_in + r.tokens_out,
                    },
                },
            )

    return Handler


def serve(
    host: str,
    port: int,
    adapter: Path | None = None,
    threads: int | None = None,
    ready: Callable[[ThreadingHTTPServer], None] | None = None,
) -> None:
    from planner.embedded.model import get_model

    engine = get_model(adapter, threads)
    httpd = ThreadingHTTPServer((host, port), make_handler(engine))
    if ready is not None:
        ready(httpd)
    print(f"serving {MODEL_ID} on http://{host}:{httpd.server_address[1]}/v1", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Serve the embedded planner model (OpenAI API).")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--adapter", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=None)
    a = ap.parse_args(argv)
    serve(a.host, a.port, a.adapter, a.threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
