"""The only package that touches disk: atomic writes, locks, the snapshot history.

- ``atomic``: all-or-nothing multi-file writes (temp file, fsync, ``os.replace``, rollback).
- ``locks``: cross-process locks on the folder of each written file (no home needed).
- ``confine``: reaching a file from the (pinned) root, to read or write it, without following a
  swapped-in link; the one check of a path's characters (``check_path_text``) every surface goes through.
- ``home``: the private home (0700/0600, owned by the user, files made exclusively, no planted links).
- ``history``: the SQLite snapshot store (``database``, ``versions``, ``delta``, ``records`` behind it).
"""

from __future__ import annotations

import sys  # not importlib, which imports warnings (start-up)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Names are loaded on first use, so that ``import nbedit`` (and ``nbedit --help``) does
# not pay for sqlite3, zlib and the version store until something is recorded.
_HOMES = {
    "Write": "atomic",
    "apply_writes": "atomic",
    "remove_leftovers": "atomic",
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
        module = f"nbedit.storage.{_HOMES[name]}"
        __import__(module)  # importlib.import_module, for an absolute name
        return getattr(sys.modules[module], name)
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
    "default_home",
    "format_id",
    "lock_paths",
    "remove_leftovers",
]
