"""Unified diffs: what the header lines of a file section say, and the ``FileChange`` they make.

``unified.py`` reads the lines; this module holds what it learns about one file
section (``Section``) and how git and ``diff -u`` write a file's names: quoted
C-style paths (``"a/sp ace\\t.txt"``, octal UTF-8 bytes), a tab before a
timestamp, the epoch date ``diff -N`` gives an absent file, the a/ b/ prefixes
(and diff.mnemonicPrefix's c/ i/ w/ o/), and the two names of a
``diff --git`` line, which git itself trusts only when they agree. Then
``file_change`` turns a section into a ``FileChange``: an add, a delete, a
rename or an update, refusing what cannot be applied (a section that both
creates and deletes, a header with no hunk, a ``--no-index`` diff of two
different files).
"""

from __future__ import annotations

# re is imported by the two readers below that need it, for the unusual line (start-up time)
from nbedit.engine.models import FileChange, Hunk
from nbedit.errors import PatchSyntaxError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.hunk_table import HunkTable  # a big patch's hunks: imported when one is read
    from nbedit.engine.models import Operation

__all__ = [
    "DIALECT",
    "Section",
    "epoch_timestamp",
    "file_change",
    "header_path",
    "line_content",
    "split_git_names",
    "syntax_error",
    "unquote",
]

DIALECT = "unified"
_DEV_NULL = "/dev/null"
# (old, new) prefix pairs git writes: the default, then diff.mnemonicPrefix's commit/index/worktree/object.
_GIT_PREFIX_PAIRS = (("a/", "b/"), ("c/", "w/"), ("i/", "w/"), ("o/", "w/"), ("c/", "i/"), ("1/", "2/"))
_GIT_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    '"': '"',
    "\\": "\\",
}


def line_content(line: str) -> str:
    """A change-text line without its ``"\\n"`` and without a trailing ``"\\r"``."""
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def syntax_error(
    message: str, line: int | None, hint: str | None = None, path: str | None = None
) -> PatchSyntaxError:
    return PatchSyntaxError(message, line=line, hint=hint, dialect=DIALECT, path=path)


class Section:
    """What the header lines of one file section said, before the hunks.

    A mutable record the parser fills in as it reads the header lines, one per file section:
    a plain class (no data-class ``__init__`` to compile in every process that reads a diff).
    """

    __slots__ = (
        "line",
        "git",
        "git_old",
        "git_new",
        "old_path",
        "new_path",
        "rename_from",
        "rename_to",
        "new_mode",
        "created",
        "deleted",
        "old_epoch",
        "new_epoch",
        "base_blob",
        "hunks",
    )

    def __init__(
        self, line: int, *, git: bool = False, old_path: str | None = None, new_path: str | None = None
    ) -> None:
        self.line = line  # 1-based line of the first header line
        self.git = git
        self.git_old: str | None = None
        self.git_new: str | None = None
        self.old_path = old_path  # from ---, None when absent
        self.new_path = new_path  # from +++
        self.rename_from: str | None = None
        self.rename_to: str | None = None
        self.new_mode: int | None = None
        self.created = False
        self.deleted = False
        self.old_epoch = False  # '---' timestamp is the Unix epoch: diff -N's "file did not exist"
        self.new_epoch = False
        self.base_blob: str | None = None  # from 'index <pre>..<post>': the pre-image's abbreviated blob hash
        self.hunks: list[Hunk] | HunkTable = []  # a big patch's: a HunkTable (engine.hunk_table)


def header_path(line: str, skip: int, line_number: int) -> str:
    """The path of a '---'/'+++' line: quoted (git) or cut at a tab (timestamp)."""
    rest = line_content(line)[skip:]
    if rest.startswith('"'):
        end = _closing_quote(rest)
        if end is None:
            raise syntax_error("unterminated quoted path", line_number)
        return unquote(rest[: end + 1], line_number)
    path = rest.split("\t", 1)[0].rstrip()  # a tab starts the timestamp; trailing blanks are noise
    if not path:
        raise syntax_error("empty path in file header", line_number)
    return path


_EPOCH = (
    r"\t(?:1970-01-01 (?:0\d|1[0-4]):[0-5]\d:00|1969-12-31 (?:09|1\d|2[0-3]):[0-5]\d:00)(?:\.0+)?(?: [+-]\d{4})?\s*$"
    r"|\tThu Jan  1 00:00:00 1970\s*$"
)


def epoch_timestamp(line: str) -> bool:
    """True when a header's timestamp is the Unix epoch (in some time zone).

    ``diff -N`` / ``diff -ruN`` write an absent file as an empty one dated at the
    epoch; GNU patch reads that date as "this file is created/deleted".
    """
    # a header without a tab has no timestamp; re is imported, and the pattern compiled (and cached by
    # re), at the first tab
    if "\t" not in line:
        return False
    import re

    return re.search(_EPOCH, line) is not None


def _closing_quote(text: str) -> int | None:
    position = 1
    while position < len(text):
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == '"':
            return position
        position += 1
    return None


def _octal_escape(digits: str) -> bool:
    """``re.fullmatch("[0-3][0-7][0-7]", digits) is not None``."""
    first, second, third = (digits + "xxx")[:3]
    return len(digits) == 3 and "0" <= first <= "3" and "0" <= second <= "7" and "0" <= third <= "7"


def unquote(text: str, line_number: int) -> str:
    """Undo git's C-style quoting of a path (``"a/sp ace\\t.txt"``, octal UTF-8 bytes)."""
    if not (len(text) >= 2 and text.startswith('"') and text.endswith('"')):
        return text
    body = text[1:-1]
    data = bytearray()
    position = 0
    while position < len(body):
        character = body[position]
        if character != "\\":
            data += character.encode("utf-8", "surrogatepass")
            position += 1
            continue
        escape = body[position + 1 : position + 2]
        if escape in _GIT_ESCAPES:
            data += _GIT_ESCAPES[escape].encode()
            position += 2
        elif _octal_escape(body[position + 1 : position + 4]):
            data.append(int(body[position + 1 : position + 4], 8))
            position += 4
        else:
            raise syntax_error(f"invalid escape in quoted path {text!r}", line_number)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise syntax_error(f"quoted path {text!r} is not valid UTF-8", line_number) from None


def split_git_names(rest: str) -> tuple[str, str] | None:
    """Both names of a 'diff --git' line; None when spaces make them ambiguous."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        end = _closing_quote(rest)
        if end is None or rest[end + 1 : end + 2] != " ":
            return None
        first, second = rest[: end + 1], rest[end + 2 :]
        try:
            return unquote(first, 0), unquote(second, 0)
        except PatchSyntaxError:
            return None
    if rest.endswith('"'):
        start = rest.rfind(' "')
        if start == -1:
            return None
        try:
            return rest[:start], unquote(rest[start + 1 :], 0)
        except PatchSyntaxError:
            return None
    # Unquoted names may contain spaces; git itself only trusts the split when both halves agree.
    if len(rest) % 2 == 1:
        half = len(rest) // 2
        first, second = rest[:half], rest[half + 1 :]
        same = first == second or (first[1:2] == second[1:2] == "/" and first[2:] == second[2:])
        if rest[half] == " " and same:
            return first, second
    if rest.count(" ") == 1:
        first, second = rest.split(" ")
        return first, second
    return None


def _strip_prefixes(old: str | None, new: str | None, *, git: bool) -> tuple[str | None, str | None]:
    """Drop the a/ and b/ prefixes only when the diff uses them on every side that names a file.

    Git diffs may also use diff.mnemonicPrefix pairs (c/ i/ w/ o/); ``git apply``
    strips one component from any git diff, but a --no-prefix diff has none to
    strip, so the pair must be recognisable on both sides.
    """
    named = [path for path in (old, new) if path is not None and path != _DEV_NULL]
    if not named:
        return old, new
    pairs = _GIT_PREFIX_PAIRS if git else (("a/", "b/"),)
    for old_prefix, new_prefix in pairs:
        old_ok = old is None or old == _DEV_NULL or old.startswith(old_prefix)
        new_ok = new is None or new == _DEV_NULL or new.startswith(new_prefix)
        if old_ok and new_ok:
            return (
                old if old is None or old == _DEV_NULL else old[len(old_prefix) :],
                new if new is None or new == _DEV_NULL else new[len(new_prefix) :],
            )
    return old, new


def file_change(section: Section) -> FileChange:
    old, new = _strip_prefixes(section.old_path, section.new_path, git=section.git)
    git_old, git_new = _strip_prefixes(section.git_old, section.git_new, git=section.git)
    hunks = tuple(section.hunks) if isinstance(section.hunks, list) else section.hunks  # or a HunkTable
    created = section.created or old == _DEV_NULL
    deleted = section.deleted or new == _DEV_NULL
    if not section.git and hunks:
        # diff -N: an epoch-dated side with nothing on it is an absent file
        created = created or (section.old_epoch and all(not hunk.old for hunk in hunks))
        deleted = deleted or (section.new_epoch and all(not hunk.new for hunk in hunks))
    if created and deleted:
        raise syntax_error("file section both creates and deletes the file", section.line)

    source = section.rename_from or (old if old not in (None, _DEV_NULL) else None) or git_old
    target = section.rename_to or (new if new not in (None, _DEV_NULL) else None) or git_new
    if not hunks and not (
        section.git and (created or deleted or section.rename_to or section.new_mode is not None)
    ):
        raise syntax_error(
            "file header without any hunk",
            section.line,
            hint="every '--- / +++' pair must be followed by at least one '@@ ... @@' hunk",
        )

    operation: Operation = "update"
    if created:
        path = target
        operation = "add"
    elif deleted:
        path = source
        operation = "delete"
    else:
        path = source if section.rename_to else (target or source)
    if not path:
        raise syntax_error(
            "cannot tell which file this section changes",
            section.line,
            hint="quote paths that contain spaces, or use '--- a/PATH' / '+++ b/PATH' lines",
        )

    if operation == "add":
        if any(hunk.old for hunk in hunks) or len(hunks) > 1:
            raise syntax_error(
                f"new file {path!r} has hunks with old lines or more than one hunk",
                section.line,
                path=path,
                hint="a diff that creates a file has a single '@@ -0,0 +1,N @@' hunk",
            )
        content = hunks[0].new if hunks else ""
        return FileChange(
            path=path, operation="add", content=content, new_mode=section.new_mode, source_line=section.line
        )
    if operation == "delete":
        if any(hunk.new for hunk in hunks) or len(hunks) > 1:
            raise syntax_error(
                f"deleted file {path!r} has hunks with new lines or more than one hunk",
                section.line,
                path=path,
                hint="a diff that deletes a file has a single '@@ -1,N +0,0 @@' hunk",
            )
        delete_hunks = tuple(
            Hunk(old=hunk.old, new="", start_line=hunk.start_line, source_line=hunk.source_line)
            for hunk in hunks
        )
        if not delete_hunks:
            # git: "deleted file mode" with no hunk removes an empty file; a file with content
            # needs a hunk that removes it all ("removal patch leaves file contents" otherwise)
            delete_hunks = (Hunk(old="", new="", source_line=section.line),)
        return FileChange(path=path, operation="delete", hunks=delete_hunks, source_line=section.line)

    if section.git and not section.rename_to and source and target and source != target:
        raise syntax_error(
            f"the old name {source!r} and the new name {target!r} differ, but there is no 'rename from/to'",
            section.line,
            hint="a git diff between two different files (git diff --no-index) cannot be applied as an "
            "edit; diff the old and new versions of the same path instead",
        )
    new_path = section.rename_to if section.rename_to and section.rename_to != path else None
    return FileChange(
        path=path,
        operation="update",
        hunks=hunks,
        new_path=new_path,
        new_mode=section.new_mode,
        source_line=section.line,
        base_blob=section.base_blob,
    )
