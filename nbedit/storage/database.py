"""The SQLite connection behind the history: setup, transactions, retries, errors.

Several kernels and CLI runs share one history database, so every connection uses
WAL mode (readers never block the writer), a ``busy_timeout``, and ``BEGIN
IMMEDIATE`` for writes (taking the write lock up front avoids the deadlock where
two readers both try to upgrade); anything still reported as "database is locked"
is retried with back-off until the timeout. ``synchronous = FULL`` makes a
committed entry survive a power cut, which the crash-recovery story relies on.
Writes whose loss a crash recovery repairs anyway (marking an entry applied once its
files are written, forgetting an aborted one) pass ``durable=False``: they commit
without an fsync of their own and become durable with the next durable write or
checkpoint (WAL mode keeps the database consistent either way), so an apply costs
one log fsync instead of two.

The write-ahead log is kept small however the store is used: a long-lived kernel
never closes its connection, so SQLite's own clean-up at close never runs there, and
a WAL that held a big keyframe stays on disk at that size until the next reset. After
a finished change (``checkpoint_if_large``, called once the files are written, never
between the pending entry and the replace) a WAL over ``WAL_LIMIT`` is checkpointed and
truncated; ``journal_size_limit`` and a lower ``wal_autocheckpoint`` bound it between.

SQLite errors never escape: damage (not a database, malformed image) becomes
``DamagedHistory``, which the caller can repair with ``move_aside``; anything else
becomes ``HistoryError`` with the database path in the message.

A connection opened before ``os.fork`` is not used in the child: the child opens
its own (SQLite forbids sharing a connection across fork).

Opening is cheap on purpose, since a CLI run opens the store once per call: settings
that write the database header (``auto_vacuum``) are given only to a new database,
and a new database is built whole under a temporary name without fsyncs, flushed
once and linked into place (``os.link`` never replaces a database another process
created meanwhile), instead of paying a synced header write for each setting. The
folder of linked keyframes is made with it, so one fsync of the home covers both.
A database that cannot be built (a full disk) is an error, and the connection never
creates one itself (``mode=rw``): a store is whole or absent, never an empty file that
a later run would take for a history whose entries were lost. The home it lives in is
private and checked first (``home.py``).
"""

from __future__ import annotations

import _thread  # not threading (start-up: ~1 ms; nor contextlib, ~0.8 ms)
import os
import time
from _weakref import ref as _weak  # weakref.ref, without weakref.py or _weakrefset (start-up)

from nbedit.errors import HistoryError
from nbedit.storage.sqlite import sqlite3

__all__ = ["SCHEMA_VERSION", "DamagedHistory", "Database", "move_aside"]

SCHEMA_VERSION = 3
WAL_LIMIT = 256 << 10  # bytes of write-ahead log left behind after a change, at most
_SQLITE_CORRUPT = 11  # result codes; sqlite3 names them only from Python 3.11
_SQLITE_NOTADB = 26
# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import TypeVar

    _T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    base INTEGER REFERENCES versions(id),
    prefix INTEGER NOT NULL DEFAULT 0,
    suffix INTEGER NOT NULL DEFAULT 0,
    depth INTEGER NOT NULL DEFAULT 0,
    chain_bytes INTEGER NOT NULL DEFAULT 0,
    regions INTEGER NOT NULL DEFAULT 0,
    compressed INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS versions_base ON versions(base);
CREATE INDEX IF NOT EXISTS versions_linked ON versions(id) WHERE compressed = 3;
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    time REAL NOT NULL,
    origin TEXT NOT NULL,
    execution_count INTEGER,
    status TEXT NOT NULL CHECK (status IN ('pending', 'applied')),
    tiers TEXT NOT NULL,
    summary TEXT NOT NULL,
    undoes TEXT,
    root TEXT,
    pid INTEGER NOT NULL,
    token TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    turn TEXT
);
CREATE INDEX IF NOT EXISTS entries_session ON entries(session, seq);
CREATE TABLE IF NOT EXISTS files (
    entry INTEGER NOT NULL REFERENCES entries(seq) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    path TEXT NOT NULL,
    new_path TEXT,
    added INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    before_version INTEGER REFERENCES versions(id),
    after_version INTEGER REFERENCES versions(id),
    before_mode INTEGER,
    after_mode INTEGER,
    PRIMARY KEY (entry, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS files_path ON files(path);
CREATE INDEX IF NOT EXISTS files_new_path ON files(new_path);
CREATE INDEX IF NOT EXISTS files_before ON files(before_version);
CREATE INDEX IF NOT EXISTS files_after ON files(after_version);
"""

# Schema 1 -> 2: file modes are part of a version; the temp-file token and a partial flag for recovery.
_UPGRADE_FROM_1 = (
    "ALTER TABLE entries ADD COLUMN token TEXT",
    "ALTER TABLE entries ADD COLUMN partial INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE files ADD COLUMN before_mode INTEGER",
    "ALTER TABLE files ADD COLUMN after_mode INTEGER",
)
# Schema 2 -> 3: region deltas (a table of replaced byte spans); packing 3 (a keyframe hard-linked
# into the blob folder) needs no column. A schema-2 nbedit refuses a schema-3 store by its version.
_UPGRADE_FROM_2 = (
    "ALTER TABLE versions ADD COLUMN regions INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX IF NOT EXISTS versions_linked ON versions(id) WHERE compressed = 3",
)
# Added without a schema version: a nullable column an older nbedit neither reads nor writes
# (it names its columns), so both can keep sharing one home.
_ADDED_COLUMNS = (("entries", "turn", "TEXT"),)
SEQUENCE_FLOOR_NAME = "history.sqlite3.last-id"


def _existing_only(path: str | os.PathLike[str]) -> str:
    """A URI opening ``path`` read-write without creating it (SQLite would make a 0-byte file)."""
    text = os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{text}?mode=rw"


class DamagedHistory(HistoryError):
    """The history database is not a readable SQLite database (``HistoryStore.open_or_recreate`` fixes it)."""

    def __init__(self, message: str, *, database: str | os.PathLike[str]) -> None:
        from pathlib import Path  # a damaged history only (the field stays a Path)

        super().__init__(message)
        self.database = Path(database)


def _is_busy(error: sqlite3.Error) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _is_damage(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    return type(error) is sqlite3.DatabaseError


def _beside(database: str | os.PathLike[str], name: str) -> str:
    """The path of ``name`` in the database's folder (``database.parent / name``)."""
    return os.path.join(os.path.dirname(os.fspath(database)), name)


def read_sequence_floor(database: str | os.PathLike[str]) -> int:
    from nbedit.storage.home import read_private

    try:
        return int(read_private(_beside(database, SEQUENCE_FLOOR_NAME)).decode("ascii").strip() or 0)
    except (OSError, ValueError):
        return 0


def raise_sequence_floor(database: str | os.PathLike[str], seq: int) -> None:
    """Remember that ids up to ``seq`` were (or may have been) handed out."""
    floor = _beside(database, SEQUENCE_FLOOR_NAME)
    if seq <= read_sequence_floor(database):
        return
    from nbedit.storage.home import write_private

    write_private(floor, f"{seq}\n".encode("ascii"))  # exclusive, unpredictable temp name, then renamed


def last_sequence(database: str | os.PathLike[str]) -> int:
    """The highest entry counter a (possibly damaged) database handed out, as far as it can be read.

    Read with its write-ahead log (the latest entries may be only there: a program run leaves the
    log for the next one, a kernel keeps it open), and without it (``immutable``: a damaged log or
    index must not stop the reading of the file). When nothing can be read, or the log holds
    something that could not be read, the current time in seconds is used: counters grow by one
    per entry, so a damaged history that was not read is assumed to have handed out fewer ids than
    seconds have passed since 1970.
    """
    try:
        log = os.stat(f"{database}-wal").st_size > 0
    except OSError:
        log = False
    # with its log only where the log and its index are there already: a read-only connection
    # would make them otherwise, beside a database that is about to be set aside
    readings = [("mode=ro&immutable=1", False)]
    if log and os.path.exists(f"{database}-shm"):
        readings.insert(0, ("mode=ro", True))
    found: list[int] = []
    log_read = False
    for options, with_log in readings:
        try:
            connection = sqlite3.connect(f"file:{database}?{options}", uri=True)
            try:
                row = connection.execute("SELECT MAX(seq) FROM sqlite_sequence").fetchone()
                found.append(int(row[0] or 0))
                log_read = log_read or with_log
            finally:
                connection.close()
        except (sqlite3.Error, ValueError, TypeError):
            continue
    if not found or (log and not log_read):
        return max([*found, int(time.time())])
    return max(found)


def move_aside(database: str | os.PathLike[str]) -> Path:
    """Rename a damaged database (its WAL files and linked copies too) to ``<name>.corrupt-<time>-<pid>``.

    The highest id it may have handed out is remembered first, so the new database
    never reuses an id of the old one.
    """
    import contextlib  # a damaged history only
    from pathlib import Path

    database = Path(database)
    with contextlib.suppress(OSError):
        raise_sequence_floor(
            database, last_sequence(database) if database.stat().st_size else int(time.time())
        )
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = database.with_name(f"{database.name}.corrupt-{stamp}-{os.getpid()}")
    try:
        os.replace(database, target)
        # A write-ahead log belongs to the database it was written for; a new database must never read it.
        for suffix in ("-wal", "-shm"):
            companion = database.with_name(database.name + suffix)
            if companion.exists():
                os.replace(companion, target.with_name(target.name + suffix))
        # So do its linked copies: a new database names none of them and would sweep them away.
        blobs = database.with_name("blobs")
        if blobs.is_dir() and any(blobs.iterdir()):  # an empty one holds nothing of the old database
            os.replace(blobs, target.with_name(target.name + "-blobs"))
    except OSError as error:
        raise HistoryError(
            f"the history database {database} is damaged and could not be moved aside ({error}); "
            "move or delete it by hand"
        ) from None
    return target


_OPEN: dict[int, Callable[[], Database | None]] = {}  # every live Database, weakly, by id
_LEFT_OPEN: list[sqlite3.Connection] = []  # Database.close(keep_log=True): kept until the process ends


_HELD_AT_FORK: list[Database] = []
_FORK_WAIT = 5.0  # seconds a fork waits for another thread's history operation to finish


def _before_fork() -> None:
    # No thread may be inside SQLite when the process forks: SQLite's own mutexes (its allocator's
    # among them) held by a thread the child does not have stay held there forever, and the child's
    # first SQLite call (even freeing an inherited connection) hangs. Every nbedit use of SQLite runs
    # under its database's lock, so holding each lock across the fork waits for those operations to
    # end (a bounded wait: a lock not had in time is left, as before).
    held = []
    for database in [found for weak in list(_OPEN.values()) if (found := weak()) is not None]:
        if database._lock.acquire(timeout=_FORK_WAIT):
            held.append(database)
    _HELD_AT_FORK[:] = held


def _after_fork_in_parent() -> None:
    held, _HELD_AT_FORK[:] = list(_HELD_AT_FORK), []
    for database in held:
        database._lock.release()


def _after_fork_in_child() -> None:
    # A lock held by another thread (a background compaction) at the fork would stay held
    # forever in the child, where that thread does not exist: give the child fresh ones.
    _HELD_AT_FORK.clear()
    for database in [found for weak in list(_OPEN.values()) if (found := weak()) is not None]:
        database._lock = _thread.RLock()  # what threading.RLock is


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child
    )


def _end_quietly(connection: sqlite3.Connection, statement: str) -> None:
    """End an open transaction by ``statement``; an error of its own must not hide the one raised."""
    if connection.in_transaction:
        try:  # noqa: SIM105 - not contextlib (start-up)
            connection.execute(statement)
        except sqlite3.Error:
            pass


class Database:
    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float) -> None:
        self.path = os.fspath(path)  # a string: no pathlib on a write's way (start-up time)
        self.busy_timeout = busy_timeout
        self._lock = _thread.RLock()  # what threading.RLock is
        self._connection: sqlite3.Connection | None = None
        self._connection_pid = -1
        self._inherited: list[sqlite3.Connection] = []  # kept alive, never closed, after a fork
        key = id(self)  # dropped when the object goes (not a later object given the same id)
        _OPEN[key] = _weak(self, lambda gone: _OPEN.pop(key, None) if _OPEN.get(key) is gone else None)
        self.connect()

    def connect(self) -> sqlite3.Connection:
        with self._lock:
            if self._connection is not None:
                if self._connection_pid == os.getpid():
                    return self._connection
                self._inherited.append(self._connection)
                self._connection = None
            from nbedit.storage.home import prepare_home

            # private (0700, owned by this user, no planted links; a wider one is narrowed, which
            # `nbedit doctor` reports): raises HistoryError otherwise
            prepare_home(*os.path.split(self.path))
            if not os.path.exists(self.path):
                try:
                    self._create()
                except (OSError, sqlite3.Error) as error:
                    # never let SQLite make an empty file in its place: a store is whole or absent
                    raise HistoryError(
                        f"cannot create the history database {self.path}: {error}; nothing was written "
                        "(free some space or fix the folder, or work without a history: --no-history / "
                        "history=False)"
                    ) from None
            try:
                connection = sqlite3.connect(
                    _existing_only(self.path),
                    uri=True,
                    timeout=self.busy_timeout,
                    isolation_level=None,
                    check_same_thread=False,
                )
            except sqlite3.Error as error:
                raise self.translate(error) from None
            try:
                self.retry(lambda: self._prepare(connection))
            except BaseException:
                connection.close()
                raise
            self._connection = connection
            self._connection_pid = os.getpid()
            return connection

    def _create(self) -> None:
        """Build a new, empty database under a temporary name and link it into place."""
        from nbedit.storage.home import create_private

        # made here, 0600, exclusively and without following a link, under an unpredictable
        # name: SQLite opens it as an empty database and gives its log the same mode
        folder, base = os.path.split(self.path)
        descriptor, name = create_private(folder, f".{base}.{os.getpid()}-", ".new")
        os.close(descriptor)
        temporary = os.path.join(folder, name)
        try:
            connection = sqlite3.connect(temporary, isolation_level=None)
            try:
                connection.execute("PRAGMA synchronous = OFF")  # one fsync of the whole file below
                connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                self._seed_sequence(connection)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                connection.execute("COMMIT")
            finally:
                connection.close()  # the last connection checkpoints the log into the file and removes it
            descriptor = os.open(temporary, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            try:  # noqa: SIM105 - not contextlib (start-up)
                os.link(temporary, self.path)
            except FileExistsError:  # another process made one first: use that
                pass
            # the folder of linked keyframes (blobs.py) too: the first entry of a new home links
            # one, and the home's fsync below then makes both durable, not one fsync each
            try:  # noqa: SIM105 - not contextlib (start-up)
                os.mkdir(os.path.join(folder, "blobs"), 0o700)
            except OSError:
                pass
            from nbedit.storage.blobs import fsync_folder

            fsync_folder(folder)
        finally:
            for name in (temporary, f"{temporary}-wal", f"{temporary}-shm"):
                try:  # noqa: SIM105 - not contextlib (start-up)
                    os.unlink(name)
                except OSError:
                    pass

    def _prepare(self, connection: sqlite3.Connection) -> None:
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                # Takes effect on a new database only, and writes the header each time it is given.
                connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")
            connection.execute("PRAGMA foreign_keys = ON")
            connection.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT}")
            connection.execute("PRAGMA wal_autocheckpoint = 64")  # pages: about WAL_LIMIT
            if version > SCHEMA_VERSION:
                raise HistoryError(
                    f"the history database {self.path} was written by a newer nbedit (schema {version}); "
                    "upgrade nbedit, or set NBEDIT_HOME to another directory"
                )
            if version < SCHEMA_VERSION:
                connection.execute("BEGIN IMMEDIATE")
                version = connection.execute("PRAGMA user_version").fetchone()[
                    0
                ]  # another writer may have won
                if version in (1, 2):
                    for statement in (_UPGRADE_FROM_1 if version == 1 else ()) + _UPGRADE_FROM_2:
                        connection.execute(statement)
                elif version == 0:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            connection.execute(statement)
                    self._seed_sequence(connection)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                connection.execute("COMMIT")
            self._add_columns(connection)
        except sqlite3.Error:
            _end_quietly(connection, "ROLLBACK")
            raise

    @staticmethod
    def _add_columns(connection: sqlite3.Connection) -> None:
        """Add the nullable columns a database made by an older nbedit lacks (``_ADDED_COLUMNS``)."""

        def missing() -> list[tuple[str, str, str]]:
            found = {row[1] for row in connection.execute("PRAGMA table_info(entries)")}
            return [column for column in _ADDED_COLUMNS if column[1] not in found]

        if not missing():
            return
        connection.execute("BEGIN IMMEDIATE")
        for table, name, kind in missing():  # another writer may have added them meanwhile
            connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
        connection.execute("COMMIT")

    def _seed_sequence(self, connection: sqlite3.Connection) -> None:
        """A new database continues the entry counter of the ones before it: ids are never reused.

        The floor is kept next to the database (written whenever a database is set
        aside or found empty); a fresh home has none and starts at 1.
        """
        floor = read_sequence_floor(self.path)
        if floor > 0:
            connection.execute("DELETE FROM sqlite_sequence WHERE name = 'entries'")
            connection.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('entries', ?)", (floor,))

    def close(self, *, keep_log: bool = False) -> None:
        """Close the connection; the last one to close folds the write-ahead log into the file.

        ``keep_log``, only for a process about to end (``os._exit``): the connection is let go
        without being closed, so the log stays for the next connection instead of being folded
        in and deleted. Folding costs the ending process two syncs (log, database) and the next
        process a new log (its header synced); what it leaves is what a killed process leaves,
        which SQLite's open reads as usual: every committed entry is in the log, synced when it
        was committed (``durable`` writes), and the log stays bounded (``wal_autocheckpoint``,
        ``checkpoint_if_large``). The connection is kept referenced until the process ends
        (collecting it would close it).
        """
        with self._lock:
            if self._connection is not None and self._connection_pid == os.getpid():
                if keep_log:
                    _LEFT_OPEN.append(self._connection)
                else:
                    self._connection.close()
            self._connection = None

    def translate(self, error: sqlite3.Error) -> HistoryError:
        if _is_damage(error):
            return DamagedHistory(
                f"the history database {self.path} is damaged: {error}; run `nbedit doctor --repair` "
                "(Python: nbedit.storage.HistoryStore.open_or_recreate(home)) to set it aside and start a "
                "new history, or work without one meanwhile (--no-history / history=False)",
                database=self.path,
            )
        if _is_busy(error):
            return HistoryError(
                f"the history database {self.path} stayed locked by another process for "
                f"{self.busy_timeout:.0f} s ({error}); retry"
            )
        return HistoryError(f"the history database {self.path} failed: {error}")

    def retry(self, operation: Callable[[], _T]) -> _T:
        deadline = time.monotonic() + self.busy_timeout
        delay = 0.005
        while True:
            try:
                return operation()
            except sqlite3.Error as error:
                if _is_busy(error) and not _is_damage(error) and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.2)
                    continue
                raise self.translate(error) from None

    def write(self, operation: Callable[[sqlite3.Connection], _T], *, durable: bool = True) -> _T:
        """Run ``operation`` in one write transaction, retried as a whole while the database is locked.

        ``durable=False``: commit without waiting for the disk (see the module docstring).
        """

        def attempt() -> _T:
            connection = self.connect()
            if not durable:
                connection.execute("PRAGMA synchronous = NORMAL")
            try:
                connection.execute("BEGIN IMMEDIATE")
                try:
                    result = operation(connection)
                    connection.execute("COMMIT")
                except BaseException:
                    _end_quietly(connection, "ROLLBACK")
                    raise
            finally:
                if not durable:
                    connection.execute("PRAGMA synchronous = FULL")
            return result

        with self._lock:
            return self.retry(attempt)

    def read(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``operation`` on one consistent snapshot."""

        def attempt() -> _T:
            connection = self.connect()
            connection.execute("BEGIN")
            try:
                return operation(connection)
            finally:
                _end_quietly(connection, "COMMIT")

        with self._lock:
            return self.retry(attempt)

    def checkpoint_if_large(self) -> None:
        """Copy a write-ahead log over ``WAL_LIMIT`` into the database and truncate it.

        Best effort: a reader holding an old snapshot makes the checkpoint stop short
        (it is then retried after the next change), and nothing here can fail a change.
        """
        try:
            size = os.stat(f"{self.path}-wal").st_size
        except OSError:
            return
        if size <= WAL_LIMIT:
            return
        with self._lock:
            try:
                connection = self.connect()
                connection.execute("PRAGMA busy_timeout = 0")
                try:
                    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
                finally:
                    connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            except (sqlite3.Error, HistoryError):
                pass

    def execute_outside_transaction(self, statement: str) -> None:
        with self._lock:
            self.retry(lambda: self.connect().execute(statement).fetchall())


def format_id(seq: int) -> str:
    """Entry ids: ``e`` and eight hex digits of a counter that is never reused; they sort by age."""
    return f"e{seq:08x}"


def blob_folder_of(database: str | os.PathLike[str]) -> str:
    """The folder of linked copies beside the database (``storage.blobs``)."""
    return _beside(database, "blobs")
