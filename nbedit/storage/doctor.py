"""Check, repair or set aside the history store: what ``nbedit doctor`` runs.

Damage found after a store was opened (a disk error, a file truncated by another
tool) makes every apply and undo fail with ``DamagedHistory``; the person at a
terminal needs one command that says what is wrong and fixes it, not a Python
call. Checking never changes anything. Repairing moves a damaged database (and its
write-ahead log) aside, so nothing is deleted, and starts a new one that continues
the entry counter (ids are never reused, see ``database.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

from nbedit._dataclass import dataclass
from nbedit.errors import HistoryError
from nbedit.storage.database import DamagedHistory, move_aside

__all__ = ["Checkup", "check", "repair"]


@dataclass(frozen=True, slots=True)
class Checkup:
    """What was found; ``healthy`` is False when the store needs a repair."""

    home: Path
    healthy: bool
    findings: tuple[str, ...]


def _database(home: Path) -> Path:
    from nbedit.storage.history import DATABASE_NAME

    return Path(home) / DATABASE_NAME


def check(home: Path) -> Checkup:
    """Look at the store under ``home`` without changing it."""
    from nbedit.storage.history import HistoryStore

    home = Path(home).expanduser()
    database = _database(home)
    findings: list[str] = [f"history home: {home}"]
    if not database.exists():
        findings.append("no history database yet (it is created by the first recorded edit)")
        return Checkup(home, True, tuple(findings))
    size = database.stat().st_size
    if size == 0:
        findings.append(f"{database} is empty (0 bytes): its entries are lost; repair sets it aside")
        return Checkup(home, False, tuple(findings))
    if not os.access(home, os.W_OK):
        findings.append(f"{home} is not writable: edits cannot be recorded (use --no-history or fix it)")
    try:
        with HistoryStore(home) as store:
            result = store.integrity_check()
            if result != ["ok"]:
                findings.append("the database is damaged: " + "; ".join(result[:5]))
                return Checkup(home, False, tuple(findings))
            entries = store.entries()
            pending = store.pending(include_live=True)
            stale = store.pending()
            linked = store.linked_bytes()
    except DamagedHistory as damage:
        findings.append(f"the database is damaged: {damage.message.split(';')[0]}")
        return Checkup(home, False, tuple(findings))
    except HistoryError as error:
        findings.append(f"the database cannot be used: {error.message}")
        return Checkup(home, False, tuple(findings))
    findings.append(f"database ok: {len(entries)} entries, {size:,} bytes")
    if stale:
        findings.append(
            f"{len(stale)} entries were left pending by writers that died; they are settled against the "
            "files the next time their root is used (or now, with repair)"
        )
    elif pending:
        findings.append(f"{len(pending)} entries are being written right now")
    if linked:
        findings.append(
            f"{linked:,} bytes of first snapshots are kept as links to the old files; they are packed into "
            "the database when an nbedit process is idle, or by a later recorded edit"
        )
    return Checkup(home, True, tuple(findings))


def repair(home: Path) -> list[str]:
    """Set a damaged (or empty) database aside; return what was done."""
    from nbedit.storage.history import HistoryStore

    home = Path(home).expanduser()
    done: list[str] = []
    if check(home).healthy:
        return done
    database = _database(home)
    moved = move_aside(database)
    done.append(f"moved the damaged database to {moved} (kept, not deleted)")
    with HistoryStore(home) as store:
        store.entries()
    done.append("started a new, empty history; new entry ids continue after the old ones")
    return done
