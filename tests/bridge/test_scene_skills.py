"""A plan's schema offers the skills of the world's scene: a drawer skill only where there is
a drawer; asked for elsewhere, the bridge says which scene it needs."""

import pytest

from bridge import reasons as R
from bridge.schema import plan_schema
from bridge.validate import validate
from sim.env import TabletopEnv

TABLETOP = ["pick", "place", "push", "home"]


@pytest.fixture(scope="module")
def worlds():
    out = {}
    for name in ("tabletop", "articulated"):
        e = TabletopEnv(scene=name)
        e.reset(seed=0)
        out[name] = e.world_state()
        e.close()
    return out


def _skills(schema):
    return [d["$ref"].rsplit("/", 1)[-1] for d in schema["properties"]["steps"]["items"]["oneOf"]]


def test_tabletop_schema_offers_the_tabletop_skills(worlds):
    assert _skills(plan_schema(worlds["tabletop"])) == TABLETOP


def test_articulated_schema_adds_the_device_skills(worlds):
    skills = _skills(plan_schema(worlds["articulated"]))
    assert skills[:4] == TABLETOP and {"open_drawer", "close_drawer"} <= set(skills)


def test_a_drawer_skill_on_the_tabletop_says_which_scene_it_needs(worlds):
    res = validate('{"steps": [{"skill": "open_drawer"}]}', worlds["tabletop"])
    (reason,) = res.reasons
    assert not res.accepted and reason.code == R.HALLUCINATED_SKILL
    assert "needs the articulated scene" in reason.message and "pick" in reason.hint
    assert validate('{"steps": [{"skill": "open_drawer"}]}', worlds["articulated"]).accepted


def test_an_unknown_skill_is_still_hallucinated(worlds):
    res = validate('{"steps": [{"skill": "dance"}]}', worlds["articulated"])
    assert res.codes == [R.HALLUCINATED_SKILL]
