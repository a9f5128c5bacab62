"""Reading the history: entries, one entry, the latest, and the bytes of its file versions.

What listing, ``show``, undo, restore and rewind read; every path read back is checked again
(``storage.confine.check_recorded_path``) before a caller may write to it.
"""

from __future__ import annotations

from nbedit.errors import HistoryError
from nbedit.storage.database import (
    format_id,
)
from nbedit.storage.history_state import HistoryState
from nbedit.storage.sqlite import sqlite3
from nbedit.storage.versions import (
    verified_bytes,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from nbedit.storage.entries import Entry, FileSummary, FileVersion

__all__ = ["HistoryReading"]


class HistoryReading(HistoryState):
    """``HistoryStore``'s read side (a mixin)."""

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
        # One query gives each entry with its first file (nearly every entry has one file: the
        # join costs a key lookup per row, less than fetching and grouping a second list); the
        # few files after the first come from a second query. Each row becomes its tuples
        # directly (``tuple.__new__``): listing 10,000 entries builds 20,000 small tuples and
        # nothing else per row.
        chosen = f"SELECT seq FROM entries {where} ORDER BY seq DESC" + (
            " LIMIT ?" if limit is not None else ""
        )
        arguments = (*parameters, limit) if limit is not None else tuple(parameters)
        filtered = bool(where) or limit is not None
        rows = connection.execute(
            "SELECT e.seq, e.session, e.time, e.origin, e.execution_count, e.status, e.tiers, e.summary,"
            " e.undoes, e.root, e.partial, e.turn, f.path, f.new_path, f.added, f.removed FROM entries AS e"
            " LEFT JOIN files AS f ON f.entry = e.seq AND f.position = 0"
            + (f" WHERE e.seq IN ({chosen})" if filtered else "")
            + " ORDER BY e.seq DESC",
            arguments,
        ).fetchall()
        from nbedit.storage.entries import Entry, FileSummary  # made when first listed (start-up)

        make = tuple.__new__
        more: dict[int, list[FileSummary]] = {}
        for seq, path, new_path, added, removed in connection.execute(
            "SELECT entry, path, new_path, added, removed FROM files WHERE position > 0"
            + (f" AND entry IN ({chosen})" if filtered else "")
            + " ORDER BY entry, position",
            arguments,
        ):
            more.setdefault(seq, []).append(make(FileSummary, (path, new_path, added, removed)))
        parsed_tiers: dict[str, tuple[str, ...]] = {}
        result = []
        append = result.append
        for (seq, session, when, origin, count, status, tiers, summary, undoes, root, partial, turn,
             path, new_path, added, removed) in rows:  # fmt: skip
            parsed = parsed_tiers.get(tiers)
            if parsed is None:
                import json

                parsed = parsed_tiers[tiers] = tuple(json.loads(tiers))
            if path is None:
                files: tuple[FileSummary, ...] = tuple(more.get(seq, ()))
            else:
                files = (make(FileSummary, (path, new_path, added, removed)),)
                if seq in more:
                    files = (*files, *more[seq])
            # f"e{seq:08x}" is format_id(seq), written out: a call per row is a tenth of the listing
            append(make(Entry, (f"e{seq:08x}", session, when, origin, count, status, files, parsed, summary,
                                undoes, root, partial == 1, turn)))  # fmt: skip
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

    def applied_since(self, entry_id: str, path: str) -> list[str]:
        """Ids of the applied entries newer than ``entry_id`` that touched ``path`` (as their old or
        new name), oldest first: one indexed query, however long the history of ``path`` is."""

        def load(connection: sqlite3.Connection) -> list[str]:
            seq = self._resolve(connection, entry_id)
            return [
                format_id(row[0])
                for row in connection.execute(
                    "SELECT seq FROM entries WHERE seq > ? AND status = 'applied'"
                    " AND seq IN (SELECT entry FROM files WHERE path = ? OR new_path = ?) ORDER BY seq",
                    (seq, path, path),
                )
            ]

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

        from nbedit.storage.entries import FileVersion  # made when first read (start-up)

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


def _checked(path: str, new_path: str | None) -> None:
    from nbedit.storage.confine import check_recorded_path

    check_recorded_path(path)
    if new_path is not None:
        check_recorded_path(new_path)
