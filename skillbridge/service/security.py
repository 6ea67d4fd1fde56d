"""The bearer token, the request size limit and the rate limit, as one ASGI middleware.

Why ASGI and not a FastAPI dependency: the size limit must hold before a body is read (a
client that sends a gigabyte without a Content-Length is cut off when it passes the
limit), and the rate limit must cover every path, the unknown ones too.
"""

from __future__ import annotations

import hmac
import json
import math
import threading
import time
from typing import Any

#: Paths served without the token: the page and its files, and the API's description
#: (nothing in them is secret; every call they make carries the token).
PUBLIC = ("/", "/docs", "/openapi.json", "/favicon.ico")
PUBLIC_PREFIXES = ("/static/", "/docs/")


class _TooLarge(Exception):
    pass


class Buckets:
    """A token bucket per client address: ``rate`` requests a second, ``burst`` at once."""

    def __init__(self, rate: float, burst: int, max_clients: int = 10_000) -> None:
        self.rate, self.burst = float(rate), float(burst)
        self.max_clients = max_clients
        self._lock = threading.Lock()
        self._b: dict[str, tuple[float, float]] = {}

    def take(self, who: str) -> float:
        """0 when the request may go, else the seconds until it could."""
        now = time.monotonic()
        with self._lock:
            tokens, t = self._b.get(who, (self.burst, now))
            tokens = min(self.burst, tokens + (now - t) * self.rate)
            if tokens >= 1:
                if len(self._b) >= self.max_clients and who not in self._b:
                    self._b.clear()  # a flood of addresses: start over rather than grow
                self._b[who] = (tokens - 1, now)
                return 0.0
            self._b[who] = (tokens, now)
            return (1 - tokens) / self.rate


async def _send_json(send: Any, status: int, body: dict, headers: list | None = None) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


class Guard:
    """Wraps the app: 401 without the token (when one is set), 413 past ``max_body``
    bytes, 429 with Retry-After past the rate."""

    def __init__(self, app: Any, *, token: str | None, max_body: int, buckets: Buckets) -> None:
        self.app = app
        self.token = token
        self.max_body = max_body
        self.buckets = buckets

    def _authorised(self, scope: dict) -> bool:
        if not self.token:
            return True
        path = scope.get("path", "")
        if path in PUBLIC or path.startswith(PUBLIC_PREFIXES):
            return True
        for k, v in scope.get("headers", []):
            if k == b"authorization":
                given = v.decode("latin-1")
                return hmac.compare_digest(given, f"Bearer {self.token}")
        return False

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("?", 0))[0]
        wait = self.buckets.take(str(client))
        if wait > 0:
            await _send_json(
                send,
                429,
                {"detail": "too many requests"},
                [(b"retry-after", str(max(1, math.ceil(wait))).encode())],
            )
            return
        if not self._authorised(scope):
            await _send_json(
                send,
                401,
                {"detail": "a bearer token is required"},
                [(b"www-authenticate", b"Bearer")],
            )
            return
        for k, v in scope.get("headers", []):
            if k == b"content-length":
                try:
                    n = int(v)
                except ValueError:
                    n = self.max_body + 1
                if n > self.max_body:
                    await _send_json(
                        send, 413, {"detail": f"the body is larger than {self.max_body} bytes"}
                    )
                    return
        seen = [0]
        limit = self.max_body

        async def bounded() -> dict:
            msg = await receive()
            if msg["type"] == "http.request":
                seen[0] += len(msg.get("body", b""))
                if seen[0] > limit:
                    raise _TooLarge()
            return msg

        started = [False]

        async def watch(msg: dict) -> None:
            if msg["type"] == "http.response.start":
                started[0] = True
            await send(msg)

        try:
            await self.app(scope, bounded, watch)
        except _TooLarge:
            if not started[0]:
                await _send_json(
                    send, 413, {"detail": f"the body is larger than {self.max_body} bytes"}
                )
