"""Retention: pruning the history to the caps a workspace sets, and checking its integrity.

Entries beyond ``max_entries_per_file`` per file, or the oldest beyond ``max_total_bytes``,
are deleted with the versions only they used. (Packing linked copies, the other upkeep, stays
with the store in ``storage.history``: it runs on the store's own background thread.)
"""

from __future__ import annotations

from nbedit.errors import HistoryError
from nbedit.storage.history_state import HistoryState
from nbedit.storage.sqlite import sqlite3
from nbedit.storage.versions import (
    LIVE_VERSIONS,
    rebase_orphans,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from nbedit.storage.entries import PruneResult

__all__ = ["HistoryRetention"]

_TOTAL_BYTES = "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM versions"


class HistoryRetention(HistoryState):
    """``HistoryStore``'s retention and integrity check (a mixin)."""

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
        from nbedit.storage.entries import PruneResult  # made when first used (start-up)

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
