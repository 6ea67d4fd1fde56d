"""The bridge asks the success predictors about a plan's steps at once (issue 25, bridge
latency): one pass of a network over all its steps (``SuccessModel.prob_rows``, with a
bound on how far the one-row answer can lie from it), and ``first_low``, which must find
what ``low_affordance`` asked of each step in turn finds. Tested on random rows (some put
just at the threshold) and on random crowds of cubes with pushes into them."""

from __future__ import annotations

import math
import random

import numpy as np

from skills import success_model as S
from skills.push import PushParams
from tests.bridge.bridge_worlds import cube, make_world


def _row_prob(model: S.SuccessModel, x: np.ndarray) -> float:
    """:meth:`SuccessModel.prob` on a feature row (its arithmetic, without the world)."""
    h = (x - model._mean) / model._std
    *hidden, (w_out, b_out) = model.layers
    for w, b in hidden:
        h = np.tanh(w @ h + b)
    z = float((w_out @ h + b_out)[0])
    return 1.0 / (1.0 + math.exp(-min(max(z, -60.0), 60.0)))


def test_rows_at_once_lie_within_their_bound_of_one_at_a_time():
    rng = np.random.default_rng(0)
    for skill in S.skills():
        model = S.shipped(skill)
        if model is None:
            continue
        n = len(model.manifest.features)
        x = model._mean + model._std * rng.normal(size=(400, n)) * rng.choice([0.5, 2.0, 20.0])
        p, bound = model.prob_rows(x)
        for row, pi, bi in zip(x, p.tolist(), bound.tolist(), strict=True):
            assert abs(_row_prob(model, row) - pi) <= bi
        assert float(bound.max()) < 1e-6


def _worlds(seed: int):
    rng = random.Random(seed)
    base = make_world()
    for _ in range(40):
        objs = [
            cube(o.name, (rng.uniform(-0.2, 0.2), rng.uniform(-0.25, 0.15))) for o in base.objects
        ]
        yield rng, base.model_copy(update={"objects": objs})


def test_first_low_is_low_affordance_in_turn():
    found = set()
    for rng, w in _worlds(1):
        items = []
        for _ in range(rng.randrange(1, 7)):
            o = rng.choice(w.objects)
            if rng.random() < 0.5:
                target = rng.choice(w.regions).name
            else:
                target = (round(rng.uniform(-0.3, 0.3), 3), round(rng.uniform(-0.35, 0.2), 3))
            items.append((w, "push", PushParams(object=o.name, target=target)))
        want = None
        for i, (world, skill, params) in enumerate(items):
            low = S.low_affordance(world, {"skill": skill}, params)
            if low is not None:
                want = (i, low)
                break
        assert S.first_low(items) == want
        found.add(want is None)
    assert found == {True, False}  # steps rated low and plans with none
