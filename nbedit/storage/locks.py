"""Per-file exclusive locks that work across processes.

Two kernels (or a kernel and the CLI) editing the same file must not interleave
their read-check-write sequences. Each target path gets an ``fcntl.flock`` lock on a
lock file under ``<home>/locks/`` named after the SHA-256 of the resolved path, so
nothing is ever created in the edited tree and two spellings of one path (relative,
absolute, through a symbolic link) share one lock. Locks are taken in sorted order,
so two writers that need overlapping sets of files cannot deadlock.

``flock`` locks belong to the open file description: the kernel releases them when
the process dies, so a killed writer never leaves a stale lock. Lock files are never
deleted (deleting a lock file races with a process that has just opened it); they
are empty and one per path ever written.

POSIX only (``fcntl``). Locks are not re-entrant: locking a path the same process
already holds through another ``lock_paths`` waits for the timeout.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from nbedit.errors import WriteError

__all__ = ["lock_file_for", "lock_paths"]


def lock_file_for(path: Path, home: Path) -> Path:
    resolved = os.path.realpath(os.path.abspath(path))
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()
    return Path(home) / "locks" / f"{digest}.lock"


def _acquire(lock_file: Path, path: Path, deadline: float) -> int:
    try:
        descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as error:
        raise WriteError(
            f"cannot open the lock file for {path} ({lock_file}): {error}; "
            "set NBEDIT_HOME to a writable directory",
            path=str(path),
        ) from None
    delay = 0.001
    try:
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return descriptor
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WriteError(
                        f"another process is writing {path} (lock held for too long); "
                        "retry when it has finished",
                        path=str(path),
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
    except BaseException:
        os.close(descriptor)
        raise


@contextlib.contextmanager
def lock_paths(paths: Iterable[Path], *, home: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive lock on every path in ``paths`` for the duration of the ``with`` block."""
    wanted: dict[Path, Path] = {}
    for path in paths:
        wanted.setdefault(lock_file_for(Path(path), home), Path(path))
    try:
        (Path(home) / "locks").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteError(
            f"cannot create the lock directory {Path(home) / 'locks'}: {error}; "
            "set NBEDIT_HOME to a writable directory",
        ) from None
    deadline = time.monotonic() + timeout
    descriptors: list[int] = []
    try:
        for lock_file in sorted(wanted):
            descriptors.append(_acquire(lock_file, wanted[lock_file], deadline))
        yield
    finally:
        for descriptor in reversed(descriptors):
            with contextlib.suppress(OSError):
                fcntl.flock(descriptor, fcntl.LOCK_UN)
            os.close(descriptor)
