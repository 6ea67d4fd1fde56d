"""Spec parsing, optional backends with one-line errors, config sources, and the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.backends import BackendSpec, make_chat_model, parse_spec, resolve_spec
from planner.errors import BackendUnavailable, PlannerError


def test_parse_specs():
    s = parse_spec("openai:gpt-4o-mini")
    assert (s.provider, s.model, s.output_mode) == ("openai", "gpt-4o-mini", "json_schema")
    s = parse_spec("ollama:llama3.2?mode=json_mode&timeout=5&retries=1")
    assert (s.output_mode, s.timeout_s, s.retries) == ("json_mode", 5.0, 1)
    assert parse_spec("anthropic:claude-x").output_mode == "tool"
    assert parse_spec("local:/m/model.gguf").model == "/m/model.gguf"
    assert parse_spec("rules").provider == "rules"
    assert parse_spec("openai:m", base_url="http://x/v1").base_url == "http://x/v1"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "gpt4",
        "foo:bar",
        "openai:",
        "openai:m?mode=xml",
        "openai:m?timeout=-1",
        "openai:m?retries=x",
        "openai:m?timeout=inf",
        "openai:m?timeout=nan",
        "openai:m?timeout=1e9",
        "openai:m?temperature=nan",
        "openai:m?temperature=inf",
        "openai:m?temperature=-0.5",
        "openai:m?retries=100",
        "openai:m?tmeout=5",
        "openai:m?timeout=1&timeout=2",
        "rules:extra",
        "rules:",
        "rules?timeout=3",
        "local:m.gguf?threads=0",
        "local:m.gguf?chat_format=a%20b",
        "ollama:m?threads=2",
    ],
)
def test_bad_specs_are_one_line_errors(bad):
    with pytest.raises(PlannerError) as ei:
        parse_spec(bad)
    assert "\n" not in str(ei.value)


def test_spec_sources(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    monkeypatch.delenv("SKILLBRIDGE_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    from planner.embedded.model import available

    # nothing configured: the embedded model where it is installed, else the rules
    assert resolve_spec().provider == ("embedded" if available() else "rules")
    monkeypatch.setattr("planner.embedded.model.available", lambda *a: False)
    assert resolve_spec().provider == "rules"
    (tmp_path / "skillbridge.yaml").write_text("llm: ollama:qwen2.5\nbase_url: http://h:1\n")
    s = resolve_spec()
    assert (s.provider, s.model) == ("ollama", "qwen2.5")
    monkeypatch.setenv("SKILLBRIDGE_LLM", "openai:m2")
    assert resolve_spec().model == "m2"
    assert resolve_spec("anthropic:c").provider == "anthropic"


def test_missing_key_and_missing_extras(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendUnavailable, match="OPENAI_API_KEY"):
        make_chat_model(parse_spec("openai:m"))
    with pytest.raises(BackendUnavailable, match=r"skillbridge\[local\]"):
        make_chat_model(parse_spec("local:/nowhere/model.gguf"))
    import importlib.util

    if importlib.util.find_spec("langchain_ollama") is None:
        with pytest.raises(BackendUnavailable, match=r"skillbridge\[ollama\]"):
            make_chat_model(parse_spec("ollama:m"))
    if importlib.util.find_spec("langchain_anthropic") is None:
        with pytest.raises(BackendUnavailable, match=r"skillbridge\[anthropic\]"):
            make_chat_model(parse_spec("anthropic:m"))


def test_openai_with_base_url_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    m = make_chat_model(BackendSpec("openai", "m", base_url="http://127.0.0.1:9/v1"))
    assert type(m).__name__ == "ChatOpenAI" and m.max_retries == 0


runner = CliRunner()


def _app():
    from skillbridge.cli import app

    return app


def test_cli_plan_json():
    r = runner.invoke(
        _app(), ["plan", "put the red block in the green bin", "--cubes", "red,blue", "--json"]
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["decision"] == "accepted" and d["source"] == "rules"
    assert d["steps"][0] == {"skill": "pick", "object": "red_block"}
    assert d["usage"]["tokens_in"] == 0 and d["attempts"][0]["proposer"] == "rules"


def test_cli_plan_text_and_refusal():
    r = runner.invoke(_app(), ["plan", "put the purple block in the green bin", "--cubes", "red"])
    assert r.exit_code == 1 and "refused" in r.output and "purple" in r.output


def test_cli_bad_input_is_user_error():
    from skillbridge.errors import UserError

    for args in (
        ["plan", "x", "--llm", "foo:bar"],
        ["plan", "x", "--cubes", "pink"],
        ["plan", "  "],
        ["plan", "x", "--route", "magic"],
    ):
        r = runner.invoke(_app(), args)
        assert isinstance(r.exception, UserError), (args, r.output)
        assert "\n" not in str(r.exception)


def test_local_backend_uses_schema_constrained_decoding(monkeypatch, tmp_path):
    """llama-cpp-python is optional and not installed here: a stand-in module checks that
    the plan's JSON Schema reaches create_chat_completion as the decoding constraint."""
    import sys
    import types

    from planner.hybrid import HybridPlanner
    from planner.llm import LLMProposer
    from tests.planner.planner_worlds import make_world

    seen = {}

    class Llama:
        def __init__(self, model_path, **kw):
            seen["path"] = model_path

        def create_chat_completion(self, messages, response_format=None, **kw):
            seen["rf"] = response_format
            plan = {"steps": [{"skill": "pick", "object": "red_block"}]}
            return {
                "choices": [{"message": {"content": json.dumps(plan)}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            }

    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=Llama))
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    spec = parse_spec(f"local:{gguf}")
    llm = LLMProposer(make_chat_model(spec), name=str(spec), mode=spec.output_mode)
    o = HybridPlanner(llm).plan("wiggle the red block", make_world())
    assert o.decision == "accepted" and seen["path"] == str(gguf)
    assert seen["rf"]["type"] == "json_object" and "red_block" in json.dumps(seen["rf"]["schema"])
    assert (o.usage.tokens_in, o.usage.tokens_out) == (7, 3)
    with pytest.raises(PlannerError, match="not found"):
        make_chat_model(parse_spec(f"local:{tmp_path / 'missing.gguf'}"))


@pytest.mark.parametrize(
    "spec", ["openai:m?timeout=inf", "openai:m?temperature=nan", "rules:extra"]
)
def test_cli_rejects_bad_llm_spec_with_exit_2(monkeypatch, capsys, spec):
    """Issue 10 E: these were accepted, then fell back to rules silently with exit 0."""
    from tests.cli_helpers import run_cli

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    code, out, err = run_cli(
        monkeypatch, capsys, "plan", "put the red block in the green bin", "--llm", spec
    )
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "--llm" in err and "Traceback" not in err


def test_config_timeout_is_checked(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLBRIDGE_LLM", raising=False)
    monkeypatch.setenv("SKILLBRIDGE_CONFIG", str(tmp_path / "c.yaml"))
    for bad in ("-5", ".inf", "soon"):
        (tmp_path / "c.yaml").write_text(f"llm: openai:m\ntimeout: {bad}\n")
        with pytest.raises(PlannerError, match="timeout"):
            resolve_spec()
    (tmp_path / "c.yaml").write_text("llm: openai:m\ntimeout: 7\n")
    assert resolve_spec().timeout_s == 7.0
    (tmp_path / "c.yaml").write_text("llm: {spec: 'openai:m', timeout: 0}\n")
    with pytest.raises(PlannerError, match="timeout"):
        resolve_spec()
    (tmp_path / "c.yaml").write_text("llm: 5\n")
    with pytest.raises(PlannerError, match="llm must be"):
        resolve_spec()


def test_local_options_parsed():
    s = parse_spec("local:/m/x.gguf?threads=3&chat_format=gemma&ctx=2048")
    assert s.options == {"threads": 3, "chat_format": "gemma", "ctx": 2048}


def test_probe_says_when_nothing_listens():
    """For verbs that run many plans (eval): a server that is down, found before any work."""
    import socket

    from planner.backends import probe

    with socket.socket() as live:
        live.bind(("127.0.0.1", 0))
        live.listen()
        port = live.getsockname()[1]
        assert probe(parse_spec(f"embedded:http://127.0.0.1:{port}/v1")) is None
        assert probe(parse_spec("openai:m", base_url=f"http://127.0.0.1:{port}/v1")) is None
    why = probe(parse_spec(f"embedded:http://127.0.0.1:{port}/v1"), timeout_s=1.0)
    assert why is not None and "refused" in why and str(port) in why
    assert probe(parse_spec("rules")) is None and probe(parse_spec("embedded")) is None
    assert "unknown host" in (probe(parse_spec("embedded:http://no-such-host.invalid:1/v1")) or "")


def test_unreachable_knows_each_clients_connect_failure():
    """The openai and anthropic clients wrap httpx's ConnectError; the ollama client raises
    its own ConnectionError ``from None``; a server that answered is not unreachable."""
    from planner.llm import unreachable

    class ConnectError(Exception):  # httpx's name, as the SDKs chain it
        pass

    wrapped = RuntimeError("Connection error.")
    wrapped.__cause__ = ConnectError("[Errno 111] Connection refused")
    assert unreachable(wrapped) == "connection refused"
    assert unreachable(ConnectionError("Failed to connect to Ollama. Please check")) == (
        "cannot connect"
    )
    assert unreachable(ConnectionRefusedError(111, "refused")) == "connection refused"
    assert unreachable(ConnectionResetError(104, "reset")) is None
    assert unreachable(RuntimeError("Error code: 500")) is None
