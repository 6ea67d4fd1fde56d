"""Rendered frames at a chosen rate, as base64 images for an event stream.

Why a wrapper around the skill executor: the runner calls the executor's step hook once
per control step, on the thread that owns the physics and its offscreen GL context
(``MUJOCO_GL=egl``). Rendering from there, every ``k``-th step, needs no change to the
runner and never touches the scene from another thread.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from skillbridge.service.config import FRAME_FORMATS, MAX_FPS

#: Frame size a session gets unless it asks otherwise (small: frames cross a network).
WIDTH, HEIGHT = 320, 240


def encode(rgb: np.ndarray, fmt: str = "jpeg", quality: int = 75) -> str:
    """``rgb`` (H, W, 3 uint8) as base64 JPEG or PNG."""
    from PIL import Image

    if fmt not in FRAME_FORMATS:
        raise ValueError(f"frame format must be one of {', '.join(FRAME_FORMATS)}")
    buf = io.BytesIO()
    img = Image.fromarray(np.ascontiguousarray(rgb))
    if fmt == "jpeg":
        img.save(buf, format="JPEG", quality=quality)
    else:
        img.save(buf, format="PNG", compress_level=1)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def every_steps(fps: float) -> int:
    """Control steps between two frames at ``fps`` frames per simulated second (0: none)."""
    from sim import scene

    if fps <= 0:
        return 0
    fps = min(float(fps), MAX_FPS)
    return max(1, round(1.0 / (fps * scene.CONTROL_DT)))


class FrameSource:
    """Renders the scene of a run and hands each frame to ``emit(data)``."""

    def __init__(self, emit: Callable[[dict], None], *, fps: float, fmt: str = "jpeg") -> None:
        self.emit = emit
        self.every = every_steps(fps)
        self.fmt = fmt
        self.count = 0
        self.render_s = 0.0

    def frame(self, env: Any, step: int, why: str = "step") -> None:
        """One frame of ``env`` now (the caller owns the physics thread)."""
        if not self.every:
            return
        t0 = time.perf_counter()
        rgb = env.render_rgb()
        data = encode(rgb, self.fmt)
        self.render_s += time.perf_counter() - t0
        self.count += 1
        self.emit(
            {
                "format": self.fmt,
                "media_type": FRAME_FORMATS[self.fmt],
                "width": int(rgb.shape[1]),
                "height": int(rgb.shape[0]),
                "step": int(step),
                "why": why,
                "data": data,
            }
        )


class FrameExecutor:
    """A skill executor that also renders a frame every ``source.every`` control steps."""

    def __init__(self, inner: Any, source: FrameSource) -> None:
        self.inner = inner
        self.source_frames = source
        self.source = getattr(inner, "source", "pretrained")
        self.steps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run(self, env: Any, subgoal: dict, on_step: Callable | None = None, **kw: Any) -> Any:
        src = self.source_frames

        def hook(action: Any) -> None:
            if on_step is not None:
                on_step(action)  # may stop the skill (an interjection): no frame then
            self.steps += 1
            if src.every and self.steps % src.every == 0:
                src.frame(env, self.steps)

        return self.inner.run(env, subgoal, on_step=hook, **kw)
