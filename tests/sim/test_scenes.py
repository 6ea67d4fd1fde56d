"""Scenes as modules: each registered scene compiles, holds its objects and the fixtures it
declares, has its gymnasium id, and a new scene is one spec and one registration."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import sim
from sim import physics, scene, scenes
from sim.env import TabletopEnv
from sim.scenes import SceneSpec
from sim.scenes.base import ASSETS, ROBOT_XML

#: A body of the model that shows each fixture is there.
FIXTURE_BODIES = {"bins": "red_bin", "drawer": "drawer", "button": "button", "lamp": "lamp"}


def _bodies(model) -> set[str]:
    return {model.body(i).name for i in range(model.nbody)}


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_scene_holds_its_objects_and_fixtures(name):
    spec = scenes.get(name)
    bodies = _bodies(physics.load_model(name))
    assert {o.name for o in spec.objects} <= bodies
    for fixture, body in FIXTURE_BODIES.items():
        assert (body in bodies) == spec.has(fixture), (name, fixture)
    assert gym.spec(spec.env_id) is not None


def test_scene_names_come_from_the_registry():
    assert scene.SCENE_NAMES[0] == scene.DEFAULT_SCENE == scenes.DEFAULT == "tabletop"
    assert set(scene.SCENE_NAMES) == set(scenes.SCENES)
    assert sim.ENV_ID == scenes.TABLETOP.env_id
    assert scenes.ARTICULATED.articulated and not scenes.TABLETOP.articulated


def test_unknown_scene_and_fixture_are_clear_errors():
    with pytest.raises(ValueError, match="unknown scene 'moon'; known: .*tabletop"):
        TabletopEnv(scene="moon")
    with pytest.raises(ValueError, match="unknown fixture"):
        scenes.TABLETOP.has("oven")
    with pytest.raises(ValueError, match="unknown fixture"):
        SceneSpec("x", "", ASSETS / "tabletop.xml", (), ("oven",), "x-v0")
    with pytest.raises(ValueError, match="registered already"):
        scenes.register_scene(SceneSpec("tabletop", "", ROBOT_XML, (), (), "y-v0"))


def test_a_new_scene_is_one_spec_and_one_registration(tmp_path):
    """A scene written here, in the test: the tabletop's arena with its bins taken out, as
    its own MJCF file, registered, then built and stepped by the env like the others."""
    text = (ASSETS / "tabletop.xml").read_text()
    start = text.index('<body name="red_bin"')
    end = text.index("</body>", text.index('<body name="blue_bin"')) + len("</body>")
    arena = tmp_path / "no_bins.xml"
    arena.write_text(text[:start] + text[end:])
    spec = SceneSpec(
        name="no_bins",
        description="the tabletop without its bins",
        mjcf=arena,
        objects=scenes.TABLETOP.objects,
        fixtures=(),
        env_id="skillbridge/TestNoBins-v0",
    )
    scenes.register_scene(spec)
    try:
        assert "red_bin" not in _bodies(physics.load_model("no_bins"))
        env = TabletopEnv(scene="no_bins")
        obs, _ = env.reset(seed=0)
        obs, *_ = env.step(np.zeros(4, dtype=np.float32))
        assert env.articulation is None
        w = env.world_state()
        assert w.bins == [] and len(w.objects) == len(scene.CUBE_NAMES)
        assert np.isfinite(obs["object_pos"]).all()
        env.close()
    finally:
        scenes.SCENES.pop("no_bins", None)
        physics._xml_text.cache_clear()
        physics._includes.cache_clear()
