"""Every error nbedit raises, in one tree.

Front ends (CLI, magics, widgets) catch ``NbeditError`` and show its message; the
message always says what happened *and what to do next*. Subclasses carry the
structured facts a caller (a person, a widget, an LLM tool loop) needs to retry::

    NbeditError
    ├── OptionError             an option has a value nbedit cannot use (.option)
    ├── PatchSyntaxError        the change text cannot be parsed (.line, .hint)
    ├── MatchError              a hunk could not be placed safely
    │   ├── NoMatch             nothing close enough (.candidates)
    │   ├── AmbiguousMatch      several equally good places (.locations)
    │   ├── UnsafeChange        the place is clear, the change cannot be written there exactly (.reason)
    │   ├── PartlyApplied       some hunks are already applied and others are not (.applied)
    │   └── OverlappingHunks    two hunks claim the same lines
    ├── PathError               the target path is not acceptable
    │   ├── OutsideWorkspace    escapes the workspace root
    │   ├── FileMissing         update/delete of a file that does not exist
    │   ├── FileExists          add/move onto an existing file without overwrite
    │   └── NotAFile            a directory (or special file) where a file is needed
    ├── UnsupportedFile         the content cannot be edited as text
    │   ├── BinaryFile          NUL bytes or undecodable
    │   ├── FileTooLarge        over a limit of bytes, cells or hunks (.size, .limit, .unit)
    │   └── NotebookError       not a valid notebook, or the edit would make it invalid
    ├── StaleFile               the file changed since the plan was made
    ├── LiveConflict            an open tab has unsaved typing in the very cells/lines edited (.conflicts)
    ├── WriteError              the filesystem refused; everything was rolled back
    └── HistoryError            the snapshot history cannot do what was asked
        ├── NothingToUndo
        └── RewindConflict      a rewind would overwrite someone's later edit (.conflicts)

Design choice: the engine raises only these; nothing else should escape a public
call for bad *input* (tests fuzz the parsers to hold us to it).

Hints name options, and an option is spelled differently on each surface
(``replace_all=True`` in Python, ``--replace-all`` on the command line and in the
magics). A message names an option with ``option("replace_all")``, a neutral
token; ``str(error)`` spells it for Python (the API is where an exception is
read as is) and front ends call ``error.spelled("cli")`` / ``"magic"``. The engine
therefore never needs to know which surface it serves.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

__all__ = [
    "AmbiguousMatch",
    "BinaryFile",
    "Candidate",
    "FileExists",
    "FileMissing",
    "FileTooLarge",
    "HistoryError",
    "LiveConflict",
    "LiveDifference",
    "MatchError",
    "NbeditError",
    "NoMatch",
    "NotAFile",
    "NotebookError",
    "NothingToUndo",
    "OptionError",
    "OutsideWorkspace",
    "OverlappingHunks",
    "PatchSyntaxError",
    "PartlyApplied",
    "PathError",
    "RewindConflict",
    "StaleFile",
    "UnsafeChange",
    "UnsupportedFile",
    "WriteError",
    "option",
    "spell",
]

if TYPE_CHECKING:
    Surface = Literal["python", "cli", "magic"]
else:
    # the aliases for a program that reads them at run time, made with typing then
    from nbedit._dataclass import literal_aliases

    _TYPE_ALIASES = {
        "Surface": ("python", "cli", "magic"),
    }
    __getattr__ = literal_aliases(__name__, _TYPE_ALIASES)


# neutral option name -> its spelling in Python, on the command line, in the magics
_SPELLINGS: dict[str, tuple[str, str, str]] = {
    "replace_all": ("replace_all=True", "--replace-all", "--replace-all"),
    "cell": ("cell=ID_OR_INDEX", "--cell ID|INDEX", "--cell ID|INDEX"),
    "force": ("force=True", "--force", "--force"),
    "overwrite": ("overwrite=True", "--overwrite", "--overwrite"),
    "no_history": ("history=False", "--no-history", "Workspace(history=False)"),
    "all_sessions": ("history(all_sessions=True)", "nbedit history --all", "%nbedit history --all"),
    "exact": ("exact=True", "--exact", "--exact"),
    "threshold": ("threshold=F", "--threshold F", "--threshold F"),
    "resolve": ("resolve='keep' or 'rewind'", "--resolve keep|rewind", "--resolve keep|rewind"),
    "encoding": ("encoding=NAME", "--encoding NAME", "--encoding NAME"),
    "undo_entry": ("Workspace.undo(ID)", "nbedit undo ID", "%nbedit undo ID"),
    "restore_entry": ("Workspace.restore(ID)", "nbedit restore ID", "%nbedit restore ID"),
    "max_file_size": (
        "Workspace(max_file_size=N)",
        "Workspace(max_file_size=N)",
        "Workspace(max_file_size=N)",
    ),
}
_SURFACES: dict[str, int] = {"python": 0, "cli": 1, "magic": 2}
# Private-use characters: no real message or file text carries them.
_TOKEN = "\ue000([a-z_]+)\ue001"  # compiled (and cached by re) at the first message with a token


def option(name: str) -> str:
    """A neutral reference to an option, spelled per surface when the message is shown."""
    if name not in _SPELLINGS:
        raise KeyError(f"no spelling for option {name!r}")
    return f"\ue000{name}\ue001"


def spell(text: str, surface: Surface = "python") -> str:
    """``text`` with every ``option(...)`` token written as ``surface`` spells it."""
    if "\ue000" not in text:
        return text
    column = _SURFACES[surface]
    import re  # only a message that names an option gets here: not on a command's way (start-up time)

    def spelling(found: re.Match[str]) -> str:
        known = _SPELLINGS.get(found.group(1))  # file text quoted in a message may hold look-alikes
        return known[column] if known is not None else found.group(0)

    return re.sub(_TOKEN, spelling, text)


class NbeditError(Exception):
    """Root of every error nbedit raises on purpose.

    ``message`` is spelled for Python; ``spelled(surface)`` gives the same message
    with options as the command line or the magics spell them.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.template = message
        self.message = spell(message)
        super().__init__(self.message)
        self.path = path

    def __str__(self) -> str:
        return self.message

    def spelled(self, surface: Surface) -> str:
        return spell(self.template, surface)


class OptionError(NbeditError, ValueError):
    """An option (threshold, encoding, ...) has a value nbedit cannot use; ``option`` names it."""

    def __init__(self, message: str, *, option: str = "", path: str | None = None) -> None:
        super().__init__(message, path=path)
        self.option = option


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
        self.hint_template = hint
        self.hint = spell(hint) if hint else hint
        self.dialect = dialect


@dataclass(frozen=True, slots=True)
class Candidate:
    """A place that almost matched: where it is, how close, and how it differs."""

    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    score: float  # 0..1
    diff: str  # small unified diff: expected (---) against what is in the file (+++)
    cell: str | None = None  # notebook cell label when the target is a notebook
    reason: str | None = None  # why this place was not taken

    def describe(self) -> str:
        where = f"lines {self.start_line}-{self.end_line}"
        if self.cell:
            where += f" ({self.cell})"
        text = f"{where}, similarity {self.score:.2f}"
        return f"{text}: {self.reason}" if self.reason else text


class MatchError(NbeditError):
    """A hunk could not be placed with certainty; nothing was changed."""


class NoMatch(MatchError):
    def __init__(
        self, message: str, *, path: str | None = None, candidates: Sequence[Candidate] = ()
    ) -> None:
        self.candidates = tuple(candidates)
        if self.candidates:
            parts = [message, "closest candidates ('-' lines: the old text you sent, '+' lines: the file):"]
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
            in_cell = (
                f", limit it to one cell with {option('cell')}"
                if (path or "").lower().endswith(".ipynb")
                else ""
            )
            detail = (
                f"matches at (line:col) {where}{more}\n"
                f"add surrounding lines to make the old text unique{in_cell}, "
                f"or pass {option('replace_all')} to change every one"
            )
        super().__init__(f"{message}\n{detail}", path=path)


class UnsafeChange(MatchError):
    """The place was found (leniently), but the exact change cannot be carried onto it.

    ``reason`` says what stands in the way (a line the change rewrites is not in
    the file, or the indentation cannot be adapted unambiguously); ``line`` is
    the 1-based file line concerned, when there is one.
    """

    def __init__(
        self, message: str, *, path: str | None = None, reason: str = "", line: int | None = None
    ) -> None:
        super().__init__(
            message + "\ncopy the old text from the file exactly (indentation included) and retry", path=path
        )
        self.reason = reason
        self.line = line


class PartlyApplied(MatchError):
    """Some hunks look applied already (new text there, old text gone) while others still apply.

    A change is "already applied" only as a whole; a mix means the file drifted
    or another edit got there first, and nbedit will not half-apply it.
    ``applied`` holds the 1-based numbers of the hunks that look applied.
    """

    def __init__(self, message: str, *, path: str | None = None, applied: Sequence[int] = ()) -> None:
        super().__init__(
            message + "\nre-read the file and send only the changes it still needs (nothing was written)",
            path=path,
        )
        self.applied = tuple(applied)


class OverlappingHunks(MatchError):
    def __init__(self, message: str, *, path: str | None = None, lines: tuple[int, int] = (0, 0)) -> None:
        if "retry" not in message and "use a longer" not in message:
            message += "\nmerge the overlapping changes into one hunk and retry"
        super().__init__(message, path=path)
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
    """Over a configured limit: ``size`` and ``limit`` count ``unit`` (bytes, cells or hunks)."""

    def __init__(
        self, message: str, *, path: str | None = None, size: int = 0, limit: int = 0, unit: str = "bytes"
    ) -> None:
        super().__init__(message, path=path)
        self.size = size
        self.limit = limit
        self.unit = unit


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


@dataclass(frozen=True)
class LiveDifference:
    """Where an open tab no longer holds the text a change was planned from.

    ``where`` names the cell (``cell 3 (id abc)``) or the lines (``lines 10-12``);
    ``expected`` is the text the plan replaces, ``live`` what the tab shows now.
    """

    path: str
    where: str
    expected: str
    live: str | None


class LiveConflict(NbeditError):
    """An open tab has unsaved typing in the very cells or lines a change rewrites.

    Nothing was written: writing the file would leave the tab and the disk disagreeing,
    and the tab's next save would throw the change (or the typing) away.
    ``conflicts`` says where; ``documents`` maps a path to the tab's whole live document
    when the tab sent it (a text file's text, or a notebook's cells as
    ``[{"id", "cell_type", "source"}, ...]``), which re-planning uses as the base.
    """

    def __init__(
        self,
        conflicts: Sequence[LiveDifference] | str,
        *,
        documents: dict[str, object] | None = None,
        path: str | None = None,
    ) -> None:
        if isinstance(conflicts, str):  # a message of its own (a collaboration room's check)
            self.conflicts: tuple[LiveDifference, ...] = ()
            message = conflicts
        else:
            self.conflicts = tuple(conflicts)
            places = "; ".join(f"{item.path}: {item.where}" for item in self.conflicts)
            message = (
                f"the open tab differs: {places} has unsaved changes in the text this change rewrites, "
                "so nothing was written. Save or undo the typing in that tab and apply again, or "
                "re-plan the change against the live document (the review's 'Re-plan against the "
                "live document' button; Workspace.replan_live(plan, error) in Python)"
            )
        self.documents = dict(documents or {})
        super().__init__(message, path=path or (self.conflicts[0].path if self.conflicts else None))


class WriteError(NbeditError):
    pass


class HistoryError(NbeditError):
    pass


class NothingToUndo(HistoryError):
    pass


class RewindConflict(HistoryError):
    """Someone changed a file after the checkpoint in the very lines the rewind takes back.

    ``conflicts``: one ``nbedit.rewind.FileConflict`` per such file (its path, why, and the
    three versions, with the overlapping lines marked by ``text()``). Nothing was written.
    """

    def __init__(self, message: str, *, conflicts: Sequence[object] = ()) -> None:
        self.conflicts = tuple(conflicts)
        super().__init__(message, path=getattr(self.conflicts[0], "path", None) if self.conflicts else None)
