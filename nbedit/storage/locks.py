"""Per-folder exclusive locks that work across processes, users and homes.

Two kernels (or a kernel and the CLI, or two users with different ``NBEDIT_HOME``s)
editing the same file must not interleave their read-check-write sequences. The
lock must therefore be found from the file, not from the writer: each write takes
an ``fcntl.flock`` lock on the folder that holds the file (a folder descriptor,
reached from the root without following links, see ``confine.py``). Nothing is
created in the edited tree for it, no home is needed (so ``--no-history`` works with
no writable home), and every spelling of a path (relative, absolute, through a
link) meets the same folder. A write through a link locks both the link's folder
and the target's. Locks are taken in (device, inode) order, so two writers that
need overlapping sets of folders cannot deadlock.

A file whose folder does not exist yet gets the folder created first (so every
writer of that file locks the same folder); folders made for a write that is then
refused are removed again when the lock is released, if still empty.

``flock`` locks belong to the open file description: the kernel releases them when
the process dies, so a killed writer never leaves a stale lock. They are not
re-entrant: locking a folder the same process already holds through another
``lock_paths`` waits for the timeout. POSIX only (``fcntl``).
"""

from __future__ import annotations

import fcntl
import os
import time

from nbedit._path_text import normal
from nbedit.errors import WriteError
from nbedit.storage.confine import locate, open_directory

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["lock_paths"]


def _nearest_existing(path: str | os.PathLike[str]) -> str:
    current = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(current) and current != os.path.dirname(current):
        current = os.path.dirname(current)
    return os.path.realpath(current)


def _acquire(descriptor: int, shown: str, deadline: float) -> None:
    delay = 0.001
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise WriteError(
                    f"another process is writing {shown} (its folder stayed locked for too long); "
                    "retry when it has finished",
                    path=shown,
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _folders(path: str, root: str | os.PathLike[str], created: list[tuple[int, str]]) -> list[int]:
    descriptors = []
    locations = [locate(path, root, follow=False)]
    if os.path.islink(path):
        locations.append(locate(path, root, follow=True))
    for location in locations:
        descriptors.append(open_directory(location, create=True, created=created))
    return descriptors


class lock_paths:  # named as a function: ``with lock_paths(paths, root=root):``
    """Hold an exclusive lock on the folder of every path for the duration of the ``with`` block.

    ``root``: the workspace root the paths must stay inside (``OutsideWorkspace``
    otherwise); None trusts each path's nearest existing folder.

    A class rather than a ``contextlib.contextmanager`` generator: ``contextlib`` costs every
    command that writes ~0.8 ms to import (tests/test_startup.py). Nothing is locked until the
    ``with`` block is entered, and one object locks once.
    """

    __slots__ = ("_created", "_opened", "_paths", "_root", "_timeout")

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        root: str | os.PathLike[str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        self._paths = paths
        self._root = root
        self._timeout = timeout
        self._created: list[tuple[int, str]] = []
        self._opened: dict[tuple[int, int], tuple[int, str]] = {}

    def __enter__(self) -> None:
        created, opened, root = self._created, self._opened, self._root
        try:
            for path in self._paths:
                for descriptor in _folders(
                    normal(path), root if root is not None else _nearest_existing(path), created
                ):
                    info = os.fstat(descriptor)
                    key = (info.st_dev, info.st_ino)
                    if key in opened:
                        os.close(descriptor)
                    else:
                        opened[key] = (descriptor, str(path))
            deadline = time.monotonic() + self._timeout
            for key in sorted(opened):
                descriptor, shown = opened[key]
                _acquire(descriptor, shown, deadline)
        except BaseException:
            self._release()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        created, opened = self._created, self._opened
        try:
            for parent, name in reversed(created):
                try:  # noqa: SIM105 - not contextlib (start-up)
                    os.rmdir(name, dir_fd=parent)  # only succeeds while still empty
                except OSError:
                    pass
                os.close(parent)
            for descriptor, _shown in opened.values():
                try:  # noqa: SIM105 - not contextlib (start-up)
                    fcntl.flock(descriptor, fcntl.LOCK_UN)
                except OSError:
                    pass
                os.close(descriptor)
        finally:
            created.clear()
            opened.clear()
