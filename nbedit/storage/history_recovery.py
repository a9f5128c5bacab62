"""Crash recovery: settling the entries a writer left pending when it died.

A crash between ``begin`` and ``commit`` leaves a pending entry whose writer process is gone;
``reconcile`` compares the files on disk with the entry's fingerprints and keeps or drops it,
and marks an entry whose write stopped half-way as partial. Rarely run, so in its own room.
"""

from __future__ import annotations

from nbedit.errors import HistoryError
from nbedit.storage.database import (
    format_id,
)
from nbedit.storage.history_state import HistoryState
from nbedit.storage.sqlite import sqlite3
from nbedit.storage.temp_names import process_alive

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from nbedit.storage.entries import Entry

__all__ = ["HistoryRecovery"]


class HistoryRecovery(HistoryState):
    """``HistoryStore``'s crash recovery (a mixin)."""

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
