"""The only package that touches disk: atomic writes, locks, the snapshot history.

- ``atomic``: all-or-nothing multi-file writes (temp file, fsync, ``os.replace``, rollback).
- ``locks``: per-file cross-process locks under ``<home>/locks``.
- ``history``: the SQLite snapshot store (``database``, ``versions``, ``delta``, ``records`` behind it).
"""

from __future__ import annotations

from nbedit.storage.atomic import Write, apply_writes, clean_stale_temp_files
from nbedit.storage.database import DamagedHistory
from nbedit.storage.history import HistoryStore, format_id
from nbedit.storage.locks import lock_paths
from nbedit.storage.records import (
    ORIGINS,
    Entry,
    EntryDraft,
    FileRecord,
    FileSummary,
    FileVersion,
    PruneResult,
    default_home,
)

__all__ = [
    "ORIGINS",
    "DamagedHistory",
    "Entry",
    "EntryDraft",
    "FileRecord",
    "FileSummary",
    "FileVersion",
    "HistoryStore",
    "PruneResult",
    "Write",
    "apply_writes",
    "clean_stale_temp_files",
    "default_home",
    "format_id",
    "lock_paths",
]
