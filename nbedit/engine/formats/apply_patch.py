"""Codex ``apply_patch`` blocks: ``*** Begin Patch`` ... ``*** End Patch``.

The rules follow the Codex parser (``codex-rs/apply-patch/src/parser.rs``) so
that a patch Codex accepts parses here the same way, and a patch Codex rejects
(no operations, an ``Update File`` without chunks, an unknown ``*** ...`` header,
a missing ``*** End Patch``) is rejected here too:

- marker lines may be padded with whitespace; the first line must be
  ``*** Begin Patch`` and the last ``*** End Patch``;
- a heredoc wrapper (``apply_patch <<'EOF'`` ... ``EOF``, also ``cat <<'EOF' |
  apply_patch``) and a Markdown code fence around the patch are peeled off;
  further than Codex, prose around the patch in a model's reply is skipped
  (``_the_patch``), as long as no part of the change is outside it;
- ``*** Add File:`` takes the following ``+`` lines; ``*** Update File:`` takes
  an optional ``*** Move to:`` and chunks of `` ``/``-``/``+`` lines, each chunk
  opened by ``@@`` or ``@@ anchor`` (the first chunk may omit it) and optionally
  closed by ``*** End of File``; an empty line inside a chunk is empty context.

Where we go further than Codex, it is toward saying *more* precisely where to
look: consecutive ``@@ scope`` lines stack into ``Hunk.anchors`` (outermost
first) instead of being an error. Empty lines at the very end of a chunk are
taken as separators rather than context: Codex itself retries without them when
the match fails, and trailing context can only narrow a match, never change
what is replaced. A chunk without context or removed lines is an append at the
end of the file, as in Codex.
"""

from __future__ import annotations

import re

from nbedit.engine.models import Change, FileChange, Hunk
from nbedit.errors import PatchSyntaxError

__all__ = ["DIALECT", "looks_like", "marker_line", "parse"]

DIALECT = "apply_patch"

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"

# a pattern, compiled (and cached by ``re``) the first time a patch is parsed: detecting the
# dialect, which every change goes through, does not need it
_HEREDOC_OPEN = (
    r"(?:cd\s+\S+\s*&&\s*)?"
    r"(?:(?:apply_patch|applypatch)\s*<<-?\s*(?P<q1>['\"]?)(?P<d1>[A-Za-z_][A-Za-z0-9_]*)(?P=q1)"
    r"|<<-?\s*(?P<q2>['\"]?)(?P<d2>[A-Za-z_][A-Za-z0-9_]*)(?P=q2)"
    r"|cat\s*<<-?\s*(?P<q3>['\"]?)(?P<d3>[A-Za-z_][A-Za-z0-9_]*)(?P=q3)\s*\|\s*(?:apply_patch|applypatch))"
)
_VALID_HEADERS = "'*** Add File: PATH', '*** Delete File: PATH', '*** Update File: PATH'"

Line = tuple[int, str]  # (1-based line number in the change text, line without its "\n")


def marker_line(text: str) -> int | None:
    """0-based index of the ``*** Begin Patch`` line, or None."""
    if BEGIN not in text:
        return None  # one C-level scan instead of a Python loop over every line
    for index, line in enumerate(text.split("\n")):
        if line.strip() == BEGIN:
            return index
    return None


def looks_like(text: str) -> bool:
    return marker_line(text) is not None


def parse(text: str, *, default_path: str | None = None) -> Change:
    """Parse a Codex patch into a ``Change``; ``default_path`` is unused (every operation names its file)."""
    del default_path
    lines = _the_patch(_unwrap(_numbered_lines(text)))
    body = _check_boundaries(lines)
    files: list[FileChange] = []
    position = 0
    while position < len(body):
        number, raw = body[position]
        if not raw.strip():
            position += 1  # blank line between operations
            continue
        file_change, position = _operation(body, position)
        files.append(file_change)
    if not files:
        raise _error(
            "the patch contains no file operations",
            lines[0][0],
            hint=f"put at least one of {_VALID_HEADERS} between '*** Begin Patch' and '*** End Patch'",
        )
    return Change(files=tuple(files), dialect=DIALECT)


def _error(
    message: str, line: int | None, hint: str | None = None, path: str | None = None
) -> PatchSyntaxError:
    return PatchSyntaxError(message, line=line, hint=hint, dialect=DIALECT, path=path)


def _numbered_lines(text: str) -> list[Line]:
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    # A "\r" stays on the line: content keeps it (a CRLF patch), marker checks ignore it.
    return [(index + 1, part) for index, part in enumerate(parts)]


def _trim_blank(lines: list[Line]) -> list[Line]:
    start, end = 0, len(lines)
    while start < end and not lines[start][1].strip():
        start += 1
    while end > start and not lines[end - 1][1].strip():
        end -= 1
    return lines[start:end]


def _unwrap(lines: list[Line]) -> list[Line]:
    """Peel Markdown fences and heredoc wrappers that models put around the patch."""
    lines = _trim_blank(lines)
    while len(lines) >= 2:
        first, last = lines[0][1].strip(), lines[-1][1].strip()
        if first.startswith("```") and last == "```":
            lines = _trim_blank(lines[1:-1])
            continue
        opener = re.fullmatch(_HEREDOC_OPEN, first)
        if opener is not None:
            delimiter = opener.group("d1") or opener.group("d2") or opener.group("d3")
            if last != delimiter:
                raise _error(
                    f"the heredoc opened on line {lines[0][0]} is not closed by a {delimiter!r} line",
                    lines[-1][0],
                    hint=f"end the text with a line containing only {delimiter}, or send the patch without the heredoc",
                )
            lines = _trim_blank(lines[1:-1])
            continue
        break
    return lines


def _the_patch(lines: list[Line]) -> list[Line]:
    """The lines from '*** Begin Patch' to '*** End Patch' of a reply that has text around them.

    A model's reply puts prose and a Markdown fence around the patch; a careful
    reader applies the patch and skips the prose. What is skipped must be prose:
    a file operation header outside the patch, or a diff line right after its
    end ('*** End Patch' written too early), would be part of the change left
    out, so it is an error instead.
    """
    markers = [line.strip() for _, line in lines]
    if not markers or (markers[0] == BEGIN and markers[-1] == END):
        return lines
    if BEGIN not in markers or END not in markers:
        return lines  # the boundary check says which marker is missing
    start = markers.index(BEGIN)
    end = len(markers) - 1 - markers[::-1].index(END)
    if end < start:
        return lines
    for number, line in lines[:start] + lines[end + 1 :]:
        if line.strip().startswith((ADD, DELETE, UPDATE, MOVE)):
            raise _error(
                f"a file operation outside the patch: {line.strip()[:60]!r}",
                number,
                hint=f"put every operation between '{BEGIN}' and '{END}'",
            )
    if end + 1 < len(lines) and lines[end + 1][1][:1] in ("+", "-", " ", "@") and lines[end + 1][1].strip():
        number, line = lines[end + 1]
        raise _error(
            f"a diff line right after '{END}': {line[:60]!r}",
            number,
            hint=f"'{END}' may be written too early; move it after the last line of the patch",
        )
    return lines[start : end + 1]


def _check_boundaries(lines: list[Line]) -> list[Line]:
    if not lines:
        raise _error("the patch is empty", None, hint=f"a patch starts with '{BEGIN}' and ends with '{END}'")
    first_number, first = lines[0]
    if first.strip() != BEGIN:
        raise _error(
            f"the first line of the patch must be '{BEGIN}', found {first.strip()[:60]!r}",
            first_number,
            hint=f"start the patch with '{BEGIN}' and send only the patch (no other text around it)",
        )
    last_number, last = lines[-1]
    if len(lines) < 2 or last.strip() != END:
        raise _error(
            f"the last line of the patch must be '{END}'"
            + ("" if len(lines) < 2 else f", found {last.strip()[:60]!r}"),
            last_number,
            hint=f"the patch may be cut off; end it with '{END}' and put nothing after it",
        )
    return lines[1:-1]


def _path(raw_path: str, number: int) -> str:
    path = raw_path.strip()
    if not path:
        raise _error(
            "the file path is empty",
            number,
            hint="write the path after the marker, e.g. '*** Add File: src/app.py'",
        )
    return path


def _operation(body: list[Line], position: int) -> tuple[FileChange, int]:
    number, raw = body[position]
    header = raw.strip()
    if header.startswith(ADD):
        path = _path(header[len(ADD) :], number)
        position += 1
        content: list[str] = []
        while position < len(body) and body[position][1].startswith("+"):
            content.append(body[position][1][1:] + "\n")
            position += 1
        return FileChange(path=path, operation="add", content="".join(content), source_line=number), position
    if header.startswith(DELETE):
        path = _path(header[len(DELETE) :], number)
        return FileChange(path=path, operation="delete", source_line=number), position + 1
    if header.startswith(UPDATE):
        return _update(body, position, _path(header[len(UPDATE) :], number))
    if header == END:
        raise _error(
            f"'{END}' before the end of the text",
            number,
            hint="send one patch at a time, with nothing after its '*** End Patch' line",
        )
    raise _error(
        f"{header[:60]!r} is not a valid file operation header",
        number,
        hint=f"valid headers are {_VALID_HEADERS}",
    )


def _update(body: list[Line], position: int, path: str) -> tuple[FileChange, int]:
    header_number = body[position][0]
    position += 1
    new_path = None
    if position < len(body) and body[position][1].startswith(MOVE):
        new_path = _path(body[position][1][len(MOVE) :], body[position][0])
        position += 1
    hunks: list[Hunk] = []
    while position < len(body):
        raw = body[position][1]
        if not raw.strip():
            position += 1
            continue
        if raw.startswith("*"):
            break
        hunk, position = _chunk(body, position, first=not hunks, path=path)
        hunks.append(hunk)
    if not hunks:
        raise _error(
            f"Update File for {path!r} has no changes",
            header_number,
            path=path,
            hint="follow '*** Update File:' with '@@' and lines starting with ' ', '-' or '+'",
        )
    return (
        FileChange(
            path=path, operation="update", hunks=tuple(hunks), new_path=new_path, source_line=header_number
        ),
        position,
    )


def _chunk(body: list[Line], position: int, *, first: bool, path: str) -> tuple[Hunk, int]:
    start_number, raw = body[position]
    anchors: list[str] = []
    saw_header = False
    while position < len(body):
        raw = body[position][1]
        if raw.rstrip() == "@@":
            saw_header = True
        elif raw.startswith("@@ "):
            saw_header = True
            anchor = raw[3:].rstrip("\r")
            if anchor.strip():
                anchors.append(anchor)
        else:
            break
        position += 1
    if not saw_header and not first:
        raise _error(
            f"expected a '@@' line to start the next chunk, found {raw[:60]!r}",
            start_number,
            path=path,
            hint="start every chunk after the first with '@@' (optionally '@@ <a line the chunk follows>')",
        )

    old: list[str] = []
    new: list[str] = []
    kinds: list[str] = []
    at_end = False
    while position < len(body):
        number, raw = body[position]
        if raw.rstrip() == END_OF_FILE:
            if not kinds:
                break
            at_end = True
            position += 1
            break
        marker = "" if raw in ("", "\r") else raw[:1]
        if marker == "":
            kinds.append("")
        elif marker in (" ", "-", "+"):
            kinds.append(marker)
        else:
            if not kinds and saw_header:
                raise _error(
                    f"the chunk opened at line {start_number} has no lines",
                    start_number,
                    path=path,
                    hint="follow '@@' with lines starting with ' ' (context), '-' (removed) or '+' (added)",
                )
            if not kinds:
                raise _error(
                    f"unexpected line in update chunk: {raw[:60]!r}",
                    number,
                    path=path,
                    hint="every chunk line starts with ' ' (context), '-' (removed) or '+' (added)",
                )
            break
        text = (raw if marker == "" else raw[1:]) + "\n"
        if marker in ("", " ", "-"):
            old.append(text)
        if marker in ("", " ", "+"):
            new.append(text)
        position += 1

    # Trailing empty lines separate chunks; they are not context (see the module docstring).
    while kinds and kinds[-1] == "":
        kinds.pop()
        old.pop()
        new.pop()
    if not kinds:
        raise _error(
            "update chunk has no lines",
            start_number,
            path=path,
            hint="a chunk needs at least one line starting with ' ', '-' or '+'",
        )
    old_text = "".join(old)
    return (
        Hunk(
            old=old_text,
            new="".join(new),
            whole_lines=True,
            anchors=tuple(anchors),
            at_end=at_end or not old_text,
            search_from_previous=True,
            source_line=start_number,
        ),
        position,
    )
