"""The only package that touches disk: atomic writes, locks, the snapshot history.

- ``atomic``: all-or-nothing multi-file writes (temp file, fsync, ``os.replace``, rollback).
- ``locks``: per-file cross-process locks under ``<home>/locks``.
- ``history``: the SQLite snapshot store (``database``, ``versions``, ``delta``, ``records`` behind it).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Names are loaded on first use, so that ``import nbedit`` (and ``nbedit --help``) does
# not pay for sqlite3, zlib and the version store until something is recorded.
_HOMES = {
    "Write": "atomic",
    "apply_writes": "atomic",
    "clean_stale_temp_files": "atomic",
    "DamagedHistory": "database",
    "HistoryStore": "history",
    "format_id": "history",
    "lock_paths": "locks",
    "ORIGINS": "records",
    "Entry": "records",
    "EntryDraft": "records",
    "FileRecord": "records",
    "FileSummary": "records",
    "FileVersion": "records",
    "PruneResult": "records",
    "default_home": "records",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"nbedit.storage.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'nbedit.storage' has no attribute {name!r}")


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
