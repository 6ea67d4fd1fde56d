"""Episodes listed and read for the service, never outside the runs folder.

Why a module of its own: an episode is named by a client, and a name from a request must
never become a path anywhere else. A name is checked against a strict pattern (no
separator, no leading dot), joined to the runs folder, and the result must be a real folder
directly inside it (not a link); only its ``meta.json`` and ``trace.jsonl`` are read, as
regular files with a size limit (:func:`sim.safeio.read_regular`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from sim.safeio import UnsafeFile, read_regular

#: An episode name as the writer makes it (``20260101-120000-put-the-red-block``).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,199}")
META_LIMIT = 4 * 1024 * 1024
TRACE_LIMIT = 16 * 1024 * 1024
#: Trace records returned at most (the rest are in the folder).
MAX_TRACE = 2000


class NotFound(LookupError):
    """No such episode (or a name that could not be one)."""


def folder(runs: Path, name: str) -> Path:
    """The folder of episode ``name`` in ``runs``; :class:`NotFound` for anything else."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise NotFound("no such episode")
    root = Path(runs).resolve()
    p = root / name
    try:
        st = os.lstat(p)
    except OSError:
        raise NotFound("no such episode") from None
    import stat

    if not stat.S_ISDIR(st.st_mode) or p.resolve().parent != root:
        raise NotFound("no such episode")
    return p


def _meta(p: Path) -> dict:
    try:
        meta = json.loads(read_regular(p / "meta.json", META_LIMIT).decode("utf-8"))
    except (OSError, UnsafeFile, ValueError):
        raise NotFound("not a readable episode") from None
    if not isinstance(meta, dict) or meta.get("format") != "skillbridge.episode":
        raise NotFound("not an episode")
    return meta


def summary(p: Path, meta: dict) -> dict:
    got = meta.get("result")
    res: dict = got if isinstance(got, dict) else {}
    return {
        "name": p.name,
        "task": meta.get("task"),
        "created": meta.get("created"),
        "status": meta.get("status"),
        "result": res.get("status"),
        "goal_met": res.get("goal_met"),
        "steps": meta.get("steps"),
        "seed": meta.get("seed"),
    }


def listing(runs: Path, limit: int = 100, names: list[str] | None = None) -> list[dict]:
    """The newest ``limit`` episodes in ``runs`` (only ``names`` when given)."""
    root = Path(runs)
    if not root.is_dir():
        return []
    try:
        entries = [e for e in os.scandir(root) if NAME.fullmatch(e.name)]
    except OSError:
        return []
    if names is not None:
        wanted = set(names)
        entries = [e for e in entries if e.name in wanted]
    entries = [e for e in entries if e.is_dir(follow_symlinks=False)]
    entries.sort(key=lambda e: e.name, reverse=True)
    out: list[dict] = []
    for e in entries:
        if len(out) >= limit:
            break
        try:
            out.append(summary(Path(e.path), _meta(Path(e.path))))
        except NotFound:
            continue
    return out


def read(runs: Path, name: str) -> dict:
    """An episode's summary, meta and trace records (bounded)."""
    p = folder(runs, name)
    meta = _meta(p)
    trace: list[dict] = []
    try:
        raw = read_regular(p / "trace.jsonl", TRACE_LIMIT).decode("utf-8", "replace")
    except (OSError, UnsafeFile):
        raw = ""
    for line in raw.splitlines():
        if len(trace) >= MAX_TRACE:
            break
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a torn last line of an episode being written
        if isinstance(rec, dict):
            trace.append(rec)
    return {**summary(p, meta), "meta": meta, "trace": trace}
