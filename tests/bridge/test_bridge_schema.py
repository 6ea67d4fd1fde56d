"""The per-scene schema: valid against the draft 2020-12 metaschema, scene-specific enums."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from bridge import plan_schema
from bridge.schema import Vocabulary, compile_schema
from tests.bridge.bridge_worlds import WORLDS


@pytest.mark.parametrize("key", sorted(WORLDS))
def test_schema_passes_the_metaschema(key):
    schema = plan_schema(WORLDS[key])
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    json.dumps(schema)  # plain JSON, ready to hand to a model


def test_enums_list_what_is_present():
    s = plan_schema(WORLDS["three"])
    assert s["$defs"]["pick"]["properties"]["object"]["enum"] == [
        "red_block",
        "green_block",
        "blue_block",
    ]
    place = s["$defs"]["place"]["properties"]["target"]["enum"]
    assert "green_bin" in place and "table_center" in place and "yellow_block" not in place
    push = s["$defs"]["push"]["properties"]["target"]["anyOf"]
    assert push[0]["enum"] == list(WORLDS["three"].region_names)
    assert [d["$ref"] for d in s["properties"]["steps"]["items"]["oneOf"]] == [
        "#/$defs/pick",
        "#/$defs/place",
        "#/$defs/push",
        "#/$defs/home",
    ]


def test_extra_keys_forbidden_everywhere():
    s = plan_schema(WORLDS["fresh"])
    assert s["additionalProperties"] is False
    assert all(d["additionalProperties"] is False for d in s["$defs"].values())


def test_schema_validates_plans_and_is_a_copy():
    w = WORLDS["fresh"]
    s = plan_schema(w, max_steps=3)
    v = Draft202012Validator(s)
    assert v.is_valid(
        {
            "steps": [
                {"skill": "pick", "object": "red_block"},
                {"skill": "push", "object": "red_block", "target": [0, 0]},
            ]
        }
    )
    assert not v.is_valid({"steps": [{"skill": "home"}] * 4})
    assert not v.is_valid({"steps": [{"skill": "home", "extra": 1}]})
    s["title"] = "mutated"
    assert plan_schema(w, max_steps=3)["title"] == "Plan"


def test_compiled_schema_is_cached_per_vocabulary():
    a = compile_schema(Vocabulary.of(WORLDS["fresh"]))
    b = compile_schema(Vocabulary.of(WORLDS["red_held"]))  # same names, different state
    assert a is b
    assert compile_schema(Vocabulary.of(WORLDS["three"])) is not a


def test_schema_of_a_real_scene():
    import sim  # noqa: F401
    from sim.env import TabletopEnv

    env = TabletopEnv()
    env.reset(seed=7)
    s = plan_schema(env.world_state())
    Draft202012Validator.check_schema(s)
    assert "red_block" in s["$defs"]["pick"]["properties"]["object"]["enum"]
