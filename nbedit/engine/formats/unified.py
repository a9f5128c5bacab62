"""Unified diffs: ``diff -u`` output and ``git diff`` / ``git format-patch`` output.

The parser is a line-driven state machine in the spirit of GNU patch and
``git apply``: text before the first file header (an e-mail, a ``git log -p``
commit header, a chat message) is skipped, and so is text between file
sections. A hunk whose ``@@ -a,b +c,d @@`` counts agree with its body is read
as written, its line number kept as the place to look first. Model-written
diffs often have no usable numbers: ``@@ ... @@`` (Aider's own format), a bare
``@@``, a garbled header, or counts that do not fit the body. Such a hunk is
read from its body alone (``_Parser._loose_hunk``) and, like an apply_patch
chunk, located by its content (``start_line`` None: its old text must be
unique). Only a hunk the text ends inside of stays an error: counts that want
more lines than the text has mean the diff was cut off, and applying half of it
silently is the worst outcome. A lone ``--- PATH`` or ``+++ PATH`` line above a
hunk names its file, and a hunk with no file header at all edits
``default_path`` when one is given. The one tolerance inside a body is a
context line whose single leading space was stripped by an editor or chat
client: an empty line inside a hunk counts as empty context.

Mapping onto ``Hunk`` (see ``models.py``): ``old``/``new`` are whole lines,
each ending in ``"\\n"`` unless ``\\ No newline at end of file`` says otherwise;
a ``"\\r"`` the diff carries (a CRLF file) is kept. ``start_line`` is the old
start, or for a pure insertion the old line *before which* the new lines go.
Git's extended headers give renames (``new_path``), modes (``new_mode``) and
empty-file adds/deletes; binary, copy, symlink and submodule patches are
refused with a message rather than half-applied.

Speed: a ``git diff`` of hundreds of hunks is mostly runs of hunks that follow
each other directly with plain body lines. Such a run is read as a whole
(``_Parser._hunk_run``): every side's texts with one join and one split, counts
checked against the headers by C-level maps. Anything unusual in a hunk leaves
that hunk to the line-driven readers, so errors and edge cases are theirs. The
run reader also records each hunk's '+' and '-' line counts where a diff of the
hunk provably shows them (``Hunk.changed_lines``): the history entry's counts then
need no second look at the texts.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import compress, repeat
from operator import add, eq, itemgetter, ne, not_

from nbedit._dataclass import dataclass, field
from nbedit._gc import paused
from nbedit.engine.models import Change, FileChange, Hunk
from nbedit.errors import PatchSyntaxError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.models import Operation

__all__ = ["DIALECT", "looks_like", "marker_line", "parse"]

DIALECT = "unified"

_HUNK_HEADER = re.compile(r"@@ -([0-9]{1,9})(?:,([0-9]{1,9}))? \+([0-9]{1,9})(?:,([0-9]{1,9}))? @@(?!@)")
# The same header as a whole line after the newline before it (a literal start: ``re`` finds it
# with a fast scan, where a ``^`` under MULTILINE is tried at every character).
_HEADER_LINE = re.compile(r"\n" + _HUNK_HEADER.pattern + r"[^\n]*")
# The first line from which a run of hunks surely ends: one that is neither a hunk header nor a
# body line ('@@@', a bad header, a blank line, '\ No newline', 'diff'...), or a '--- ' line (the
# next file's header in a diff without 'diff' lines).
_RUN_END = re.compile(r"\n(?:[^ +\-@]|--- |@(?!" + _HUNK_HEADER.pattern[1:] + "))")
# A line only a unified diff has: a git header, a '---' line with a '+++' line after it, a hunk header
# (numbered, or Aider's '@@ ... @@' with a body line under it; a bare '@@' is apply_patch's too).
_MARKER = re.compile(
    r"diff --git |--- [^\n]*\n\+\+\+ |" + _HUNK_HEADER.pattern + r"|@@ [^\n@]*@@[^\n@]*\r?\n[ +\-]"
)
_MARKER_AFTER_NEWLINE = re.compile(r"\n(?:" + _MARKER.pattern + ")")
_AT = re.compile("@")
_AFTER_MARKER = slice(1, None)
_MODE = re.compile(r"[0-7]{6}")
_DEV_NULL = "/dev/null"
_GIT_HEADER_PREFIX = "diff --git "
_INDEX_LINE = re.compile(r"index ([0-9a-fA-F]{4,64})\.\.[0-9a-fA-F]{4,64}(?: [0-7]{6})?\s*$")
_EXTENDED_HEADERS = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "copy from ",
    "copy to ",
    "rename from ",
    "rename to ",
    "rename old ",
    "rename new ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)
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


def marker_line(text: str) -> int | None:
    """0-based index of the first line that only a unified diff would have, or None."""
    if "\n+++ " not in text and "@@" not in text and _GIT_HEADER_PREFIX not in text:
        return None  # one C-level scan rules most texts out
    if _MARKER.match(text):
        return 0
    found = _MARKER_AFTER_NEWLINE.search(text)
    return None if found is None else text.count("\n", 0, found.start() + 1)


def looks_like(text: str) -> bool:
    return marker_line(text) is not None


def parse(text: str, *, default_path: str | None = None) -> Change:
    """Parse a unified or git diff into a ``Change``; raise ``PatchSyntaxError`` if malformed."""
    with paused():  # 100,000 hunks are millions of objects: see nbedit._gc
        return _Parser(text, default_path).run()


def _content(line: str) -> str:
    """A change-text line without its ``"\\n"`` and without a trailing ``"\\r"``."""
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def _error(
    message: str, line: int | None, hint: str | None = None, path: str | None = None
) -> PatchSyntaxError:
    return PatchSyntaxError(message, line=line, hint=hint, dialect=DIALECT, path=path)


@dataclass
class _Section:
    """What the header lines of one file section said, before the hunks."""

    line: int  # 1-based line of the first header line
    git: bool = False
    git_old: str | None = None
    git_new: str | None = None
    old_path: str | None = None  # from ---, None when absent
    new_path: str | None = None  # from +++
    rename_from: str | None = None
    rename_to: str | None = None
    new_mode: int | None = None
    created: bool = False
    deleted: bool = False
    old_epoch: bool = False  # '---' timestamp is the Unix epoch: diff -N's "file did not exist"
    new_epoch: bool = False
    base_blob: str | None = None  # from 'index <pre>..<post>': the pre-image's abbreviated blob hash
    hunks: list[Hunk] = field(default_factory=list)


class _Parser:
    def __init__(self, text: str, default_path: str | None) -> None:
        self.text = text
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.default_path = default_path
        self.index = 0
        self.files: list[FileChange] = []
        self._known = (0, 0)  # (line index, offset of its start in text): where _offset counts from

    # -- driver -------------------------------------------------------------------------------------

    def run(self) -> Change:
        lines = self.lines
        while self.index < len(lines):
            line = lines[self.index]
            if line.startswith(_GIT_HEADER_PREFIX):
                self._section(self._git_header())
            elif (
                line.startswith("--- ")
                and self.index + 1 < len(lines)
                and lines[self.index + 1].startswith("+++ ")
            ):
                section = _Section(line=self.index + 1)
                self._file_names(section)
                self._section(section)
            elif self._half_header(line):
                section = _Section(line=self.index + 1)
                path = _header_path(line, 4, self.index + 1)
                prefix = "a/" if line.startswith("--- ") else "b/"  # the side's git prefix, as -p1 strips it
                section.old_path = section.new_path = path.removeprefix(prefix) or path
                self.index += 1
                self._section(section)
            elif _HUNK_HEADER.match(line) or line.startswith("@@ ") or line.rstrip("\r") == "@@":
                if self.default_path is None:
                    raise _error(
                        "hunk without a file header (no '--- a/path' and '+++ b/path' lines before it)",
                        self.index + 1,
                        hint="put '--- a/PATH' and '+++ b/PATH' lines before the first @@ line, "
                        "or name the file in scope (default_path=..., nbedit apply --path FILE, %%edit FILE)",
                    )
                section = _Section(
                    line=self.index + 1, old_path=self.default_path, new_path=self.default_path
                )
                self._section(section)
            elif line.startswith(("GIT binary patch", "Binary files ")):
                raise self._binary()
            else:
                self.index += 1  # preamble, commit message, e-mail signature: not part of any file
        if not self.files:
            raise _error(
                "no file sections found",
                None,
                hint="a unified diff needs '--- a/PATH' and '+++ b/PATH' lines (or 'diff --git') "
                "followed by '@@ -start,count +start,count @@' hunks",
            )
        return Change(files=tuple(self.files), dialect=DIALECT)

    def _half_header(self, line: str) -> bool:
        """A lone '--- PATH' or '+++ PATH' line right above a hunk: the other header line was lost."""
        if not line.startswith(("--- ", "+++ ")) or self.index + 1 >= len(self.lines):
            return False
        if not self.lines[self.index + 1].startswith("@@"):
            return False
        previous = self.lines[self.index - 1] if self.index else ""
        return not (line.startswith("+++ ") and previous.startswith("--- "))

    def _binary(self) -> PatchSyntaxError:
        return _error(
            "binary patches are not supported",
            self.index + 1,
            hint="nbedit edits text files only; apply binary changes with git apply",
        )

    # -- headers ------------------------------------------------------------------------------------

    def _git_header(self) -> _Section:
        line_number = self.index + 1
        section = _Section(line=line_number, git=True)
        names = _split_git_names(_content(self.lines[self.index])[len(_GIT_HEADER_PREFIX) :])
        if names is not None:
            section.git_old, section.git_new = names
        self.index += 1
        lines = self.lines
        while self.index < len(lines):
            line = _content(lines[self.index])
            if line.startswith(("GIT binary patch", "Binary files ")):
                raise self._binary()
            if (
                line.startswith("--- ")
                and self.index + 1 < len(lines)
                and lines[self.index + 1].startswith("+++ ")
            ):
                self._file_names(section)
                return section
            if not line.startswith(_EXTENDED_HEADERS):
                return section
            self._extended_header(section, line)
            self.index += 1
        return section

    def _extended_header(self, section: _Section, line: str) -> None:
        line_number = self.index + 1
        if line.startswith(("copy from ", "copy to ")):
            raise _error(
                "copy patches are not supported",
                line_number,
                hint="regenerate the diff without copy detection (drop -C / --find-copies)",
            )
        if line.startswith(("old mode ", "new mode ", "new file mode ", "deleted file mode ")):
            mode_text = line.rsplit(" ", 1)[-1]
            if not _MODE.fullmatch(mode_text):
                raise _error(
                    f"invalid file mode {mode_text!r}", line_number, hint="git modes look like 100644"
                )
            mode = int(mode_text, 8)
            if mode & 0o170000 not in (0, 0o100000):
                kind = {0o120000: "symbolic links", 0o160000: "submodules"}.get(
                    mode & 0o170000, "special files"
                )
                raise _error(f"{kind} are not supported (mode {mode_text})", line_number)
            if line.startswith("new file mode "):
                section.created = True
                section.new_mode = mode & 0o777
            elif line.startswith("new mode "):
                section.new_mode = mode & 0o777
            elif line.startswith("deleted file mode "):
                section.deleted = True
        elif line.startswith("index "):
            found = _INDEX_LINE.match(line)
            if found is not None and found.group(1).strip("0"):  # all zeros: no pre-image (a new file)
                section.base_blob = found.group(1).lower()
        elif line.startswith(("rename from ", "rename old ")):
            section.rename_from = _unquote(line.split(" ", 2)[2], line_number)
        elif line.startswith(("rename to ", "rename new ")):
            section.rename_to = _unquote(line.split(" ", 2)[2], line_number)

    def _file_names(self, section: _Section) -> None:
        """Read a '---' line and the '+++' line after it."""
        section.old_path = _header_path(self.lines[self.index], 4, self.index + 1)
        section.new_path = _header_path(self.lines[self.index + 1], 4, self.index + 2)
        section.old_epoch = _epoch_timestamp(self.lines[self.index])
        section.new_epoch = _epoch_timestamp(self.lines[self.index + 1])
        self.index += 2

    # -- hunks --------------------------------------------------------------------------------------

    def _section(self, section: _Section) -> None:
        lines = self.lines
        while self.index < len(lines):
            line = lines[self.index]
            if line.startswith("@@"):
                run = self._hunk_run()
                if run:
                    section.hunks.extend(run)
                    continue
                hunk = self._hunk()
                if hunk is not None:
                    section.hunks.append(hunk)
                continue
            if section.hunks and not line.strip():
                following = self.index + 1
                while following < len(lines) and not lines[following].strip():
                    following += 1
                if following < len(lines) and lines[following].startswith("@@"):
                    self.index = following  # blank lines between two hunks of this file
                    continue
            if line.startswith(("GIT binary patch", "Binary files ")):
                raise self._binary()
            break
        self.files.append(_file_change(section))

    def _hunk(self) -> Hunk | None:
        header_number = self.index + 1
        header = _content(self.lines[self.index])
        if header.startswith("@@@"):
            raise _error(
                "combined diffs (merge commits, '@@@' headers) are not supported",
                header_number,
                hint="diff against one parent, e.g. git diff HEAD^1",
            )
        match = _HUNK_HEADER.match(header)
        if match is None:
            self.index += 1
            return self._loose_hunk(header_number)
        try:
            return self._counted_hunk(header_number, match)
        except PatchSyntaxError as error:
            if error.line is None or error.line > len(self.lines) or self.index >= len(self.lines):
                raise  # the text ends inside the hunk: cut off, not miscounted
            self.index = header_number
            try:
                loose = self._loose_hunk(header_number)
            except PatchSyntaxError:
                raise error from None
            if loose is None:
                raise error
            return loose

    def _counted_hunk(self, header_number: int, match: re.Match[str]) -> Hunk:
        """A hunk whose header's line numbers and counts agree with its body."""
        old_text, old_count_text, _, new_count_text = match.groups()
        old_start = int(old_text)
        old_count = 1 if old_count_text is None else int(old_count_text)
        new_count = 1 if new_count_text is None else int(new_count_text)
        self.index += 1

        quick = self._plain_hunk_body(old_count, new_count)
        if quick is not None:
            old, new = quick
            self._reject_overflow(header_number, old_count, new_count)
            return Hunk(
                old=old,
                new=new,
                whole_lines=True,
                start_line=old_start if old else old_start + 1,
                source_line=header_number,
            )

        old_lines: list[str] = []
        new_lines: list[str] = []
        old_closed = new_closed = False  # a '\ No newline' line ended that side
        last_kind = ""
        old_left, new_left = old_count, new_count
        lines = self.lines
        while old_left > 0 or new_left > 0:
            if self.index >= len(lines):
                raise self._count_error(header_number, old_count, new_count, old_left, new_left, None)
            raw = lines[self.index]
            body = raw[1:] + "\n"
            marker = raw[:1]
            if raw in ("", "\r"):
                marker, body = " ", raw + "\n"
            if marker == "\\":
                old_closed, new_closed = self._no_newline(
                    last_kind, old_lines, new_lines, old_closed, new_closed
                )
                self.index += 1
                continue
            if marker not in (" ", "-", "+"):
                raise self._count_error(
                    header_number, old_count, new_count, old_left, new_left, self.index + 1
                )
            if marker in (" ", "-"):
                if old_left == 0 or old_closed:
                    raise self._count_error(
                        header_number, old_count, new_count, old_left, new_left, self.index + 1
                    )
                old_lines.append(body)
                old_left -= 1
            if marker in (" ", "+"):
                if new_left == 0 or new_closed:
                    raise self._count_error(
                        header_number, old_count, new_count, old_left, new_left, self.index + 1
                    )
                new_lines.append(body)
                new_left -= 1
            last_kind = marker
            self.index += 1
        if self.index < len(lines) and lines[self.index].startswith("\\"):
            self._no_newline(last_kind, old_lines, new_lines, old_closed, new_closed)
            self.index += 1
        self._reject_overflow(header_number, old_count, new_count)
        old = "".join(old_lines)
        start_line = old_start if old else old_start + 1
        return Hunk(
            old=old,
            new="".join(new_lines),
            whole_lines=True,
            start_line=start_line,
            source_line=header_number,
        )

    def _loose_hunk(self, header_number: int) -> Hunk | None:
        """A hunk whose header gives no usable line numbers, read from its body alone.

        Models write ``@@ ... @@``, a bare ``@@`` or counts that do not fit the
        body; like an apply_patch chunk, such a hunk is located by its content
        (``start_line`` None: the old text must be unique). The body runs while
        lines start with ' ', '-', '+' (an empty line is empty context) and ends
        at the next header, a code fence or other text; empty lines at its end
        separate it from what follows and are left out. A line of other text
        with change lines right after it is inside the hunk, so it is an error,
        never a silent end of the hunk: the change lines after it would be lost.
        """
        lines = self.lines
        start = index = self.index
        while index < len(lines):
            raw = lines[index]
            if raw.startswith(("@@", _GIT_HEADER_PREFIX)):
                break
            if raw.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
                break
            if raw in ("", "\r") or raw[0] in " -+\\":
                index += 1
                continue
            following = lines[index + 1] if index + 1 < len(lines) else ""
            inside = lines[index - 1] not in ("", "\r") and following[:1] in ("-", "+")
            if inside and not raw.lstrip().startswith(("```", "~~~")) and index > start:
                raise _error(
                    f"{_content(raw)[:60]!r} is inside the hunk at line {header_number} but is not a diff line",
                    index + 1,
                    hint="every line of a hunk starts with ' ' (unchanged), '-' (removed) or '+' (added); "
                    "add the missing leading space to an unchanged line",
                )
            break
        end = index
        while end > start and lines[end - 1] in ("", "\r"):
            end -= 1
        old_lines: list[str] = []
        new_lines: list[str] = []
        old_closed = new_closed = False
        last_kind = ""
        for self.index in range(start, end):
            raw = lines[self.index]
            marker, body = (" ", raw + "\n") if raw in ("", "\r") else (raw[:1], raw[1:] + "\n")
            if marker == "\\":
                old_closed, new_closed = self._no_newline(
                    last_kind, old_lines, new_lines, old_closed, new_closed
                )
                continue
            if (marker in " -" and old_closed) or (marker in " +" and new_closed):
                raise _error(
                    "a line follows '\\ No newline at end of file' in the hunk",
                    self.index + 1,
                    hint="that marker may only follow the last line of the old or new side",
                )
            if marker in " -":
                old_lines.append(body)
            if marker in " +":
                new_lines.append(body)
            last_kind = marker
        self.index = end
        if not old_lines and not new_lines:
            return None  # an '@@ ... @@' line with nothing under it (often the last line of a reply's diff)
        old = "".join(old_lines)
        return Hunk(
            old=old, new="".join(new_lines), whole_lines=True, at_end=not old, source_line=header_number
        )

    def _offset(self, index: int) -> int:
        """Offset in the text of the start of line ``index`` (0-based)."""
        known_index, known_offset = self._known
        if index < known_index:
            known_index, known_offset = 0, 0
        offset = known_offset + sum(map(len, self.lines[known_index:index])) + index - known_index
        self._known = (index, offset)
        return offset

    def _hunk_run(self) -> list[Hunk]:
        """Hunks that follow each other directly, read a whole run at a time.

        Every hunk of the run but the last is a header followed by plain body
        lines (' ', '-' or '+') up to the next header, in exactly the numbers its
        header says: the careful reader would read the same lines, find no
        '\\ No newline' marker and no extra line, and make the same texts. Each
        side's texts come from one join of the run's lines without their first
        character (the other side's lines left out, a NUL line where each header
        was) and one split at the NULs: C-level maps, no Python step per line.
        The last hunk of a run, and any hunk that is not exactly so, is left to
        the hunk readers, which give the precise errors; an empty list means
        nothing was consumed.
        """
        text = self.text
        start = self._offset(self.index)
        if start == 0:
            return []  # the run's end is found by the newline before each line
        end = _RUN_END.search(text, start - 1)
        stop = end.start() if end else len(text)
        size = text.count("\n", start, stop) + (stop < len(text) or not text.endswith("\n"))
        run = self.lines[self.index : self.index + size]
        markers = "".join(map(itemgetter(0), run))  # no line of a run is empty
        heads = [found.start() for found in _AT.finditer(markers)]
        if len(heads) < 2 or heads[0] != 0 or text.find("\x00", start, stop) != -1:
            return []  # not two hunks in a row; or a NUL, which marks the headers below
        last = heads[-1]  # the last hunk of the run is read by the hunk readers
        numbers = _HEADER_LINE.findall("\n" + "\n".join([run[head] for head in heads[:-1]]))
        stripped = list(map(itemgetter(_AFTER_MARKER), run[:last]))
        for head in heads[:-1]:
            stripped[head] = "\x00"
        olds = ("\n".join(compress(stripped, map(ne, markers, repeat("+")))) + "\n").split("\x00\n")
        news = ("\n".join(compress(stripped, map(ne, markers, repeat("-")))) + "\n").split("\x00\n")
        del olds[0], news[0]
        if not (len(olds) == len(news) == len(numbers) == len(heads) - 1):
            return []  # cannot happen: every header starts one hunk and is one NUL line
        # every hunk's line counts against its header's, in C-level maps
        old_sizes = list(map(str.count, olds, repeat("\n")))
        new_sizes = list(map(str.count, news, repeat("\n")))
        expected_old = list(map(int, [number[1] or "1" for number in numbers]))
        expected_new = list(map(int, [number[3] or "1" for number in numbers]))
        if old_sizes != expected_old or new_sizes != expected_new:
            fits = 0  # the hunks before the first whose counts do not fit its body
            while old_sizes[fits] == expected_old[fits] and new_sizes[fits] == expected_new[fits]:
                fits += 1
            if not fits:
                return []  # the careful reader says how the counts are off
            del olds[fits:], news[fits:], numbers[fits:]
        header_lines = list(map(add, heads[: len(olds)], repeat(self.index + 1)))
        self.index += heads[len(olds)]
        # a pure insertion's start is the line after the one its header names
        starts = list(map(add, map(int, [number[0] for number in numbers]), map(not_, olds)))
        read = heads[len(olds)]  # the lines of the hunks read here (up to the next header)
        changed = _changed_lines(markers[:read], stripped[:read], heads[: len(olds)])
        return list(
            map(
                Hunk,
                olds,
                news,
                repeat(True),
                starts,
                repeat(()),
                repeat(False),
                repeat(False),
                repeat(False),
                header_lines,
                repeat(()),
                changed,
            )
        )

    def _plain_hunk_body(self, old_count: int, new_count: int) -> tuple[str, str] | None:
        """The common hunk, read with as little Python per line as possible.

        Only ' ', '-', '+' and empty lines, counts that add up exactly, and no
        '\\ No newline' marker after it; anything else returns None (nothing
        consumed) and the careful reader takes over, with its precise errors.
        """
        lines = self.lines
        start = position = self.index
        old_left, new_left = old_count, new_count
        total = len(lines)
        plain = True  # no empty line (an editor's stripped context line) in the body
        # Take the body in runs: with L = max(old_left, new_left), the next L lines are all
        # body lines (each fills at most one line of each side), so a run is counted with C
        # calls, and the loop stops exactly where a line-by-line reader would.
        while (old_left > 0 or new_left > 0) and position < total:
            run = lines[position : position + max(old_left, new_left)]
            markers = "".join([line[:1] for line in run])
            removed, added = markers.count("-"), markers.count("+")
            context = markers.count(" ")
            if len(markers) != len(run):
                empty = sum(1 for line in run if not line)
                plain = False
                context += empty
            if removed + added + context != len(run):
                return None  # a '\\', '\r' or other line: the careful reader decides
            old_left -= removed + context
            new_left -= added + context
            position += len(run)
        if old_left or new_left or (position < total and lines[position].startswith("\\")):
            return None
        body = lines[start:position]
        if plain:
            old = "\n".join([line[1:] for line in body if line[0] != "+"]) + "\n" if old_count else ""
            new = "\n".join([line[1:] for line in body if line[0] != "-"]) + "\n" if new_count else ""
        else:
            old = "".join(
                [line[1:] + "\n" if line[:1] in " -" else line + "\n" for line in body if line[:1] != "+"]
            )
            new = "".join(
                [line[1:] + "\n" if line[:1] in " +" else line + "\n" for line in body if line[:1] != "-"]
            )
        self.index = position
        return old, new

    def _no_newline(
        self, last_kind: str, old_lines: list[str], new_lines: list[str], old_closed: bool, new_closed: bool
    ) -> tuple[bool, bool]:
        if not last_kind:
            raise _error(
                "'\\ No newline at end of file' before any line of the hunk",
                self.index + 1,
                hint="this marker must follow the last line of the old or new side",
            )
        if last_kind in (" ", "-") and not old_closed:
            old_lines[-1] = old_lines[-1][:-1]
            old_closed = True
        if last_kind in (" ", "+") and not new_closed:
            new_lines[-1] = new_lines[-1][:-1]
            new_closed = True
        return old_closed, new_closed

    def _reject_overflow(self, header_number: int, old_count: int, new_count: int) -> None:
        """After a complete hunk, a further body line means the counts were too small."""
        if self.index >= len(self.lines):
            return
        line = self.lines[self.index]
        if not line.startswith(("+", "-", " ")):
            return  # the usual case: the next hunk's header, a blank line, the next file
        if line.rstrip("\r").rstrip(" ") == "--" and self.index + 1 < len(self.lines):
            return  # e-mail signature separator (git format-patch; its space may be stripped) after the last hunk
        next_line = self.lines[self.index + 1] if self.index + 1 < len(self.lines) else ""
        if line.startswith("--- ") and next_line.startswith("+++ "):
            return  # the next file's header
        raise _error(
            f"the hunk at line {header_number} has more lines than its header says "
            f"(-{old_count} +{new_count}); line {self.index + 1} is still a change line",
            self.index + 1,
            hint="fix the counts in the @@ line, or regenerate the diff instead of editing it by hand",
        )

    def _count_error(
        self,
        header_number: int,
        old_count: int,
        new_count: int,
        old_left: int,
        new_left: int,
        line: int | None,
    ) -> PatchSyntaxError:
        old_seen, new_seen = old_count - old_left, new_count - new_left
        if line is None:
            what = "the diff ends inside the hunk (truncated?)"
            line = len(self.lines)
        else:
            what = f"line {line} ({_content(self.lines[line - 1])[:40]!r}) does not fit the hunk"
        return _error(
            f"hunk at line {header_number} expects {old_count} old and {new_count} new lines, "
            f"found {old_seen} old and {new_seen} new before {what}",
            line,
            hint="fix the counts in the @@ line, or regenerate the diff instead of editing it by hand; "
            "every body line starts with ' ', '-' or '+'",
        )


# -- paths --------------------------------------------------------------------------------------------


def _changed_lines(markers: str, lines: list[str], heads: list[int]) -> list[tuple[int, int] | None]:
    """Each hunk's ``Hunk.changed_lines`` in a run: its '+' and '-' line counts where they are certain.

    ``markers`` holds the first character of every line of the hunks ('@' at each
    header, at ``heads``), ``lines`` the lines without it. A hunk whose changed lines
    are one run between its context lines, none of its removed lines equal to an added
    one, has old = context + removed + context and new = context + added + context;
    a unified diff of the two (equal lines trimmed from both ends, the rest aligned)
    trims exactly the context, as the first and last changed lines differ, and the
    rest shares no line, so it shows the removed and the added lines as they are.
    When only one side has changed lines the context alone is equal at the ends, and
    the other side's lines are the difference: the counts hold whatever the lines.
    Which lines are removed and added is found with sets (C level): over the whole
    run first, and only when some line is both, per hunk; the hunks that remove and
    add the same line are left unknown (None).
    """
    shapes = markers.split("@")[1:]
    counts: list[tuple[int, int] | None] = list(
        zip(map(str.count, shapes, repeat("+")), map(str.count, shapes, repeat("-")), strict=True)
    )
    # one run of changes: no context line between the first and the last changed line
    for number in compress(range(len(shapes)), map(str.__contains__, map(str.strip, shapes), repeat(" "))):
        counts[number] = None
    removed = set(compress(lines, map(eq, markers, repeat("-"))))
    shared = removed.intersection(compress(lines, map(eq, markers, repeat("+"))))
    if not shared:
        return counts
    # some line is removed in one place and added in another: which hunks do both with a line
    places = _places(lines, shared)
    owned = list(zip(map(bisect_right, repeat(heads), places), map(lines.__getitem__, places), strict=True))
    kinds = list(map(markers.__getitem__, places))
    removed_here = set(compress(owned, map(eq, kinds, repeat("-"))))
    for number, _ in removed_here.intersection(compress(owned, map(eq, kinds, repeat("+")))):
        counts[number - 1] = None
    return counts


def _places(lines: list[str], wanted: set[str]) -> list[int]:
    """Where the lines in ``wanted`` are in ``lines``.

    A few wanted lines (the usual case: a blank or a ``return`` moved about) are found
    by ``list.index`` (C comparisons; no line hashed); many, by one set lookup a line.
    """
    if len(wanted) > 4:
        return list(compress(range(len(lines)), map(wanted.__contains__, lines)))
    places: list[int] = []
    for line in wanted:
        place = -1
        try:
            while True:
                place = lines.index(line, place + 1)
                places.append(place)
        except ValueError:
            pass
    return places


def _header_path(line: str, skip: int, line_number: int) -> str:
    """The path of a '---'/'+++' line: quoted (git) or cut at a tab (timestamp)."""
    rest = _content(line)[skip:]
    if rest.startswith('"'):
        end = _closing_quote(rest)
        if end is None:
            raise _error("unterminated quoted path", line_number)
        return _unquote(rest[: end + 1], line_number)
    path = rest.split("\t", 1)[0].rstrip()  # a tab starts the timestamp; trailing blanks are noise
    if not path:
        raise _error("empty path in file header", line_number)
    return path


_EPOCH = re.compile(
    r"\t(?:1970-01-01 (?:0\d|1[0-4]):[0-5]\d:00|1969-12-31 (?:09|1\d|2[0-3]):[0-5]\d:00)(?:\.0+)?(?: [+-]\d{4})?\s*$"
    r"|\tThu Jan  1 00:00:00 1970\s*$"
)


def _epoch_timestamp(line: str) -> bool:
    """True when a header's timestamp is the Unix epoch (in some time zone).

    ``diff -N`` / ``diff -ruN`` write an absent file as an empty one dated at the
    epoch; GNU patch reads that date as "this file is created/deleted".
    """
    return _EPOCH.search(line) is not None


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


def _unquote(text: str, line_number: int) -> str:
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
        elif re.fullmatch(r"[0-3][0-7][0-7]", body[position + 1 : position + 4]):
            data.append(int(body[position + 1 : position + 4], 8))
            position += 4
        else:
            raise _error(f"invalid escape in quoted path {text!r}", line_number)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _error(f"quoted path {text!r} is not valid UTF-8", line_number) from None


def _split_git_names(rest: str) -> tuple[str, str] | None:
    """Both names of a 'diff --git' line; None when spaces make them ambiguous."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        end = _closing_quote(rest)
        if end is None or rest[end + 1 : end + 2] != " ":
            return None
        first, second = rest[: end + 1], rest[end + 2 :]
        try:
            return _unquote(first, 0), _unquote(second, 0)
        except PatchSyntaxError:
            return None
    if rest.endswith('"'):
        start = rest.rfind(' "')
        if start == -1:
            return None
        try:
            return rest[:start], _unquote(rest[start + 1 :], 0)
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


def _file_change(section: _Section) -> FileChange:
    old, new = _strip_prefixes(section.old_path, section.new_path, git=section.git)
    git_old, git_new = _strip_prefixes(section.git_old, section.git_new, git=section.git)
    hunks = tuple(section.hunks)
    created = section.created or old == _DEV_NULL
    deleted = section.deleted or new == _DEV_NULL
    if not section.git and hunks:
        # diff -N: an epoch-dated side with nothing on it is an absent file
        created = created or (section.old_epoch and all(not hunk.old for hunk in hunks))
        deleted = deleted or (section.new_epoch and all(not hunk.new for hunk in hunks))
    if created and deleted:
        raise _error("file section both creates and deletes the file", section.line)

    source = section.rename_from or (old if old not in (None, _DEV_NULL) else None) or git_old
    target = section.rename_to or (new if new not in (None, _DEV_NULL) else None) or git_new
    if not hunks and not (
        section.git and (created or deleted or section.rename_to or section.new_mode is not None)
    ):
        raise _error(
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
        raise _error(
            "cannot tell which file this section changes",
            section.line,
            hint="quote paths that contain spaces, or use '--- a/PATH' / '+++ b/PATH' lines",
        )

    if operation == "add":
        if any(hunk.old for hunk in hunks) or len(hunks) > 1:
            raise _error(
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
            raise _error(
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
        raise _error(
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
