"""The embedded model's server follows the OpenAI conventions a client relies on, checked
with the official ``openai`` client and langchain-openai's ``ChatOpenAI`` against a real
server on 127.0.0.1 (a scripted engine behind it, as in test_embedded_server.py): streaming
chunks, ``response_format`` refused with a 400, ``max_tokens``, ``n``, unknown model names
rejected, ``created`` in the models list."""

from __future__ import annotations

import threading

import pytest

from planner.embedded.server import MODEL_ID, PlannerHTTPServer
from tests.planner.test_embedded_server import ScriptedEngine

openai = pytest.importorskip("openai")

USER = [{"role": "user", "content": "red in the blue bin"}]


@pytest.fixture
def client():
    engine = ScriptedEngine()
    httpd = PlannerHTTPServer(("127.0.0.1", 0), engine)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    c = openai.OpenAI(base_url=base, api_key="none", max_retries=0, timeout=10)
    c.engine = engine  # type: ignore[attr-defined]
    c.base = base  # type: ignore[attr-defined]
    yield c
    httpd.stop(1)
    httpd.shutdown()
    httpd.server_close()


def test_streaming_gives_chunks_and_usage(client):
    chunks = list(
        client.chat.completions.create(
            model=MODEL_ID, messages=USER, stream=True, stream_options={"include_usage": True}
        )
    )
    assert len(chunks) >= 3
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "put the red block in the blue bin"
    assert chunks[0].choices[0].delta.role == "assistant"
    finish = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finish[-1] == "stop" and all(f is None for f in finish[:-1])
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 9


def test_langchain_streams_too(client):
    lc = pytest.importorskip("langchain_openai")
    chat = lc.ChatOpenAI(model=MODEL_ID, base_url=client.base, api_key="none", max_retries=0)
    parts = [m.content for m in chat.stream("red in the blue bin")]
    assert "".join(parts) == "put the red block in the blue bin"


def test_response_format_json_is_a_400(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model=MODEL_ID, messages=USER, response_format={"type": "json_object"}
        )
    assert "response_format" in str(e.value)


def test_unknown_model_is_rejected(client):
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="gpt-4o", messages=USER)
    assert e.value.code == "model_not_found" and "gpt-4o" in str(e.value)


def test_n_gives_that_many_choices_with_their_own_seeds(client):
    r = client.chat.completions.create(model=MODEL_ID, messages=USER, n=3, seed=7)
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert [s["seed"] for s in client.engine.seen] == [7, 8, 9]
    assert r.usage.completion_tokens == 27
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=MODEL_ID, messages=USER, n=5)


def test_max_tokens_is_passed_and_a_full_budget_says_length(client):
    r = client.chat.completions.create(model=MODEL_ID, messages=USER, max_tokens=9)
    assert r.choices[0].finish_reason == "length"
    r = client.chat.completions.create(model=MODEL_ID, messages=USER, max_tokens=50)
    assert r.choices[0].finish_reason == "stop"


def test_models_list_has_created(client):
    models = client.models.list().data
    assert [m.id for m in models] == [MODEL_ID]
    assert models[0].created > 1_600_000_000
