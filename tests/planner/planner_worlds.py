"""World states of the planner tests, built directly (no physics): the cubes in a row.

A plain module, not ``conftest``: tests import it, the conftest only holds fixtures."""

from __future__ import annotations

from sim.world import ObjectState, WorldState
from tests import worlds

ALL = ("red_block", "green_block", "blue_block", "yellow_block")


def make_world(cubes=ALL, *, held=None, in_bin=None, on=None) -> WorldState:
    """Cubes on the table in a row (reachable), bins behind them, the five regions."""
    in_bin = dict(in_bin or {})
    on = dict(on or {})
    objs = []
    for i, c in enumerate(cubes):
        x, y = -0.12 + 0.08 * i, -0.16
        z = 0.12 if c == held else 0.02
        if c in on:
            base = cubes.index(on[c])
            x, y, z = -0.12 + 0.08 * base, -0.16, 0.06
        objs.append(
            ObjectState(
                name=c,
                color=c.split("_")[0],
                pos=(x, y, z),
                held=c == held,
                on_table=c != held and c not in in_bin and c not in on,
                in_bin=in_bin.get(c),
                on=on.get(c),
            )
        )
    return worlds.world(objs, held=held, grip=(0.0, 0.0, 0.3))
