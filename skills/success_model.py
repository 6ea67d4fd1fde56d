"""Learned success predictors: SayCan's affordance "Can", one per skill.

``P(success | world, parameters)`` for the shipped policy of a skill, fitted on that policy's
own rollouts with outcome labels (``scripts/affordance.py``), from starts on and off its
training distribution (:mod:`skills.affordance_data`). The features are computed from the
symbolic world state alone, so the bridge can ask about a step in the world it *predicts*
before that step, not only in the one physics gives now.

A model is a tiny MLP in plain tensors: ``skills/predictors/<skill>.safetensors`` and a JSON
manifest beside it (feature names and scaling, the layer sizes, the decision threshold, the
sha256 of the weights, and the sha256 of the policy whose rollouts it learned). Nothing is
unpickled; the weights are checked against the manifest before use.
"""

from __future__ import annotations

import json
import logging
import math
import os
from array import array
from collections.abc import Callable
from functools import cache, cached_property
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from safetensors.numpy import load as load_safetensors
from safetensors.numpy import save as save_safetensors

from sim import scene, util
from sim.safeio import MiB, read_regular
from sim.world import (
    FINGER_TIP_DZ,
    FINGER_X_HALF,
    WorldState,
    bin_walls,
    square_footprint,
)
from skills.base import SkillParams, cube_of

FORMAT = "skillbridge.success_model/1"
DIR = Path(__file__).resolve().parent / "predictors"
MAX_BYTES = 1 * MiB
CAP = 0.08  # clearances beyond this are all "clear" (m)
_BASE = scene.BASE_XY


# ----------------------------------------------------------------------------- features
def fold_yaw(yaw: float) -> float:
    """|yaw| folded into [0, pi/4]: a square cube looks the same every quarter turn."""
    a = abs(yaw) % (math.pi / 2)
    return min(a, math.pi / 2 - a)


_N_EDGE = 12
_T = np.linspace(0.0, 1.0, _N_EDGE, endpoint=False)
#: Edge points of a quadrilateral as one matrix product: row k*12+j is corner k moved a
#: fraction t_j of the way to corner k+1.
_EDGE_W = np.zeros((4 * _N_EDGE, 4))
for _k in range(4):
    _EDGE_W[_k * _N_EDGE : (_k + 1) * _N_EDGE, _k] = 1.0 - _T
    _EDGE_W[_k * _N_EDGE : (_k + 1) * _N_EDGE, (_k + 1) % 4] = _T


def _edge_points(poly: list[tuple[float, float]]) -> np.ndarray:
    return _EDGE_W @ np.asarray(poly, dtype=np.float64)


@cache
def _wall_points(bins: tuple[tuple[float, float, float], ...]) -> np.ndarray:
    from sim.world import BinState

    pts = [
        _edge_points(w)
        for x, y, half in bins
        for w in bin_walls(BinState(name="b", color="b", pos=(x, y, 0.0), inner_half=half))
    ]
    return np.concatenate(pts) if pts else np.zeros((0, 2))


#: Edge points of cube footprints, by the exact bits of (x, y, yaw) (cleared when this
#: many): most cubes stand still from one step of a plan to the next.
MAX_REMEMBERED_CUBES = 4096
_CUBE_EDGES: dict[bytes, np.ndarray] = {}


def _cube_edges(x: float, y: float, yaw: float) -> np.ndarray:
    """``_edge_points`` of a cube's footprint at (x, y) turned by ``yaw`` (a pure function of
    the three, remembered; callers must not write into the array)."""
    key = array("d", (x, y, yaw)).tobytes()
    pts = _CUBE_EDGES.get(key)
    if pts is None:
        if len(_CUBE_EDGES) >= MAX_REMEMBERED_CUBES:
            _CUBE_EDGES.clear()
        pts = _CUBE_EDGES[key] = _edge_points(square_footprint(x, y, scene.CUBE_HALF, yaw))
    return pts


def _obstacles(world: WorldState, name: str | list[str], top_above: float) -> np.ndarray:
    """Edge points of every cube and bin wall (other than ``name``) rising above a height,
    as one (n, 2) array."""
    out = []
    skip = [name] if isinstance(name, str) else name
    for o in world.objects:
        if o.name in skip or o.held or o.fallen or o.pos[2] + scene.CUBE_HALF <= top_above:
            continue
        out.append(_cube_edges(o.pos[0], o.pos[1], o.yaw))
    if scene.BIN_WALL_HEIGHT > top_above:
        out.append(_wall_points(tuple((b.pos[0], b.pos[1], b.inner_half) for b in world.bins)))
    return np.concatenate(out) if out else np.zeros((0, 2))


class _Block(NamedTuple):
    """One obstacle's edge points as one (2, n) array of contiguous x and y rows, and their
    box (min x, max x, min y, max y; NaN where a point is not finite: such a block is never
    passed over)."""

    xy: np.ndarray
    box: tuple[float, float, float, float]

    @property
    def xs(self) -> np.ndarray:
        return self.xy[0]

    @property
    def ys(self) -> np.ndarray:
        return self.xy[1]


def _block(pts: np.ndarray) -> _Block:
    xy = np.ascontiguousarray(pts.T)
    if len(pts) and bool(np.isfinite(pts).all()):
        xs, ys = xy
        box = (float(xs.min()), float(xs.max()), float(ys.min()), float(ys.max()))
    else:
        box = (math.nan,) * 4
    return _Block(xy, box)


_CUBE_BLOCKS: dict[bytes, _Block] = {}


def _cube_block(x: float, y: float, yaw: float) -> _Block:
    key = array("d", (x, y, yaw)).tobytes()
    b = _CUBE_BLOCKS.get(key)
    if b is None:
        if len(_CUBE_BLOCKS) >= MAX_REMEMBERED_CUBES:
            _CUBE_BLOCKS.clear()
        b = _CUBE_BLOCKS[key] = _block(_cube_edges(x, y, yaw))
    return b


@cache
def _bin_block(x: float, y: float, half: float) -> _Block:
    return _block(_wall_points(((x, y, half),)))


def obstacle_blocks(world: WorldState, skip: list[str], top_above: float) -> list[_Block]:
    """:func:`_obstacles` as blocks: a cube's edge points each, a bin's walls each, in the
    same order (``_obstacles`` is their concatenation)."""
    out = [
        _cube_block(o.pos[0], o.pos[1], o.yaw)
        for o in world.objects
        if not (o.name in skip or o.held or o.fallen or o.pos[2] + scene.CUBE_HALF <= top_above)
    ]
    if scene.BIN_WALL_HEIGHT > top_above:
        out.extend(_bin_block(b.pos[0], b.pos[1], b.inner_half) for b in world.bins)
    return out


#: How far (m, along x or y) a block must lie from every point asked about to be passed
#: over: beyond CAP * 2, the most :func:`nearest` answers, with a margin far above rounding.
_FAR = CAP * 2 + 0.01


def nearest_blocks(blocks: list[_Block], points: list[tuple[float, float]]) -> list[float]:
    """:func:`_nearest_many` over the concatenated blocks, without the blocks that lie
    farther than ``_FAR`` from every point along x or y: each of their points is farther
    than CAP * 2 from each point asked about, so it changes no answer (a minimum below
    CAP * 2 is another point's; above it, the answer is CAP * 2 either way)."""
    blocks = _near(blocks, points)
    if not blocks:
        return [CAP * 2] * len(points)
    xy = blocks[0].xy if len(blocks) == 1 else np.concatenate([b.xy for b in blocks], axis=1)
    return _distances(xy, points)


def _near(blocks: list[_Block], points: list[tuple[float, float]]) -> list[_Block]:
    """The blocks :func:`nearest_blocks` measures: all but those farther than ``_FAR`` from
    every point along x or y."""
    qx = [p[0] for p in points]
    qy = [p[1] for p in points]
    # a finite sum means every coordinate is finite (an overflow only keeps every block)
    if math.isfinite(sum(qx) + sum(qy)):
        x0, x1, y0, y1 = min(qx) - _FAR, max(qx) + _FAR, min(qy) - _FAR, max(qy) + _FAR
        blocks = [
            b
            for b in blocks
            if not (b.box[0] > x1 or b.box[1] < x0 or b.box[2] > y1 or b.box[3] < y0)
        ]
    return blocks


def nearest_blocks_many(groups: list[tuple[list[_Block], list[tuple[float, float]]]]) -> list:
    """:func:`nearest_blocks` of each (blocks, points) in one pass over the blocks they
    share (a plan's steps ask about one scene: the bins' walls and the cubes that stand
    still are the same blocks; numpy's cost per call, not per point, is most of a step's
    distances). Each block's least squared distance to each point is the least of the
    same per-point values ``_distances`` computes (the same difference, squares and sum,
    element by element), and a group's least is the least of its blocks' (NaN where any
    is NaN, as numpy's minimum has it), over the blocks ``nearest_blocks`` measures."""
    if len(groups) < 2:
        return [nearest_blocks(bs, qs) for bs, qs in groups]
    groups = [(_near(bs, qs), qs) for bs, qs in groups]  # (what nearest_blocks measures)
    index: dict[int, int] = {}
    blocks: list[_Block] = []
    for bs, _ in groups:
        for b in bs:
            if id(b) not in index:
                index[id(b)] = len(blocks)
                blocks.append(b)
    starts, n = [], 0
    for b in blocks:
        starts.append(n)
        n += b.xy.shape[1]
    if not blocks or any(b.xy.shape[1] == 0 for b in blocks):
        return [nearest_blocks(bs, qs) for bs, qs in groups]
    points = [q for _, qs in groups for q in qs]
    xy = np.concatenate([b.xy for b in blocks], axis=1)
    q = np.asarray(points, dtype=np.float64).T[:, :, None]  # (2, k, 1)
    d = xy[:, None, :] - q  # (2, k, n)
    np.multiply(d, d, out=d)
    sq = np.add(d[0], d[1], out=d[0])
    least = np.minimum.reduceat(sq, starts, axis=1).tolist()  # (k, blocks)
    cap, sqrt, out, row = CAP * 2, math.sqrt, [], 0
    for bs, qs in groups:
        cols = [index[id(b)] for b in bs]
        got = []
        for _ in qs:
            vals = least[row]
            row += 1
            if not cols:
                got.append(cap)
                continue
            m = vals[cols[0]]
            for c in cols[1:]:
                v = vals[c]
                if v < m or v != v:
                    m = v
            got.append(cap if m != m else min(cap, sqrt(m)))
        out.append(got)
    return out


def finger_gaps(world: WorldState, name: str, axis: str = "y") -> tuple[float, float]:
    """Free room (m) beside cube ``name`` on both sides along the finger ``axis`` (``"y"``,
    or ``"x"`` for a pick with the hand turned a quarter), within the fingers' band across
    it: from the cube's side to the nearest obstacle there, capped at ``CAP``."""
    o = cube_of(world, name)
    gx, gy, gz = o.pos
    half = scene.CUBE_HALF * (math.cos(fold_yaw(o.yaw)) + math.sin(fold_yaw(o.yaw)))
    pos, neg = CAP, CAP
    pts = _obstacles(world, name, gz + FINGER_TIP_DZ)
    along, across = (1, 0) if axis == "y" else (0, 1)
    centre = (gx, gy)
    band = pts[np.abs(pts[:, across] - centre[across]) <= FINGER_X_HALF]
    d = band[:, along] - centre[along]
    up, down = d[d > 0], -d[d < 0]
    if len(up):
        pos = min(pos, float(up.min()) - half)
    if len(down):
        neg = min(neg, float(down.min()) - half)
    return max(pos, -0.02), max(neg, -0.02)


def nearest(
    world: WorldState,
    name: str | list[str],
    xy: tuple[float, float],
    pts: np.ndarray | None = None,
) -> float:
    """Distance (m) from point ``xy`` to the nearest obstacle edge other than ``name``."""
    pts = _obstacles(world, name, 0.0) if pts is None else pts
    return _nearest_many(pts, [xy])[0]


def _nearest_many(pts: np.ndarray, points: list[tuple[float, float]]) -> list[float]:
    """``nearest(world, name, p, pts)`` for each of ``points``, in one pass over ``pts``."""
    if not len(pts):
        return [CAP * 2] * len(points)
    return _distances(np.ascontiguousarray(pts.T), points)


def _distances(xy: np.ndarray, points: list[tuple[float, float]]) -> list[float]:
    """Per point, min(CAP * 2, the distance to the nearest of the points ``xy`` (a (2, n)
    array: the x row, then the y row)).

    The squared distances are ``dx * dx + dy * dy`` on the coordinates as separate
    contiguous rows: the values ``np.einsum("ij,ij->i", d, d)`` gives (two products and one
    sum, rounded as written; ``tests/bridge/test_push_geometry.py`` holds them equal) at a
    fifth of its time on the few hundred edge points of a scene. Both coordinates'
    differences come from one subtraction and their squares from one product (the same
    operations element by element), in place; the square root is taken of the minima
    alone (``math.sqrt`` is IEEE's correctly rounded root, as ``np.sqrt`` is, and the root
    is monotone: the root of the least square is the least root)."""
    q = np.asarray(points, dtype=np.float64).T[:, :, None]  # (2, k, 1)
    d = xy[:, None, :] - q  # (2, k, n): d[0] = dx, d[1] = dy
    np.multiply(d, d, out=d)
    sq = np.add(d[0], d[1], out=d[0])
    cap, sqrt = CAP * 2, math.sqrt
    return [min(cap, sqrt(v)) for v in sq.min(axis=1).tolist()]


#: The arm's base and the workspace's bounds as Python floats (the same doubles as the
#: scene's arrays; arithmetic on numpy scalars costs several times that on floats).
_BASE_X, _BASE_Y = (float(v) for v in _BASE)
_LO_X, _LO_Y = (float(v) for v in scene.WORKSPACE_LOW[:2])
_HI_X, _HI_Y = (float(v) for v in scene.WORKSPACE_HIGH[:2])


def reach_features(x: float, y: float) -> list[float]:
    """The distance from the arm's base, the margin inside the workspace's box (at most
    0.1) and inside the reach (at most 0.1). The minima are ``min()``'s, written out: the
    first value, replaced by each later one that is smaller (so the same value, NaN and
    ties included)."""
    r = math.hypot(x - _BASE_X, y - _BASE_Y)
    box = x - _LO_X
    v = _HI_X - x
    if v < box:
        box = v
    v = y - _LO_Y
    if v < box:
        box = v
    v = _HI_Y - y
    if v < box:
        box = v
    reach = 0.70 - r
    return [r, 0.1 if 0.1 < box else box, 0.1 if 0.1 < reach else reach]


#: What each skill's predictor reads: its feature names and the function computing them
#: from a world and that skill's parameters, as the skill's own module registers them
#: (:func:`register`). This module knows no skill by name.
FEATURES: dict[str, list[str]] = {}
_FN: dict[str, Callable[[WorldState, Any], list[float]]] = {}
#: A skill's features of several (world, params) at once, where it registered such a
#: function (each item's values, or the exception its features raised).
_MANY: dict[str, Callable[[list[tuple[WorldState, Any]]], list]] = {}
#: Highest centre (m) of the cube a skill acts on among the starts its predictor was fitted
#: on, where the skill registered one (:func:`in_support`).
SUPPORT_TOP_Z: dict[str, float] = {}


def register(
    skill: str,
    names: list[str],
    fn: Callable[[WorldState, Any], list[float]],
    support_top_z: float | None = None,
    many: Callable[[list[tuple[WorldState, Any]]], list] | None = None,
) -> None:
    """Declare ``skill``'s predictor features: ``fn(world, params)`` gives the values named
    ``names``, in order; ``support_top_z``: see :data:`SUPPORT_TOP_Z`; ``many``: the same
    values of a list of (world, params) at once (see :data:`_MANY`)."""
    FEATURES[skill], _FN[skill] = list(names), fn
    if many is None:
        _MANY.pop(skill, None)
    else:
        _MANY[skill] = many
    if support_top_z is not None:
        SUPPORT_TOP_Z[skill] = support_top_z
    shipped.cache_clear()


def skills() -> tuple[str, ...]:
    """The skills that have predictor features (every skill module is imported with the
    ``skills`` package, so all of them are registered by the time anyone asks)."""
    return tuple(FEATURES)


def features(skill: str, world: WorldState, params: SkillParams) -> np.ndarray:
    fn = _FN.get(skill)
    if fn is None:
        raise ValueError(f"skill {skill!r} has no predictor features")
    v = np.asarray(fn(world, params), dtype=np.float64)
    assert v.shape == (len(FEATURES[skill]),)
    return v


# ----------------------------------------------------------------------------- model
#: ``np.clip``'s own ufunc (the function wraps it in Python dispatch); np.clip elsewhere.
_clip = getattr(getattr(getattr(np, "_core", None), "umath", None), "clip", np.clip)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    format: str = Field(pattern=r"^skillbridge\.success_model/1$")
    skill: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")
    features: list[str] = Field(max_length=64)
    mean: list[float]
    std: list[float]
    hidden: list[int] = Field(max_length=3)
    threshold: float = Field(ge=0.0, le=1.0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    policy_sha256: str | None = None


class SuccessModel:
    """A fitted predictor: ``prob(world, params)`` in [0, 1]. Inference is plain numpy (the
    bridge asks it about every step; it must not need torch): tanh layers, then a logit."""

    def __init__(self, manifest: Manifest, layers: list[tuple[np.ndarray, np.ndarray]]):
        self.manifest = manifest
        self.layers = layers
        self._mean = np.asarray(manifest.mean)
        self._std = np.asarray(manifest.std)

    @property
    def threshold(self) -> float:
        return self.manifest.threshold

    def prob_features(self, x: np.ndarray) -> np.ndarray:
        h = (np.atleast_2d(np.asarray(x, dtype=np.float64)) - self._mean) / self._std
        for i, (w, b) in enumerate(self.layers):
            h = h @ w.T + b
            if i < len(self.layers) - 1:
                h = np.tanh(h)
        return 1.0 / (1.0 + np.exp(-_clip(h[:, 0], -60, 60)))

    def prob_rows(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`prob_features` of the rows of ``x``, and for each a bound on how far
        :meth:`prob` (one row at a time: matrix-vector products, ``math.exp``) can answer
        from it. The two differ only in rounding: the same inputs scaled element by
        element, then sums of the same products in another order (each within
        ``gamma_n * sum |w h|`` of the exact one), the bias added, ``tanh`` and the
        logistic each within a few units in the last place. The bound follows those
        through the layers from the largest scaled input of the row, doubled; it is not
        finite where an input is not (then only :meth:`prob` answers)."""
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        h = (x - self._mean) / self._std
        m = np.abs(h).max(axis=1)
        for w, b in self.layers[:-1]:
            h = np.tanh(h @ w.T + b)
        w, b = self.layers[-1]
        z = (h @ w.T + b)[:, 0]
        p = 1.0 / (1.0 + np.exp(-_clip(z, -60, 60)))
        at0, per = self._rounding
        return p, at0 + per * m

    @cached_property
    def _rounding(self) -> tuple[float, float]:
        """:meth:`prob_rows`' bound as (its value for inputs all 0, its growth per unit of
        the largest scaled input): the bound is affine in that input (below), so these
        two, taken from the weights once, give it for every row (1% added)."""

        def bound(m: float) -> float:
            err = 0.0
            for i, (w, b) in enumerate(self.layers):
                n = w.shape[1]
                gamma = n * _U / (1 - n * _U)
                rows = float(np.abs(w).sum(axis=1).max())
                size = rows * m + float(np.abs(b).max(initial=0.0))
                err = rows * err + 2 * gamma * rows * m  # the sums, in another order
                err = err + 2 * _U * (size + err)  # the bias added
                if i < len(self.layers) - 1:
                    err, m = err + 8 * _U, 1.0  # tanh; its values within [-1, 1]
            return 2 * (err / 4 + 16 * _U) + 1e-15  # the logistic's slope at most 1/4

        at0 = bound(0.0)
        return 1.01 * at0, 1.01 * (bound(1.0) - at0)

    def prob(self, world: WorldState, params: SkillParams) -> float:
        """One step's probability: :meth:`prob_features` of one row, on vectors (a matrix
        product a layer and the logistic on a Python float: the bridge asks this of every
        step, and the batch form's reshaping and ufunc dispatch are most of its time)."""
        h = (features(self.manifest.skill, world, params) - self._mean) / self._std
        *hidden, (w_out, b_out) = self.layers
        for w, b in hidden:
            h = np.tanh(w @ h + b)
        z = float((w_out @ h + b_out)[0])
        return 1.0 / (1.0 + math.exp(-min(max(z, -60.0), 60.0)))


#: The unit roundoff of a float64.
_U = 2.0**-53


#: Centre height above which a cube in a bin stands on another one (one on the bin's floor
#: rests at about 0.024 m).
IN_BIN_TOP_Z = 2 * scene.CUBE_HALF


def in_support(skill: str, world: WorldState, params: SkillParams) -> bool:
    """Whether ``params`` in ``world`` is like the starts the skill's predictor was fitted
    on. Its rollouts (``skills.affordance_data``) are all on the tabletop's table, bins and
    two-cube stacks; the drawer and the tops of taller towers came later, and a network
    asked about inputs it never saw answers with confidence it has not earned (a drawer pick
    the policy makes 50 times out of 50 was rated 0.48). Outside its support a predictor
    abstains, and the geometric preconditions alone judge the step."""
    top = SUPPORT_TOP_Z.get(skill, math.inf)
    for f in ("object", "target"):
        n = getattr(params, f, None)
        if not isinstance(n, str):
            continue
        # a container fixture (the drawer), or an object in one: no rollout held either
        if world.fixtures and (n in world.container_names or world.container_of(n) is not None):
            return False
        o = world.object(n)
        if o is not None and not o.held and o.pos[2] > top:
            return False
        # in a bin the rollouts held one cube deep; one stacked on another there (a put
        # landing on a cube already in the bin) was rated 0.00 for a pick both the policy
        # and the expert make
        if o is not None and not o.held and o.in_bin is not None and o.pos[2] > IN_BIN_TOP_Z:
            return False
    return True


def layer_names(n_layers: int) -> list[tuple[str, str]]:
    return [(f"l{i}.weight", f"l{i}.bias") for i in range(n_layers)]


def save(
    skill: str, layers: list[tuple[np.ndarray, np.ndarray]], meta: dict, directory: Path = DIR
) -> Path:
    """Write ``<skill>.safetensors`` (the layers, float32) and ``<skill>.json``."""
    directory.mkdir(parents=True, exist_ok=True)
    state = {}
    for (wn, bn), (w, b) in zip(layer_names(len(layers)), layers, strict=True):
        state[wn] = np.ascontiguousarray(w, dtype=np.float32)
        state[bn] = np.ascontiguousarray(b, dtype=np.float32)
    blob = save_safetensors(state)
    manifest = dict(meta, format=FORMAT, skill=skill, sha256=util.sha256_bytes(blob))
    Manifest.model_validate(manifest)
    util.atomic_write_bytes(directory / f"{skill}.safetensors", blob)
    util.atomic_write_text(directory / f"{skill}.json", json.dumps(manifest, indent=1) + "\n")
    return directory / f"{skill}.json"


class ModelError(Exception):
    pass


def load(skill: str, directory: Path = DIR) -> SuccessModel:
    """The predictor of ``skill``; ModelError if it is missing, tampered or malformed."""
    try:
        raw = read_regular(directory / f"{skill}.json", MAX_BYTES)
        m = Manifest.model_validate(json.loads(raw))
        blob = read_regular(directory / f"{skill}.safetensors", MAX_BYTES)
    except Exception as e:
        raise ModelError(f"{directory}/{skill}: {e}") from None
    if m.skill != skill or len(m.mean) != len(m.features) or len(m.std) != len(m.features):
        raise ModelError(f"{directory}/{skill}.json: inconsistent manifest")
    if m.features != FEATURES.get(skill):
        raise ModelError(f"{directory}/{skill}.json: features differ from this code's; refit")
    if util.sha256_bytes(blob) != m.sha256:
        raise ModelError(f"{directory}/{skill}.safetensors: sha256 does not match the manifest")
    if any(not 1 <= h <= 256 for h in m.hidden) or min(m.std, default=1.0) <= 0:
        raise ModelError(f"{directory}/{skill}.json: bad layer sizes or scaling")
    dims = [len(m.features), *m.hidden, 1]
    try:
        state = load_safetensors(blob)
        names = layer_names(len(dims) - 1)
        if set(state) != {n for pair in names for n in pair}:
            raise ValueError(f"tensors {sorted(state)} do not match the layer sizes")
        layers = []
        for (wn, bn), a, b in zip(names, dims[:-1], dims[1:], strict=True):
            w, bias = state[wn].astype(np.float64), state[bn].astype(np.float64)
            if w.shape != (b, a) or bias.shape != (b,) or not np.isfinite(w).all():
                raise ValueError(f"{wn}: shape {w.shape}, expected {(b, a)}")
            layers.append((w, bias))
    except Exception as e:
        raise ModelError(f"{directory}/{skill}.safetensors: {e}") from None
    return SuccessModel(m, layers)


def enabled() -> bool:
    """Whether the bridge consults the predictors (``SKILLBRIDGE_AFFORDANCE=0`` turns them
    off, e.g. to measure what they refuse)."""
    return os.environ.get("SKILLBRIDGE_AFFORDANCE", "1") not in ("0", "off", "false")


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error, equal-width bins, weighted by bin size."""
    idx = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.sum() / len(p) * abs(float(p[m].mean()) - float(y[m].mean()))
    return total


def brier(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((p - y) ** 2))


@cache
def shipped(skill: str) -> SuccessModel | None:
    """The shipped predictor of ``skill``, or None where there is none (home) or it cannot
    be used (tampered, or fitted on other features): then the bridge judges that skill by
    geometry alone, and says so once in the log."""
    if skill not in FEATURES or not (DIR / f"{skill}.json").is_file():
        return None
    try:
        return load(skill, DIR)
    except ModelError as e:
        logging.getLogger(__name__).warning("success predictor not used: %s", e)
        return None


def low_affordance(
    world: WorldState, step: dict, params: SkillParams
) -> tuple[float, float] | None:
    """(p, threshold) when the skill's shipped success predictor rates ``step`` (its
    parameters ``params``) in ``world`` below its threshold; None when it does not, when the
    skill has no predictor, or when the step is outside the predictor's support."""
    model = shipped(step["skill"])
    if model is None or not enabled():
        return None
    if not in_support(step["skill"], world, params):
        return None
    p = model.prob(world, params)
    return (p, model.threshold) if p < model.threshold else None


#: A skill's steps in a plan are asked at once from this many on; fewer, one by one (the
#: batch's own arrays cost about what two steps' networks do).
BATCH_FROM = 3


def first_low(
    items: list[tuple[WorldState, str, SkillParams]],
) -> tuple[int, tuple[float, float] | Exception] | None:
    """What :func:`low_affordance` asked of each (world, skill, params) in turn finds first:
    (its index, (p, threshold)) for the first rated too low, (its index, the exception)
    for the first whose question raises before that, or None.

    The bridge asks this of a plan's steps at once (issue 25): each skill's predictor
    features of all its steps together (:data:`_MANY`, where a skill registered it), and
    one pass of its network over them (:meth:`SuccessModel.prob_rows`). A step whose
    probability that pass puts at the threshold or below, within the bound on how far
    ``low_affordance``'s own computation can lie from it, is asked of ``low_affordance``
    itself, which answers (and gives the p of the message); one further above it is not
    low by either."""
    todo: dict[str, list[int]] = {}
    stop: tuple[int, Exception] | None = None
    for i, (world, skill, params) in enumerate(items):
        try:
            model = shipped(skill)
            if model is None or not enabled() or not in_support(skill, world, params):
                continue
        except Exception as e:  # (raised in its turn, if no step before it is low)
            stop = (i, e)
            break
        todo.setdefault(skill, []).append(i)
    clear: set[int] = set()
    raised: dict[int, Exception] = {}
    for skill, idx in todo.items():
        if len(idx) < BATCH_FROM:
            continue  # (asked of low_affordance below, one by one)
        model = shipped(skill)
        assert model is not None  # (asked above)
        rows = _feature_rows(skill, [(items[i][0], items[i][2]) for i in idx])
        good = [(i, r) for i, r in zip(idx, rows, strict=True) if not isinstance(r, Exception)]
        raised.update((i, r) for i, r in zip(idx, rows, strict=True) if isinstance(r, Exception))
        if good:
            p, bound = model.prob_rows(np.stack([r for _, r in good]))
            thr = model.threshold
            for (i, _), pi, bi in zip(good, p.tolist(), bound.tolist(), strict=True):
                if pi - 2 * bi > thr:  # (NaN, or a bound not finite: asked below)
                    clear.add(i)
    asked = sorted(i for idx in todo.values() for i in idx)
    for i in asked:
        if i in raised:
            return i, raised[i]
        if i in clear:
            continue
        world, skill, params = items[i]
        low = low_affordance(world, {"skill": skill}, params)
        if low is not None:
            return i, low
    return stop


def _feature_rows(skill: str, items: list[tuple[WorldState, Any]]) -> list:
    """:func:`features` of each (world, params) of ``skill``: its array, or the exception
    computing it raised."""
    many = _MANY.get(skill)
    if many is not None:
        values = many(items)
    else:
        values = []
        for world, params in items:
            try:
                values.append(_FN[skill](world, params))
            except Exception as e:
                values.append(e)
    n = len(FEATURES[skill])
    out: list = []
    for v in values:
        if isinstance(v, Exception):
            out.append(v)
            continue
        try:
            a = np.asarray(v, dtype=np.float64)
            assert a.shape == (n,)
        except Exception as e:
            out.append(e)
            continue
        out.append(a)
    return out
