"""A fixture is one class and one registration: a fixture defined in this test alone (a
"lid" that reads the articulated scene's drawer slide) is extracted from physics, kept in
``WorldState.fixtures`` and its JSON, tested by its goal word in the bridge's grammar and
shown in the planner's scene text, with no other file edited. Teardown unregisters it, so
the rest of the suite sees the four built-in fixtures only."""

from __future__ import annotations

from typing import Any

import mujoco
import pytest
from pydantic import BaseModel, ConfigDict

from bridge import goals
from sim import fixtures, scene, scenes
from sim.env import TabletopEnv
from sim.fixtures import Fixture, register_fixture, unregister_fixture
from sim.scenes import SceneSpec
from sim.world import WorldState


class LidState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gap: float = 0.0  # m open
    ajar: bool = False


class Lid(Fixture):
    """A lid on the drawer's slide: ajar once the slide is 5 cm out."""

    name = "lid"
    state_type = LidState
    kind = "lid"
    goal_names = ("lid",)
    predicates = {"ajar": ("lid",)}

    def find(self, model: Any) -> int | None:
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, scene.DRAWER_JOINT)
        return None if j < 0 else int(model.jnt_qposadr[j])

    def extract(self, index: int, data: Any) -> LidState:
        gap = float(data.qpos[index])
        return LidState(gap=gap, ajar=gap > 0.05)

    def holds(self, pred: str, args: tuple[str, ...], state: LidState | None) -> bool:
        return state is not None and args[0] == "lid" and state.ajar

    def scene_lines(self, state: LidState) -> list[str]:
        return [f"lid: {'ajar' if state.ajar else 'shut'}"]


@pytest.fixture
def lid():
    f = register_fixture(Lid())
    yield f
    unregister_fixture("lid")


@pytest.fixture
def aenv():
    e = TabletopEnv(scene="articulated")
    yield e
    e.close()


def _world(env: TabletopEnv, opening: float) -> WorldState:
    env.reset(seed=0, options={"drawer": opening})
    return env.world_state()


def test_a_scene_may_name_a_registered_fixture(lid):
    spec = SceneSpec(
        name="lidded",
        description="the articulated scene, read with a lid",
        mjcf=scenes.ARTICULATED.mjcf,
        objects=scenes.ARTICULATED.objects,
        fixtures=("bins", "drawer", "button", "lamp", "lid"),
        env_id="skillbridge/Lidded-v0",
    )
    assert spec.has("lid") and "lid" in scenes.FIXTURES


def test_its_state_is_extracted_and_round_trips(lid, aenv):
    w = _world(aenv, scene.DRAWER_TRAVEL)
    assert list(w.fixtures) == ["drawer", "button", "lamp", "lid"]
    assert w.fixtures["lid"].ajar and w.fixtures["lid"].gap == pytest.approx(w.drawer.opening)
    data = w.model_dump(mode="json")
    assert data["lid"] == {"gap": w.fixtures["lid"].gap, "ajar": True}
    assert list(data)[-4:] == ["drawer", "button", "light_on", "lid"]
    assert WorldState.model_validate(data) == w
    assert WorldState.model_validate_json(w.compact_json()) == w
    # the tabletop has no drawer slide, so no lid either
    tabletop = TabletopEnv()
    try:
        tabletop.reset(seed=0)
        assert "lid" not in tabletop.world_state().fixtures
    finally:
        tabletop.close()


def test_its_goal_word_parses_and_evaluates(lid, aenv):
    ajar, shut = _world(aenv, scene.DRAWER_TRAVEL), _world(aenv, 0.0)
    lit = goals.parse_literal("ajar(lid)")
    assert lit.holds(ajar) and not lit.holds(shut)
    assert goals.goal_holds(["ajar(*)", "open(drawer)"], ajar)
    assert goals.unmet(["not ajar(lid)"], ajar) == ["not ajar(lid)"]
    assert goals.names_of("lid", ajar) == ["lid"] and goals.names_of("lid", WorldState()) == []
    with pytest.raises(goals.GoalUnknownName, match="not a lid"):
        goals.parse_literal("ajar(drawer)")


def test_its_line_is_in_the_scene_text(lid, aenv):
    text = _world(aenv, scene.DRAWER_TRAVEL).describe().splitlines()
    assert text[-3:] == [
        f"drawer: open ({scene.DRAWER_TRAVEL:.2f} m out)",
        "light: off",
        "lid: ajar",
    ]


def test_unregistered_it_is_gone():
    register_fixture(Lid())
    unregister_fixture("lid")
    assert "lid" not in fixtures.FIXTURES and "ajar" not in goals.PREDICATES
    with pytest.raises(goals.GoalSyntaxError, match="unknown predicate 'ajar'"):
        goals.parse_literal("ajar(lid)")
    with pytest.raises(ValueError, match="Extra inputs"):  # its key is no field
        WorldState.model_validate({"lid": {"gap": 0.1, "ajar": True}})
    with pytest.raises(ValueError, match="unknown fixture"):
        WorldState.model_validate({"fixtures": {"lid": {"gap": 0.1, "ajar": True}}})


def test_names_and_goal_words_cannot_be_taken_twice():
    class Clash(Lid):
        name = "clash"
        predicates = {"open": ("lid",)}

    class Core(Lid):
        name = "core"
        predicates = {"held": ("lid",)}

    class Field(Lid):
        name = "objects"

    for cls in (Clash, Core, Field):
        with pytest.raises(ValueError, match="taken"):
            register_fixture(cls())
        assert cls.name not in fixtures.FIXTURES
