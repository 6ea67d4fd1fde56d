"""Writing rendered frames to mp4 with imageio-ffmpeg, atomically and checked.

ffmpeg runs as a child process and imageio-ffmpeg never looks at its exit status: on a full
disk it writes a truncated file and everything reports success ("111 frames" for an mp4 that
cannot be opened). So the finished temporary file is checked (mp4 box structure, frame
count) before it is renamed into place. The target itself is checked too, because the rename
replaces whatever is there: a device node (``--video /dev/full``), an episode's own
``meta.json``, any file that is not a video.
"""

from __future__ import annotations

import os
import re
import stat
import struct
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

#: Files an episode folder holds: a video never replaces one of them.
EPISODE_FILES = re.compile(
    r"^(meta\.json|trace\.jsonl|events\.log\.jsonl|initial\.npz|"
    r"final\.npz|states-\d+\.npz)$"
)
VIDEO_MAGIC = b"ftyp"  # bytes 4..8 of an mp4/mov file


class VideoError(OSError):
    """The video cannot be written where asked, or came out broken (one line, for the user)."""


def check_video_target(path: str | Path) -> Path:
    """Raise :class:`VideoError` unless writing a video to ``path`` can only replace an
    earlier video: not a folder, device, FIFO, socket or symlink; not a regular file that is
    not an mp4; not a file of an episode folder. Returns the path."""
    path = Path(path)
    if path.name in ("", ".", ".."):
        raise VideoError(f"--video {path}: give a file name")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise VideoError(f"--video {path}: {e.strerror or e}") from None
    if EPISODE_FILES.match(path.name) and (path.parent / "meta.json").exists():
        raise VideoError(
            f"--video {path} is a file of the episode in {path.parent}; "
            "write the video somewhere else"
        )
    if st is None:
        return path
    if stat.S_ISDIR(st.st_mode):
        raise VideoError(f"--video {path} is a folder; give a file name")
    if stat.S_ISLNK(st.st_mode):
        raise VideoError(f"--video {path} is a symbolic link; not replacing it")
    if not stat.S_ISREG(st.st_mode):
        raise VideoError(f"--video {path} is a device or special file; not replacing it")
    if st.st_size:
        try:
            with open(path, "rb") as f:
                head = f.read(8)
        except OSError as e:
            raise VideoError(f"--video {path}: {e.strerror or e}") from None
        if head[4:8] != VIDEO_MAGIC:
            raise VideoError(f"--video {path} exists and is not a video; not replacing it")
    return path


def check_mp4(path: str | Path, frames: int | None = None, shown: str | Path | None = None) -> None:
    """Raise :class:`VideoError` unless ``path`` is a complete mp4 (top-level boxes that
    exactly tile the file, with ``ftyp``, ``moov`` and ``mdat``) holding ``frames`` frames."""
    path = Path(path)
    name = shown if shown is not None else path
    size = path.stat().st_size
    seen, pos = set(), 0
    with open(path, "rb") as f:
        while pos < size:
            f.seek(pos)
            head = f.read(16)
            if len(head) < 8:
                break
            n, kind = struct.unpack(">I4s", head[:8])
            if n == 1 and len(head) == 16:
                n = struct.unpack(">Q", head[8:16])[0]
            elif n == 0:
                n = size - pos
            if n < 8:
                break
            seen.add(kind)
            pos += n
    if pos != size or not {b"ftyp", b"moov", b"mdat"} <= seen:
        raise VideoError(f"the video {name} came out incomplete ({size} bytes; is the disk full?)")
    if frames is not None:
        import imageio_ffmpeg

        try:
            n_frames, _ = imageio_ffmpeg.count_frames_and_secs(str(path))
        except Exception as e:  # noqa: BLE001 - ffmpeg could not decode it
            raise VideoError(
                f"the video {name} cannot be decoded "
                f"({str(e).strip().splitlines()[0][:120] if str(e) else type(e).__name__})"
            ) from None
        if n_frames != frames:
            raise VideoError(
                f"the video {name} holds {n_frames} frames, {frames} were "
                "written (is the disk full?)"
            )


def _remove(path: Path) -> None:
    """Remove a temporary file if it is there; on a read-only disk even a missing file's
    unlink fails (EROFS), and that must not replace the error being reported."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


class VideoWriter:
    """mp4 writer that only exposes the file once it is complete and checked (temp file +
    rename); any failure is a :class:`VideoError` and leaves no temporary file."""

    def __init__(self, path: str | Path, fps: int = 25, gop: int | None = None):
        """``gop``: a keyframe every ``gop`` frames (ffmpeg ``-g``); ``None`` keeps x264's
        default (one per 250 frames), which makes a random frame slow to seek to."""
        self.path = check_video_target(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise VideoError(
                f"cannot create the folder of --video {self.path}: {e.strerror or e}"
            ) from None
        self._tmp = self.path.with_name(f".{self.path.stem}.tmp{os.getpid()}.mp4")
        try:
            # probe that the folder takes a file before ffmpeg starts (its error would be
            # a screen of ffmpeg output)
            with open(self._tmp, "xb"):
                pass
            self._writer = imageio.get_writer(
                self._tmp,
                fps=fps,
                codec="libx264",
                quality=7,
                macro_block_size=8,
                ffmpeg_log_level="quiet",
                output_params=None if gop is None else ["-g", str(int(gop))],
            )
        except OSError as e:
            _remove(self._tmp)
            raise VideoError(f"cannot write --video {self.path}: {e.strerror or e}") from None
        self.frames = 0

    def append(self, frame: np.ndarray) -> None:
        try:
            self._writer.append_data(frame)
        except OSError as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise VideoError(f"writing the video {self.path} failed: {msg[:160]}") from None
        self.frames += 1

    def close(self) -> Path:
        try:
            self._writer.close()
            fd = os.open(self._tmp, os.O_RDONLY)
            try:
                os.fsync(fd)  # a full disk shows up here at the latest
            finally:
                os.close(fd)
            check_mp4(self._tmp, self.frames, shown=self.path)
            check_video_target(self.path)  # still nothing but an older video there
            os.replace(self._tmp, self.path)
        except OSError as e:
            _remove(self._tmp)
            if isinstance(e, VideoError):
                raise
            raise VideoError(f"writing the video {self.path} failed: {e.strerror or e}") from None
        except BaseException:
            _remove(self._tmp)
            raise
        return self.path

    def abort(self) -> None:
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - already failing; the temp file goes either way
            pass
        finally:
            _remove(self._tmp)

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
