"""Recording a change in the history: ``begin`` (durable, pending), ``commit``, ``abort``.

The first phase of the two-phase write (``storage.history``): the entry and its file versions
go into the database in one transaction before any file is replaced; the "before" of a big
file the history has not seen is kept as a hard link (``blobs``) and sealed once every file is
replaced. Apart from reading and upkeep because it is the path a person waits on.
"""

from __future__ import annotations

import os
import time

from nbedit import _hashing as hashlib  # sha256 without loading OpenSSL for small data
from nbedit.background import Background
from nbedit.errors import HistoryError
from nbedit.storage.database import (
    blob_folder_of,
    format_id,
    raise_sequence_floor,
    read_sequence_floor,
)
from nbedit.storage.history_state import HistoryState
from nbedit.storage.records import (
    ORIGINS,
    EntryDraft,
    FileRecord,
    known_origin,
)
from nbedit.storage.sqlite import sqlite3
from nbedit.storage.versions import (
    LINKED,
    collect_unused,
    joined,
    pack_regions,
    previous_version,
    reserve_linked,
    store_version,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.storage.delta import Delta
    from nbedit.storage.packed_regions import PackedRegions

__all__ = ["HistoryRecording"]

_ID_BLOCK = 1024


class HistoryRecording(HistoryState):
    """``HistoryStore``'s recording half (a mixin)."""

    def begin(self, draft: EntryDraft) -> str:
        """Record ``draft`` as a pending entry, durable when this returns; return its id."""
        if not known_origin(draft.origin):
            raise HistoryError(
                f"unknown origin {draft.origin!r}; use one of {', '.join(ORIGINS)} or agent:<tool>:<call id>"
            )
        if not draft.files:
            raise HistoryError("a history entry needs at least one file")
        for file in draft.files:
            if file.before is None and file.after is None:
                raise HistoryError(f"{file.path}: a file record needs before or after bytes")
        self._closed.clear()  # used again after close: the connection reopens, compaction may run
        self._last_activity = time.monotonic()
        self._pack_overdue()

        def record(connection: sqlite3.Connection) -> int:
            versions = [self._store_file(connection, file) for file in draft.files]
            cursor = connection.execute(
                "INSERT INTO entries (session, time, origin, execution_count, status, tiers, summary, undoes, root, pid,"
                " token, turn) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)",
                (draft.session, time.time(), draft.origin, draft.execution_count, _tiers_json(draft.tiers),
                 draft.summary, draft.undoes, draft.root, os.getpid(), draft.token, draft.turn),
            )  # fmt: skip
            seq = int(cursor.lastrowid or 0)
            connection.executemany(
                "INSERT INTO files (entry, position, path, new_path, added, removed, before_version, after_version,"
                " before_mode, after_mode) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (seq, position, file.path, file.new_path, file.added, file.removed, before, after,
                     file.before_mode, file.after_mode)
                    for position, (file, (before, after)) in enumerate(
                        zip(draft.files, versions, strict=True)
                    )
                ],
            )  # fmt: skip
            return seq

        seq = self._database.write(record)
        if seq >= self._floor:
            # Ids are handed out in blocks remembered outside the database, so a new database
            # (after damage, or a file truncated to 0 bytes) never hands out an id again.
            self._floor = max(read_sequence_floor(self._database_path), seq + _ID_BLOCK)
            try:  # noqa: SIM105 - not contextlib (start-up)
                raise_sequence_floor(self._database_path, self._floor)
            except OSError:
                pass
        return format_id(seq)

    def _store_file(self, connection: sqlite3.Connection, file: FileRecord) -> tuple[int | None, int | None]:
        before_id: int | None = None
        after_id: int | None = None
        new_before = False  # the "before" was not stored yet: then the "after" surely is not either
        packed_regions: PackedRegions | None | bool = False  # the "after" as a region delta; False: untried
        compared: Delta | None = None  # or its prefix/suffix delta, made while the old file was linked
        if file.before is not None:
            fingerprint = file.before_fingerprint or hashlib.sha256(file.before).hexdigest()
            known = connection.execute(
                "SELECT 1 FROM versions WHERE fingerprint = ?", (fingerprint,)
            ).fetchone()
            new_before = not known
            base = None if known else self._recent_base(connection, file.path, len(file.before))
            if not known and base is None and file.before_file is not None:
                before_id, packed_regions, compared = self._link_before(connection, file, fingerprint)
            if before_id is None:
                if not known and base is None:
                    base = previous_version(connection, file.path, len(file.before))
                before_id = store_version(connection, file.before, fingerprint, base)
        if file.after is not None:
            base = (before_id, file.before) if before_id is not None and file.before is not None else None
            after_fingerprint = file.after_fingerprint
            digest = file.after_digest  # hashed meanwhile on another thread; asked once
            joined: list[str] = []

            def once() -> str:
                if not joined:
                    joined.append(digest())  # type: ignore[misc]
                return joined[0]

            if after_fingerprint is None and digest is not None and not (new_before and base):
                after_fingerprint = once()
            # a new "after" (its "before" was new too): the digest is joined once its region delta
            # is packed, so the hashing overlaps that
            tried = packed_regions is not False
            after_id = store_version(
                connection,
                file.after,
                after_fingerprint if after_fingerprint is not None or digest is None else once,
                base,
                spans=file.spans if base and not tried else None,
                packed_regions=packed_regions if base and tried else None,  # type: ignore[arg-type]
                delta=compared if base else None,
            )
            if after_fingerprint is None and joined:
                after_fingerprint = joined[0]  # the digest store_version joined
            if after_fingerprint is not None:
                self._remember(file.new_path or file.path, after_id, after_fingerprint, file.after)
        return before_id, after_id

    def _link_before(
        self, connection: sqlite3.Connection, file: FileRecord, fingerprint: str
    ) -> tuple[int | None, PackedRegions | None | bool, Delta | None]:
        """Keep a new "before" as a hard link of the old file (``storage.blobs``): its version id, or
        None when it cannot be linked; and the "after" packed as a region delta of it, or False
        (without byte spans, a notebook's: its prefix/suffix delta against the "before", or None).

        The link, the check that the file still holds those bytes and the two fsyncs (the old
        file's data, the blob folder), mostly waits on the disk, run on another thread while
        this one packs the "after" (which depends only on the bytes, not on how they are kept);
        both are done before this returns, so the link is durable before the entry commits.
        """
        expected, source = file.before, file.before_file
        assert expected is not None and source is not None
        reserved = reserve_linked(connection, len(expected), fingerprint)
        if reserved is None:
            return None, False, None
        version, destination = reserved
        from nbedit.storage.blobs import link_copy  # a file of 64 KiB or more, new to the history

        linking = Background(lambda: link_copy(source, destination, expected), "nbedit-link")
        packed_regions: PackedRegions | None | bool = False
        compared: Delta | None = None
        try:
            if file.after is not None and file.spans is not None:
                packed_regions = pack_regions(expected, file.after, file.spans)
            elif file.after is not None:
                from nbedit.storage.delta import make_delta  # loaded when a delta is made

                compared = make_delta(joined(expected), joined(file.after))
        except BaseException:
            linking.wait()  # never left linking behind a transaction that is rolled back
            raise
        if linking.result():
            self._linked = True
            return version, packed_regions, compared
        connection.execute("DELETE FROM versions WHERE id = ?", (version,))
        return None, packed_regions, None

    def _recent_base(self, connection: sqlite3.Connection, path: str, size: int) -> tuple[int, bytes] | None:
        """The path's last recorded version if this process recorded it (kept in memory).

        Trusted only if the database still names that very version (same id and
        fingerprint) as the path's latest: a rolled-back or pruned one is not used.
        """
        recent = self._recent.get(path)
        if recent is not None:
            latest = connection.execute(
                "SELECT f.after_version, v.fingerprint FROM files AS f JOIN versions AS v ON v.id = f.after_version"
                " WHERE f.new_path = ? OR (f.path = ? AND f.new_path IS NULL) ORDER BY f.entry DESC LIMIT 1",
                (path, path),
            ).fetchone()
            version, fingerprint, data = recent
            if (
                latest is not None
                and tuple(latest) == (version, fingerprint)
                and size // 2 <= len(data) <= size * 2
            ):
                return version, joined(data)  # new bytes kept unjoined are joined to be a base
        return None

    def _remember(self, path: str, version: int, fingerprint: str, data: bytes) -> None:
        self._recent.pop(path, None)
        if not isinstance(getattr(data, "data", b""), (bytes, bytearray, memoryview)):
            return  # new bytes made from a file not held (storage.streamed_file): it is replaced now
        self._recent[path] = (version, fingerprint, data)
        while len(self._recent) > 8 or sum(len(item[2]) for item in self._recent.values()) > 64 << 20:
            self._recent.pop(next(iter(self._recent)))

    def commit(self, entry_id: str) -> None:
        """Mark an entry applied: its files were written.

        Not fsynced on its own: if a power cut loses the mark, the entry is pending
        again and recovery finds the files written and marks it applied.
        """

        def mark(connection: sqlite3.Connection) -> None:
            seq = self._resolve(connection, entry_id)
            connection.execute("UPDATE entries SET status = 'applied' WHERE seq = ?", (seq,))

        self._database.write(mark, durable=False)
        self._database.checkpoint_if_large()

    def seal_linked(self, entry_id: str) -> None:
        """Make the linked "before" copies of an entry whose files were all replaced 0600.

        A linked copy keeps the old file's inode and so its mode (say 0644). Once the
        writer has renamed the new file over the old name (and only then: before it, or
        for a file a crash left unwritten, the inode is still the person's file), the
        inode belongs to the history alone and is made private like every file of the home.
        """
        if not self._linked:
            return
        versions = self._database.read(
            lambda connection: [
                row[0]
                for row in connection.execute(
                    "SELECT v.id FROM files AS f JOIN versions AS v ON v.id = f.before_version"
                    " WHERE f.entry = ? AND v.compressed = ?",
                    (self._resolve(connection, entry_id), LINKED),
                )
            ]
        )
        if not versions:
            return
        no_follow = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | no_follow
        try:
            folder = os.open(blob_folder_of(self._database_path), flags)
        except OSError:
            return
        try:
            for version in versions:
                try:  # noqa: SIM105 - not contextlib (start-up)
                    descriptor = os.open(str(version), os.O_RDONLY | no_follow, dir_fd=folder)
                    try:
                        info = os.fstat(descriptor)
                        if info.st_nlink == 1 and info.st_mode & 0o7177:
                            os.fchmod(descriptor, 0o600)  # the version's mode is recorded apart
                    finally:
                        os.close(descriptor)
                except OSError:
                    pass
        finally:
            os.close(folder)

    def abort(self, entry_id: str) -> None:
        """Forget a pending entry (its files were not written) and the versions only it used."""

        def forget(connection: sqlite3.Connection) -> set[int]:
            seq = self._resolve(connection, entry_id)
            status = connection.execute("SELECT status FROM entries WHERE seq = ?", (seq,)).fetchone()[0]
            if status != "pending":
                raise HistoryError(f"entry {format_id(seq)} was already applied; it cannot be aborted")
            candidates = {
                version
                for row in connection.execute(
                    "SELECT before_version, after_version FROM files WHERE entry = ?", (seq,)
                )
                for version in row
                if version is not None
            }
            connection.execute("DELETE FROM entries WHERE seq = ?", (seq,))
            collect_unused(connection, candidates)
            return candidates

        candidates = self._database.write(forget, durable=False)
        # A linked "before" of an entry that never replaced its file is still that file's
        # inode: drop the link, or pack the bytes first if another entry uses them too.
        self._pack_linked(candidates, stop=None)
        self._sweep()
        self._database.checkpoint_if_large()


def _tiers_json(tiers: tuple[str, ...]) -> str:
    """``json.dumps(list(tiers))`` without importing json on every write (start-up): the tier
    names are plain words; anything else goes through json itself."""
    if all(tier.isascii() and tier.replace("-", "").replace("_", "").isalnum() for tier in tiers):
        return "[" + ", ".join(f'"{tier}"' for tier in tiers) + "]"
    import json

    return json.dumps(list(tiers))
