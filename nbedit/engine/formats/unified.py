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

Speed and memory: runs of plain hunks are read a whole run at a time, and a big
text through a line index rather than a list of line strings (``unified_runs.py``).
What a file section's header lines say and the ``FileChange`` it makes are in
``unified_sections.py``.
"""

from __future__ import annotations

from nbedit._gc import paused
from nbedit.engine.diff_lines import HAND_READ, Numbers, hunk_numbers, index_blob, is_mode
from nbedit.engine.diff_lines import HUNK_HEADER as _HUNK_HEADER
from nbedit.engine.formats.unified_runs import (
    LineIndex,
    plain_hunk_body,
    read_run,
    read_run_places,
    text_lines,
)
from nbedit.engine.formats.unified_sections import (
    DIALECT,
    Section,
    epoch_timestamp,
    file_change,
    header_path,
    line_content,
    split_git_names,
    syntax_error,
    unquote,
)
from nbedit.engine.models import Change, FileChange, Hunk
from nbedit.errors import PatchSyntaxError

__all__ = ["DIALECT", "looks_like", "marker_line", "parse"]

# A line only a unified diff has: a git header, a '---' line with a '+++' line after it, a hunk header
# (numbered, or Aider's '@@ ... @@' with a body line under it; a bare '@@' is apply_patch's too).
# (Patterns compiled, and cached by re, when first used; the usual lines are read without re:
# ``diff_lines``, a command's start-up.)
_MARKER = r"diff --git |--- [^\n]*\n\+\+\+ |" + _HUNK_HEADER + r"|@@ [^\n@]*@@[^\n@]*\r?\n[ +\-]"
_MARKER_AFTER_NEWLINE = r"\n(?:" + _MARKER + ")"
_GIT_HEADER_PREFIX = "diff --git "
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


def marker_line(text: str) -> int | None:
    """0-based index of the first line that only a unified diff would have, or None."""
    if "\n+++ " not in text and "@@" not in text and _GIT_HEADER_PREFIX not in text:
        return None  # one C-level scan rules most texts out
    if _marked_at(text, 0):
        return 0  # a diff's first line, read by hand
    if len(text) <= HAND_READ:  # a line at a time, by hand (re stays out of a small command)
        start = text.find("\n") + 1 or -1
        number = 1
        while start >= 0:
            if _marked_at(text, start):
                return number
            start = text.find("\n", start) + 1 or -1
            number += 1
        return None
    import re

    found = re.search(_MARKER_AFTER_NEWLINE, text)
    return None if found is None else text.count("\n", 0, found.start() + 1)


def _marked_at(text: str, start: int) -> bool:
    """Whether ``re.match(_MARKER, text, start)`` matches, read by hand: a git header; a '---' line
    with a '+++' line after it; a numbered hunk header; '@@', then no '@' up to an '@@', then no '@'
    to the end of the line, and a ' ', '+' or '-' line after it (Aider's '@@ ... @@')."""
    if text.startswith(_GIT_HEADER_PREFIX, start):
        return True
    line_end = text.find("\n", start)
    if text.startswith("--- ", start):
        return line_end >= 0 and text.startswith("+++ ", line_end + 1)
    if not text.startswith("@@ ", start):
        return False
    line = text[start:] if line_end < 0 else text[start:line_end]
    if hunk_numbers(line) is not None:
        return True
    closing = line.find("@", 3)  # the '@@' must be the first '@' after '@@ ' ([^\n@]*)
    if closing < 0 or not line.startswith("@@", closing) or line.find("@", closing + 2) >= 0:
        return False
    return line_end >= 0 and text[line_end + 1 : line_end + 2] in (" ", "+", "-")


def looks_like(text: str) -> bool:
    return marker_line(text) is not None


def parse(text: str, *, default_path: str | None = None) -> Change:
    """Parse a unified or git diff into a ``Change``; raise ``PatchSyntaxError`` if malformed."""
    with paused():  # 100,000 hunks are millions of objects: see nbedit._gc
        return _Parser(text, default_path).run()


class _Parser:
    def __init__(self, text: str, default_path: str | None) -> None:
        self.text = text
        self.lines = text_lines(text)
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
                section = Section(line=self.index + 1)
                self._file_names(section)
                self._section(section)
            elif self._half_header(line):
                section = Section(line=self.index + 1)
                path = header_path(line, 4, self.index + 1)
                prefix = "a/" if line.startswith("--- ") else "b/"  # the side's git prefix, as -p1 strips it
                section.old_path = section.new_path = path.removeprefix(prefix) or path
                self.index += 1
                self._section(section)
            elif hunk_numbers(line) is not None or line.startswith("@@ ") or line.rstrip("\r") == "@@":
                if self.default_path is None:
                    raise syntax_error(
                        "hunk without a file header (no '--- a/path' and '+++ b/path' lines before it)",
                        self.index + 1,
                        hint="put '--- a/PATH' and '+++ b/PATH' lines before the first @@ line, "
                        "or name the file in scope (default_path=..., nbedit apply --path FILE, %%edit FILE)",
                    )
                section = Section(line=self.index + 1, old_path=self.default_path, new_path=self.default_path)
                self._section(section)
            elif line.startswith(("GIT binary patch", "Binary files ")):
                raise self._binary()
            else:
                self.index += 1  # preamble, commit message, e-mail signature: not part of any file
        if not self.files:
            raise syntax_error(
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
        return syntax_error(
            "binary patches are not supported",
            self.index + 1,
            hint="nbedit edits text files only; apply binary changes with git apply",
        )

    # -- headers ------------------------------------------------------------------------------------

    def _git_header(self) -> Section:
        line_number = self.index + 1
        section = Section(line=line_number, git=True)
        names = split_git_names(line_content(self.lines[self.index])[len(_GIT_HEADER_PREFIX) :])
        if names is not None:
            section.git_old, section.git_new = names
        self.index += 1
        lines = self.lines
        while self.index < len(lines):
            line = line_content(lines[self.index])
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

    def _extended_header(self, section: Section, line: str) -> None:
        line_number = self.index + 1
        if line.startswith(("copy from ", "copy to ")):
            raise syntax_error(
                "copy patches are not supported",
                line_number,
                hint="regenerate the diff without copy detection (drop -C / --find-copies)",
            )
        if line.startswith(("old mode ", "new mode ", "new file mode ", "deleted file mode ")):
            mode_text = line.rsplit(" ", 1)[-1]
            if not is_mode(mode_text):
                raise syntax_error(
                    f"invalid file mode {mode_text!r}", line_number, hint="git modes look like 100644"
                )
            mode = int(mode_text, 8)
            if mode & 0o170000 not in (0, 0o100000):
                kind = {0o120000: "symbolic links", 0o160000: "submodules"}.get(
                    mode & 0o170000, "special files"
                )
                raise syntax_error(f"{kind} are not supported (mode {mode_text})", line_number)
            if line.startswith("new file mode "):
                section.created = True
                section.new_mode = mode & 0o777
            elif line.startswith("new mode "):
                section.new_mode = mode & 0o777
            elif line.startswith("deleted file mode "):
                section.deleted = True
        elif line.startswith("index "):
            blob = index_blob(line)
            if blob is not None and blob.strip("0"):  # all zeros: no pre-image (a new file)
                section.base_blob = blob.lower()
        elif line.startswith(("rename from ", "rename old ")):
            section.rename_from = unquote(line.split(" ", 2)[2], line_number)
        elif line.startswith(("rename to ", "rename new ")):
            section.rename_to = unquote(line.split(" ", 2)[2], line_number)

    def _file_names(self, section: Section) -> None:
        """Read a '---' line and the '+++' line after it."""
        section.old_path = header_path(self.lines[self.index], 4, self.index + 1)
        section.new_path = header_path(self.lines[self.index + 1], 4, self.index + 2)
        section.old_epoch = epoch_timestamp(self.lines[self.index])
        section.new_epoch = epoch_timestamp(self.lines[self.index + 1])
        self.index += 2

    # -- hunks --------------------------------------------------------------------------------------

    def _section(self, section: Section) -> None:
        lines = self.lines
        if isinstance(lines, LineIndex):  # a big patch: its hunks kept as places in its text
            from nbedit.engine.hunk_table import HunkTable  # (imported for one: start-up time)

            section.hunks = HunkTable(self.text)
        while self.index < len(lines):
            line = lines[self.index]
            if line.startswith("@@"):
                table = section.hunks
                if not isinstance(table, list):  # a HunkTable keeps numbers: no hunk is made
                    assert isinstance(lines, LineIndex)
                    places = read_run_places(self.text, lines, self.index, self._offset(self.index))
                    if places is not None:
                        sources, starts, changed = places.source_lines, places.start_lines, places.changed
                        table.extend_places(sources, starts, changed, lines.starts, places.end)
                        self.index = places.end
                        continue
                else:
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
        self.files.append(file_change(section))

    def _hunk(self) -> Hunk | None:
        header_number = self.index + 1
        header = line_content(self.lines[self.index])
        if header.startswith("@@@"):
            raise syntax_error(
                "combined diffs (merge commits, '@@@' headers) are not supported",
                header_number,
                hint="diff against one parent, e.g. git diff HEAD^1",
            )
        numbers = hunk_numbers(header)
        if numbers is None:
            self.index += 1
            return self._loose_hunk(header_number)
        try:
            return self._counted_hunk(header_number, numbers)
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

    def _counted_hunk(self, header_number: int, numbers: Numbers) -> Hunk:
        """A hunk whose header's line numbers and counts agree with its body (``numbers``: its header's
        ``diff_lines.hunk_numbers``)."""
        old_text, old_count_text, _, new_count_text = numbers
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
                raise syntax_error(
                    f"{line_content(raw)[:60]!r} is inside the hunk at line {header_number} but is not a diff line",
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
                raise syntax_error(
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
        if isinstance(self.lines, LineIndex):
            return self.lines.starts[index]
        known_index, known_offset = self._known
        if index < known_index:
            known_index, known_offset = 0, 0
        offset = known_offset + sum(map(len, self.lines[known_index:index])) + index - known_index
        self._known = (index, offset)
        return offset

    def _hunk_run(self) -> list[Hunk]:
        """A run of hunks that follow each other directly, read at once (``unified_runs.read_run``);
        an empty list means nothing was consumed."""
        hunks, self.index = read_run(self.text, self.lines, self.index, self._offset(self.index))
        return hunks

    def _plain_hunk_body(self, old_count: int, new_count: int) -> tuple[str, str] | None:
        """The common hunk's body, or None (nothing consumed): ``unified_runs.plain_hunk_body``."""
        read = plain_hunk_body(self.lines, self.index, old_count, new_count)
        if read is None:
            return None
        old, new, self.index = read
        return old, new

    def _no_newline(
        self, last_kind: str, old_lines: list[str], new_lines: list[str], old_closed: bool, new_closed: bool
    ) -> tuple[bool, bool]:
        if not last_kind:
            raise syntax_error(
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
        raise syntax_error(
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
            what = f"line {line} ({line_content(self.lines[line - 1])[:40]!r}) does not fit the hunk"
        return syntax_error(
            f"hunk at line {header_number} expects {old_count} old and {new_count} new lines, "
            f"found {old_seen} old and {new_seen} new before {what}",
            line,
            hint="fix the counts in the @@ line, or regenerate the diff instead of editing it by hand; "
            "every body line starts with ' ', '-' or '+'",
        )
