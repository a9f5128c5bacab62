"""What reading the history gives: an ``Entry`` per recorded change, a ``FileSummary`` per file
(listing), a ``FileVersion`` per file of an entry (its bytes: undo, restore) and a ``PruneResult``.

Importable from ``nbedit.storage.records`` (and ``history``) as always; they live here so that a
command that records a change without reading any never builds them: a class is some 30 us of a
start, and making a ``NamedTuple`` compiles its ``__new__`` (start-up, tests/test_startup.py).
"""

from __future__ import annotations

from nbedit._dataclass import NamedTuple, dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Status = Literal["pending", "applied"]  # records.Status (not imported: records imports this module)

__all__ = ["Entry", "FileSummary", "FileVersion", "PruneResult"]


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


@dataclass(frozen=True, slots=True)
class FileVersion:
    """Full bytes of one file of an entry; None where the file did not exist."""

    path: str
    new_path: str | None
    before: bytes | None
    after: bytes | None
    before_fingerprint: str | None
    after_fingerprint: str | None
    before_mode: int | None = None
    after_mode: int | None = None

    @property
    def target_path(self) -> str:
        return self.new_path or self.path


@dataclass(frozen=True, slots=True)
class PruneResult:
    entries_removed: int
    versions_removed: int
    bytes_before: int  # stored version data before and after pruning
    bytes_after: int
