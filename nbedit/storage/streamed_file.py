"""A big file's old bytes, not held: read again, and proved the same by their digest, whenever needed.

A 100,000-hunk patch of an 80 MB file needs the old bytes three times after the plan: to write
the new copy (the bytes between the hunks), for the writer's last check before the rename, and
for the history's check of its linked copy (the new bytes' SHA-256 is taken while planning,
``engine.streamed_splice``). Held
in memory for those, the file is over twice the patch (the rest of the apply is well under
one patch). ``StreamedFile`` stands for those bytes instead: the planner reads the file once
in chunks (``first_pass``: it locates the hunks in them while this hashes them), and keeps
their size and SHA-256. Each later use reads the file again in chunks and hashes every byte
it reads: ``chunks`` raises ``StaleFile`` after the last chunk when the bytes are not the
ones planned (the writer's temporary copy is then discarded; nothing is replaced), and
``held_by`` is the writer's and the history's check of an open file (``content_identity``).
The proof is a digest of every byte (BLAKE2b, next to the SHA-256 the history names versions
by: see ``_checked``), in place of a byte-for-byte compare with a copy held in memory.

Reading ``FilePlan.before_bytes`` (or ``before``) of such a plan reads the file then (``join``),
checked the same way: once the file is replaced, the old bytes are the history's (undo and
restore read them there), and reading the field raises ``StaleFile``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator

from nbedit._hashing import HashedBeside
from nbedit.errors import StaleFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CHUNK", "StreamedFile"]

CHUNK = 1 << 18  # bytes read at a time (the planner's window holds about two, and a copy of them while it slides)


class StreamedFile:
    """The bytes of the file ``opener()`` opens (a read-only descriptor, or None when it is gone),
    known by ``size`` and ``fingerprint`` (SHA-256, hex) once ``first_pass`` has read them all."""

    __slots__ = ("_check", "_unread", "fingerprint", "identity", "opener", "path", "size")

    def __init__(self, opener: Callable[[], int | None], path: str) -> None:
        self.opener = opener
        self.path = path
        self.size = -1  # the size as opened, then what the first pass read
        self.fingerprint: str | None = None
        self.identity: tuple[int, int, int, int, int] | None = None
        self._unread: int | None = None  # the first pass's descriptor until that pass starts
        self._check = b""  # the BLAKE2b digest of the bytes, which each later pass checks (see _checked)

    def __len__(self) -> int:
        if self.fingerprint is None:
            raise ValueError("the file has not been read yet")
        return self.size

    def __repr__(self) -> str:
        return f"<StreamedFile {self.path}: {self.size:,} bytes>"

    def first_pass(self, descriptor: int, chunk: int | None = None) -> Iterator[bytes]:
        """The bytes of the open ``descriptor``, in chunks, hashed as they go by; once every
        chunk was taken, ``size``, ``fingerprint`` and (if the file did not change while it
        was read) ``identity`` are set. The descriptor is closed at the end (or when the
        caller lets go of the iterator; ``release`` closes it if the pass never started)."""
        self._unread = descriptor
        self.size = os.fstat(descriptor).st_size  # as opened (the pass sets what it read)
        return self._first_pass(descriptor, chunk or CHUNK)

    def release(self) -> None:
        """Close the first pass's descriptor if that pass never started (a caller that gave up)."""
        descriptor, self._unread = self._unread, None
        if descriptor is not None:
            os.close(descriptor)

    def _first_pass(self, descriptor: int, chunk: int) -> Iterator[bytes]:
        from nbedit._hashing import openssl_sha256

        self._unread = None  # this pass closes it
        digest, check = openssl_sha256(), _checker()
        hasher = HashedBeside((digest.update, check.update))  # beside the planner, which locates the hunks
        size = 0
        try:
            opened = os.fstat(descriptor)
            while True:
                block = os.read(descriptor, chunk)
                if not block:
                    break
                hasher.update(block)
                size += len(block)
                yield block
            read = os.fstat(descriptor)
        finally:
            hasher.close()
            os.close(descriptor)
        self.size, self.fingerprint, self._check = size, digest.hexdigest(), check.digest()
        if _identity(opened) == _identity(read) and read.st_size == size:
            self.identity = _identity(read)

    def chunks(self, chunk: int | None = None) -> Iterator[bytes]:
        """The planned bytes again, read from the file in chunks; ``StaleFile`` (after the last
        chunk, or as soon as the size shows it) when the file no longer holds them."""
        descriptor = self.opener()
        if descriptor is None:
            raise self._stale("was deleted")
        try:
            yield from _checked(descriptor, self, chunk or CHUNK, self._stale)
        finally:
            os.close(descriptor)

    def held_by(self, descriptor: int) -> bool:
        """True if the open file holds exactly these bytes (its size, then the SHA-256 of every byte)."""
        try:
            for _block in _checked(descriptor, self, CHUNK, lambda _: ValueError()):
                pass
        except ValueError:
            return False
        return True

    def read_from(self, descriptor: int) -> Iterator[bytes]:
        """These bytes read from an open file (the writer's rollback reads the old inode it kept);
        ``OSError`` (ESTALE) after the last chunk if they are not these bytes."""
        yield from _checked(descriptor, self, CHUNK, lambda what: OSError(errno.ESTALE, f"the old file {what}"))

    def join(self) -> bytes:
        """The bytes, read whole from the file and checked (``StaleFile`` if they changed)."""
        return b"".join(self.chunks())

    def decode(self) -> str:
        return self.join().decode()

    def _stale(self, what: str) -> StaleFile:
        return StaleFile(
            f"{self.path}: {what} since the preview (its bytes are not the ones planned); nothing was "
            "written. Plan the change again to review it against the file as it is now",
            path=self.path,
            expected=self.fingerprint,
            actual=None,
        )


def _checked(
    descriptor: int, expected: StreamedFile, chunk: int, failure: Callable[[str], Exception]
) -> Iterator[bytes]:
    """The file's bytes from its start (``pread``: the descriptor's offset is left alone), hashed;
    ``failure(...)`` raised when the size or the digest is not ``expected``'s.

    The digest checked is BLAKE2b's (256 bits), taken in the first pass next to the SHA-256 the
    history names the bytes by: as much a proof that every byte is the same, at about 1.7 times
    SHA-256's speed on a CPU without SHA instructions (an 80 MB file: 0.13 s instead of 0.23 s
    a pass; the writer and the history each make one or two such passes)."""
    if expected.fingerprint is None:
        raise ValueError("the file has not been read yet")
    if os.fstat(descriptor).st_size != expected.size:
        raise failure("changed on disk")
    check = _checker()
    position = 0
    while True:
        block = os.pread(descriptor, chunk, position)
        if not block:
            break
        position += len(block)
        if position > expected.size:
            raise failure("changed on disk")
        check.update(block)
        yield block
    if position != expected.size or check.digest() != expected._check:  # noqa: SLF001 - this module's
        raise failure("changed on disk")


def _checker() -> Any:
    from hashlib import blake2b

    return blake2b(digest_size=32)


def _identity(info: os.stat_result) -> tuple[int, int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
