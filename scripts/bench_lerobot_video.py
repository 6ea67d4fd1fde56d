"""Random access into the LeRobot export's videos: what one training sample's frame costs.

    python scripts/bench_lerobot_video.py                 # records a scripted episode
    python scripts/bench_lerobot_video.py --runs runs/ --samples 200 --json

A LeRobot loader fetches frames at random timestamps: it seeks to the keyframe at or
before the timestamp and decodes forward to it. So the cost of a sample grows with the
distance to the previous keyframe. This script exports episodes with the real exporter
(``export_lerobot``, one camera), renders the same frames again and encodes them twice more
in the same run with the same encoder settings except the keyframe interval:

- ``all-keyframe``: every frame a keyframe (``-g 1``): the reference, no decoding forward;
- ``one-keyframe``: x264's default interval (250), what the export wrote before (one
  keyframe in a file shorter than 250 frames);

and times decoding the same random frames from each (a fresh open, seek and decode per
sample, as a loader that opens the file per call does). Every decoded frame is checked to be
the one asked for (its timestamp) and to look like the all-keyframe file's (mean absolute
pixel difference). Decoder: PyAV where installed (``pip install av``), else the ffmpeg of
imageio-ffmpeg (one process per sample, so each sample also pays a process start).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import sim  # noqa: E402,F401  (the GL backend before any rendering import)

TASK = "put the red block in the green bin, then put the blue block in the red bin"


def record(out: Path, seed: int) -> Path:
    """One scripted episode of TASK (about 150 control steps) under ``out``."""
    from skillbridge.runner.records import RunConfig
    from skillbridge.runner.runner import Runner

    r = Runner(RunConfig(task=TASK, seed=seed, out_dir=out, policy_source="scripted")).run()
    if r.status != "success":
        raise SystemExit(f"the scripted episode did not succeed: {r.message}")
    return out


def render_frames(paths: list[Path], camera: str, width: int, height: int) -> list[np.ndarray]:
    """The frames the exporter renders: each episode's states before each action."""
    from skillbridge.episodes.episode import load
    from skillbridge.episodes.replay import _env

    frames = []
    for p in paths:
        ep = load(p)
        env = _env(ep, width, height)
        try:
            for k in range(ep.n_steps):
                env.set_state(ep.states[k])
                frames.append(env.render_rgb(camera).copy())
        finally:
            env.close()
    return frames


def encode(frames: list[np.ndarray], path: Path, fps: int, gop: int | None) -> Path:
    from sim.video import VideoWriter

    with VideoWriter(path, fps=fps, gop=gop) as w:
        for f in frames:
            w.append(f)
    return path


class PyAVDecoder:
    name = "pyav"

    def __init__(self):
        import av

        self.av = av
        self.version = av.__version__

    def pts(self, path: Path) -> list[int]:
        with self.av.open(str(path)) as c:
            return sorted(int(f.pts) for f in c.decode(c.streams.video[0]))

    def frame(self, path: Path, pts: int) -> tuple[np.ndarray, int, int]:
        """(rgb, pts decoded, frames decoded) of the frame at ``pts``."""
        with self.av.open(str(path)) as c:
            s = c.streams.video[0]
            c.seek(pts, stream=s, backward=True, any_frame=False)
            n = 0
            for f in c.decode(s):
                n += 1
                if f.pts is not None and f.pts >= pts:
                    return f.to_ndarray(format="rgb24"), int(f.pts), n
        raise RuntimeError(f"pts {pts} not found in {path}")


class FFmpegDecoder:
    name = "ffmpeg (imageio-ffmpeg, one process per sample)"

    def __init__(self, width: int, height: int, fps: int):
        import imageio_ffmpeg

        self.exe = imageio_ffmpeg.get_ffmpeg_exe()
        self.version = imageio_ffmpeg.__version__
        self.size, self.fps = (width, height), fps

    def pts(self, path: Path) -> list[int]:
        import imageio_ffmpeg

        n, _ = imageio_ffmpeg.count_frames_and_secs(str(path))
        return list(range(n))  # frame indices stand in for timestamps

    def frame(self, path: Path, pts: int) -> tuple[np.ndarray, int, int]:
        w, h = self.size
        t = (pts + 0.5) / self.fps  # mid-frame: no rounding onto the neighbour
        cmd = [self.exe, "-v", "error", "-ss", f"{t:.6f}", "-i", str(path)]
        cmd += ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        raw = subprocess.run(cmd, capture_output=True, check=True).stdout
        return np.frombuffer(raw, np.uint8).reshape(h, w, 3), pts, 0


def bench(decoder, files: dict[str, Path], picks: list[int], ref: str) -> dict:
    pts = {name: decoder.pts(p) for name, p in files.items()}
    n = len(pts[ref])
    for name, p in pts.items():
        if len(p) != n:
            raise SystemExit(f"{name} holds {len(p)} frames, {ref} {n}")
    truth = {}  # the reference's pixels of each picked frame
    out = {}
    for name in [ref, *(k for k in files if k != ref)]:
        times, decoded, diffs, late = [], [], [], []
        for i in picks:
            t0 = time.perf_counter()
            rgb, got, count = decoder.frame(files[name], pts[name][i])
            dt = time.perf_counter() - t0
            if got != pts[name][i]:
                raise SystemExit(f"{name}: asked frame {i} (pts {pts[name][i]}), got pts {got}")
            if name == ref:
                truth[i] = rgb.astype(np.int16)
            diffs.append(float(np.abs(rgb.astype(np.int16) - truth[i]).mean()))
            times.append(dt)
            decoded.append(count)
            if i >= 3 * n // 4:
                late.append(dt)
        out[name] = {
            "file": files[name].name,
            "bytes": files[name].stat().st_size,
            "ms_per_sample_mean": round(1000 * statistics.fmean(times), 2),
            "ms_per_sample_p50": round(1000 * statistics.median(times), 2),
            "ms_per_sample_p90": round(1000 * float(np.quantile(times, 0.9)), 2),
            "ms_last_quarter_mean": round(1000 * statistics.fmean(late), 2) if late else None,
            "frames_decoded_per_sample": round(statistics.fmean(decoded), 1),
            "mean_abs_pixel_diff_vs_all_keyframe": round(statistics.fmean(diffs), 2),
        }
    return out


def main() -> None:
    from skillbridge.episodes import lerobot_export as lx

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, help="episodes to export (default: record one)")
    ap.add_argument("--camera", default="front")
    ap.add_argument("--size", default="480x360")
    ap.add_argument("--samples", type=int, default=150, help="random frames per file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--decoder", choices=["auto", "pyav", "ffmpeg"], default="auto")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    width, height = lx.parse_size(a.size)
    with tempfile.TemporaryDirectory(prefix="bench_lerobot_video") as tmp_s:
        tmp = Path(tmp_s)
        runs = a.runs or record(tmp / "runs", a.seed)
        paths = lx.find_episodes([runs])
        opts = lx.ExportOptions(cameras=(a.camera,), width=width, height=height)
        t0 = time.perf_counter()
        res = lx.export_lerobot(paths, tmp / "ds", opts)
        export_s = time.perf_counter() - t0
        fps = json.loads((tmp / "ds/meta/info.json").read_text())["fps"]
        frames = render_frames(paths, a.camera, width, height)
        files = {
            f"export (gop {lx.VIDEO_GOP})": tmp / "ds" / res.videos[0],
            "all-keyframe (gop 1)": encode(frames, tmp / "allkey.mp4", fps, 1),
            "one-keyframe (x264 default, before)": encode(frames, tmp / "onekey.mp4", fps, None),
        }
        if a.decoder == "pyav" or a.decoder == "auto":
            try:
                decoder = PyAVDecoder()
            except ImportError:
                if a.decoder == "pyav":
                    raise SystemExit("--decoder pyav: pip install av") from None
                decoder = FFmpegDecoder(width, height, fps)
        else:
            decoder = FFmpegDecoder(width, height, fps)
        rng = random.Random(a.seed)
        picks = [rng.randrange(len(frames)) for _ in range(a.samples)]
        ref = "all-keyframe (gop 1)"
        results = bench(decoder, files, picks, ref)
    exp = results[f"export (gop {lx.VIDEO_GOP})"]["ms_per_sample_mean"]
    report = {
        "frames": len(frames),
        "episodes": res.episodes,
        "size": f"{width}x{height}",
        "fps": fps,
        "samples": a.samples,
        "decoder": f"{decoder.name} {decoder.version}",
        "export_s": round(export_s, 2),
        "files": results,
        "ratio_to_export": {k: round(v["ms_per_sample_mean"] / exp, 2) for k, v in results.items()},
        "machine": f"{platform.machine()} {platform.python_version()}",
    }
    if a.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{report['frames']} frames ({report['episodes']} episodes) at {report['size']}, "
        f"{a.samples} random samples per file, decoder {report['decoder']}"
    )
    print(
        f"{'file':40s} {'MB':>6s} {'mean ms':>8s} {'p50':>7s} {'p90':>7s} {'late':>7s} "
        f"{'decoded':>8s} {'x export':>8s} {'pix diff':>8s}"
    )
    for k, v in results.items():
        print(
            f"{k:40s} {v['bytes'] / 1e6:6.2f} {v['ms_per_sample_mean']:8.2f} "
            f"{v['ms_per_sample_p50']:7.2f} {v['ms_per_sample_p90']:7.2f} "
            f"{v['ms_last_quarter_mean'] or 0:7.2f} {v['frames_decoded_per_sample']:8.1f} "
            f"{report['ratio_to_export'][k]:8.2f} {v['mean_abs_pixel_diff_vs_all_keyframe']:8.2f}"
        )


if __name__ == "__main__":
    main()
