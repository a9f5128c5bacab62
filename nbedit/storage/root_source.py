"""The planner's window onto the workspace root: confined reads, and what they remember.

The pure planner reads files through a ``FileSource`` (``nbedit.engine.source``); this is the
one that reads the disk. It confines every path to the root (``..``, absolute paths and links
that leave it are refused; a newline or NUL in a name never reaches a parser), pins the root
when it opens it, and reaches each file from that pinned root without following a link
(``storage.confine``), as the writer does. It lives in ``storage`` because it is file I/O.

A file read for a plan keeps its identity (inode, size, times) with the bytes read, so the
check before the write need not read an untouched file again; with the history on, a big file
read is flushed on another thread meanwhile (the entry links it as its keyframe); a notebook
can be read on another thread while its modules import (``prefetch``).
"""

from __future__ import annotations

import os
import stat

from nbedit._path_text import expanduser, normal, relative_to
from nbedit.background import Background
from nbedit.errors import FileTooLarge, NbeditError, NotAFile, OutsideWorkspace

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from nbedit.storage.streamed_file import StreamedFile

__all__ = ["OverlaySource", "RootSource", "identity_now", "stat_identity"]

_IDENTIFIED_FROM = 64 << 10  # bytes; a smaller file is compared again at once, faster than kept
_IDENTITIES_KEPT = 16  # files whose read identity is remembered (with the bytes read) ...
_IDENTIFIED_BYTES = 256 << 20  # ... and their bytes at most (a plan dropped unapplied lets go of its bytes)
# bytes; a smaller file's flush costs the history's link little, and a flush the link turns out not
# to need (the history knew the file already) would compete with the temporary copy's own fsync
_SYNCED_FROM = 8 << 20


class OverlaySource:
    """The root, except that some files read as given bytes (an open tab's live document)."""

    def __init__(self, source: RootSource, overlay: dict[str, bytes]) -> None:
        self.source = source
        self.overlay = overlay

    def normalise(self, path: str) -> str:
        return self.source.normalise(path)

    def read(self, path: str) -> bytes | None:
        return self.overlay[path] if path in self.overlay else self.source.read(path)

    def mode(self, path: str) -> int | None:
        return self.source.mode(path)


class RootSource:
    """The planner's window onto the workspace root (implements FileSource)."""

    def __init__(self, root: str | os.PathLike[str], max_file_size: int) -> None:
        from nbedit.storage.confine import PinnedRoot

        self.root = root
        # the root's folder as opened now: every read and write checks it is still that folder
        self.pinned = PinnedRoot(root)
        self.real_root_text = self.pinned.text  # paths stay strings on the way to a write
        self.max_file_size = max_file_size
        # path -> (the bytes read, the file's identity then): lets the checks before the
        # write skip a second read of a file nobody touched (storage.atomic.identity_of)
        self._identities: dict[str, tuple[bytes, tuple[int, int, int, int, int]]] = {}
        # with the history on, a big file read for a plan is flushed to disk meanwhile: the
        # entry links it as its keyframe and must make it durable first (storage.blobs)
        self.sync_reads = False  # set by Workspace._plan while it plans
        self._syncing: dict[str, Background] = {}
        self._prefetched: dict[str, Background] = {}  # path -> its read, running on another thread

    def normalise(self, path: str) -> str:
        """The path relative to the real root: folders resolved, a final link kept as the link.

        The file a final link points to must be inside the root too; keeping the link's
        own name means a delete removes the link and a write goes through it.
        """
        from nbedit.storage.confine import check_path_text

        check_path_text(path)  # a newline or NUL never reaches a parser or the disk
        raw = path.strip()
        if not raw:
            raise OutsideWorkspace("empty path; name a file relative to the workspace root")
        # strings, not pathlib (start-up time of a one-shot command); the same steps as
        # ``Path(raw).expanduser()``, ``root / candidate``, ``.parent``/``.name``, ``relative_to``
        try:
            os.fsencode(raw)  # a lone surrogate (JSON allows one) is no file name on this system
            candidate = expanduser(normal(raw))
        except UnicodeEncodeError as error:
            raise NotAFile(
                f"{path!r}: cannot be a file name here (it holds {raw[error.start : error.end]!r}, which no "
                "file name encodes); name the file in plain text",
                path=path,
            ) from None
        except RuntimeError:  # ``~user`` of a user this system does not know
            raise OutsideWorkspace(
                f"{path}: names the home folder of {raw.partition('/')[0]}, a user this system does not "
                "know; name the file relative to the workspace root",
                path=path,
            ) from None
        full = normal(os.path.join(os.fspath(self.root), candidate))
        folder, name = os.path.split(full)
        try:
            resolved = os.path.realpath(full)
            kept = resolved  # the path itself names no file: checked as resolved
            if name not in ("", ".", ".."):
                kept = os.path.join(os.path.realpath(folder or "."), name)  # a final link kept
        except OSError as error:
            raise NotAFile(f"{path}: cannot be resolved ({error.strerror or error})", path=path) from None
        real_root = self.real_root_text
        if relative_to(resolved, real_root) is None or (relative := relative_to(kept, real_root)) is None:
            raise OutsideWorkspace(
                f"{path}: resolves to {resolved}, outside the workspace root {real_root}; "
                "nbedit only edits files under the root (set root=... / --root to widen it)",
                path=path,
            )
        if not relative:
            raise NotAFile(f"{path}: is the workspace root itself, not a file", path=path)
        for part in relative.split("/"):
            if len(os.fsencode(part)) > 255:
                raise NotAFile(
                    f"{path}: the name {part[:40]}... is {len(os.fsencode(part))} bytes, over the 255-byte "
                    "limit of file names; choose a shorter name",
                    path=path,
                )
        return relative

    @property
    def real_root(self) -> Path:
        """The root's real path (``real_root_text`` as a ``Path``)."""
        from pathlib import Path

        return Path(self.real_root_text)

    def absolute(self, path: str) -> str:
        """The full path of ``path`` (relative to the real root), as a string."""
        return os.path.join(self.real_root_text, path)

    def read(self, path: str) -> bytes | None:
        prefetched = self._prefetched.pop(path, None)
        if prefetched is not None:
            return prefetched.result()  # type: ignore[no-any-return]
        return self._read(path)

    def prefetch(self, path: str, then: Callable[[bytes], object] | None = None) -> None:
        """Start reading ``path`` on another thread; the next ``read`` of it takes the result
        (its bytes, or the error the read raised). ``drop_prefetched`` forgets one not taken.
        ``then``: called on that thread with the bytes read, as soon as they are (it must not raise)."""

        def read() -> bytes | None:
            data = self._read(path)
            if then is not None and data is not None:
                then(data)
            return data

        if path not in self._prefetched:
            self._prefetched[path] = Background(read, "nbedit-read")

    def drop_prefetched(self) -> None:
        while self._prefetched:
            _path, reading = self._prefetched.popitem()
            reading.wait()

    def wait_synced(self, paths: Sequence[str]) -> None:
        """Wait for the flushes started when these files were read (an error there is left to
        the history's own fsync of the file, which raises it)."""
        for path in paths:
            syncing = self._syncing.pop(path, None)
            if syncing is not None:
                syncing.wait()

    def _read(self, path: str) -> bytes | None:
        from nbedit.storage.confine import open_file

        # reached from the pinned root with no link followed: a folder swapped for a link
        # since the path was resolved cannot show an outside file (storage.confine)
        descriptor = open_file(self.absolute(path), self.pinned, shown=path)
        if descriptor is None:
            return None
        info = os.fstat(descriptor)
        if info.st_size > self.max_file_size:
            os.close(descriptor)
            raise self._too_large(path, info.st_size)
        try:
            with open(descriptor, "rb", buffering=0) as handle:
                opened = os.fstat(handle.fileno())
                data: bytes = handle.readall()
                read = os.fstat(handle.fileno())
                if self.sync_reads and len(data) >= _SYNCED_FROM:
                    self._sync_meanwhile(path, handle.fileno())
        except OSError as error:
            raise NotAFile(f"{path}: cannot be read ({error.strerror or error})", path=path) from None
        identity = stat_identity(read)
        if identity == stat_identity(opened) and read.st_size == len(data) and len(data) >= _IDENTIFIED_FROM:
            self._identities.pop(path, None)
            self._identities[path] = (data, identity)
            while len(self._identities) > _IDENTITIES_KEPT or (
                len(self._identities) > 1
                and sum(len(known[0]) for known in self._identities.values()) > _IDENTIFIED_BYTES
            ):
                self._identities.pop(next(iter(self._identities)))
        return data

    def _too_large(self, path: str, size: int) -> FileTooLarge:
        return FileTooLarge(
            f"{path}: is {size:,} bytes, over the {self.max_file_size:,}-byte limit; "
            "raise max_file_size (Workspace(max_file_size=...)) if you really mean to edit it",
            path=path,
            size=size,
            limit=self.max_file_size,
        )

    def streamed(self, path: str, minimum: int) -> tuple[StreamedFile, Iterator[bytes]] | None:
        """A file of ``minimum`` bytes or more, not read whole: the stand-in for its bytes
        (``storage.streamed_file``) and its first pass over them, in chunks; None when the file
        does not exist or is smaller (the caller reads it as usual). Raises what ``read`` raises."""
        from nbedit.storage.confine import open_file

        if path in self._prefetched:
            return None
        descriptor = open_file(self.absolute(path), self.pinned, shown=path)
        if descriptor is None:
            return None
        try:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode) or info.st_size < minimum:
                os.close(descriptor)
                return None
            if info.st_size > self.max_file_size:
                os.close(descriptor)
                raise self._too_large(path, info.st_size)
            if self.sync_reads:
                self._sync_meanwhile(path, descriptor)
        except OSError as error:
            os.close(descriptor)
            raise NotAFile(f"{path}: cannot be read ({error.strerror or error})", path=path) from None
        from nbedit.storage.streamed_file import StreamedFile  # a big file only (start-up time)

        absolute, pinned = self.absolute(path), self.pinned
        content = StreamedFile(lambda: open_file(absolute, pinned, shown=path), path)
        return content, content.first_pass(descriptor)

    def _sync_meanwhile(self, path: str, descriptor: int) -> None:
        duplicate = os.dup(descriptor)

        def flush() -> None:
            try:
                os.fsync(duplicate)
            finally:
                os.close(duplicate)

        earlier = self._syncing.pop(path, None)
        if earlier is not None:
            earlier.wait()
        try:
            # a daemon: a plan never applied must not hold up the interpreter's exit for it
            self._syncing[path] = Background(flush, "nbedit-flush", daemon=True)
        except BaseException:
            os.close(duplicate)
            raise

    def identity(self, path: str, data: bytes | None) -> tuple[int, int, int, int, int] | None:
        """The file's identity when exactly ``data`` (this very object) was read from it."""
        identity = getattr(data, "identity", None)  # a big file not held (storage.streamed_file)
        if identity is not None:
            return identity  # type: ignore[no-any-return]
        known = self._identities.get(path)
        return known[1] if known is not None and data is not None and known[0] is data else None

    def unchanged(self, path: str, data: bytes | None) -> bool:
        """True if the file is, by its identity, still the one ``data`` was read from (a cheap
        early check: the full compare before the replace is the guarantee)."""
        identity = self.identity(path, data)
        if identity is None:
            return False
        try:
            return identity_now(self.absolute(path), self.pinned) == identity
        except (OSError, NbeditError):
            return False

    def forget(self, paths: Sequence[str]) -> None:
        for path in paths:
            self._identities.pop(path, None)

    def holds(self, path: str, expected: bytes, chunk: int = 1 << 20) -> bool:
        """True if the file's bytes are exactly ``expected``; never holds a second whole copy."""
        from nbedit.storage.confine import open_file
        from nbedit.storage.content_identity import holds_bytes

        try:
            descriptor = open_file(self.absolute(path), self.pinned, shown=path)
            if descriptor is None:
                return False
            with open(descriptor, "rb", buffering=0) as handle:
                return holds_bytes(handle.fileno(), expected, chunk)
        except (OSError, NbeditError):
            return False

    def mode(self, path: str) -> int | None:
        from nbedit.storage.confine import stat_file

        try:
            info = stat_file(self.absolute(path), self.pinned, shown=path)
        except (OSError, NbeditError):
            return None
        return stat.S_IMODE(info.st_mode) if info is not None else None


def identity_now(path: str | os.PathLike[str], root: object) -> tuple[int, int, int, int, int] | None:
    from nbedit.storage.confine import stat_file

    info = stat_file(path, root, shown=str(path))  # type: ignore[arg-type]
    return stat_identity(info) if info is not None else None


def stat_identity(info: os.stat_result) -> tuple[int, int, int, int, int]:
    """``storage.atomic.identity_of`` without importing the writer for a plan."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
