"""Shared fixtures. Rendering runs offscreen (EGL) where no display exists."""

import os

os.environ.setdefault("MUJOCO_GL", "egl")
# Tests that are not about the embedded model plan with the rules (fast, exact); the model's
# own tests name it (--llm embedded / from_spec("embedded")), subprocesses inherit this.
os.environ.setdefault("SKILLBRIDGE_LLM", "rules")

import pytest  # noqa: E402
import torch  # noqa: E402

import sim  # noqa: E402,F401  (registers the env)

torch.set_num_threads(1)


@pytest.fixture
def env():
    from sim.env import TabletopEnv

    e = TabletopEnv()
    yield e
    e.close()
