"""Every error nbedit raises, in one tree.

Front ends (CLI, magics, widgets) catch ``NbeditError`` and show its message; the
message always says what happened *and what to do next*. Subclasses carry the
structured facts a caller (a person, a widget, an LLM tool loop) needs to retry::

    NbeditError
    ├── PatchSyntaxError        the change text cannot be parsed (.line, .hint)
    ├── MatchError              a hunk could not be placed safely
    │   ├── NoMatch             nothing close enough (.candidates)
    │   ├── AmbiguousMatch      several equally good places (.locations)
    │   └── OverlappingHunks    two hunks claim the same lines
    ├── PathError               the target path is not acceptable
    │   ├── OutsideWorkspace    escapes the workspace root
    │   ├── FileMissing         update/delete of a file that does not exist
    │   ├── FileExists          add/move onto an existing file without overwrite
    │   └── NotAFile            a directory (or special file) where a file is needed
    ├── UnsupportedFile         the content cannot be edited as text
    │   ├── BinaryFile          NUL bytes or undecodable
    │   ├── FileTooLarge        over the configured size limit
    │   └── NotebookError       not a valid notebook, or the edit would make it invalid
    ├── StaleFile               the file changed since the plan was made
    ├── WriteError              the filesystem refused; everything was rolled back
    └── HistoryError            the snapshot history cannot do what was asked
        └── NothingToUndo

Design choice: the engine raises only these; nothing else should escape a public
call for bad *input* (tests fuzz the parsers to hold us to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AmbiguousMatch",
    "BinaryFile",
    "Candidate",
    "FileExists",
    "FileMissing",
    "FileTooLarge",
    "HistoryError",
    "MatchError",
    "NbeditError",
    "NoMatch",
    "NotAFile",
    "NotebookError",
    "NothingToUndo",
    "OutsideWorkspace",
    "OverlappingHunks",
    "PatchSyntaxError",
    "PathError",
    "StaleFile",
    "UnsupportedFile",
    "WriteError",
]


class NbeditError(Exception):
    """Root of every error nbedit raises on purpose."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class PatchSyntaxError(NbeditError):
    """The change text is malformed. ``line`` is 1-based in the change text."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        hint: str | None = None,
        dialect: str | None = None,
        path: str | None = None,
    ) -> None:
        where = f"line {line}: " if line is not None else ""
        what = f"{dialect} " if dialect else ""
        full = f"cannot parse {what}change: {where}{message}"
        if hint:
            full += f"\nhint: {hint}"
        super().__init__(full, path=path)
        self.line = line
        self.hint = hint
        self.dialect = dialect


@dataclass(frozen=True, slots=True)
class Candidate:
    """A place that almost matched: where it is, how close, and how it differs."""

    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    score: float  # 0..1
    diff: str  # small unified diff: expected (---) against what is in the file (+++)
    cell: str | None = None  # notebook cell label when the target is a notebook

    def describe(self) -> str:
        where = f"lines {self.start_line}-{self.end_line}"
        if self.cell:
            where += f" ({self.cell})"
        return f"{where}, similarity {self.score:.2f}"


class MatchError(NbeditError):
    """A hunk could not be placed with certainty; nothing was changed."""


class NoMatch(MatchError):
    def __init__(
        self, message: str, *, path: str | None = None, candidates: Sequence[Candidate] = ()
    ) -> None:
        self.candidates = tuple(candidates)
        if self.candidates:
            parts = [message, "closest candidates:"]
            for candidate in self.candidates:
                parts.append(f"  {candidate.describe()}")
                parts.extend("    " + line for line in candidate.diff.splitlines())
            parts.append(
                "fix the old text so it matches one of these exactly (copy it from the file), then retry"
            )
            message = "\n".join(parts)
        else:
            message += "\nnothing in the file is close; check the path and re-read the file before retrying"
        super().__init__(message, path=path)


class AmbiguousMatch(MatchError):
    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        locations: Sequence[tuple[int, int]] = (),
        tier: str | None = None,
        cells: Sequence[str] = (),
        detail: str | None = None,
    ) -> None:
        self.locations = tuple(locations)  # (line, column), 1-based
        self.tier = tier
        self.cells = tuple(cells)  # notebook cells holding the matches ("cell 3 (id ab, code)")
        if detail is None:  # ``detail``: where the matches are and what to do, when the caller knows better
            where = ", ".join(f"{line}:{column}" for line, column in self.locations[:20])
            more = f" and {len(self.locations) - 20} more" if len(self.locations) > 20 else ""
            detail = (
                f"matches at (line:col) {where}{more}\n"
                "add surrounding lines to make the old text unique, or use replace_all to change every one"
            )
        super().__init__(f"{message}\n{detail}", path=path)


class OverlappingHunks(MatchError):
    def __init__(self, message: str, *, path: str | None = None, lines: tuple[int, int] = (0, 0)) -> None:
        super().__init__(message + "\nmerge the overlapping changes into one hunk and retry", path=path)
        self.lines = lines


class PathError(NbeditError):
    """The path named by the change is not acceptable."""


class OutsideWorkspace(PathError):
    pass


class FileMissing(PathError):
    pass


class FileExists(PathError):
    pass


class NotAFile(PathError):
    pass


class UnsupportedFile(NbeditError):
    pass


class BinaryFile(UnsupportedFile):
    pass


class FileTooLarge(UnsupportedFile):
    def __init__(self, message: str, *, path: str | None = None, size: int = 0, limit: int = 0) -> None:
        super().__init__(message, path=path)
        self.size = size
        self.limit = limit


class NotebookError(UnsupportedFile):
    pass


class StaleFile(NbeditError):
    """The file on disk is no longer what the plan was computed from."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        expected: str | None = None,
        actual: str | None = None,
        diff: str = "",
        advice: str = "re-plan the change against the current file (nothing was written)",
    ) -> None:
        text = message
        if diff:
            text += "\nwhat changed on disk since the preview:\n" + diff
        text += "\n" + advice
        super().__init__(text, path=path)
        self.expected = expected  # fingerprint the plan saw
        self.actual = actual  # fingerprint found now (None: file gone)
        self.diff = diff


class WriteError(NbeditError):
    pass


class HistoryError(NbeditError):
    pass


class NothingToUndo(HistoryError):
    pass
