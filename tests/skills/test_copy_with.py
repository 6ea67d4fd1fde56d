"""A step's effect copies worlds and cubes without pydantic's generic ``model_copy`` (issue
25, bridge speed): the copy is the object ``model_copy`` makes, field for field, with the
same fields set, no extra and no private values, and the original untouched."""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, PrivateAttr

from sim import scene
from sim.world import ObjectState, WorldState
from skills.base import _copy_with, moved, replace_object


def _same(a: BaseModel, b: BaseModel) -> bool:
    return (
        type(a) is type(b)
        and a.__dict__ == b.__dict__
        and list(a.__dict__) == list(b.__dict__)
        and a.__pydantic_fields_set__ == b.__pydantic_fields_set__
        and a.__pydantic_extra__ == b.__pydantic_extra__
        and a.__pydantic_private__ == b.__pydantic_private__
    )


def _cube(rng: random.Random, name: str) -> ObjectState:
    return ObjectState(
        name=name,
        color="red",
        pos=(rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), scene.CUBE_HALF),
        yaw=rng.uniform(-1, 1),
        on_table=True,
    )


def test_copies_are_what_model_copy_makes():
    rng = random.Random(0)
    for _ in range(200):
        cubes = [_cube(rng, n) for n in scene.CUBE_NAMES[: rng.randint(1, len(scene.CUBE_NAMES))]]
        w = WorldState(objects=cubes)
        o = rng.choice(cubes)
        changes = {"on_table": True, "pos": (0.1, rng.uniform(-0.1, 0.1), scene.CUBE_HALF)}
        base = dict(held=False, on_table=False, in_bin=None, on=None, fallen=False, reachable=True)
        new = moved(o, **changes)
        assert _same(new, o.model_copy(update={**base, **changes}))
        grip = (0.1, 0.2, 0.09) if rng.random() < 0.5 else None
        got = replace_object(w, new, held=None, grip=grip)
        objs = [new if c.name == new.name else c for c in w.objects]
        update = {"objects": objs, "held_object": None}
        if grip is not None:
            update["grip_pos"] = grip
        assert _same(got, w.model_copy(update=update))
        assert got.objects is not w.objects and w.object(o.name) is o  # the original stands


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int = 0


class _Private(BaseModel):
    a: int = 0
    _p: int = PrivateAttr(default=3)


def test_models_with_extra_or_private_values_take_model_copy():
    e = _Extra(a=1, b=2)
    assert _same(_copy_with(e, {"a": 5, "c": 1}), e.model_copy(update={"a": 5, "c": 1}))
    p = _Private(a=1)
    assert _same(_copy_with(p, {"a": 2}), p.model_copy(update={"a": 2}))
