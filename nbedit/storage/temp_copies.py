"""One temporary copy of a file: written, owned and flushed as the file it will replace.

The write pipeline (``atomic.py``) prepares, verifies, renames and rolls back; these are the
system calls under one temporary file it makes on the way: create it beside its target
(named, or unnamed with ``O_TMPFILE`` where the system has it, so a crash leaves nothing),
fill it, give it the target's owner and permission bits, fsync it, and fsync a folder so
a rename in it survives a power cut. Every call works relative to a folder descriptor;
nothing here follows a link or knows about the rollback.
"""

from __future__ import annotations

import errno
import os
from _collections_abc import Callable  # what collections.abc gives, without importing collections (start-up)

Fault = Callable[[str, "str | os.PathLike[str]"], None]
"""Test hook called at "write", "fsync", "verify", "replace" and "fsync-dir"; raising there simulates a failure."""

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
ANONYMOUS = getattr(os, "O_TMPFILE", 0)  # Linux: a file with no name until linked
PROC_FD = "/proc/self/fd"


def write_temp(
    data: bytes,
    directory: int,
    temp: str,
    mode: int | None,
    shown: str | os.PathLike[str],
    fault: Fault | None,
    owner: tuple[int, int] | None,
) -> None:
    flush(written_temp(data, directory, temp, mode, shown, fault, owner), shown, fault)


def written_temp(
    data: bytes,
    directory: int,
    temp: str | None,
    mode: int | None,
    shown: str | os.PathLike[str],
    fault: Fault | None,
    owner: tuple[int, int] | None,
) -> int:
    """Write ``data`` to a new file ``temp`` (None: an unnamed one, ``NoAnonymousFiles`` where
    there are none); returns its descriptor, open and not yet flushed."""
    descriptor = open_temp(directory, temp)
    try:
        fill(descriptor, data, mode, shown, fault, owner)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def open_temp(directory: int, temp: str | None) -> int:
    if temp is not None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC
        return os.open(temp, flags, 0o666, dir_fd=directory)
    if not ANONYMOUS or not os.path.isdir(PROC_FD):
        raise NoAnonymousFiles
    try:
        return os.open(".", os.O_WRONLY | ANONYMOUS | CLOEXEC, 0o666, dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            raise NoAnonymousFiles from None
        raise


def fill(
    descriptor: int,
    data: bytes,
    mode: int | None,
    shown: str | os.PathLike[str],
    fault: Fault | None,
    owner: tuple[int, int] | None,
) -> None:
    if fault:
        fault("write", shown)
    # bytes, or new bytes not joined (``engine.spliced.Spliced``): written piece by piece
    for piece in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data.chunks():
        view = memoryview(piece)
        while view:
            written = os.write(descriptor, view)
            view = view[written:]
    if owner is not None and owner != (os.geteuid(), os.getegid()):
        keep_owner(descriptor, owner)
    if mode is not None:
        os.fchmod(descriptor, mode)  # after chown, which clears setuid/setgid bits


def flush(
    descriptor: int, shown: str | os.PathLike[str], fault: Fault | None, *, close: bool = True
) -> None:
    """fsync a descriptor from ``written_temp``, then close it (whatever happens) if ``close``."""
    try:
        if fault:
            fault("fsync", shown)
        os.fsync(descriptor)
    finally:
        if close:
            os.close(descriptor)


class NoAnonymousFiles(Exception):
    """The folder's file system (or the system) cannot make unnamed files (``O_TMPFILE``)."""


def keep_owner(descriptor: int, owner: tuple[int, int]) -> None:
    """The file's owner and group when we may (root); else at least its group (a member may)."""
    try:
        os.fchown(descriptor, *owner)
    except PermissionError:
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.fchown(descriptor, -1, owner[1])
        except PermissionError:
            pass


def fsync_directory(directory: int) -> None:
    try:
        os.fsync(directory)
    except OSError as error:
        # Some file systems (and some platforms) cannot fsync a directory; the rename is still atomic.
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
