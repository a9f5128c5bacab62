"""Check, repair or set aside the history store: what ``nbedit doctor`` runs.

Damage found after a store was opened (a disk error, a file truncated by another
tool) makes every apply and undo fail with ``DamagedHistory``; the person at a
terminal needs one command that says what is wrong and fixes it, not a Python
call. Checking changes nothing but modes: a home readable by other users is reported
and narrowed to 0700 (its files 0600) as any opening of the store does (``home.py``).
Repairing moves a damaged database (and its write-ahead log) aside, so nothing is
deleted, and starts a new one that continues the entry counter (ids are never
reused, see ``database.py``). An undo a crash cut short is reported here; the
command line's repair finishes it (``nbedit.repair.finish_interrupted``).
"""

from __future__ import annotations

import os
from pathlib import Path

from nbedit._dataclass import dataclass
from nbedit.errors import HistoryError
from nbedit.storage.database import DamagedHistory, move_aside
from nbedit.storage.home import foreign_owner, tighten, wider_than_private

__all__ = ["Checkup", "check", "repair"]


@dataclass(frozen=True, slots=True)
class Checkup:
    """What was found; ``healthy`` is False when the store needs a repair."""

    home: Path
    healthy: bool
    findings: tuple[str, ...]
    damaged: bool = False  # the database itself needs setting aside (not only an unfinished undo)


def _database(home: Path) -> Path:
    from nbedit.storage.history import DATABASE_NAME

    return Path(home) / DATABASE_NAME


def check(home: Path) -> Checkup:
    """Look at the store under ``home``, changing nothing but modes wider than private (narrowed)."""
    from nbedit.storage.history import HistoryStore

    home = Path(home).expanduser()
    database = _database(home)
    findings: list[str] = [f"history home: {home}"]
    owner = foreign_owner(home)
    if owner is not None:
        findings.append(
            f"{home} belongs to {owner}, not to you: nbedit does not trust its history (another user's "
            "entries could write into your files). Set NBEDIT_HOME to a folder you own, or chown it if it is yours"
        )
        return Checkup(home, False, tuple(findings))
    wider = wider_than_private(home)
    if not database.exists():
        if wider:
            tighten(home)
            findings.append(_narrowed(wider, wider_than_private(home)))
        findings.append("no history database yet (it is created by the first recorded edit)")
        return Checkup(home, True, tuple(findings))
    size = database.stat().st_size
    if size == 0:
        findings.append(f"{database} is empty (0 bytes): its entries are lost; repair sets it aside")
        return Checkup(home, False, tuple(findings), damaged=True)
    if not os.access(home, os.W_OK):
        findings.append(f"{home} is not writable: edits cannot be recorded (use --no-history or fix it)")
    try:
        with HistoryStore(home) as store:
            result = store.integrity_check()
            if result != ["ok"]:
                findings.append("the database is damaged: " + "; ".join(result[:5]))
                return Checkup(home, False, tuple(findings), damaged=True)
            entries = store.entries()
            pending = store.pending(include_live=True)
            stale = store.pending()
            linked = store.linked_bytes()
            cut_short = [(entry.undoes, entry.id) for entry in _cut_short_undos(entries)]
    except DamagedHistory as damage:
        findings.append(f"the database is damaged: {damage.message.split(';')[0]}")
        return Checkup(home, False, tuple(findings), damaged=True)
    except HistoryError as error:
        findings.append(f"the database cannot be used: {error.message}")
        return Checkup(home, False, tuple(findings))
    if wider:
        findings.append(_narrowed(wider, wider_than_private(home)))
    findings.append(f"database ok: {len(entries)} entries, {size:,} bytes")
    for target, undoing in cut_short:
        findings.append(
            f"the undo of entry {target} was cut short by a crash ({undoing} is partial): run "
            "`nbedit doctor --repair` (or `nbedit undo` in its session) to finish it"
        )
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
    return Checkup(home, not cut_short, tuple(findings))


def _narrowed(wider: list[str], still: list[str]) -> str:
    shown = "; ".join(wider[:4]) + (", ..." if len(wider) > 4 else "")
    outcome = (
        "narrowed now to 0700 for the home and 0600 for its files"
        if not still
        else "it could not be narrowed: chmod 700 the home and 600 its files"
    )
    return f"the history was readable by other users ({shown}); {outcome}"


def _cut_short_undos(entries: list) -> list:  # type: ignore[type-arg]
    """Partial undo entries (newest first) whose target no complete undo has finished."""
    finished = {entry.undoes for entry in entries if entry.undoes and not entry.partial}
    return [
        entry
        for entry in entries
        if entry.undoes and entry.partial and entry.status == "applied" and entry.undoes not in finished
    ]


def repair(home: Path) -> list[str]:
    """Set a damaged (or empty) database aside; return what was done."""
    from nbedit.storage.history import HistoryStore

    home = Path(home).expanduser()
    done: list[str] = []
    if not check(home).damaged:
        return done
    database = _database(home)
    moved = move_aside(database)
    done.append(f"moved the damaged database to {moved} (kept, not deleted)")
    with HistoryStore(home) as store:
        store.entries()
    done.append("started a new, empty history; new entry ids continue after the old ones")
    return done
