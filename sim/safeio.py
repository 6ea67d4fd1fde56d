"""Reading files that may come from someone else (episodes, policies) without trusting them.

A received folder can hold a symlink to ``/dev/zero`` (reading it never ends and fills
memory), a FIFO (opening or reading it blocks forever) or simply a huge file. ``Path.read_bytes``
follows all of those. :func:`read_regular` opens without following a final symlink and without
blocking, checks that what it opened is a regular file, and reads at most ``limit`` bytes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MiB = 1 << 20


class UnsafeFile(ValueError):
    """A file that is not a plain regular file, or larger than the caller allows."""


def _open_flags() -> int:
    flags = os.O_RDONLY
    for name in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_NOCTTY", "O_BINARY"):
        flags |= getattr(os, name, 0)
    return flags


def check_regular(path: str | Path) -> os.stat_result:
    """lstat ``path`` and raise :class:`UnsafeFile` unless it is a regular file (not a link,
    device, FIFO or socket). FileNotFoundError passes through."""
    st = os.lstat(path)
    _require_regular(path, st)
    return st


def _require_regular(path: str | Path, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(f"{path} is {describe_mode(st.st_mode)}, not a regular file")


def describe_mode(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises :class:`UnsafeFile` for a symlink, device, FIFO, socket or folder, and for a file
    over ``limit`` bytes (also one that grows past it while being read);
    FileNotFoundError when it does not exist; other OSErrors as the OS reports them."""
    try:
        fd = os.open(path, _open_flags())
    except OSError as e:
        if e.errno == errno.ELOOP:  # O_NOFOLLOW on a symlink
            raise UnsafeFile(f"{path} is a symbolic link, not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        _require_regular(path, st)
        if st.st_size > limit:
            raise UnsafeFile(f"{path} is {st.st_size} bytes, more than the {limit} allowed")
        chunks, total = [], 0
        while True:
            b = os.read(fd, min(1 << 20, limit + 1 - total))
            if not b:
                break
            chunks.append(b)
            total += len(b)
            if total > limit:
                raise UnsafeFile(f"{path} is more than the {limit} bytes allowed")
        return b"".join(chunks)
    finally:
        os.close(fd)
