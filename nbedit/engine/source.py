"""``FileSource``: how the engine reads files without doing I/O itself.

The workspace owns every read and hands the planner an object of this shape. It
lives in a module of its own, below the planner and its helpers (the backslash
reader in ``written_paths`` needs it too), so that neither has to import the
other to name it; ``nbedit.engine.plan`` still exports it.
"""

from __future__ import annotations

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object

__all__ = ["FileSource"]


class FileSource(Protocol):
    """Read access to the workspace; the only way the planner sees files."""

    def normalise(self, path: str) -> str:
        """A clean relative path; raises OutsideWorkspace."""

    def read(self, path: str) -> bytes | None:
        """The file's bytes, None if it does not exist; raises NotAFile, FileTooLarge."""

    def mode(self, path: str) -> int | None:
        """Permission bits of an existing file."""
