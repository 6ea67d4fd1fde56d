"""Small helpers every layer shares: atomic writes, sha256, provenance, Wilson intervals.

``sim`` is the bottom layer (imports point sim <- skills <- bridge <- planner <- skillbridge),
so these live here and import nothing from the project and nothing heavy (no torch).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# ----------------------------------------------------------------------------- files


@contextmanager
def atomic_path(path: str | Path, suffix: str = "") -> Iterator[Path]:
    """A temporary path next to ``path`` to write; renamed onto ``path`` when the block
    ends without an exception (``os.replace`` is atomic on POSIX), removed otherwise.

    ``suffix`` ends the temporary name, for writers that insist on an extension
    (``np.savez`` appends ``.npz`` to a name without it)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}{suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | Path, data: bytes, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (readers see the old file or the new one)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


def atomic_write_text(path: str | Path, text: str, fsync: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"), fsync)


def atomic_write_json(
    path: str | Path, obj: Any, fsync: bool = False, indent: int | None = 2
) -> None:
    """Write ``obj`` as JSON (``indent`` 2 and a final newline by default) atomically."""
    text = json.dumps(obj, indent=indent)
    atomic_write_text(path, text + "\n" if indent is not None else text, fsync)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ----------------------------------------------------------------------------- provenance

#: Distributions whose versions a run, an episode or a report records.
LIBRARIES = (
    "skillbridge",
    "mujoco",
    "numpy",
    "torch",
    "stable-baselines3",
    "langchain-core",
    "pydantic",
    "gymnasium",
)


def library_versions(
    libraries: tuple[str, ...] = LIBRARIES, keys: dict[str, str] | None = None
) -> dict[str, str]:
    """``{"python": ..., library: version, ...}`` for the installed ``libraries`` (missing
    ones are left out); ``keys`` renames a library's key (e.g. to its module name)."""
    import importlib.metadata as md

    keys = keys or {}
    out = {"python": platform.python_version()}
    for name in libraries:
        try:
            out[keys.get(name, name)] = md.version(name)
        except md.PackageNotFoundError:
            pass
    return out


def processor() -> str:
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """Python, platform, processor and CPU count of this machine."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": processor(),
        "cpus": os.cpu_count(),
    }


def host_details() -> dict[str, Any]:
    """What the OS tells about the host beyond :func:`machine_info`, where it tells it: CPU
    model, memory and the 1-minute load."""
    info: dict[str, Any] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        info["memory_gb"] = round(
            os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1
        )
    except (ValueError, OSError, AttributeError):
        pass
    try:
        info["load_avg_1m"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    return info


# ----------------------------------------------------------------------------- statistics


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval: honest at rates near 0 or 1, unlike the normal approximation."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value for two controllers run on the same starts, from the
    starts only one of them succeeded on: with the pairs matched, only those say which is
    better, and 50 vs 47 of 50 can be a tie in disguise (3 starts against 0 is p = 0.25)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)
