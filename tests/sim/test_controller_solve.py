"""The controller's direct solve is np.linalg.solve bit for bit, and still raises where
np.linalg.solve raises (issue 25's speed work)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sim import controller as C


def test_direct_solve_is_numpy_solve_bit_for_bit():
    assert C._SOLVE1 is not None  # this numpy has the gufunc: the fast path is taken
    rng = np.random.default_rng(0)
    for _ in range(500):
        J = rng.normal(size=(6, 6)) * rng.choice([1e-3, 1.0, 1e2])
        a = J @ J.T + C.DLS_LAMBDA**2 * np.eye(6)
        b = rng.normal(size=6)
        assert C._solve(a, b).tobytes() == np.linalg.solve(a, b).tobytes()


def test_a_singular_system_raises_as_numpy_does():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(np.linalg.LinAlgError):
            C._solve(np.zeros((6, 6)), np.ones(6))
