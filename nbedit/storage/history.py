"""The snapshot history: every applied change, with the bytes to undo or restore it.

One SQLite database per nbedit home (``<home>/history.sqlite3``) holds the entries
(which files a change touched, when, from where, how it matched) and the file
versions themselves (``versions.py``: content-addressed keyframes and deltas, so the
history grows with the size of the changes). SQLite gives what a pile of JSON
files would not: an entry and its versions appear together or not at all, several
kernels can write at once (``database.py``), and listing is an indexed query.

The versions live inside the database rather than as loose blob files: one
transaction then covers index and data, a crash cannot leave a row pointing at a
missing file, and pruning cannot race a writer re-adding the same blob.

Writing a change is two-phase. ``begin`` records the entry as "pending" (durable
before any file is touched), the caller replaces the files, then ``commit`` marks
it "applied" or ``abort`` forgets it. A crash in between leaves a pending entry
whose writer process is gone; ``reconcile`` compares the files on disk with the
entry's fingerprints and keeps or drops it.

``begin`` keeps the "before" of a file the history has not seen as a hard link to
the old file (``blobs.py``) when the caller names it, and ``compact`` packs such
links into the database later, off the path a person waits on: from a background
thread once the process has been idle for ``IDLE_SECONDS`` (a kernel between cells),
and at the start of a ``begin`` for every link older than ``LINKED_ENTRIES`` entries
or beyond ``LINKED_BUDGET`` bytes, so the home stays bounded however short-lived
the processes are (a CLI call never idles).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from nbedit import _hashing as hashlib  # sha256 without loading OpenSSL for small data
from nbedit.errors import HistoryError
from nbedit.storage.atomic import process_alive
from nbedit.storage.blobs import link_copy
from nbedit.storage.database import (
    DamagedHistory,
    Database,
    move_aside,
    raise_sequence_floor,
    read_sequence_floor,
)
from nbedit.storage.records import (
    DATABASE_NAME,
    ORIGINS,
    Entry,
    EntryDraft,
    FileRecord,
    FileSummary,
    FileVersion,
    PruneResult,
    default_home,
    known_origin,
)
from nbedit.storage.versions import (
    LINKED,
    LIVE_VERSIONS,
    LOST,
    collect_unused,
    linked_versions,
    orphan_blobs,
    pack,
    pack_linked,
    previous_version,
    rebase_orphans,
    store_linked,
    store_version,
    verified_bytes,
)

__all__ = [
    "DATABASE_NAME",
    "DamagedHistory",
    "Entry",
    "EntryDraft",
    "FileRecord",
    "FileSummary",
    "FileVersion",
    "HistoryStore",
    "PruneResult",
    "default_home",
    "format_id",
]

LINKED_BUDGET = 128 << 20  # bytes of linked copies a store lets wait for compaction
LINKED_ENTRIES = 16  # a linked copy is packed by the first begin this many entries after it
IDLE_SECONDS = 2.0  # a process that recorded nothing for this long packs its links in the background
_ID_BLOCK = 1024
_TOTAL_BYTES = "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM versions"


def format_id(seq: int) -> str:
    """Entry ids: ``e`` and eight hex digits of a counter that is never reused; they sort by age."""
    return f"e{seq:08x}"


class HistoryStore:
    """Entries and file versions under ``home``; safe to share between threads and processes."""

    def __init__(self, home: Path | str, *, busy_timeout: float = 30.0) -> None:
        self.home = Path(home).expanduser()
        self.database = self.home / DATABASE_NAME
        self.notice: str | None = None  # set by open_or_recreate when it moved a damaged database aside
        self._database = Database(self.database, busy_timeout=busy_timeout)
        # the last version recorded per path by this process: a delta base for the next
        # record of that path without rebuilding it from the database (id, bytes)
        self._recent: dict[str, tuple[int, str, bytes]] = {}
        self._floor = read_sequence_floor(self.database)
        self._compactor: threading.Thread | None = None
        self._closed = threading.Event()
        self._linked = False  # this process linked a copy since its last compaction
        self._last_activity = 0.0

    @classmethod
    def open_or_recreate(cls, home: Path | str, *, busy_timeout: float = 30.0) -> HistoryStore:
        """Open the store; if the database is damaged, move it aside and start an empty one.

        The returned store's ``notice`` then says what happened; show it to the user.
        """
        database = Path(home).expanduser() / DATABASE_NAME
        emptied = database.is_file() and database.stat().st_size == 0 and read_sequence_floor(database) > 0
        try:
            store = cls(home, busy_timeout=busy_timeout)
            if emptied:
                store.notice = (
                    f"the nbedit history database {database} was empty (0 bytes), so its entries are lost; "
                    "a new history was started (entry ids continue after the old ones)"
                )
            return store
        except DamagedHistory as damage:
            moved = move_aside(damage.database)
            store = cls(home, busy_timeout=busy_timeout)
            store.notice = (
                f"the nbedit history database was damaged ({damage.message.split(';')[0]}); "
                f"it was moved to {moved} and a new, empty history was started"
            )
            return store

    def close(self) -> None:
        """Close the connection; a background compaction stops at its next step (its work is kept)."""
        self._closed.set()
        with self._database_lock():
            self._database.close()

    def _database_lock(self) -> threading.RLock:
        return self._database._lock  # noqa: SLF001 - one lock guards the connection and close

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- recording -------------------------------------------------------------------

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
            self._floor = max(read_sequence_floor(self.database), seq + _ID_BLOCK)
            with contextlib.suppress(OSError):
                raise_sequence_floor(self.database, self._floor)
        return format_id(seq)

    def _store_file(self, connection: sqlite3.Connection, file: FileRecord) -> tuple[int | None, int | None]:
        before_id: int | None = None
        after_id: int | None = None
        if file.before is not None:
            fingerprint = file.before_fingerprint or hashlib.sha256(file.before).hexdigest()
            known = connection.execute(
                "SELECT 1 FROM versions WHERE fingerprint = ?", (fingerprint,)
            ).fetchone()
            base = None if known else self._recent_base(connection, file.path, len(file.before))
            if not known and base is None and file.before_file is not None:
                expected, source = file.before, file.before_file
                before_id = store_linked(
                    connection, len(expected), fingerprint, lambda blob: link_copy(source, blob, expected)
                )
                if before_id is not None:
                    self._linked = True
            if before_id is None:
                if not known and base is None:
                    base = previous_version(connection, file.path, len(file.before))
                before_id = store_version(connection, file.before, fingerprint, base)
        if file.after is not None:
            base = (before_id, file.before) if before_id is not None and file.before is not None else None
            after_fingerprint = file.after_fingerprint
            if after_fingerprint is None and file.after_digest is not None:
                after_fingerprint = file.after_digest()  # hashed meanwhile on another thread
            after_id = store_version(
                connection, file.after, after_fingerprint, base, spans=file.spans if base else None
            )
            if after_fingerprint is not None:
                self._remember(file.new_path or file.path, after_id, after_fingerprint, file.after)
        return before_id, after_id

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
                return version, data
        return None

    def _remember(self, path: str, version: int, fingerprint: str, data: bytes) -> None:
        self._recent.pop(path, None)
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
            folder = os.open(blob_folder_of(self.database), flags)
        except OSError:
            return
        try:
            for version in versions:
                with contextlib.suppress(OSError):
                    descriptor = os.open(str(version), os.O_RDONLY | no_follow, dir_fd=folder)
                    try:
                        info = os.fstat(descriptor)
                        if info.st_nlink == 1 and info.st_mode & 0o7177:
                            os.fchmod(descriptor, 0o600)  # the version's mode is recorded apart
                    finally:
                        os.close(descriptor)
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

    # -- linked copies -------------------------------------------------------------------

    def linked_bytes(self) -> int:
        """Bytes of linked copies waiting to be packed into the database."""
        return sum(size for _, _, size in self._database.read(linked_versions))

    def compact(self, *, keep_bytes: int = 0, stop: threading.Event | None = None) -> int:
        """Pack linked copies into the database, oldest first, until at most ``keep_bytes`` wait.

        Each is read, checked against its SHA-256 and packed outside any transaction;
        only the row update holds the write lock, and the link is removed once that
        commits. ``stop``: set it to stop between two copies (the background thread's). A copy that no longer matches was written into behind nbedit's back:
        its version is marked lost (restoring it says so) rather than kept wrong.
        Returns how many were packed.
        """
        waiting = self._database.read(linked_versions)
        excess = sum(size for _, _, size in waiting) - keep_bytes
        chosen: list[int] = []
        for version, _, size in waiting:
            if excess <= 0:
                break
            chosen.append(version)
            excess -= size
        packed = self._pack_linked(chosen, stop=stop)
        self._sweep()
        return packed

    def compact_soon(self) -> None:
        """Pack this process's links in a background thread once it has been idle ``IDLE_SECONDS``."""
        self._last_activity = time.monotonic()
        if not self._linked or self._closed.is_set():
            return
        if self._compactor is not None and self._compactor.is_alive():
            return
        thread = threading.Thread(target=self._compact_when_idle, name="nbedit-history-compact", daemon=True)
        self._compactor = thread
        thread.start()

    def _compact_when_idle(self) -> None:
        while not self._closed.is_set():
            wait = self._last_activity + IDLE_SECONDS - time.monotonic()
            if wait <= 0:
                break
            self._closed.wait(wait)
        if self._closed.is_set():
            return
        self._linked = False
        with contextlib.suppress(HistoryError, OSError, sqlite3.Error):
            self.compact(stop=self._closed)  # close() stops it between two copies

    def _pack_overdue(self) -> None:
        """Pack links older than ``LINKED_ENTRIES`` entries, and the oldest beyond ``LINKED_BUDGET`` bytes."""

        def overdue(connection: sqlite3.Connection) -> list[int]:
            if (
                connection.execute(
                    "SELECT 1 FROM versions WHERE compressed = ? LIMIT 1", (LINKED,)
                ).fetchone()
                is None
            ):
                return []
            latest = connection.execute("SELECT COALESCE(MAX(seq), 0) FROM entries").fetchone()[0]
            waiting = connection.execute(
                "SELECT v.id, v.size, (SELECT MIN(entry) FROM files WHERE before_version = v.id"
                " OR after_version = v.id) FROM versions AS v WHERE v.compressed = ? ORDER BY v.id DESC",
                (LINKED,),
            ).fetchall()
            chosen, total = [], 0
            for version, size, first_use in waiting:  # newest first: the budget keeps the newest
                total += size
                if total > LINKED_BUDGET or first_use is None or latest + 1 - first_use >= LINKED_ENTRIES:
                    chosen.append(int(version))
            return chosen

        chosen = self._database.read(overdue)
        if chosen:
            self._pack_linked(chosen, stop=None)
            self._sweep()

    def _pack_linked(self, versions: Sequence[int] | set[int], stop: threading.Event | None) -> int:
        packed_count = 0
        for version in sorted(versions):
            if stop is not None and stop.is_set():
                break
            row = self._database.read(
                lambda connection, version=version: connection.execute(  # type: ignore[misc]
                    "SELECT fingerprint, compressed FROM versions WHERE id = ?", (version,)
                ).fetchone()
            )
            if row is None or row[1] != LINKED:
                continue
            blob = blob_folder_of(self.database) / str(version)
            try:
                data = blob.read_bytes()
            except FileNotFoundError:
                data = b""
            if hashlib.sha256(data).hexdigest() == row[0]:
                packing, packed = pack(data)
            else:
                packing, packed = LOST, b""

            def store(
                connection: sqlite3.Connection,
                version: int = version,
                packing: int = packing,
                packed: bytes = packed,
            ) -> bool:
                if stop is not None and stop.is_set():
                    return False
                return pack_linked(connection, version, packing, packed)

            with self._database_lock():
                if stop is not None and stop.is_set():
                    break
                if not self._database.write(store):
                    continue  # stopped, or packed by another process (which removes the link)
                packed_count += 1
            with contextlib.suppress(OSError):
                blob.unlink()
        return packed_count

    def _sweep(self) -> None:
        """Remove links no version names (a crash between link and commit, an abort, a prune)."""
        folder = blob_folder_of(self.database)
        if folder.is_symlink() or not folder.is_dir():
            return  # never sweep through a link planted in the home

        def sweep(connection: sqlite3.Connection) -> None:
            for orphan in orphan_blobs(connection):
                with contextlib.suppress(OSError):
                    orphan.unlink()

        with self._database_lock():
            if not self._closed.is_set():
                self._database.write(sweep, durable=False)

    # -- crash recovery ----------------------------------------------------------------

    def pending(self, *, include_live: bool = False) -> list[Entry]:
        """Pending entries, oldest first; by default only those whose writer process is gone."""
        rows = self._database.read(
            lambda connection: connection.execute(
                "SELECT seq, pid FROM entries WHERE status = 'pending' ORDER BY seq"
            ).fetchall()
        )
        return [self.entry(format_id(seq)) for seq, pid in rows if include_live or not process_alive(pid)]

    def resolve(self, entry_id: str, *, applied: bool) -> None:
        """Settle a pending entry after a crash: keep it (the files were written) or drop it."""
        if applied:
            self.commit(entry_id)
        else:
            self.abort(entry_id)

    def reconcile(
        self,
        current_fingerprint: Callable[[str], str | None],
        *,
        root: str | None = None,
        leftovers: Callable[[Sequence[str], int, str], object] | None = None,
    ) -> list[tuple[Entry, bool]]:
        """Settle the pending entries of writers that died, by looking at the files now.

        ``current_fingerprint(path)`` gives the fingerprint of the file at a recorded
        path (None: no such file). An entry whose files all still hold their "before"
        is dropped. Any other is kept as applied, recording what was actually written:
        a file that still holds its "before" is recorded as unchanged and the entry is
        marked partial, so undo reverts exactly the files the crashed writer replaced.
        ``root``: only entries recorded for that workspace root (their paths are
        relative to it). ``leftovers(paths, pid, token)`` removes the temporary files
        that writer made (their names carry its pid and token). Returns (entry, kept) pairs.
        """
        settled: list[tuple[Entry, bool]] = []
        for entry in self.pending():
            if root is not None and entry.root != root:
                continue
            written: list[str] = []  # per file: "done", "none", or "copied" (a move cut short)
            try:
                files = self.file_fingerprints(entry.id)
            except HistoryError:
                continue  # a damaged or forged entry names no file of this root: leave it alone
            for path, new_path, before, after in files:
                moved = new_path not in (None, path)
                if current_fingerprint(path) != before:
                    written.append("done")
                elif moved and after is not None and current_fingerprint(new_path) == after:  # type: ignore[arg-type]
                    written.append("copied")  # the moved copy was written, the old one not yet deleted
                else:
                    written.append("none")
            kept = any(state != "none" for state in written)
            if leftovers is not None:
                pid, token = self._writer(entry.id)
                if token:
                    names = [name for path, new_path, _, _ in files for name in (path, new_path) if name]
                    leftovers(names, pid, token)
            if kept and any(state != "done" for state in written):
                self._mark_partial(entry.id, written)
            self.resolve(entry.id, applied=kept)
            settled.append((entry, kept))
        return settled

    def _writer(self, entry_id: str) -> tuple[int, str | None]:
        def load(connection: sqlite3.Connection) -> tuple[int, str | None]:
            row = connection.execute(
                "SELECT pid, token FROM entries WHERE seq = ?", (self._resolve(connection, entry_id),)
            ).fetchone()
            return int(row[0]), row[1]

        return self._database.read(load)

    def _mark_partial(self, entry_id: str, written: Sequence[str]) -> None:
        """Record what a crashed writer really did: files it did not reach are unchanged by the
        entry; a move that wrote the new copy but kept the old file is an add of the new copy."""

        def mark(connection: sqlite3.Connection) -> None:
            seq = self._resolve(connection, entry_id)
            for position, state in enumerate(written):
                if state == "none":
                    connection.execute(
                        "UPDATE files SET after_version = before_version, after_mode = before_mode,"
                        " new_path = NULL, added = 0, removed = 0 WHERE entry = ? AND position = ?",
                        (seq, position),
                    )
                elif state == "copied":
                    connection.execute(
                        "UPDATE files SET path = new_path, new_path = NULL, before_version = NULL,"
                        " before_mode = NULL WHERE entry = ? AND position = ?",
                        (seq, position),
                    )
            connection.execute("UPDATE entries SET partial = 1 WHERE seq = ?", (seq,))

        self._database.write(mark)

    # -- reading -----------------------------------------------------------------------

    def _resolve(self, connection: sqlite3.Connection, entry_id: str) -> int:
        """Entry id, unique prefix of one (``e0000002``), or the counter without padding (``e2a``)."""
        text = entry_id.strip().lower()
        digits = text.removeprefix("e")
        if not digits or any(character not in "0123456789abcdef" for character in digits):
            raise HistoryError(f"{entry_id!r} is not a history entry id (ids look like e0000002a)")
        if len(digits) < 8:
            matches = [
                row[0]
                for row in connection.execute(
                    "SELECT seq FROM entries WHERE printf('%08x', seq) LIKE ? ORDER BY seq LIMIT 6",
                    (digits + "%",),
                )
            ]
            if len(matches) > 1:
                shown = ", ".join(format_id(seq) for seq in matches[:5])
                raise HistoryError(
                    f"history entry id {entry_id!r} is ambiguous ({shown}{', ...' if len(matches) > 5 else ''}); "
                    "give more characters"
                )
            if matches:
                return int(matches[0])
        if len(digits) > 15:
            raise HistoryError(
                f"no history entry {entry_id[:20]!r}...; ids are e and 8 hex digits (e0000002a)"
            )
        seq = int(digits, 16)
        if connection.execute("SELECT 1 FROM entries WHERE seq = ?", (seq,)).fetchone() is None:
            raise HistoryError(f"no history entry {entry_id!r}; list the history to see the entry ids")
        return seq

    def _entries(
        self, connection: sqlite3.Connection, where: str, parameters: Sequence[object], limit: int | None
    ) -> list[Entry]:
        # Two plain queries merged here: faster than a join for listing thousands of entries.
        chosen = f"SELECT seq FROM entries {where} ORDER BY seq DESC" + (
            " LIMIT ?" if limit is not None else ""
        )
        arguments = (*parameters, limit) if limit is not None else tuple(parameters)
        filtered = bool(where) or limit is not None
        rows = connection.execute(
            "SELECT seq, session, time, origin, execution_count, status, tiers, summary, undoes, root, partial, turn"
            " FROM entries" + (f" WHERE seq IN ({chosen})" if filtered else "") + " ORDER BY seq DESC",
            arguments,
        ).fetchall()
        files: dict[int, list[FileSummary]] = {}
        for seq, path, new_path, added, removed in connection.execute(
            f"SELECT entry, path, new_path, added, removed FROM files WHERE entry IN ({chosen}) ORDER BY entry, position"
            if filtered
            else "SELECT entry, path, new_path, added, removed FROM files ORDER BY entry, position",
            arguments,
        ):
            files.setdefault(seq, []).append(FileSummary(path, new_path, added, removed))
        parsed_tiers: dict[str, tuple[str, ...]] = {}
        result = []
        for seq, session, when, origin, count, status, tiers, summary, undoes, root, partial, turn in rows:
            if tiers not in parsed_tiers:
                import json

                parsed_tiers[tiers] = tuple(json.loads(tiers))
            result.append(
                Entry(format_id(seq), session, when, origin, count, status, tuple(files.get(seq, ())),
                      parsed_tiers[tiers], summary, undoes, root, bool(partial), turn)
            )  # fmt: skip
        return result

    def entries(
        self,
        *,
        session: str | None = None,
        path: str | None = None,
        limit: int | None = None,
        root: str | None = None,
    ) -> list[Entry]:
        """Entries, newest first; only one session's, and/or only those touching ``path`` (old or new name),
        and/or only those recorded in workspace ``root`` (or recorded before entries named their root)."""
        conditions: list[str] = []
        parameters: list[object] = []
        if root is not None:
            conditions.append("(root = ? OR root IS NULL)")
            parameters.append(root)
        if session is not None:
            conditions.append("session = ?")
            parameters.append(session)
        if path is not None:
            conditions.append("seq IN (SELECT entry FROM files WHERE path = ? OR new_path = ?)")
            parameters.extend((path, path))
        where = ("WHERE " + " AND ".join(conditions)) if conditions else ""
        return self._database.read(lambda connection: self._entries(connection, where, parameters, limit))

    def entry(self, entry_id: str) -> Entry:
        """One entry by id or unique id prefix; ``HistoryError`` when there is none."""

        def load(connection: sqlite3.Connection) -> Entry:
            return self._entries(connection, "WHERE seq = ?", (self._resolve(connection, entry_id),), None)[0]

        return self._database.read(load)

    def latest(self, session: str) -> Entry | None:
        """The newest applied entry of ``session``."""
        found = self._database.read(
            lambda connection: self._entries(
                connection, "WHERE session = ? AND status = 'applied'", (session,), 1
            )
        )
        return found[0] if found else None

    def undone_by(self, entry_id: str) -> list[Entry]:
        """Applied entries undoing ``entry_id``, newest first (a partial one was cut short by a crash)."""

        def load(connection: sqlite3.Connection) -> list[Entry]:
            target = format_id(self._resolve(connection, entry_id))
            return self._entries(connection, "WHERE undoes = ? AND status = 'applied'", (target,), None)

        return self._database.read(load)

    def file_fingerprints(self, entry_id: str) -> list[tuple[str, str | None, str | None, str | None]]:
        """(path, new_path, before fingerprint, after fingerprint) per file, without reading any bytes."""

        def load(connection: sqlite3.Connection) -> list[tuple[str, str | None, str | None, str | None]]:
            return connection.execute(
                "SELECT f.path, f.new_path, b.fingerprint, a.fingerprint FROM files AS f"
                " LEFT JOIN versions AS b ON b.id = f.before_version"
                " LEFT JOIN versions AS a ON a.id = f.after_version WHERE f.entry = ? ORDER BY f.position",
                (self._resolve(connection, entry_id),),
            ).fetchall()

        rows = self._database.read(load)
        for path, new_path, _, _ in rows:
            _checked(path, new_path)
        return rows

    def file_versions(
        self, entry_id: str, *, sides: tuple[str, ...] = ("before", "after")
    ) -> list[FileVersion]:
        """Full before/after bytes of every file of an entry, checked against their SHA-256.

        ``sides`` limits which contents are rebuilt (the other is None, with its
        fingerprint unset): a restore needs one side, and rebuilding a 10 MB
        version costs a decompression and a hash.
        """

        def load(connection: sqlite3.Connection) -> list[FileVersion]:
            result = []
            for path, new_path, before_id, after_id, before_mode, after_mode in connection.execute(
                "SELECT path, new_path, before_version, after_version, before_mode, after_mode FROM files"
                " WHERE entry = ? ORDER BY position",
                (self._resolve(connection, entry_id),),
            ).fetchall():
                _checked(path, new_path)  # before any byte of a forged entry is read or written
                before, before_fingerprint = (
                    verified_bytes(connection, before_id)
                    if before_id is not None and "before" in sides
                    else (None, None)
                )
                after, after_fingerprint = (
                    verified_bytes(connection, after_id)
                    if after_id is not None and "after" in sides
                    else (None, None)
                )
                result.append(
                    FileVersion(
                        path,
                        new_path,
                        before,
                        after,
                        before_fingerprint,
                        after_fingerprint,
                        before_mode,
                        after_mode,
                    )
                )
            return result

        return self._database.read(load)

    # -- retention ---------------------------------------------------------------------

    def stored_bytes(self) -> int:
        """Bytes of stored version data (the database file adds a little overhead)."""
        return int(self._database.read(lambda connection: connection.execute(_TOTAL_BYTES).fetchone()[0]))

    def prune(
        self, *, max_entries_per_file: int | None = None, max_total_bytes: int | None = None
    ) -> PruneResult:
        """Drop old applied entries and the versions only they used, without breaking a kept entry.

        ``max_entries_per_file``: an entry is kept while it is among the newest N
        entries of at least one of its files. ``max_total_bytes``: then the oldest
        entries go until the stored version data fits. A kept delta whose base goes
        away is first rebased onto its nearest kept ancestor, or stored whole.
        Pending entries are never pruned.
        """
        if max_entries_per_file is not None and max_entries_per_file < 0:
            raise HistoryError("max_entries_per_file must be 0 or more")

        def prune(connection: sqlite3.Connection) -> PruneResult:
            bytes_before = int(connection.execute(_TOTAL_BYTES).fetchone()[0])
            versions_before = int(connection.execute("SELECT COUNT(*) FROM versions").fetchone()[0])
            removed = 0
            if max_entries_per_file is not None:
                removed += self._delete_entries(
                    connection, _beyond_per_file_limit(connection, max_entries_per_file)
                )
            if max_total_bytes is not None:
                while int(connection.execute(_TOTAL_BYTES).fetchone()[0]) > max_total_bytes:
                    doomed = _oldest_to_fit(connection, max_total_bytes)
                    if not doomed:
                        break
                    removed += self._delete_entries(connection, doomed)
            versions_after = int(connection.execute("SELECT COUNT(*) FROM versions").fetchone()[0])
            bytes_after = int(connection.execute(_TOTAL_BYTES).fetchone()[0])
            return PruneResult(removed, versions_before - versions_after, bytes_before, bytes_after)

        result = self._database.write(prune)
        self._sweep()
        self._database.execute_outside_transaction("PRAGMA incremental_vacuum")
        self._database.checkpoint_if_large()
        return result

    @staticmethod
    def _delete_entries(connection: sqlite3.Connection, seqs: Sequence[int]) -> int:
        if not seqs:
            return 0
        connection.executemany("DELETE FROM entries WHERE seq = ?", [(seq,) for seq in seqs])
        rebase_orphans(connection)
        connection.execute(LIVE_VERSIONS + "DELETE FROM versions WHERE id NOT IN (SELECT id FROM live)")
        return len(seqs)

    def integrity_check(self) -> list[str]:
        """SQLite's ``PRAGMA integrity_check``: ``["ok"]`` when the database is sound."""
        return self._database.read(
            lambda connection: [row[0] for row in connection.execute("PRAGMA integrity_check")]
        )


def _checked(path: str, new_path: str | None) -> None:
    from nbedit.storage.confine import check_recorded_path

    check_recorded_path(path)
    if new_path is not None:
        check_recorded_path(new_path)


def blob_folder_of(database: Path) -> Path:
    return database.parent / "blobs"


def _beyond_per_file_limit(connection: sqlite3.Connection, limit: int) -> list[int]:
    kept: set[int] = set()
    every: set[int] = set()
    counts: dict[str, int] = {}
    for seq, path, new_path in connection.execute(
        "SELECT e.seq, f.path, f.new_path FROM entries AS e JOIN files AS f ON f.entry = e.seq"
        " WHERE e.status = 'applied' ORDER BY e.seq DESC"
    ):
        every.add(seq)
        for name in {path, new_path or path}:
            counts[name] = counts.get(name, 0) + 1
            if counts[name] <= limit:
                kept.add(seq)
    return sorted(every - kept)


def _oldest_to_fit(connection: sqlite3.Connection, limit: int) -> list[int]:
    """The oldest applied entries to drop so the data fits ``limit``, counting each version
    against the first entry that used it (an estimate: rebasing may add some back)."""
    excess = int(connection.execute(_TOTAL_BYTES).fetchone()[0]) - limit
    first_use: dict[int, int] = {}
    for seq, version in connection.execute(
        "SELECT entry, before_version FROM files WHERE before_version IS NOT NULL"
        " UNION ALL SELECT entry, after_version FROM files WHERE after_version IS NOT NULL ORDER BY 1"
    ):
        first_use.setdefault(version, seq)
    sizes = dict(connection.execute("SELECT id, LENGTH(data) FROM versions").fetchall())
    owned: dict[int, int] = {}
    for version, seq in first_use.items():
        owned[seq] = owned.get(seq, 0) + int(sizes.get(version, 0))
    doomed: list[int] = []
    for (seq,) in connection.execute("SELECT seq FROM entries WHERE status = 'applied' ORDER BY seq"):
        doomed.append(int(seq))
        excess -= owned.get(seq, 0)
        if excess <= 0:
            break
    return doomed


def _tiers_json(tiers: tuple[str, ...]) -> str:
    """``json.dumps(list(tiers))`` without importing json on every write (start-up): the tier
    names are plain words; anything else goes through json itself."""
    if all(tier.isascii() and tier.replace("-", "").replace("_", "").isalnum() for tier in tiers):
        return "[" + ", ".join(f'"{tier}"' for tier in tiers) + "]"
    import json

    return json.dumps(list(tiers))
