"""Gymnasium's own ``check_env`` on the registered env, and ``render_mode="human"`` where no
display exists (issue 23, item 4). MuJoCo's viewer kills the process when GLFW cannot start,
so both run in a subprocess: a crash fails the test instead of ending pytest."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

HEADLESS = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
HEADLESS["MUJOCO_GL"] = os.environ.get("MUJOCO_GL", "egl")

CHECK_ENV = """
import sys
import warnings
import gymnasium
import sim
from gymnasium.utils.env_checker import check_env

env = gymnasium.make(getattr(sim, sys.argv[1]))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the unbounded Box limits are only warnings
    check_env(env.unwrapped)
print("render modes", env.unwrapped.metadata["render_modes"])
print("CHECK_ENV_PASSED")
"""

HUMAN = """
import gymnasium
import sim

try:
    env = gymnasium.make(sim.ENV_ID, render_mode="human")
except ValueError as e:
    print("ERROR:", e)
else:
    env.reset(seed=0)
    env.render()
    print("RENDERED")
"""


def _run(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="a display is assumed there")
@pytest.mark.parametrize("env_id", ["ENV_ID", "ARTICULATED_ENV_ID"])
def test_check_env_passes_on_a_headless_machine(env_id):
    p = _run(CHECK_ENV, HEADLESS, env_id)
    assert p.returncode == 0 and "CHECK_ENV_PASSED" in p.stdout, p.stdout + p.stderr[-2000:]
    assert "render modes ['rgb_array']" in p.stdout


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="a display is assumed there")
@pytest.mark.parametrize("display", [None, ":9999"], ids=["no_display", "unreachable_display"])
def test_human_render_mode_without_a_display_is_a_clear_error(display):
    env = dict(HEADLESS)
    if display:
        env["DISPLAY"] = display  # set, but no X server answers there
    p = _run(HUMAN, env)
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR: render_mode='human'"), p.stdout
    assert "rgb_array" in lines[0]
