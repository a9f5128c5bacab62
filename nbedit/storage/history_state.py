"""The state every stage of the history store reads, declared once for type checkers.

``HistoryStore`` is one object made of one mixin per stage (record, read, recover, keep);
``HistoryStore.__init__`` sets this state and each mixin reads it. Nothing of ``HistoryState``
runs; ``Closing`` is the store's "closed" flag.
"""

from __future__ import annotations

import _thread

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import threading
    from pathlib import Path

    from nbedit.storage.database import Database

__all__ = ["Closing", "HistoryState"]


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
        _closed: Closing
        _linked: bool
        _last_activity: float


class Closing:
    """The store's "closed" flag: ``threading.Event``'s ``is_set``, ``set``, ``clear`` and ``wait``.

    Only the idle compactor waits on it (a thread started once this process linked a copy), so
    the ``threading.Event`` behind ``wait`` is made by the first wait: a command that links
    nothing never imports ``threading`` (a millisecond of its start-up, tests/test_startup.py).
    The flag and the event change together under one lock, so a ``set`` is never lost.
    """

    __slots__ = ("_event", "_lock", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: threading.Event | None = None
        self._lock = _thread.allocate_lock()

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        with self._lock:
            self._set = True
            if self._event is not None:
                self._event.set()

    def clear(self) -> None:
        with self._lock:
            self._set = False
            if self._event is not None:
                self._event.clear()

    def wait(self, timeout: float | None = None) -> bool:
        """Until the flag is set (True), or ``timeout`` seconds have passed (False)."""
        with self._lock:
            if self._event is None:
                import threading

                self._event = threading.Event()
                if self._set:
                    self._event.set()
            event = self._event
        return event.wait(timeout)
