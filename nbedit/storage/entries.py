"""What listing the history gives: an ``Entry`` per recorded change, a ``FileSummary`` per file.

Importable from ``nbedit.storage.records`` (and ``history``) as always; they live here so that a
command that records a change without listing any never builds them: each is a ``NamedTuple``,
and making one compiles its ``__new__`` (start-up, tests/test_startup.py).
"""

from __future__ import annotations

from nbedit._dataclass import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Status = Literal["pending", "applied"]  # records.Status (not imported: records imports this module)

__all__ = ["Entry", "FileSummary"]


class FileSummary(NamedTuple):
    path: str
    new_path: str | None
    added: int
    removed: int

    @property
    def target_path(self) -> str:
        return self.new_path or self.path


class Entry(NamedTuple):
    """One recorded change. A NamedTuple rather than a dataclass: listing builds thousands
    of them, and a tuple is built several times faster than a frozen dataclass."""

    id: str
    session: str
    time: float  # seconds since the epoch, when the entry was begun
    origin: str
    execution_count: int | None
    status: Status
    files: tuple[FileSummary, ...]
    tiers: tuple[str, ...]
    summary: str
    undoes: str | None
    root: str | None = None
    partial: bool = False  # a crash cut the write short; only some files were written (see reconcile)
    turn: str | None = None  # the agent turn it belongs to (``ToolSession.turn``); a checkpoint
