"""Which file a path written with backslashes names (``src\\app.py`` from a reply written on Windows).

On POSIX a backslash is an ordinary character in a file name, so ``src\\app.py``
names one file called that, beside the folder ``src`` with its ``app.py``.
Models trained on Windows output write either; Markdown writes ``my\\_file.py``
for ``my_file.py``. A careful reader takes the one file under the root that the
text can mean: every reading (as written, ``\\_`` unescaped, ``\\`` as ``/``) is
tried, and exactly one existing file must answer. None or several is an error
that says which readings were tried, never a guess. A file to be created has no
file to answer; only the Markdown escape (``\\_`` and no other backslash) is
undone for it, since creating ``src\\app.py`` or ``src/app.py`` would be a
guess either way.

This runs once per file of a change and only for paths with a backslash; the
planner's ``FileSource`` does the reading, so the engine stays free of I/O.
"""

from __future__ import annotations

from nbedit.engine.models import FileChange
from nbedit.errors import FileMissing, NbeditError, NotAFile, PatchSyntaxError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.source import FileSource

__all__ = ["resolve_backslashes"]


def resolve_backslashes(change: FileChange, source: FileSource) -> str:
    """``change.path`` with its backslashes read as the one file under the root they name."""
    path = change.path
    if "\\" not in path:
        return path
    unescaped = path.replace("\\_", "_")
    readings = list(dict.fromkeys((path, unescaped, path.replace("\\", "/"), unescaped.replace("\\", "/"))))
    found: dict[str, str] = {}  # normalised -> the reading that named it
    for reading in readings:
        try:
            normalised = source.normalise(reading)
        except NbeditError:
            continue  # outside the root, or no name a file can have: not a file this reading names
        try:
            exists = source.read(normalised) is not None
        except NotAFile:
            continue  # a folder
        except NbeditError:
            exists = True  # there, but unreadable as text (too large, binary): planning says so
        if exists:
            found.setdefault(normalised, reading)
    if len(found) == 1:
        return next(iter(found))
    tried = ", ".join(repr(reading) for reading in readings)
    if len(found) > 1:
        raise PatchSyntaxError(
            f"the path {path!r} names {len(found)} files under the root: {', '.join(sorted(found))}",
            path=path,
            hint="write the path with '/' between folders (or exactly as the file is named)",
        )
    if change.operation == "add" or _creates(change):
        if "\\" not in unescaped:
            return unescaped
        raise PatchSyntaxError(
            f"the new file's path {path!r} has backslashes; nbedit will not guess whether they separate folders",
            path=path,
            hint="write the path with '/' between folders",
        )
    raise FileMissing(
        f"{path}: no file under the root has this name, read as written or with '/' for '\\' "
        f"(tried {tried}); check the path",
        path=path,
    )


def _creates(change: FileChange) -> bool:
    """An update whose every hunk is "append, or create the file" (an empty SEARCH)."""
    return bool(change.hunks) and all(hunk.at_end and not hunk.old for hunk in change.hunks)
