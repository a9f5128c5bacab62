"""Whether a file is still the one a plan read: its identity first, then its bytes.

A file's identity (device, inode, size, modification and change times) taken when it was read
lets a check before the write trust an untouched file without reading it again; the bytes
compare (``holds_bytes``, in chunks into one reused buffer) is the guarantee the writer makes
right before the replace. The workspace's reads, the linked copies of the history and the
writer share these, so they live apart from the write pipeline.
"""

from __future__ import annotations

import os

__all__ = ["Identity", "holds_bytes", "holds_in_folder", "identity_of"]

Identity = tuple[int, int, int, int, int]


def identity_of(info: os.stat_result) -> Identity:
    """Device, inode, size, modification and change times: what a rewrite or a swap changes,
    short of a rewrite of the same size within one tick of the file system's clock."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def holds_in_folder(directory: int, name: str, expected: bytes) -> bool:
    try:
        descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0), dir_fd=directory)
    except OSError:
        return False
    try:
        return holds_bytes(descriptor, expected)
    finally:
        os.close(descriptor)


def holds_bytes(descriptor: int, expected: bytes, chunk: int = 1 << 20) -> bool:
    """True if the open file holds exactly ``expected``, read in chunks into one reused buffer.

    Each chunk is compared in place (``startswith`` at an offset: a C memcmp, no slice
    of ``expected`` copied), so checking a 50 MB file costs its read and one compare.
    Not ``mmap``: a file truncated by another program while mapped would kill this
    process with SIGBUS. ``expected`` may also stand for bytes not held (an object with
    ``held_by(descriptor)``, ``storage.streamed_file``): it checks them by their SHA-256.
    """
    if not isinstance(expected, (bytes, bytearray, memoryview)):
        # a big file's bytes not held (``storage.streamed_file``): its size and SHA-256 checked
        return expected.held_by(descriptor)  # type: ignore[no-any-return]
    if os.fstat(descriptor).st_size != len(expected):
        return False
    buffer = bytearray(min(chunk, max(len(expected), 1)))
    view = memoryview(buffer)
    position = 0
    while True:
        count = (
            os.preadv(descriptor, [buffer], position)
            if hasattr(os, "preadv")
            else _pread_into(descriptor, view, position)
        )
        if not count:
            return position == len(expected)
        if not expected.startswith(view[:count], position):
            return False
        position += count


def _pread_into(descriptor: int, view: memoryview, position: int) -> int:  # pragma: no cover - no preadv
    block = os.pread(descriptor, len(view), position)
    view[: len(block)] = block
    return len(block)
