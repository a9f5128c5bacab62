"""Linked keyframes: the old copy of a replaced file, kept by a hard link instead of a copy.

The atomic writer never writes into a file: it writes a new file and renames it over
the old name. The old inode (the bytes the history must keep as the entry's
"before") therefore survives the write, unreachable by its old name. Linking it
into ``<home>/blobs`` before the rename keeps those bytes for the cost of a link and
two fsyncs (the inode's data and the blob folder), where packing them costs a pass
of a compressor over the whole file: the first edit of a 50 MB notebook no longer
waits for that.

A link is made only when it can be trusted to keep the bytes:

- the file is a regular file with no other hard link (another name could write into
  it later) and holds exactly the expected bytes, checked through the very
  descriptor that is linked (``/proc/self/fd`` on Linux, so a file swapped in
  between cannot be linked instead);
- the home is on the same file system (``EXDEV`` otherwise) and allows links.

Anything else returns False and the caller packs the bytes as before. A linked copy
is still read back through its SHA-256 (``versions.verified_bytes``), so a copy
changed behind nbedit's back (a writer that kept the old file open) is refused,
never restored.
"""

from __future__ import annotations

import errno
import os
import stat

from nbedit.storage.content_identity import holds_bytes
from nbedit.storage.temp_copies import PROC_FD, fsync_directory

__all__ = ["fsync_folder", "link_copy"]


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fsync_directory(descriptor)
    finally:
        os.close(descriptor)


def _folder(destination: str | os.PathLike[str]) -> int:
    """A descriptor of the blob folder, created (private to the user) and made durable if new."""
    folder = os.path.dirname(os.fspath(destination))
    # never through a link planted in the home: the links made here hold the user's old files
    flags = (
        os.O_RDONLY
        | getattr(os, "O_DIRECTORY", 0)
        | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_NOFOLLOW", 0)
    )
    try:
        return os.open(folder, flags)
    except FileNotFoundError:
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
        fsync_folder(os.path.dirname(folder))
        return os.open(folder, flags)


def link_copy(
    source: str | os.PathLike[str], destination: str | os.PathLike[str], expected: bytes
) -> bool:
    """Hard-link the file at ``source`` (links followed, as the writer follows them) to
    ``destination`` if it holds exactly ``expected``; durable when this returns True.

    ``destination`` is replaced if it exists: the caller names it after a version id
    it holds the write lock for, so an existing file there is a leftover of a crash.
    """
    try:
        descriptor = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return False
    folder = -1
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_size != len(expected):
            return False
        folder = _folder(destination)
        name = os.path.basename(os.fspath(destination))
        try:  # noqa: SIM105 - not contextlib (start-up)
            os.unlink(name, dir_fd=folder)
        except FileNotFoundError:
            pass
        try:
            if os.path.isdir(PROC_FD):
                os.link(f"{PROC_FD}/{descriptor}", name, dst_dir_fd=folder, follow_symlinks=True)
            else:  # pragma: no cover - Linux has /proc; elsewhere the inode check below stands in
                os.link(source, name, dst_dir_fd=folder, follow_symlinks=True)
        except OSError:
            return False  # another file system (EXDEV), no links allowed (EPERM), too many links ...
        try:
            linked = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if (linked.st_dev, linked.st_ino) != (info.st_dev, info.st_ino) or not holds_bytes(
                descriptor, expected
            ):
                raise OSError(errno.ESTALE, "the file changed while it was linked")
            os.fsync(descriptor)  # the old bytes reach the disk before the entry that names them commits
            os.fsync(folder)
        except OSError:
            try:  # noqa: SIM105 - not contextlib (start-up)
                os.unlink(name, dir_fd=folder)
            except OSError:
                pass
            return False
        return True
    except OSError:
        return False
    finally:
        os.close(descriptor)
        if folder != -1:
            os.close(folder)
