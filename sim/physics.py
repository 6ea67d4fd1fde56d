"""Loading the compiled model and MuJoCo full-state save/restore.

States are taken with ``mjSTATE_INTEGRATION``: everything the integrator reads, including
controls, mocap targets and the constraint solver's warm start, so restoring a state and
stepping reproduces the original trajectory bit for bit.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

import mujoco
import numpy as np

from sim import scene, scenes
from sim.util import sha256_bytes

STATE_SPEC = mujoco.mjtState.mjSTATE_INTEGRATION


def scene_path(name: str = scene.DEFAULT_SCENE) -> Path:
    """The MJCF file of scene ``name`` (one of ``scene.SCENE_NAMES``)."""
    return scenes.get(name).mjcf


@cache
def _xml_text(name: str = scene.DEFAULT_SCENE) -> str:
    return scenes.get(name).mjcf_text()


@cache
def _includes(name: str = scene.DEFAULT_SCENE) -> dict[str, bytes]:
    """The files the scene includes, by the name it includes them with (the articulated
    scene includes the tabletop scene, which includes the robot)."""
    return {p.name: p.read_bytes() for p in scenes.get(name).includes}


def load_model(name: str = scene.DEFAULT_SCENE) -> mujoco.MjModel:
    """Compile scene ``name``'s MJCF (a fresh model each call: models are mutable)."""
    return mujoco.MjModel.from_xml_string(_xml_text(name), assets=_includes(name))


def model_hash(name: str = scene.DEFAULT_SCENE) -> str:
    """sha256 of the scene's MJCF text (the scene file, then each file it includes) plus the
    MuJoCo version that compiles it."""
    text = _xml_text(name).encode() + b"".join(_includes(name).values())
    return sha256_bytes(text + mujoco.__version__.encode())


def state_size(model: mujoco.MjModel) -> int:
    return mujoco.mj_stateSize(model, STATE_SPEC)


def get_state(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """Full integration state as a flat float64 vector."""
    out = np.empty(state_size(model), dtype=np.float64)
    mujoco.mj_getState(model, data, out, STATE_SPEC)
    return out


def set_state(model: mujoco.MjModel, data: mujoco.MjData, state: np.ndarray) -> None:
    """Restore a state from :func:`get_state` and recompute derived quantities."""
    state = np.asarray(state, dtype=np.float64)
    if state.shape != (state_size(model),):
        raise ValueError(f"state has shape {state.shape}, this model needs ({state_size(model)},)")
    mujoco.mj_setState(model, data, state, STATE_SPEC)
    mujoco.mj_forward(model, data)


@lru_cache(maxsize=len(scene.SCENE_NAMES))
def _scene_model(name: str) -> mujoco.MjModel:
    return load_model(name)


def command_slice(model: mujoco.MjModel | str | None = None) -> slice:
    """Where the hand's commanded turn (the mocap target's quaternion) lies in a state vector.

    A skill sets the turn at its start (``TabletopEnv.set_grip_yaw``), between two recorded
    steps: it is a command, like the action, not a consequence of the previous step. Replay
    checks take it from the recorded row and compare everything else bit for bit.
    ``model`` is a compiled model or a scene name (default: the default scene's; read-only
    use: sizes only)."""
    if model is None or isinstance(model, str):
        model = _scene_model(model or scene.DEFAULT_SCENE)
    quat = int(mujoco.mjtState.mjSTATE_MOCAP_QUAT)
    # mj_getState stores the components in the order of their bits
    start = sum(
        mujoco.mj_stateSize(model, 1 << bit)
        for bit in range(quat.bit_length() - 1)
        if int(STATE_SPEC) & (1 << bit)
    )
    return slice(start, start + mujoco.mj_stateSize(model, quat))


def index_span(idx) -> slice | np.ndarray:
    """Indices as a slice where they run contiguously upwards (the same elements, read
    without a gather: the env and the controller index the same few every step), else as
    an index array."""
    idx = np.asarray(idx, dtype=np.intp)
    if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
        return slice(int(idx[0]), int(idx[0]) + len(idx))
    return idx
