"""The episode: what one run leaves on disk, written so that a crash never corrupts it.

Layout of ``runs/<YYYYmmdd-HHMMSS>-<slug>/`` (format ``skillbridge.episode``, version 1;
the full description is docs/EPISODE_FORMAT.md)::

    meta.json              format, version, status, task, seed, scene options, model hash,
                           library versions, planner spec, the list of state chunks with
                           their sha256, and (once complete) sha256 of the other files
    states-000000.npz ...  per control step k: ``state`` (full mjSTATE_INTEGRATION vector
                           before action k, float64), ``action`` (float64), ``subgoal``
                           (index of the active subgoal, int32), ``step`` (k, int64)
    final.npz              the state after the last action (only in complete episodes)
    trace.jsonl            one JSON object per line: planner calls, bridge decisions,
                           subgoal starts, skill outcomes, the end of the run
    events.log.jsonl       structured log records, all carrying the trace id

Atomicity: every ``.npz`` and ``meta.json`` is written to a temporary name in the same
folder and renamed into place (``os.replace`` is atomic on POSIX), and ``meta.json`` is
rewritten after each chunk, so it only ever lists chunks that are completely on disk. The
folder itself is prepared under a hidden temporary name and renamed into ``runs/`` once its
first ``meta.json`` exists. The JSON-lines files are appended and flushed record by record;
a reader ignores a torn last line of an incomplete episode. Status is ``incomplete`` until
the writer closes cleanly, so a ``kill -9`` leaves a readable episode marked incomplete.

Reading never unpickles (``allow_pickle=False``): an episode is data, safe to receive.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from sim import util
from sim.safeio import MiB, UnsafeFile, read_regular

FORMAT = "skillbridge.episode"
VERSION = 1
META = "meta.json"
TRACE = "trace.jsonl"
EVENTS = "events.log.jsonl"
FINAL = "final.npz"
INITIAL = "initial.npz"
FLUSH_EVERY_S = 1.0  # also flush a partial chunk after this much wall time
CHUNK_ROWS = 250  # 10 s of simulated time at 25 Hz; ~0.5 MB per chunk
COMPLETE, INCOMPLETE = "complete", "incomplete"
#: Size limits of a received episode's files: a hostile folder must not be able to make the
#: reader allocate without bound (a link to /dev/zero, a deflate bomb in a chunk).
META_LIMIT = 16 * MiB
NPZ_LIMIT = 64 * MiB  # on disk; a real chunk of 250 steps is about 0.2 MB
NPZ_UNPACKED_LIMIT = 256 * MiB  # the arrays of one file once inflated
JSONL_LIMIT = 256 * MiB
STATES_LIMIT = 4096 * MiB  # all chunks together, inflated


class EpisodeError(Exception):
    """An episode cannot be written or read (one line, for the user)."""


# ----------------------------------------------------------------------------- helpers
def slugify(text: str, n: int = 40) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:n].rstrip("-") or "task"


def _npz_bytes(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    # zip+deflate: see docs/EPISODE_FORMAT.md (numpy's stub reads **arrays as allow_pickle)
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def check_writable(out_dir: Path) -> None:
    """Raise :class:`EpisodeError` unless episodes can be created under ``out_dir``.

    Creates ``out_dir`` if needed (that is all it leaves behind)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise EpisodeError(f"cannot create output folder {out_dir}: {e.strerror or e}") from None
    if not out_dir.is_dir():
        raise EpisodeError(f"output path {out_dir} is not a folder")
    probe = out_dir / f".probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError as e:
        raise EpisodeError(f"output folder {out_dir} is not writable: {e.strerror or e}") from None


# ----------------------------------------------------------------------------- writer
class EpisodeWriter:
    """Appends control steps and trace records to a new episode folder."""

    def __init__(
        self,
        path: Path,
        meta: dict,
        state_size: int,
        action_size: int = 4,
        chunk_rows: int = CHUNK_ROWS,
    ):
        self.path = path
        self.meta = meta
        self.state_size = state_size
        self.action_size = action_size
        self.chunk_rows = chunk_rows
        self._states = np.empty((chunk_rows, state_size), np.float64)
        self._actions = np.empty((chunk_rows, action_size), np.float64)
        self._subgoals = np.empty(chunk_rows, np.int32)
        self._n = 0  # rows buffered
        self.steps = 0  # rows recorded in total
        self.write_s = 0.0
        self._last_flush = time.monotonic()
        self._trace = open(path / TRACE, "a", encoding="utf-8")
        self._events = open(path / EVENTS, "a", encoding="utf-8")
        self.closed = False

    @classmethod
    def create(
        cls,
        out_dir: str | Path,
        *,
        task: str,
        initial_state: np.ndarray,
        meta: dict,
        chunk_rows: int = CHUNK_ROWS,
        now: datetime | None = None,
    ) -> EpisodeWriter:
        out_dir = Path(out_dir)
        check_writable(out_dir)
        now = now or datetime.now(UTC).astimezone()
        base = f"{now:%Y%m%d-%H%M%S}-{slugify(task)}"
        initial_state = np.asarray(initial_state, np.float64)
        state_size = int(initial_state.shape[0])
        init = _npz_bytes(state=initial_state)
        full = {
            "format": FORMAT,
            "version": VERSION,
            "status": INCOMPLETE,
            "created": now.isoformat(timespec="seconds"),
            "task": task,
            "state_size": state_size,
            "action_size": 4,
            "chunks": [],
            "steps": 0,
            **meta,
            "initial": {"file": INITIAL, "sha256": util.sha256_bytes(init)},
        }
        tmpdir = out_dir / f".{base}.tmp{os.getpid()}"
        try:
            tmpdir.mkdir()
            util.atomic_write_bytes(tmpdir / INITIAL, init)
            util.atomic_write_json(tmpdir / META, full)
            for i in range(1000):
                final = out_dir / (base if i == 0 else f"{base}-{i}")
                try:
                    os.rename(tmpdir, final)  # fails if final exists and is not empty
                    break
                except OSError:
                    if not final.exists() or i == 999:
                        raise
        except OSError as e:
            for p in tmpdir.glob("*") if tmpdir.exists() else ():
                p.unlink(missing_ok=True)
            if tmpdir.exists():
                tmpdir.rmdir()
            raise EpisodeError(f"cannot write episode under {out_dir}: {e.strerror or e}") from None
        return cls(final, full, state_size, chunk_rows=chunk_rows)

    # -- appends ----------------------------------------------------------------------
    def record(self, state: np.ndarray, action: np.ndarray, subgoal: int) -> None:
        t0 = time.perf_counter()
        i = self._n
        self._states[i] = state
        self._actions[i] = action
        self._subgoals[i] = subgoal
        self._n += 1
        self.steps += 1
        if self._n == self.chunk_rows or (
            self.steps % 25 == 0 and time.monotonic() - self._last_flush > FLUSH_EVERY_S
        ):
            self._flush_chunk()
        self.write_s += time.perf_counter() - t0

    def trace(self, kind: str, **data: Any) -> None:
        t0 = time.perf_counter()
        rec = {"kind": kind, "t": round(time.time(), 6), "step": self.steps, **data}
        self._trace.write(json.dumps(rec, default=_json_default) + "\n")
        self._trace.flush()
        self.write_s += time.perf_counter() - t0

    def event(self, record: dict) -> None:
        self._events.write(json.dumps(record, default=_json_default) + "\n")
        self._events.flush()

    def flush(self) -> None:
        """Write the buffered steps as a chunk now (e.g. at a subgoal boundary)."""
        t0 = time.perf_counter()
        self._flush_chunk()
        self.write_s += time.perf_counter() - t0

    def _flush_chunk(self) -> None:
        n = self._n
        if n == 0:
            return
        first = self.steps - n
        name = f"states-{first:06d}.npz"
        data = _npz_bytes(
            step=np.arange(first, first + n, dtype=np.int64),
            state=self._states[:n],
            action=self._actions[:n],
            subgoal=self._subgoals[:n],
        )
        util.atomic_write_bytes(self.path / name, data)
        self.meta["chunks"].append(
            {"file": name, "first": first, "rows": n, "sha256": util.sha256_bytes(data)}
        )
        self.meta["steps"] = self.steps
        self._n = 0
        self._last_flush = time.monotonic()
        util.atomic_write_json(self.path / META, self.meta)

    def update_meta(self, **kw: Any) -> None:
        self.meta.update(kw)
        util.atomic_write_json(self.path / META, self.meta)

    # -- end --------------------------------------------------------------------------
    def close(
        self, status: str = COMPLETE, final_state: np.ndarray | None = None, **extra: Any
    ) -> None:
        """Flush what is buffered; mark ``complete`` only when asked and given the final
        state. Safe to call twice (the second call does nothing)."""
        if self.closed:
            return
        self.closed = True
        t0 = time.perf_counter()
        failed: OSError | None = None
        try:
            self._flush_chunk()
        except OSError as e:  # e.g. the disk is full: those rows are lost, the rest is not
            failed, self._n = e, 0
        for f in (self._trace, self._events):
            try:
                f.close()
            except OSError as e:
                failed = failed or e
        try:
            if status == COMPLETE and final_state is not None and failed is None:
                data = _npz_bytes(
                    state=np.asarray(final_state, np.float64), step=np.array(self.steps, np.int64)
                )
                util.atomic_write_bytes(self.path / FINAL, data, fsync=True)
                self.meta["final"] = {"file": FINAL, "sha256": util.sha256_bytes(data)}
                self.meta["files"] = {
                    TRACE: util.sha256_file(self.path / TRACE),
                    EVENTS: util.sha256_file(self.path / EVENTS),
                }
            else:
                status = INCOMPLETE
        except OSError as e:
            failed, status = e, INCOMPLETE
            self.meta.pop("final", None)
            self.meta.pop("files", None)
        self.meta.update(extra)
        self.meta["status"] = status
        self.meta["steps"] = sum(int(c["rows"]) for c in self.meta["chunks"])
        self.meta["closed"] = datetime.now(UTC).astimezone().isoformat(timespec="seconds")
        try:
            util.atomic_write_json(self.path / META, self.meta, fsync=True)
        except OSError as e:
            failed = failed or e  # the meta.json on disk is the last one written: incomplete
        self.write_s += time.perf_counter() - t0
        if failed is not None:
            raise EpisodeError(
                f"cannot finish writing the episode {self.path}: "
                f"{failed.strerror or failed}; it is left incomplete"
            )


def _json_default(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if hasattr(o, "to_dict"):
        return o.to_dict()
    return repr(o)


class EventLogHandler(logging.Handler):
    """A logging handler writing JSON lines into an episode, each with the trace id."""

    def __init__(self, writer: EpisodeWriter, trace_id: str):
        super().__init__(logging.DEBUG)
        self.writer = writer
        self.trace_id = trace_id

    def emit(self, record: logging.LogRecord) -> None:
        if self.writer.closed:
            return
        try:
            rec = {
                "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
                "level": record.levelname.lower(),
                "logger": record.name,
                "trace_id": getattr(record, "trace_id", self.trace_id),
                "event": getattr(record, "event", None) or "log",
                "message": record.getMessage(),
            }
            data = getattr(record, "data", None)
            if isinstance(data, dict):
                rec.update({k: v for k, v in data.items() if k not in rec})
            self.writer.event(rec)
        except Exception:  # noqa: BLE001 - logging must never break a run, nor print a
            pass  # traceback per record when the disk is full (the run reports that once)


# ----------------------------------------------------------------------------- reader
@dataclass
class Episode:
    path: Path
    meta: dict
    states: np.ndarray  # (N, S): state before action k
    actions: np.ndarray  # (N, A)
    subgoals: np.ndarray  # (N,)
    final_state: np.ndarray | None  # state after the last action (complete episodes)
    initial_state: np.ndarray | None = None
    trace: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.meta.get("status") == COMPLETE

    @property
    def n_steps(self) -> int:
        return int(self.actions.shape[0])

    @property
    def result(self) -> dict:
        """meta.json's ``result`` (the run's outcome), ``{}`` when absent or malformed."""
        res = self.meta.get("result")
        return res if isinstance(res, dict) else {}

    @property
    def n_states(self) -> int:
        """``len(self.all_states())`` without building the array."""
        if self.final_state is None:
            return (
                1 if not len(self.states) and self.initial_state is not None else len(self.states)
            )
        return len(self.states) + 1

    def all_states(self) -> np.ndarray:
        """Every recorded state in time order, the final one included when present."""
        if self.final_state is None:
            if not len(self.states) and self.initial_state is not None:
                return self.initial_state[None]
            return self.states
        return np.concatenate([self.states, self.final_state[None]], axis=0)

    def subgoal_labels(self) -> dict[int, str]:
        out: dict[int, str] = {}
        for r in self.trace:
            if r.get("kind") == "subgoal_start" and isinstance(r.get("subgoal"), dict):
                i = r.get("index", len(out))
                if isinstance(i, int) and not isinstance(i, bool):
                    out[i] = format_subgoal(r["subgoal"])
        return out


def format_subgoal(sg: dict) -> str:
    args = ", ".join(f"{k}={v}" for k, v in sg.items() if k != "skill")
    return f"{sg.get('skill', '?')}({args})"


def _read_file(path: Path, limit: int, what: str) -> bytes:
    """Bytes of a regular file of the episode; links, devices, FIFOs and oversized files are
    refused (the episode may come from someone else)."""
    try:
        return read_regular(path, limit)
    except FileNotFoundError:
        raise EpisodeError(f"{path}: {what} is missing (the episode is damaged)") from None
    except UnsafeFile as e:
        raise EpisodeError(f"{e} (refused: an episode holds regular files only)") from None
    except OSError as e:
        raise EpisodeError(f"{path}: cannot read {what}: {e.strerror or e}") from None


def _unpacked_size(data: bytes) -> int:
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return sum(i.file_size for i in zf.infolist())
    except (zipfile.BadZipFile, ValueError, OSError):
        return 0  # not a zip: numpy's own error says so below


def scene_name(meta: dict) -> str:
    """The scene an episode was recorded on (``meta["scene"]["name"]``; absent: the default
    scene, as every episode recorded before the articulated scene)."""
    from sim import scene

    name = (meta.get("scene") or {}).get("name", scene.DEFAULT_SCENE)
    if name not in scene.SCENE_NAMES:
        raise EpisodeError(f"unknown scene {name!r} in meta.json (known: {scene.SCENE_NAMES})")
    return str(name)


def _same_but_command(a: np.ndarray, b: np.ndarray, scene: str) -> bool:
    """Equal states, bit for bit, apart from the hand's commanded turn: a first subgoal that
    turns the hand (a pick along x) sets it after the initial state was saved."""
    if a.shape != b.shape:
        return False
    from sim import physics

    keep = np.ones(a.shape, dtype=bool)
    keep[physics.command_slice(scene)] = False
    return bool(np.array_equal(a[keep].view(np.uint64), b[keep].view(np.uint64)))


def _load_npz(path: Path, sha: str | None, what: str) -> dict[str, np.ndarray]:
    data = _read_file(path, NPZ_LIMIT, what)
    if _unpacked_size(data) > NPZ_UNPACKED_LIMIT:
        raise EpisodeError(
            f"{path}: {what} inflates to more than {NPZ_UNPACKED_LIMIT} bytes (refused)"
        )
    if sha is not None and util.sha256_bytes(data) != sha:
        raise EpisodeError(
            f"{path}: {what} does not match its sha256 in meta.json (truncated or tampered)"
        )
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except Exception as e:  # noqa: BLE001 - any decoding failure is a damaged file
        raise EpisodeError(f"{path}: {what} cannot be read ({type(e).__name__})") from None


def _read_jsonl(path: Path, complete: bool, sha: str | None, warnings: list[str]) -> list[dict]:
    if not os.path.lexists(path):
        if complete:
            raise EpisodeError(f"{path} is missing (the episode is damaged)")
        return []
    data = _read_file(path, JSONL_LIMIT, path.name)
    if complete and sha is not None and util.sha256_bytes(data) != sha:
        raise EpisodeError(
            f"{path}: does not match its sha256 in meta.json (truncated or tampered)"
        )
    lines = data.decode("utf-8", errors="replace").split("\n")
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            if i == len(lines) - 1 and not complete:
                warnings.append(f"{path.name}: ignored a torn last line")
                break
            raise EpisodeError(
                f"{path}: line {i + 1} is not JSON (the episode is damaged)"
            ) from None
        if isinstance(rec, dict):
            out.append(rec)
    return out


#: meta.json fields other code reads, with the JSON types they must have (None: absent is
#: fine). An edited field is one line of error, not a traceback somewhere in replay.
_META_TYPES: dict[str, tuple[type, ...]] = {
    "task": (str,),
    "seed": (int,),
    "trace_id": (str,),
    "model_hash": (str,),
    "policy_source": (str,),
    "created": (str,),
    "closed": (str,),
    "control_dt": (int, float),
    "physics_dt": (int, float),
    "steps": (int,),
    "result": (dict,),
    "planner": (dict,),
    "scene": (dict,),
    "initial": (dict,),
    "final": (dict,),
    "files": (dict,),
    "versions": (dict,),
    "initial_world": (dict,),
}


def _check_meta_fields(meta: dict, mp: Path) -> None:
    for key, types in _META_TYPES.items():
        v = meta.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, types):
            raise EpisodeError(f"{mp}: field {key!r} has the wrong type (tampered)")
    dt = meta.get("control_dt")
    if dt is not None and not (isinstance(dt, (int, float)) and 0 < dt < 10 and dt == dt):
        raise EpisodeError(f"{mp}: field 'control_dt' is out of range (tampered)")
    for key in ("result", "planner", "files", "initial", "final"):
        sub = meta.get(key) or {}
        for k2, v2 in sub.items():
            if (
                k2 in ("status", "message", "refusal", "spec", "route", "sha256", "file")
                and v2 is not None
                and not isinstance(v2, str)
            ):
                raise EpisodeError(f"{mp}: field {key}.{k2} has the wrong type (tampered)")


def _read_meta(path: str | Path) -> tuple[Path, Path, dict]:
    """The episode folder, its meta.json path and the checked meta record."""
    p = Path(path)
    if not p.exists():
        raise EpisodeError(f"episode {p} does not exist")
    if p.is_file() and p.name == META:
        p = p.parent
    if not p.is_dir():
        raise EpisodeError(f"{p} is not an episode folder")
    mp = p / META
    if not os.path.lexists(mp):
        raise EpisodeError(f"{p} is not an episode (no {META})")
    try:
        meta = json.loads(_read_file(mp, META_LIMIT, META).decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise EpisodeError(f"{mp} is not valid JSON (truncated or tampered)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise EpisodeError(
            f"{mp} is not a skillbridge episode (format {meta.get('format')!r})"
            if isinstance(meta, dict)
            else f"{mp} is not a skillbridge episode"
        )
    if meta.get("version") != VERSION:
        raise EpisodeError(
            f"{p}: episode format version {meta.get('version')!r}; this skillbridge reads "
            f"version {VERSION}"
        )
    return p, mp, meta


def _read_chunks(
    p: Path, mp: Path, chunks: list, S: int, A: int
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], int]:
    """The state chunks' arrays (checked against meta.json) and the number of rows."""
    states: list[np.ndarray] = []
    actions: list[np.ndarray] = []
    subgoals: list[np.ndarray] = []
    expect = 0
    unpacked = 0
    for c in chunks:
        if not isinstance(c, dict) or not re.fullmatch(r"states-\d{6,}\.npz", str(c.get("file"))):
            raise EpisodeError(f"{mp}: bad chunk entry (tampered)")
        z = _load_npz(p / c["file"], c.get("sha256"), f"state chunk {c['file']}")
        try:
            st, ac, sg, stp = z["state"], z["action"], z["subgoal"], z["step"]
        except KeyError as e:
            raise EpisodeError(f"{p / c['file']}: missing array {e}") from None
        n = st.shape[0] if st.ndim == 2 else -1
        if (
            st.shape != (n, S)
            or st.dtype != np.float64
            or ac.shape != (n, A)
            or sg.shape != (n,)
            or stp.shape != (n,)
            or n != c.get("rows")
            or (n and (stp[0] != expect or np.any(np.diff(stp) != 1)))
        ):
            raise EpisodeError(f"{p / c['file']}: arrays do not match meta.json (tampered)")
        expect += n
        unpacked += st.nbytes
        if unpacked > STATES_LIMIT:
            raise EpisodeError(f"{p}: the recorded states exceed {STATES_LIMIT} bytes (refused)")
        states.append(st)
        actions.append(ac.astype(np.float64, copy=False))
        subgoals.append(sg.astype(np.int32, copy=False))
    return states, actions, subgoals, expect


def load(path: str | Path) -> Episode:
    """Read and check an episode folder; any problem is one :class:`EpisodeError` line."""
    p, mp, meta = _read_meta(path)
    try:
        S = int(meta["state_size"])
        A = int(meta.get("action_size", 4))
        chunks = list(meta["chunks"])
        status = meta["status"]
    except (KeyError, TypeError, ValueError):
        raise EpisodeError(f"{mp} lacks required fields (tampered)") from None
    if status not in (COMPLETE, INCOMPLETE):
        raise EpisodeError(f"{mp}: unknown status {status!r}")
    _check_meta_fields(meta, mp)
    if not 0 < S <= 100_000 or not 0 < A <= 64:
        raise EpisodeError(f"{mp}: state_size/action_size out of range (tampered)")
    complete = status == COMPLETE
    states, actions, subgoals, expect = _read_chunks(p, mp, chunks, S, A)
    ini = meta.get("initial") or {}
    z = _load_npz(p / INITIAL, ini.get("sha256"), "initial state")
    initial = z.get("state")
    if initial is None or initial.shape != (S,) or initial.dtype != np.float64:
        raise EpisodeError(f"{p / INITIAL}: bad initial state (tampered)")
    if states and not _same_but_command(states[0][0], initial, scene_name(meta)):
        raise EpisodeError(f"{p}: first recorded state differs from the initial state (tampered)")
    final = None
    if complete:
        f = meta.get("final") or {}
        z = _load_npz(p / FINAL, f.get("sha256"), "final state")
        final = z.get("state")
        if final is None or final.shape != (S,) or final.dtype != np.float64:
            raise EpisodeError(f"{p / FINAL}: bad final state (tampered)")
    if complete and int(meta.get("steps", -1)) != expect:
        raise EpisodeError(f"{mp}: step count does not match the chunks (tampered)")
    warnings: list[str] = []
    files = meta.get("files") or {}
    trace = _read_jsonl(p / TRACE, complete, files.get(TRACE), warnings)
    if complete and EVENTS in files:
        _read_jsonl(p / EVENTS, True, files.get(EVENTS), warnings)  # integrity only
    return Episode(
        path=p,
        meta=meta,
        states=np.concatenate(states) if states else np.empty((0, S), np.float64),
        actions=np.concatenate(actions) if actions else np.empty((0, A), np.float64),
        subgoals=np.concatenate(subgoals) if subgoals else np.empty(0, np.int32),
        final_state=final,
        initial_state=initial,
        trace=trace,
        warnings=warnings,
    )
