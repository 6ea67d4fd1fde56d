"""The learned success predictors ("Can"): features from the world state alone, safe
loading (safetensors + manifest, sha256-checked), numpy inference, and their use in the
bridge (``low_affordance``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bridge import reasons as R
from bridge import validate
from skills import success_model as SM
from skills.affordance import affordance_repair
from skills.pick import PickParams
from skills.place import PlaceParams
from skills.push import PushParams


def _world(env, cubes):
    env.reset(seed=0, options={"cubes": cubes})
    return env.world_state()


def _tiny(tmp_path, skill="pick", threshold=0.5, bias=0.0):
    n = len(SM.FEATURES[skill])
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(4, n)), rng.normal(size=4)), (rng.normal(size=(1, 4)), [bias])]
    meta = {
        "features": SM.FEATURES[skill],
        "mean": [0.0] * n,
        "std": [1.0] * n,
        "hidden": [4],
        "threshold": threshold,
    }
    SM.save(skill, [(np.asarray(w), np.asarray(b)) for w, b in layers], meta, tmp_path)
    return layers


def test_features_come_from_the_world_state(env):
    w = _world(env, {"red_block": [0.0, -0.08], "blue_block": [0.0, -0.08 + 0.05]})
    f = SM.features("pick", w, PickParams(object="red_block"))
    assert f.shape == (len(SM.FEATURES["pick"]),) and np.isfinite(f).all()
    # blue's face is 1 cm from red's along y: too tight there, so the pick (and its
    # features) use the x axis, where nothing is near
    assert SM.finger_gaps(w, "red_block", "y")[0] == pytest.approx(0.01, abs=0.002)
    gap = dict(zip(SM.FEATURES["pick"], f, strict=True))["min_finger_gap"]
    assert w.grasp_axis("red_block") == "x" and gap == pytest.approx(SM.CAP)
    env.reset(seed=0, options={"cubes": {"red_block": [0.0, -0.08]}, "arm": [0, -0.08, 0.03]})
    for skill, params in (
        ("push", PushParams(object="red_block", target="table_front")),
        ("place", PlaceParams(target="green_bin")),
    ):
        f = SM.features(skill, env.world_state(), params)
        assert f.shape == (len(SM.FEATURES[skill]),) and np.isfinite(f).all()


def test_roundtrip_and_numpy_inference(tmp_path, env):
    layers = _tiny(tmp_path)
    m = SM.load("pick", tmp_path)
    w = _world(env, {"red_block": [0.0, -0.08]})
    x = SM.features("pick", w, PickParams(object="red_block"))
    h = np.tanh(np.asarray(layers[0][0]) @ x + layers[0][1])
    logit = float((np.asarray(layers[1][0]) @ h + layers[1][1])[0])
    expect = 1 / (1 + np.exp(-logit))
    assert m.prob(w, PickParams(object="red_block")) == pytest.approx(expect, abs=1e-5)


def test_tampered_or_mismatched_files_are_refused(tmp_path):
    _tiny(tmp_path)
    blob = (tmp_path / "pick.safetensors").read_bytes()
    (tmp_path / "pick.safetensors").write_bytes(blob[:-4] + b"\0\0\0\0")
    with pytest.raises(SM.ModelError, match="sha256"):
        SM.load("pick", tmp_path)
    _tiny(tmp_path)
    man = json.loads((tmp_path / "pick.json").read_text())
    man["features"] = man["features"][:-1]
    man["mean"], man["std"] = man["mean"][:-1], man["std"][:-1]
    (tmp_path / "pick.json").write_text(json.dumps(man))
    with pytest.raises(SM.ModelError, match="features"):
        SM.load("pick", tmp_path)
    with pytest.raises(SM.ModelError):
        SM.load("push", tmp_path)  # missing


@pytest.mark.parametrize("skill", SM.skills())
def test_shipped_predictors_are_calibrated(skill):
    m = SM.shipped(skill)
    assert m is not None
    man = m.manifest.model_dump()
    assert man["held_out"]["ece"] <= 0.05
    assert man["held_out"]["test_episodes"] >= 300
    assert len(man["policy_sha256"]) == 64


def test_shipped_pick_predictor_tells_free_from_crowded(env):
    m = SM.shipped("pick")
    free = _world(env, {"red_block": [0.0, -0.08]})
    tight = _world(  # a neighbour 1.5 mm away on each axis
        env,
        {
            "red_block": [0.0, -0.08],
            "blue_block": [0.0, -0.08 + 0.0415],
            "green_block": [0.0415, -0.08],
        },
    )
    p_free = m.prob(free, PickParams(object="red_block"))
    p_tight = m.prob(tight, PickParams(object="red_block"))
    assert p_free > 0.9 and p_tight < m.threshold < p_free


def test_bridge_rejects_below_the_threshold(monkeypatch, tmp_path, env):
    """A predictor that rates everything low makes the bridge refuse with low_affordance
    and a hint; switched off, the same plan is accepted."""
    _tiny(tmp_path, threshold=0.999, bias=-50.0)
    low = SM.load("pick", tmp_path)
    monkeypatch.setattr(SM, "shipped", lambda s: low if s == "pick" else None)
    w = _world(env, {"red_block": [0.0, -0.08]})
    plan = json.dumps([{"skill": "pick", "object": "red_block"}])
    res = validate(plan, w)
    assert res.codes == [R.LOW_AFFORDANCE] and res.reasons[0].path == "/steps/0"
    assert "p=0.00" in res.reasons[0].message and res.reasons[0].hint
    monkeypatch.setenv("SKILLBRIDGE_AFFORDANCE", "0")
    assert validate(plan, w).accepted


def test_repair_of_a_low_rated_pick_is_a_push(env):
    w = _world(env, {"red_block": [0.0, -0.08], "blue_block": [0.0, -0.08 + 0.0415]})
    step = {"skill": "pick", "object": "red_block"}
    fix, hint = affordance_repair(w, step)
    assert fix is not None and fix["skill"] == "push" and "insert" in hint
    res = validate(json.dumps([fix, step]), w)
    assert res.accepted, res.reasons


def test_an_unusable_shipped_predictor_is_skipped_not_fatal(monkeypatch, tmp_path, caplog):
    _tiny(tmp_path)
    (tmp_path / "pick.safetensors").write_bytes(b"not a tensor file")
    monkeypatch.setattr(SM, "DIR", tmp_path)
    SM.shipped.cache_clear()
    try:
        assert SM.shipped("pick") is None
        assert "success predictor not used" in caplog.text
    finally:
        SM.shipped.cache_clear()


def test_predictors_abstain_outside_the_starts_they_were_fitted_on(monkeypatch, tmp_path):
    """The drawer and tower tops three cubes up came after the predictors' rollouts: a
    predictor that rates everything low still vetoes a pick on the table, but not a pick in
    the drawer, off a tall tower's top, or a place onto a tower or into the drawer."""
    from sim import scene
    from sim.env import TabletopEnv

    _tiny(tmp_path, threshold=0.999, bias=-50.0)
    low = SM.load("pick", tmp_path)
    monkeypatch.setattr(SM, "shipped", lambda s: low if s in ("pick", "place") else None)
    e = TabletopEnv(scene="articulated")
    try:
        e.reset(seed=0, options={"drawer": scene.DRAWER_TRAVEL, "cubes": {"red_block": None}})
        d = e.world_state().drawer
        inside = [d.pos[0], d.pos[1] + 0.02, scene.DRAWER_FLOOR_Z + scene.CUBE_HALF + 0.001, 0.0]
        h = scene.CUBE_HALF
        tower = {
            n: [0.0, -0.1, h + i * (2 * h + 0.001), 0.0]
            for i, n in enumerate(["blue_block", "green_block", "yellow_block"])
        }
        e.reset(
            seed=0,
            options={"drawer": scene.DRAWER_TRAVEL, "cubes": {"red_block": inside, **tower}},
        )
        e.step_physics(np.array([0.0, 0.0, 0.0, -1.0]), control_steps=5)
        w = e.world_state()
    finally:
        e.close()
    assert w.in_("red_block", "drawer") and w.on("yellow_block", "green_block")

    def codes(steps):
        return validate(json.dumps(steps), w).codes

    assert codes([{"skill": "pick", "object": "red_block"}]) == []
    assert codes([{"skill": "pick", "object": "yellow_block"}]) == []
    assert not SM.in_support("pick", w, PickParams(object="yellow_block"))
    assert SM.in_support("pick", w, PickParams(object="green_block"))  # the support's top
    held = w.model_copy(update={"held_object": "red_block"})
    assert not SM.in_support("place", held, PlaceParams(target="yellow_block"))
    assert not SM.in_support("place", held, PlaceParams(target="drawer"))
    assert SM.in_support("place", held, PlaceParams(target="green_bin"))


def test_a_cube_stacked_inside_a_bin_is_outside_the_support():
    """The rollouts held cubes one deep in a bin: a cube resting on another one there was
    rated 0.00 for a pick the policy makes, so the predictor abstains about it."""
    from tests import worlds

    w = worlds.world(
        [
            worlds.cube("red_block", (0.158, 0.247, 0.024), in_bin="blue_bin"),
            worlds.cube("yellow_block", (0.154, 0.251, 0.064), in_bin="blue_bin"),
            worlds.cube("green_block", (0.0, -0.1, 0.02)),
        ]
    )
    assert not SM.in_support("pick", w, PickParams(object="yellow_block"))
    assert SM.in_support("pick", w, PickParams(object="red_block"))  # on the bin's floor
    assert SM.in_support("pick", w, PickParams(object="green_block"))
