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

The store is one class put together from one mixin per stage: ``history_record`` (begin,
commit, abort), ``history_read`` (entries and versions), ``history_recovery`` (pending entries
of dead writers) and ``history_upkeep`` (retention); this module opens the store and packs its
linked copies (on the store's own background thread).
"""

from __future__ import annotations

import os
import time

from nbedit import _hashing as hashlib  # sha256 without loading OpenSSL for small data
from nbedit._path_text import expanduser, normal
from nbedit.background import Background
from nbedit.errors import HistoryError
from nbedit.storage.database import (
    DamagedHistory,
    Database,
    blob_folder_of,
    format_id,
    move_aside,
    read_sequence_floor,
)
from nbedit.storage.history_read import HistoryReading
from nbedit.storage.history_record import HistoryRecording
from nbedit.storage.history_recovery import HistoryRecovery
from nbedit.storage.history_state import Closing
from nbedit.storage.history_upkeep import HistoryRetention
from nbedit.storage.records import (
    DATABASE_NAME,
    EntryDraft,
    FileRecord,
    default_home,
)
from nbedit.storage.sqlite import sqlite3
from nbedit.storage.versions import (
    LINKED,
    LOST,
    linked_versions,
    orphan_blobs,
    pack,
    pack_linked,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import threading
    from collections.abc import Sequence
    from pathlib import Path

    from nbedit.storage.entries import Entry, FileSummary, FileVersion, PruneResult

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



def __getattr__(name: str) -> object:
    # made when first read (``storage.entries``: start-up)
    if name in ("Entry", "FileSummary", "FileVersion", "PruneResult"):
        from nbedit.storage import entries

        return getattr(entries, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


LINKED_BUDGET = 128 << 20  # bytes of linked copies a store lets wait for compaction
LINKED_ENTRIES = 16  # a linked copy is packed by the first begin this many entries after it
IDLE_SECONDS = 2.0  # a process that recorded nothing for this long packs its links in the background


class HistoryStore(HistoryRecording, HistoryReading, HistoryRecovery, HistoryRetention):
    """Entries and file versions under ``home``; safe to share between threads and processes."""

    def __init__(self, home: Path | str, *, busy_timeout: float = 30.0) -> None:
        # strings inside (no pathlib on a command's way); ``home`` and ``database`` are Paths
        self._home_text = _home_text(home)
        self._database_path = os.path.join(self._home_text, DATABASE_NAME)
        self.notice: str | None = None  # set by open_or_recreate when it moved a damaged database aside
        self._database = Database(self._database_path, busy_timeout=busy_timeout)
        # the last version recorded per path by this process: a delta base for the next
        # record of that path without rebuilding it from the database (id, bytes)
        self._recent: dict[str, tuple[int, str, bytes]] = {}
        self._floor = read_sequence_floor(self._database_path)
        self._compactor: Background | None = None
        self._closed = Closing()  # not a threading.Event: no threading on a command's way (start-up)
        self._linked = False  # this process linked a copy since its last compaction
        self._last_activity = 0.0

    @classmethod
    def open_or_recreate(cls, home: Path | str, *, busy_timeout: float = 30.0) -> HistoryStore:
        """Open the store; if the database is damaged, move it aside and start an empty one.

        The returned store's ``notice`` then says what happened; show it to the user.
        """
        database = os.path.join(_home_text(home), DATABASE_NAME)
        emptied = (
            os.path.isfile(database) and os.stat(database).st_size == 0 and read_sequence_floor(database) > 0
        )
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

    @property
    def home(self) -> Path:
        """The folder of the history (user folder expanded)."""
        from pathlib import Path

        return Path(self._home_text)

    @property
    def database(self) -> Path:
        """The history database file in ``home``."""
        from pathlib import Path

        return Path(self._database_path)

    def close(self, *, keep_log: bool = False) -> None:
        """Close the connection; a background compaction stops at its next step (its work is kept).

        ``keep_log``: only in a process that ends right after (``Database.close``).
        """
        self._closed.set()
        with self._database_lock():
            self._database.close(keep_log=keep_log)

    def _database_lock(self) -> threading.RLock:
        return self._database._lock  # noqa: SLF001 - one lock guards the connection and close

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- linked copies (see also HistoryRecording.seal_linked) ---------------------------

    def linked_bytes(self) -> int:
        """Bytes of linked copies waiting to be packed into the database."""
        return sum(size for _, _, size in self._database.read(linked_versions))

    def compact(self, *, keep_bytes: int = 0, stop: threading.Event | Closing | None = None) -> int:
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
        if self._compactor is not None and self._compactor.running():
            return
        # a daemon, started without waiting for the scheduler (``nbedit.background``): this runs at
        # the end of every apply that linked a file
        self._compactor = Background(self._compact_when_idle, "nbedit-history-compact", daemon=True)

    def _compact_when_idle(self) -> None:
        while not self._closed.is_set():
            wait = self._last_activity + IDLE_SECONDS - time.monotonic()
            if wait <= 0:
                break
            self._closed.wait(wait)
        if self._closed.is_set():
            return
        self._linked = False
        try:  # noqa: SIM105 - not contextlib (start-up)
            self.compact(stop=self._closed)  # close() stops it between two copies
        except (HistoryError, OSError, sqlite3.Error):
            pass

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

    def _pack_linked(self, versions: Sequence[int] | set[int], stop: threading.Event | Closing | None) -> int:
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
            blob = os.path.join(blob_folder_of(self._database_path), str(version))
            try:
                with open(blob, "rb") as handle:
                    data = handle.read()
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
            try:  # noqa: SIM105 - not contextlib (start-up)
                os.unlink(blob)
            except OSError:
                pass
        return packed_count

    def _sweep(self) -> None:
        """Remove links no version names (a crash between link and commit, an abort, a prune)."""
        folder = blob_folder_of(self._database_path)
        if os.path.islink(folder) or not os.path.isdir(folder):
            return  # never sweep through a link planted in the home

        def sweep(connection: sqlite3.Connection) -> None:
            for orphan in orphan_blobs(connection):
                try:  # noqa: SIM105 - not contextlib (start-up)
                    os.unlink(orphan)
                except OSError:
                    pass

        with self._database_lock():
            if not self._closed.is_set():
                self._database.write(sweep, durable=False)


def _home_text(home: Path | str) -> str:
    """``str(Path(home).expanduser())`` without ``pathlib`` (``nbedit._path_text``)."""
    return expanduser(normal(home))
