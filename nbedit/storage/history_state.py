"""The state every stage of the history store reads, declared once for type checkers.

``HistoryStore`` is one object made of one mixin per stage (record, read, recover, keep);
``HistoryStore.__init__`` sets this state and each mixin reads it. Nothing here runs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import threading
    from pathlib import Path

    from nbedit.storage.database import Database

__all__ = ["HistoryState"]


class HistoryState:
    """What ``HistoryStore.__init__`` sets (typing only)."""

    if TYPE_CHECKING:
        home: Path
        database: Path
        _home_text: str
        _database_path: str
        _database: Database
        _recent: dict[str, tuple[int, str, bytes]]
        _floor: int
        _closed: threading.Event
        _linked: bool
        _last_activity: float
