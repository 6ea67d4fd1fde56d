"""Property-based fuzzing: the bridge never raises, never accepts an unexecutable plan,
and always says why it rejects."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge import reasons as R
from bridge import validate
from bridge.fuzz import _BROKEN, BROKEN_FAMILIES, mutate, unsafe, valid_plan, verdict, wrap
from bridge.schema import Vocabulary, compile_schema
from bridge.validate import BridgeResult, normalise
from tests.bridge.bridge_worlds import WORLDS

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
world_keys = st.sampled_from(sorted(WORLDS))

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(
        [
            "pick",
            "place",
            "push",
            "home",
            "red_block",
            "green_bin",
            "table_center",
            "steps",
            "skill",
        ]
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["steps", "skill", "object", "target", "refuse", "x"])
            | st.text(max_size=5),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


def check(res: BridgeResult, world) -> None:
    assert isinstance(res, BridgeResult)
    assert R.INTERNAL_ERROR not in res.codes, res.reasons
    assert not unsafe(res, world)
    if res.accepted:
        assert res.plan and not res.reasons
    else:
        assert res.reasons and not res.plan
        assert all(r.code in R.CODES for r in res.reasons)
        assert all(len(r.message) <= R.MAX_TEXT and len(r.hint) <= R.MAX_TEXT for r in res.reasons)


@FAST
@given(st.text(max_size=300), world_keys)
def test_arbitrary_text(text, key):
    check(validate(text, WORLDS[key]), WORLDS[key])


@FAST
@given(json_values, world_keys, st.integers(0, 3))
def test_arbitrary_json(value, key, form):
    raw = [
        value,
        json.dumps(value),
        f"```json\n{json.dumps(value)}\n```",
        f"ok: {json.dumps(value)}.",
    ][form]
    check(validate(raw, WORLDS[key]), WORLDS[key])


@settings(max_examples=250, deadline=None)
@given(st.randoms(use_true_random=False), world_keys)
def test_valid_plans_accepted_and_mutations_safe(rng: random.Random, key):
    world = WORLDS[key]
    plan = valid_plan(world, rng)
    res = validate(wrap(plan, rng, damaging=False), world)
    assert res.accepted, res.reasons
    assert res.plan_json() == [dict(s) for s in json.loads(json.dumps(plan))]
    check(validate(wrap(mutate(plan, world, rng), rng), world), world)


@settings(max_examples=250, deadline=None)
@given(st.randoms(use_true_random=False), world_keys)
def test_schema_dispatch_matches_full_schema(rng: random.Random, key):
    """Per-step validation (dispatch on ``skill``) agrees with the whole-plan schema."""
    world = WORLDS[key]
    doc = normalise(mutate(valid_plan(world, rng), world, rng))
    res = validate(doc, world)
    cs = compile_schema(Vocabulary.of(world))
    schema_codes = R.FORMAT_CODES | {
        R.HALLUCINATED_SKILL,
        R.HALLUCINATED_OBJECT,
        R.HALLUCINATED_TARGET,
        R.WRONG_ARGUMENTS,
        R.EXTRA_FIELD,
        R.PLAN_TOO_LONG,
    }
    if not cs.full.is_valid(doc):
        assert not res.accepted
        assert set(res.codes) & (schema_codes | {R.OUT_OF_WORKSPACE}), res.reasons
    elif not any(isinstance(x, float) and x != x for x in _leaves(doc)):
        assert not set(res.codes) & (schema_codes - {R.PLAN_TOO_LONG}), res.reasons


def _leaves(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from _leaves(x)
    elif isinstance(v, list):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), world_keys, st.sampled_from(BROKEN_FAMILIES))
def test_broken_replies_never_run_a_prefix_or_lose_a_refusal(rng: random.Random, key, fam):
    """Issue 10 A: truncated plans, plans cut after a step, broken refusals and
    corrections after many values are never accepted as anything but the meant plan."""
    world = WORLDS[key]
    c = _BROKEN[fam](world, rng)
    res = validate(c.raw, world)
    check(res, world)
    assert verdict(res, world, c.intent, c.exact) is None, (c.raw, res.plan_json())


def test_oracle_counts_prefixes_and_lost_refusals(world):
    """The oracle itself can fail: a runnable strict prefix of the meant plan, or any plan
    from a reply that meant to refuse, is unsafe; the meant plan itself is not."""
    pick = {"skill": "pick", "object": "red_block"}
    place = {"skill": "place", "target": "green_bin"}
    res = validate([pick], world)
    assert res.accepted
    assert verdict(res, world, [pick, place], exact=True) == "prefix"
    assert verdict(res, world, {"refuse": "no", "steps": [pick]}, exact=True) == "refusal_lost"
    assert verdict(res, world, [place], exact=True) == "not_intended"
    assert verdict(res, world, [pick], exact=True) is None
    assert unsafe(res, world, intent=[pick, place])
