"""The local llama.cpp backend (issue 11 item 10), with a stand-in ``llama_cpp`` module:
llama-cpp-python is optional and not installed here. The stand-in behaves like llama.cpp
where it matters: one generation at a time per object, output fixed by prompt, temperature
and seed."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
import types

import pytest

from planner.backends import make_chat_model, parse_spec
from planner.hybrid import HybridPlanner
from planner.llm import LLMProposer
from planner.local import default_threads
from tests.planner.planner_worlds import make_world

VALID = {
    "steps": [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "green_bin"}]
}
VAGUE = "wiggle the red block and then put it in the green bin"


class FakeLlama:
    """Records constructor arguments and calls; ``behaviour(call_no, kwargs)`` answers."""

    instances: list[FakeLlama] = []
    behaviour = None

    def __init__(self, model_path, **kw):
        self.init = {"model_path": model_path, **kw}
        self.chat_format = kw.get("chat_format")
        self.metadata = {}
        self.calls: list[dict] = []
        self.active = 0
        self.max_active = 0
        self._guard = threading.Lock()
        FakeLlama.instances.append(self)

    def create_chat_completion(self, messages, **kw):
        with self._guard:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.calls.append({"messages": messages, **kw})
            n = len(self.calls)
        try:
            content = type(self).behaviour(n, {"messages": messages, **kw})
        finally:
            with self._guard:
                self.active -= 1
        return {
            "choices": [{"message": {"content": content}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }


@pytest.fixture
def llama(monkeypatch, tmp_path):
    FakeLlama.instances = []
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=FakeLlama))

    def make(name="tiny.gguf", query="", behaviour=None, **proposer_kw):
        FakeLlama.behaviour = staticmethod(behaviour or (lambda n, kw: json.dumps(VALID)))
        gguf = tmp_path / name
        gguf.write_bytes(b"GGUF")
        spec = parse_spec(f"local:{gguf}{query}")
        return LLMProposer(
            make_chat_model(spec),
            name=str(spec),
            mode=spec.output_mode,
            timeout_s=spec.timeout_s,
            retries=spec.retries,
            temperature=spec.temperature,
            backoff_s=0.01,
            **proposer_kw,
        )

    return make


def test_timeout_never_starts_a_second_generation_on_the_same_model(llama):
    """A call past its timeout used to be retried while the first generation still ran on
    the same llama object: llama.cpp aborts the process (SIGABRT) on that."""

    def slow_once(n, kw):
        if n == 1:
            time.sleep(2.5)
        return json.dumps(VALID)

    llm = llama(query="?timeout=0.3&retries=3", behaviour=slow_once)
    o = HybridPlanner(llm, max_regenerations=1, route="model").plan(
        "put the red block in the green bin", make_world()
    )
    fake = FakeLlama.instances[0]
    assert fake.max_active == 1
    assert len(fake.calls) == 1  # nothing started beside the stuck generation
    assert o.attempts[0].decision == "error"
    assert o.decision in ("fallback_accepted", "safe_stop")


def test_calls_are_serialised_not_refused_when_the_model_frees_in_time(llama):
    def slowish(n, kw):
        time.sleep(0.3)
        return json.dumps(VALID)

    llm = llama(query="?timeout=5", behaviour=slowish)
    model = llm.model
    threads = [threading.Thread(target=model.invoke, args=("hi",)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    fake = FakeLlama.instances[0]
    assert len(fake.calls) == 3 and fake.max_active == 1


def test_threads_and_chat_format_are_set(llama):
    llama(name="gemma-2-2b-it-Q4_K_M.gguf").model.invoke("hi")
    fake = FakeLlama.instances[-1]
    assert fake.init["n_threads"] == default_threads() >= 1
    assert fake.init["n_threads_batch"] == fake.init["n_threads"]
    assert fake.chat_format == "gemma"  # no template in the file: guessed from its name

    llama(query="?threads=3&chat_format=chatml").model.invoke("hi")
    fake = FakeLlama.instances[-1]
    assert fake.init["n_threads"] == 3 and fake.init["chat_format"] == "chatml"


def test_template_in_the_gguf_wins_over_the_name_guess(llama, monkeypatch):
    orig = FakeLlama.__init__

    def with_template(self, model_path, **kw):
        orig(self, model_path, **kw)
        self.metadata = {"tokenizer.chat_template": "{{ messages }}"}

    monkeypatch.setattr(FakeLlama, "__init__", with_template)
    llama(name="gemma-2b.gguf").model.invoke("hi")
    assert FakeLlama.instances[-1].chat_format is None


def test_two_regenerations_give_different_answers(llama):
    """At temperature 0 Gemma repeated its rejected answer 18 times of 18. The stand-in is
    as deterministic as llama.cpp: greedy decoding ignores the prompt's feedback here, and
    sampling depends on the seed."""

    def answer(n, kw):
        if kw["temperature"] == 0:
            return "I will grab the red one."
        digest = hashlib.sha256(f"{kw['temperature']}|{kw['seed']}".encode()).hexdigest()
        return f"I will grab the red one ({digest[:8]})."

    llm = llama(behaviour=answer)
    o = HybridPlanner(llm, max_regenerations=2, route="model", rules_fallback=False).plan(
        VAGUE, make_world()
    )
    raws = [a.raw for a in o.attempts]
    assert len(raws) == 3 and len(set(raws[1:])) == 2 and raws[0] not in raws[1:]
    calls = FakeLlama.instances[0].calls
    assert calls[0]["temperature"] == 0.0
    assert calls[1]["seed"] != calls[2]["seed"]
