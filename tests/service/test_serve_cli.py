"""``skillbridge serve`` and ``skillbridge mcp`` refuse bad settings with one line and exit
2 before anything starts (no port bound, no worker spawned); the request guard (token,
size, rate) on a tiny ASGI app."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run_cli

pytest.importorskip("fastapi")


@pytest.mark.parametrize(
    "args, words",
    [
        (["--host", "0.0.0.0"], "needs --token"),
        (["--host", "192.0.2.1", "--token", "short"], "at least 16"),
        (["--workers", "0"], "--workers"),
        (["--queue", "-1"], "--queue"),
        (["--task-timeout", "0"], "--task-timeout"),
        (["--rate", "0"], "--rate"),
        (["--llm", "nonsense:x"], ""),
    ],
)
def test_bad_settings_are_one_line(monkeypatch, capsys, tmp_path, args, words):
    code, out, err = run_cli(monkeypatch, capsys, "serve", "--runs", str(tmp_path), *args)
    assert code == 2, (out, err)
    line = err.strip()
    assert "\n" not in line and "Traceback" not in err, err
    assert words in line


def test_mcp_bad_cubes_is_one_line(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "mcp", "--cubes", "purple", "--runs", str(tmp_path))
    assert code == 2 and "\n" not in err.strip() and "Traceback" not in err, err


def _guarded(**kw):
    import httpx

    from skillbridge.service.security import Buckets, Guard

    async def app(scope, receive, send):
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(body)).encode()})

    guard = Guard(
        app,
        token=kw.get("token"),
        max_body=kw.get("max_body", 100),
        buckets=Buckets(kw.get("rate", 1000.0), kw.get("burst", 1000)),
    )
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=guard), base_url="http://t")


def test_guard_token_size_and_rate():
    import anyio

    async def go():
        async with _guarded(token="t" * 20) as c:
            assert (await c.get("/sessions")).status_code == 401
            wrong = {"authorization": "Bearer " + "x" * 20}
            assert (await c.get("/sessions", headers=wrong)).status_code == 401
            ok = {"authorization": "Bearer " + "t" * 20}
            assert (await c.get("/sessions", headers=ok)).status_code == 200
            assert (await c.get("/")).status_code == 200  # the page loads without it
        async with _guarded(max_body=100) as c:
            assert (await c.post("/x", content=b"a" * 100)).text == "100"
            assert (await c.post("/x", content=b"a" * 101)).status_code == 413

            async def chunks():  # no Content-Length: counted as it arrives
                for _ in range(10):
                    yield b"a" * 50

            assert (await c.post("/x", content=chunks())).status_code == 413
        async with _guarded(rate=0.5, burst=2) as c:
            codes = [(await c.get("/x")).status_code for _ in range(4)]
            assert codes[:2] == [200, 200] and codes[2] == 429
            r = await c.get("/x")
            assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1

    anyio.run(go)
