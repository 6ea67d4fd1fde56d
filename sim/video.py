"""Writing rendered frames to mp4 with imageio-ffmpeg, atomically."""

from __future__ import annotations

import os
from pathlib import Path

import imageio.v2 as imageio
import numpy as np


class VideoWriter:
    """mp4 writer that only exposes the file once it is complete (temp file + rename)."""

    def __init__(self, path: str | Path, fps: int = 25):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(f".{self.path.stem}.tmp{os.getpid()}.mp4")
        self._writer = imageio.get_writer(
            self._tmp, fps=fps, codec="libx264", quality=7, macro_block_size=8,
            ffmpeg_log_level="error",
        )
        self.frames = 0

    def append(self, frame: np.ndarray) -> None:
        self._writer.append_data(frame)
        self.frames += 1

    def close(self) -> Path:
        self._writer.close()
        os.replace(self._tmp, self.path)
        return self.path

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            self._tmp.unlink(missing_ok=True)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()


def caption(frame: np.ndarray, text: str) -> np.ndarray:
    """Burn a one-line caption into the bottom of a frame (matplotlib's Agg text raster)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    h, w = frame.shape[:2]
    bar = max(18, h // 14)
    fig = Figure(figsize=(w / 100, bar / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    fig.patch.set_facecolor("black")
    fig.text(0.01, 0.5, text, color="white", fontsize=bar * 0.45, va="center", family="monospace")
    canvas.draw()
    strip = np.asarray(canvas.buffer_rgba())[:, :, :3]
    out = frame.copy()
    out[h - strip.shape[0] :, :, :] = strip[: min(bar, h)]
    return out
