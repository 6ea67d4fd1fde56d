"""What the LeRobot and Minari exports share: which episodes go in, and how the output
folder is checked, built and published without ever losing something the export did not
write.

An export is assembled in a hidden temporary folder beside ``--out``
(``.<name>.tmp<pid>``) and moved into place only when complete. Into an absent or empty
``--out`` that is one rename. Over an earlier export (``--force``) only the entries the
export owns (LeRobot: ``meta``, ``data``, ``videos``; Minari: the one dataset's folder) are
swapped, each by a rename, with SIGINT/SIGTERM held back meanwhile; everything else in
``--out`` (other datasets of a Minari root, the user's files, episodes) stays. Before that
the owned entries are checked to hold nothing but files of the export's own layout: a
user's file or an episode there stops the export instead of being deleted. A temporary
folder left by a ``kill -9`` (its process is gone) is removed by the next export to the same
``--out``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from skillbridge.episodes.episode import META, Episode, EpisodeError, load, scene_name

#: Seeds an episode can have been recorded with (gymnasium's range, as the CLI's --seed).
SEED_MAX = 2**32 - 1
#: MuJoCo's mjMAXVAL: a state value past it is one MuJoCo itself calls unstable (and resets
#: the data on), so no recorded episode holds one.
MAX_VALUE = 1e10


class ExportError(Exception):
    """The export cannot be done (one line, for the user)."""


# ----------------------------------------------------------------------------- inputs
def find_episodes(paths: Iterable[str | Path]) -> list[Path]:
    """Episode folders named by ``paths``: each an episode, or a folder of episodes (one
    level). Order kept, duplicates dropped."""
    out: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise ExportError(f"{p} does not exist")
        if not p.is_dir():
            raise ExportError(f"{p} is not an episode folder nor a folder of episodes")
        found = (
            [p]
            if os.path.lexists(p / META)
            else sorted(
                c
                for c in p.iterdir()
                if not c.name.startswith(".") and c.is_dir() and os.path.lexists(c / META)
            )
        )
        if not found:
            raise ExportError(f"{p} is not an episode folder and holds no episode")
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def seed_of(ep: Episode) -> int | None:
    """The episode's seed, refused unless it is one a run can have used (a forged 10**30
    overflows every integer column downstream)."""
    seed = ep.meta.get("seed")
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ExportError(
            f"{ep.path}: meta.json seed {str(seed)[:40]} is not a seed (0 to {SEED_MAX}; tampered?)"
        )
    return seed


def check_values(ep: Episode) -> None:
    """Refuse recorded states or actions that are NaN, infinite or past :data:`MAX_VALUE`:
    no simulation produces them, they would be NaN in the data and the statistics (``NaN``
    is not JSON), and MuJoCo silently resets a state holding them."""
    for what, arr in (
        ("states", ep.states),
        ("actions", ep.actions),
        ("final state", ep.final_state),
    ):
        if arr is None or not arr.size:
            continue
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(arr) <= MAX_VALUE)
        if bad.any():
            where = f" (step {int(np.argwhere(bad)[0][0])})" if arr.ndim > 1 else ""
            raise ExportError(
                f"{ep.path}: the recorded {what} hold NaN, infinite or huge values{where}; "
                "not exporting a damaged episode"
            )


def usable(
    paths: list[Path], incomplete: Callable[[Episode], str | None]
) -> tuple[list[Episode], list[str]]:
    """The episodes at ``paths`` worth exporting, and why the others were skipped: those
    ``incomplete`` gives a reason for, and those without a control step. A damaged or forged
    episode (bad values, seed, scene) is an :class:`ExportError`."""
    eps, skipped = [], []
    for p in paths:
        try:
            ep = load(p)
            scene_name(ep.meta)
        except EpisodeError as e:
            raise ExportError(str(e)) from None
        why = incomplete(ep)
        if why is not None:
            skipped.append(f"{p}: {why}")
        elif ep.n_steps == 0:
            skipped.append(f"{p}: no control steps (a refused or empty run)")
        else:
            seed_of(ep)
            check_values(ep)
            eps.append(ep)
    return eps, skipped


def scene_of(eps: Sequence[Episode]) -> str:
    """The one scene all ``eps`` were recorded in (a dataset has one feature layout)."""
    names = sorted({scene_name(e.meta) for e in eps})
    if len(names) > 1:
        raise ExportError(
            f"the episodes were recorded in different scenes ({', '.join(names)}); "
            "export each scene to its own dataset"
        )
    return names[0]


def check_state_size(ep: Episode, model) -> None:
    from sim import physics

    need = physics.state_size(model)
    if ep.states.shape[1] != need:
        raise ExportError(
            f"{ep.path}: recorded with a different scene model (state size "
            f"{ep.states.shape[1]}, this model has {need})"
        )


# ----------------------------------------------------------------------------- output
def check_target(out: Path, force: bool, earlier: bool, what: str) -> None:
    """Refuse an output folder that would replace something other than an earlier export:
    a link, a file, a non-empty folder without ``--force``, or (with it) a folder that is
    not ``earlier`` export of this kind (``what`` names it in the message)."""
    if os.path.islink(out):
        raise ExportError(f"--out {out} is a symbolic link; not writing through it")
    if not out.exists():
        return
    if not out.is_dir():
        raise ExportError(f"--out {out} exists and is not a folder")
    if not any(out.iterdir()):
        return
    if not force:
        raise ExportError(
            f"--out {out} exists and is not empty (--force replaces an earlier export)"
        )
    if not earlier:
        raise ExportError(f"--out {out} {what}; --force only replaces an earlier export")


def check_owned(out: Path, owned: Sequence[str], layout: re.Pattern[str]) -> None:
    """Refuse to replace the ``owned`` entries of ``out`` unless every file under them is
    one the export writes (its path, relative to ``out``, matches ``layout``): a user's
    file or an episode put there would otherwise be deleted with the earlier export."""
    for rel in owned:
        top = out / rel
        if os.path.islink(top):
            raise ExportError(f"--out {out}: {rel} is a symbolic link; not replacing it")
        if not top.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            for name in [*dirnames, *filenames]:
                p = Path(dirpath, name)
                r = p.relative_to(out).as_posix()
                if p.is_symlink() or (name in filenames and not layout.fullmatch(r)):
                    raise ExportError(
                        f"--out {out} holds {r}, which the export did not write; move it "
                        "away first (--force replaces only the export's own files)"
                    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def remove_stale(out: Path) -> None:
    """Remove the hidden temporary folders of earlier exports to ``out`` whose process is
    gone (``kill -9``, a power cut): nothing else would ever delete them."""
    parent = out.parent
    pat = re.compile(rf"\.{re.escape(out.name)}\.(?:tmp|old)(\d+)")
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for p in entries:
        m = pat.fullmatch(p.name)
        if m is None or p.is_symlink() or not p.is_dir():
            continue
        pid = int(m.group(1))
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(p, ignore_errors=True)


def temp_dir(out: Path) -> Path:
    """A fresh hidden folder beside ``out`` to build the export in."""
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(out)
        tmp = parent / f".{out.name}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
    except OSError as e:
        raise ExportError(f"cannot write under {parent}: {e.strerror or e}") from None
    return tmp


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs (a few renames), then deliver the
    first one that came: a Ctrl-C never leaves an export half swapped."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        h = signal.getsignal(s)
        if h is not None:  # None: a handler Python did not install; leave it alone
            old[s] = h
            signal.signal(s, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if got:
            signal.raise_signal(got[0])


def publish(
    tmp: Path,
    out: Path,
    owned: Sequence[str],
    recheck: Callable[[], None],
    shared: Sequence[str] = (),
) -> None:
    """Move the finished export from ``tmp`` into ``out``: one rename into an absent or empty
    ``out``; else (``recheck`` raises unless ``out`` still holds an earlier export that may
    be replaced) the ``owned`` entries swapped one by one, undone if a rename fails, and the
    ``shared`` ones (a Minari namespace's metadata) moved only where ``out`` lacks them."""
    with held_signals():
        if not out.exists() or (out.is_dir() and not any(out.iterdir())):
            if out.exists():
                out.rmdir()
            os.rename(tmp, out)
            return
        recheck()
        trash = out.parent / f".{out.name}.old{os.getpid()}"
        shutil.rmtree(trash, ignore_errors=True)
        trash.mkdir()
        done: list[tuple[Path, Path]] = []

        def move(src: Path, dst: Path) -> None:
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.rename(src, dst)
            done.append((src, dst))

        try:
            for rel in owned:
                if os.path.lexists(out / rel):
                    move(out / rel, trash / rel)
                if os.path.lexists(tmp / rel):
                    move(tmp / rel, out / rel)
            for rel in shared:
                if os.path.lexists(tmp / rel) and not os.path.lexists(out / rel):
                    move(tmp / rel, out / rel)
        except BaseException:
            for src, dst in reversed(done):
                with contextlib.suppress(OSError):
                    os.rename(dst, src)
            for d in sorted(trash.rglob("*"), reverse=True):  # only what was moved back
                with contextlib.suppress(OSError):
                    d.rmdir()
            with contextlib.suppress(OSError):
                trash.rmdir()
            raise
        shutil.rmtree(trash, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
