"""The articulated scene's vocabulary for the embedded model (issue 15, item 3): the scene
line shows the drawer and the light only where the scene has them, the ``articulated`` corpus
profile teaches commands the rules planner parses with confidence on a matching articulated
world, the same requests stay refusals on the tabletop, and the tabletop corpora are what
they were."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from bridge.validate import simulate
from planner import corpus, rules
from planner.embedded.prompt import scene_line, scene_of
from sim.env import TabletopEnv

ARTICULATED_COMMAND_WORDS = ("drawer", "light", "button")


@pytest.fixture(scope="module")
def art_env():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


def test_tabletop_scene_line_is_unchanged():
    assert scene_line(["red", "green"]) == "red green"
    assert (
        scene_line(["red", "green", "blue"], {"green": "blue"}, {"blue": "red"}, "yellow")
        == "red green blue; blue on red; green in blue bin; holding yellow"
    )
    e = TabletopEnv()
    try:
        e.reset(seed=0)
        assert scene_of(e.world_state()) == "red green blue yellow"
        e.reset(seed=0, options={"cubes": ["red_block", "blue_block"]})
        assert scene_of(e.world_state()) == "red blue"
    finally:
        e.close()


def test_articulated_scene_line_shows_the_drawer_and_the_light(art_env):
    art_env.reset(seed=0, options={"drawer": 0.0, "light": False})
    assert scene_of(art_env.world_state()) == "red green blue yellow; drawer closed; light off"
    art_env.reset(seed=0, options={"drawer": 0.15, "light": True})
    w = art_env.world_state()
    assert scene_of(w) == "red green blue yellow; drawer open; light on"
    steps = [{"skill": "pick", "object": "red_block"}, {"skill": "place", "target": "drawer"}]
    after, reasons = simulate(w, steps)
    assert not reasons
    assert scene_of(after) == "red green blue yellow; drawer open with red; light on"
    assert scene_line(["red"], drawer="ajar", in_drawer=["red", "blue"], light=None) == (
        "red; drawer ajar with red and blue"
    )


@pytest.mark.parametrize(
    "profile, digest",
    [
        ("base", "cb52aca2b7652235c2b759bf0429b05febd60a0dec3fe81c843a9e95c7906547"),
        ("lists", "631dfe15822d3633f9837e181ebd67ee843de1261e04ec3da88b0c86c02c664d"),
        ("phrasing", "621271c3c6846ad6317e397a723ba116c09471d4b91b41bffa4b3c8d9bb0c172"),
    ],
)
def test_tabletop_profiles_are_what_they_were(profile, digest):
    """The tabletop corpora (and so the earlier stages) are reproduced byte for byte."""
    text = json.dumps(corpus.generate(200, 7, profile), sort_keys=True)
    assert hashlib.sha256(text.encode()).hexdigest() == digest


def test_the_sampled_word_counts_are_what_they_were():
    every, doable = corpus.words(400)
    text = json.dumps([every, doable], sort_keys=True)
    digest = "e77eee89b3855588b82c7de85f9d0cb3206ccd0b705a3139af56d2cfb35831db"
    assert hashlib.sha256(text.encode()).hexdigest() == digest


def _world_of(env: TabletopEnv, scene: str):
    """An articulated world matching a sample's scene line (cubes, drawer, light, the
    cubes in the drawer; bins, stacks and the gripper are left as the reset makes them)."""
    parts = scene.split("; ")
    cubes = parts[0].split()
    drawer = next(p for p in parts if p.startswith("drawer "))
    light = next(p for p in parts if p.startswith("light ")) == "light on"
    inside = drawer.split(" with ")[1].split(" and ") if " with " in drawer else []
    opts = {
        "cubes": [f"{c}_block" for c in cubes],
        "drawer": 0.15 if drawer.startswith("drawer open") else 0.0,
        "light": light,
    }
    env.reset(seed=1, options=opts)
    w = env.world_state()
    for c in inside:
        steps = [{"skill": "pick", "object": f"{c}_block"}, {"skill": "place", "target": "drawer"}]
        w, reasons = simulate(w, steps)
        assert not reasons, (scene, reasons)
    return w


@pytest.fixture(scope="module")
def art_samples():
    return corpus.generate(900, seed=2, profile="articulated")


def test_articulated_profile_mixes_its_vocabulary_with_the_tabletop(art_samples):
    cats = Counter(s["category"] for s in art_samples)
    assert cats["articulated"] > 300 and cats["no_device"] > 40
    assert cats["list"] + cats["plain"] + cats["phrasing"] > 200  # the tabletop, not forgotten
    cmds = " | ".join(s["command"] for s in art_samples)
    for c in corpus.DEVICE_COMMANDS.values():
        assert c in cmds
    assert "in the drawer" in cmds and "out of the drawer" in cmds
    towers = [
        s for s in art_samples if s["command"].count("stack the") >= 2 and "drawer" in s["scene"]
    ]
    assert len(towers) > 20


def test_articulated_commands_are_understood_on_a_matching_articulated_world(art_samples, art_env):
    """Every articulated sample's command is parsed with confidence by the rules planner on
    an articulated world built from the sample's scene line (or is 'nothing to do' there)."""
    samples = [s for s in art_samples if s["category"] == "articulated"][:250]
    bad = []
    for s in samples:
        w = _world_of(art_env, s["scene"])
        r = rules.parse(s["command"], w)
        if not (r.confident and (r.refuse is None or r.refuse.startswith("nothing to do"))):
            bad.append((s["scene"], s["command"], r.refuse))
    # as in the tabletop corpus, a random list may ask for the impossible now and then
    # (one block in two places, two blocks on one small region): the rules planner says so
    assert len(bad) <= 0.03 * len(samples), bad[:5]
    taught = [s for s in samples if any(w in s["command"] for w in ARTICULATED_COMMAND_WORDS)]
    assert len(taught) > 0.7 * len(samples)


def test_device_requests_are_refused_on_the_tabletop(art_samples):
    refused = [s for s in art_samples if s["category"] == "no_device"]
    assert refused
    for s in refused:
        assert "drawer" not in s["scene"] and "light" not in s["scene"], s
        assert s["command"] in {"refuse: " + why for why in corpus.NO_DEVICE.values()}, s
    for s in art_samples:
        if "drawer" not in s["scene"] and not s["command"].startswith("refuse:"):
            assert not any(w in s["command"] for w in ARTICULATED_COMMAND_WORDS), s


def test_the_tabletop_rules_refuse_what_the_no_device_samples_refuse():
    """The refusal the model learns for the tabletop is the rules planner's own answer."""
    e = TabletopEnv()
    try:
        e.reset(seed=0)
        w = e.world_state()
    finally:
        e.close()
    for cmd in [*corpus.DEVICE_COMMANDS.values(), "put the red block in the drawer"]:
        r = rules.parse(cmd, w)
        assert r.refuse is not None and not r.steps, cmd


def test_the_output_vocabulary_covers_the_articulated_commands():
    texts = set(corpus.command_texts())
    for c in corpus.DEVICE_COMMANDS.values():
        assert c in texts
    assert "put the red block in the drawer" in texts
    assert "take the yellow block out of the drawer" in texts
    tabletop = corpus.command_texts(articulated=False)
    assert not any("drawer" in t and not t.startswith("refuse") for t in tabletop)


def test_the_shipped_adapter_matches_its_manifest():
    """The shipped manifest names the file beside it (digest, format) and records how each
    stage was trained."""
    from planner.embedded import prompt
    from planner.embedded.model import SHIPPED

    m = json.loads((SHIPPED / "manifest.json").read_text())
    digest = hashlib.sha256((SHIPPED / "adapter.safetensors").read_bytes()).hexdigest()
    assert m["adapter_sha256"] == digest
    assert m["format_version"] == prompt.FORMAT_VERSION
    assert m["corpus"]["profile"] in corpus.PROFILES
    assert m["training"]["steps"] > 0 and 0 < m["eval"]["held_out_exact"] <= 1
    shas = [s["adapter_sha256"] for s in m.get("previous_stages", [])]
    assert m["init_sha256"] in shas and digest not in shas
