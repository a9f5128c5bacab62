"""Two jobs at once for the atomic writer: its temporary copies flushed on another thread while
the calling thread does ``meanwhile`` (a big file's last check, read again from disk); and the
replaced files' old inodes let go on another thread once the write is done (``close_later``).

Both have finished when ``beside`` returns or raises, so a temporary file is never left
half-written behind a rollback; an interrupt while waiting is kept and raised once the other
thread is done. ``progress`` is the writer's record of what it did (``atomic._Progress``):
``meanwhile_failed`` tells the rollback which of the two failed.
"""

from __future__ import annotations

import os

from nbedit.background import Background

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["beside", "close_later"]


def beside(work: Callable[[], None], meanwhile: Callable[[], object], progress: object) -> None:
    """Run ``work`` on another thread and ``meanwhile`` here; both have finished when this
    returns or raises. ``meanwhile``'s error wins (``progress.meanwhile_failed`` says so),
    then ``work``'s."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # handed to the calling thread below
            failures.append(error)

    # started without waiting for the scheduler (``nbedit.background``); no thread to be had: the
    # writing runs first, then ``meanwhile``
    writing = Background(run, "nbedit-write")
    interrupted: BaseException | None = None
    try:
        meanwhile()
    except BaseException as error:
        interrupted = error
        progress.meanwhile_failed = True  # type: ignore[attr-defined]
    while writing.running():  # a temporary file is never left half-written behind the rollback
        try:
            writing.wait()
        except BaseException as error:  # an interrupt while waiting: kept, raised once joined
            interrupted = interrupted or error
    if interrupted is not None:
        raise interrupted
    if failures:
        raise failures[0]


def close_later(descriptors: list[int]) -> None:
    """Close the replaced and deleted files' old descriptors on another thread.

    With them goes the last reference to each old inode, and that is where the file system frees
    its blocks. Some do it slowly (ext4 mounted with online ``discard``, measured: 1.5-3 ms for a
    25 KB file, 10 ms for 4 MB, 80-150 ms for 50 MB, which a plain rename would spend on the path
    a person waits on). A crash or an exit meanwhile loses nothing: the kernel closes them. No
    thread to be had: closed here.
    """
    if not descriptors:
        return

    def close_all() -> None:
        for descriptor in descriptors:
            try:  # noqa: SIM105 - not contextlib (start-up)
                os.close(descriptor)
            except OSError:
                pass

    Background(close_all, "nbedit-release", daemon=True)
