"""A small OpenAI-compatible HTTP server for the embedded planner model.

Why: one loaded model can serve several processes or machines (``eval`` workers, a robot
and a laptop), through the same OpenAI chat-completions protocol every provider client
speaks. Clients use ``--llm embedded:http://HOST:PORT/v1``: the reply is the command, which
the client grounds in its own scene with the rules planner, as with the in-process model.

    python -m planner.embedded.server [--host 127.0.0.1] [--port 8765] [--adapter DIR]

Only ``POST /v1/chat/completions`` and ``GET /v1/models``. Why so strict: one model answers
one request at a time, so nothing a client sends may hold it for long or take the server
down. Bodies over 1 MB are refused (413); a body that is not a chat request (not JSON, not
an object, a wrong type, a number out of range, a field this server does not implement
such as ``tools``, ``n`` > 4 or a ``response_format`` other than text) gets a 400 naming
what is wrong rather than being ignored; a model name other than ours is a 404
(``model_not_found``); ``stream`` answers in server-sent chunks (and the usage with
``stream_options.include_usage``), ``n`` gives that many completions (seeds ``seed + i``),
``max_tokens`` bounds each (``finish_reason`` ``length`` when it used them all); a prompt
past the model's context is a 400 (``context_length_exceeded``); the wait for the model
and the generation are bounded (503); a client has ``REQUEST_TIMEOUT_S`` to send its whole
request (slowloris) and at most ``MAX_CONNECTIONS`` are served at once. Ctrl-C lets the
answer in progress stop at its next token and exits 0; a startup error (port in use, bad
adapter) is one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)

from planner.errors import GenerationTimeout, PlannerError, PromptTooLong

if TYPE_CHECKING:
    from planner.embedded.model import Rewrite

MODEL_ID = "skillbridge-embedded"
MAX_BODY = 1 << 20
#: Seconds a client has to send its request line, headers and body (and the socket
#: timeout of each read): a client that sends half a request is dropped after this.
REQUEST_TIMEOUT_S = 10.0
#: Connections served at once; more are answered 503 at once and closed.
MAX_CONNECTIONS = 32
#: Seconds a request waits for the model while another is answered, and the bound of one
#: generation (a real one takes well under a second).
WAIT_S = 30.0
GENERATION_S = 20.0
#: Seconds Ctrl-C waits for the requests in progress before exiting anyway.
STOP_WAIT_S = 10.0
#: What a client may send, and what it may not (with the reason it is refused).
UNSUPPORTED = {
    "tools": "this server has no tools: the reply is a command in plain text",
    "tool_choice": "this server has no tools: the reply is a command in plain text",
    "functions": "this server has no functions: the reply is a command in plain text",
    "function_call": "this server has no functions: the reply is a command in plain text",
    "response_format": "response_format is not supported: the reply is a command in plain text",
    "logprobs": "logprobs are not supported",
    "top_logprobs": "logprobs are not supported",
}
#: Completions one request may ask for (``n``): each is a generation with its own seed.
MAX_N = 4
#: The model names a request may carry (none is the same as ours).
MODEL_NAMES = (MODEL_ID,)
#: When this server's model came to be, for ``created`` in the models list.
CREATED = int(time.time())


class Engine(Protocol):
    """What the server needs of a model (:class:`planner.embedded.model.EmbeddedModel`)."""

    def rewrite(
        self,
        user: str,
        *,
        temperature: float = ...,
        seed: int = ...,
        max_new_tokens: int = ...,
        no_refusal: bool = ...,
        deadline_s: float | None = ...,
        wait_s: float | None = ...,
        cancel: threading.Event | None = ...,
    ) -> Rewrite: ...


StrictFloat = Annotated[float, Strict()]  # an int is a float; a bool or a string is not


class _StreamOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    include_usage: StrictBool = False


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: StrictStr
    text: StrictStr = ""


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: StrictStr = Field(max_length=32)
    content: StrictStr | list[_Part] | None = None


class ChatRequest(BaseModel):
    """The chat-completions fields this server implements; any other is refused."""

    model_config = ConfigDict(extra="forbid")
    model: StrictStr | None = Field(default=None, max_length=200)
    messages: list[_Message] = Field(min_length=1, max_length=64)
    temperature: StrictFloat | None = Field(default=None, ge=0.0, le=2.0, allow_inf_nan=False)
    top_p: StrictFloat | None = Field(default=None, ge=1.0, le=1.0)  # only the no-op value
    seed: StrictInt | None = Field(default=None, ge=-(2**63), lt=2**64)
    max_tokens: StrictInt | None = Field(default=None, ge=1, le=1 << 20)
    max_completion_tokens: StrictInt | None = Field(default=None, ge=1, le=1 << 20)
    n: StrictInt | None = Field(default=None, ge=1, le=MAX_N)
    stream: StrictBool | None = None
    stream_options: _StreamOptions | None = None
    stop: None = None
    user: StrictStr | None = Field(default=None, max_length=256)
    no_refusal: StrictBool = False

    def text(self) -> str:
        """The last user message: the command is written for it."""
        for m in reversed(self.messages):
            if m.role == "user":
                c = m.content
                if isinstance(c, list):
                    return "".join(p.text for p in c if p.type == "text")
                return c or ""
        raise ValueError("no user message")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_request(body: bytes) -> ChatRequest:
    """The request in ``body``, or ``ValueError`` with a one-line reason (the 400's text)."""
    try:
        data = json.loads(body, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("the body is nested too deeply") from None
    except ValueError as e:  # also bad UTF-8 and integers of over 4300 digits
        raise ValueError(f"the body is not JSON: {str(e).splitlines()[0][:120]}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the body must be a JSON object, not {type(data).__name__}")
    for key, why in UNSUPPORTED.items():
        harmless: tuple[Any, ...] = (
            (None, {"type": "text"}) if key == "response_format" else (None, False, [])
        )
        if key in data and data[key] not in harmless:
            raise ValueError(f"{key}: {why}")
    if data.get("stream_options") is not None and data.get("stream") is not True:
        raise ValueError("stream_options: only allowed with stream true")
    try:
        req = ChatRequest.model_validate({k: v for k, v in data.items() if k not in UNSUPPORTED})
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "body"
        if first.get("type") == "extra_forbidden":
            raise ValueError(f"{where}: this server does not implement that field") from None
        raise ValueError(f"{where}: {first.get('msg', 'invalid')}"[:200]) from None
    for m in req.messages:
        if isinstance(m.content, list) and any(part.type != "text" for part in m.content):
            raise ValueError("messages: only text content is supported (no images, no audio)")
    try:
        req.text()
    except ValueError:
        raise ValueError("messages: no message with role user") from None
    return req


class PlannerHTTPServer(ThreadingHTTPServer):
    """The HTTP server with the limits above and a clean stop."""

    daemon_threads = True
    request_timeout_s = REQUEST_TIMEOUT_S
    wait_s = WAIT_S
    generation_s = GENERATION_S

    def __init__(
        self,
        address: tuple[str, int],
        engine: Engine | None = None,
        *,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        super().__init__(address, make_handler())
        self.engine = engine
        #: set on Ctrl-C: generations stop at their next token
        self.stopping = threading.Event()
        self._slots = threading.BoundedSemaphore(max_connections)
        self._active: set[socket.socket] = set()
        self._active_lock = threading.Condition()

    def process_request(self, request: Any, client_address: Any) -> None:
        if self.stopping.is_set() or not self._slots.acquire(blocking=False):
            _refuse_busy(request)
            return
        with self._active_lock:
            self._active.add(request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done(request)

    def _done(self, request: Any) -> None:
        with self._active_lock:
            if request in self._active:
                self._active.discard(request)
                self._slots.release()
            self._active_lock.notify_all()

    def stop(self, wait_s: float = STOP_WAIT_S) -> int:
        """Stop answering: cancel generations, drop connections still sending, and wait up
        to ``wait_s`` for the rest; the number of requests still running after it."""
        self.stopping.set()
        deadline = time.monotonic() + wait_s
        with self._active_lock:
            for s in list(self._active):
                try:
                    s.shutdown(socket.SHUT_RD)  # a reader sees the end; a writer can finish
                except OSError:
                    pass
            while self._active and time.monotonic() < deadline:
                self._active_lock.wait(0.05)
            return len(self._active)


def _refuse_busy(request: socket.socket) -> None:
    body = json.dumps(
        {"error": {"message": "the server is busy; try again", "type": "server_busy"}}
    ).encode()
    try:
        request.settimeout(1.0)
        request.sendall(
            b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\nRetry-After: 1\r\n\r\n".encode()
            + body
        )
        # close gracefully: a socket closed with the client's request still unread is
        # reset, and the client loses the 503 it was sent; read (briefly, boundedly) first
        request.shutdown(socket.SHUT_WR)
        request.settimeout(0.2)
        drained = 0
        while drained < 1 << 16 and (chunk := request.recv(4096)):
            drained += len(chunk)
    except OSError:
        pass
    finally:
        try:
            request.close()
        except OSError:
            pass


class PlannerHandler(BaseHTTPRequestHandler):
    """One connection: one request (HTTP/1.0), read within the server's time limit."""

    server_version = "skillbridge-planner/1"
    server: PlannerHTTPServer
    #: the model, when not the server's ``engine``
    engine: Engine | None = None

    def setup(self) -> None:
        limit = float(getattr(self.server, "request_timeout_s", REQUEST_TIMEOUT_S))
        self.request.settimeout(limit)  # each read (StreamRequestHandler's ``timeout``)
        super().setup()
        # the whole request must arrive in time, not only each read: a client sending
        # one byte every few seconds would otherwise hold its thread for ever
        self._reading = threading.Timer(limit, self._drop)
        self._reading.daemon = True
        self._reading.start()

    def finish(self) -> None:
        self._reading.cancel()
        try:
            super().finish()
        except OSError:
            pass

    def _drop(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def log_message(self, fmt: str, *args: Any) -> None:
        """Silent: a planner call is not an event worth a log line."""

    def _send(self, code: int, body: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client went away: nobody to tell

    def _linger(self, limit: int = 4 * MAX_BODY, seconds: float = 0.5) -> None:
        """Close after an answer sent before the body was read: shut the write side and
        read what the client still sends (bounded in bytes and time). A socket closed with
        unread data is reset, and the client would lose the answer it was sent."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.1)
            end, got = time.monotonic() + seconds, 0
            while got < limit and time.monotonic() < end:
                chunk = self.connection.recv(1 << 16)
                if not chunk:
                    break
                got += len(chunk)
        except OSError:
            pass

    def _error(
        self, status: int, message: str, kind: str = "invalid_request_error", **extra: str
    ) -> None:
        err = {"message": message, "type": kind, **extra}
        retry = {"Retry-After": "1"} if status == 503 else None
        self._send(status, {"error": err}, retry)

    def do_GET(self) -> None:
        self._reading.cancel()
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": MODEL_ID,
                            "object": "model",
                            "created": CREATED,
                            "owned_by": "skillbridge",
                        }
                    ],
                },
            )
        else:
            self._error(404, f"no route {self.path[:200]}")

    def do_POST(self) -> None:
        try:
            self._post()
        except Exception as e:  # noqa: BLE001 - any surprise is a 500, never a dead thread
            self._error(500, f"internal error: {type(e).__name__}", "server_error")

    def _post(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._reading.cancel()
            return self._error(404, f"no route {self.path[:200]}")
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return self._error(400, "bad Content-Length")
        if n <= 0 or n > MAX_BODY:
            self.close_connection = True
            self._error(
                413 if n > MAX_BODY else 400,
                f"body too large (over {MAX_BODY} bytes)" if n > MAX_BODY else "no body",
            )
            return self._linger()
        try:
            body = self.rfile.read(n)
        except OSError:
            return  # dropped for sending too slowly
        self._reading.cancel()
        if len(body) < n:
            return  # the client went away, or was dropped mid-body
        try:
            req = parse_request(body)
        except ValueError as e:
            return self._error(400, str(e))
        if req.model is not None and req.model not in MODEL_NAMES:
            return self._error(
                404,
                f"the model {req.model[:80]!r} does not exist; this server has {MODEL_ID!r}",
                code="model_not_found",
            )
        self._answer(req)

    def _answer(self, req: ChatRequest) -> None:
        model = self.engine if self.engine is not None else self.server.engine
        if model is None:
            return self._error(503, "the model is still loading", "server_busy")
        limit = req.max_completion_tokens or req.max_tokens
        outs = []
        for i in range(req.n or 1):  # n completions: the same request with seeds seed + i
            try:
                outs.append(
                    model.rewrite(
                        req.text(),
                        temperature=float(req.temperature or 0.0),
                        seed=int(req.seed or 0) + i,
                        no_refusal=req.no_refusal,
                        **({"max_new_tokens": limit} if limit else {}),
                        deadline_s=getattr(self.server, "generation_s", GENERATION_S),
                        wait_s=getattr(self.server, "wait_s", WAIT_S),
                        cancel=getattr(self.server, "stopping", None),
                    )
                )
            except PromptTooLong as e:
                return self._error(400, str(e), code="context_length_exceeded")
            except GenerationTimeout as e:
                stopping = getattr(self.server, "stopping", None)
                if stopping is not None and stopping.is_set():
                    return self._error(503, "the server is shutting down", "server_busy")
                return self._error(503, str(e), "server_busy")
            except PlannerError as e:
                return self._error(500, str(e).splitlines()[0][:300], "server_error")
        t_in = outs[0].tokens_in
        t_out = sum(r.tokens_out for r in outs)
        usage = {"prompt_tokens": t_in, "completion_tokens": t_out, "total_tokens": t_in + t_out}
        head = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "created": int(time.time()),
            "model": MODEL_ID,
        }
        # "length": the reply used every token it was allowed (it may be cut short)
        why = ["length" if limit and r.tokens_out >= limit else "stop" for r in outs]
        if req.stream:
            opts = req.stream_options
            return self._stream(head, outs, why, usage if opts and opts.include_usage else None)
        choices = [
            {
                "index": i,
                "finish_reason": why[i],
                "message": {"role": "assistant", "content": r.text},
            }
            for i, r in enumerate(outs)
        ]
        self._send(200, {**head, "object": "chat.completion", "choices": choices, "usage": usage})

    def _stream(self, head: dict, outs: list, why: list[str], usage: dict | None) -> None:
        """The completions as server-sent events, as OpenAI streams them: per choice a
        chunk with the role, one with the content and one with the finish reason; the usage
        in a last chunk of no choices when asked for; then ``data: [DONE]``. The reply is
        generated whole before the first chunk (the model answers in well under a second),
        so an error is still a plain JSON error, never a broken stream."""
        chunk = {**head, "object": "chat.completion.chunk"}
        events = []
        for i, r in enumerate(outs):
            for delta, finish in (
                ({"role": "assistant", "content": ""}, None),
                ({"content": r.text}, None),
                ({}, why[i]),
            ):
                choice = {"index": i, "delta": delta, "finish_reason": finish}
                events.append({**chunk, "choices": [choice]})
        if usage is not None:
            events.append({**chunk, "choices": [], "usage": usage})
        body = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
        body += b"data: [DONE]\n\n"
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client went away: nobody to tell


def make_handler(engine: Engine | None = None) -> type[BaseHTTPRequestHandler]:
    """The request handler class; the model is ``engine``, else the server's ``engine``."""
    return type("Handler", (PlannerHandler,), {"engine": engine})


def serve(
    host: str,
    port: int,
    adapter: Path | None = None,
    threads: int | None = None,
    ready: Callable[[ThreadingHTTPServer], None] | None = None,
    engine: Engine | None = None,
) -> int:
    """Bind, load the model, serve until Ctrl-C (or SIGTERM); the exit status. The port is
    bound before the model loads, so a port in use costs no load; both are one line."""
    try:
        httpd = PlannerHTTPServer((host, port))
    except (OSError, OverflowError) as e:
        why = getattr(e, "strerror", None) or str(e)
        print(f"error: cannot serve on {host}:{port}: {why}", file=sys.stderr, flush=True)
        return 2
    try:
        if engine is None:
            from planner.embedded.model import check_adapter, get_model

            check_adapter(adapter)
            engine = get_model(adapter, threads)
        httpd.engine = engine
    except (PlannerError, KeyboardInterrupt) as e:
        httpd.server_close()
        if isinstance(e, KeyboardInterrupt):
            print("interrupted while loading the model", file=sys.stderr, flush=True)
            return 130
        print(f"error: {str(e).splitlines()[0]}", file=sys.stderr, flush=True)
        return 2
    if ready is not None:
        ready(httpd)
    print(f"serving {MODEL_ID} on http://{host}:{httpd.server_address[1]}/v1", flush=True)
    _sigterm_as_interrupt()
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    try:
        left = httpd.stop()
    except KeyboardInterrupt:  # a second Ctrl-C: leave now
        left = -1
    httpd.server_close()
    print("stopped serving", file=sys.stderr, flush=True)
    if left:
        # a request still runs inside the model: exiting the interpreter under it aborts
        # the process (SIGABRT, exit 134), so leave without finalising
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


def _sigterm_as_interrupt() -> None:
    import signal

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be in 0..65535, not {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Serve the embedded planner model (OpenAI API).")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=_port, default=8765)
    ap.add_argument("--adapter", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=None)
    a = ap.parse_args(argv)
    return serve(a.host, a.port, a.adapter, a.threads)


if __name__ == "__main__":
    raise SystemExit(main())
