"""Aider-style SEARCH/REPLACE blocks.

::

    path/to/file.py
    ```python
    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE
    ```

The marker rules are Aider's (``aider/coders/editblock_coder.py``): 5 to 9
marker characters, the line compared after stripping surrounding whitespace,
``<<<<<<< SEARCH>`` accepted. The SEARCH part ends at the first divider; the
REPLACE part ends only at ``>>>>>>> REPLACE`` (so a replacement may contain
``=======``, e.g. a reStructuredText underline).

The file path is the last non-blank line before the block, looking past the
opening code fence; ``` ```python`` is a language tag, not a path. Decorations
models add (backticks, ``**bold**``, a trailing colon, a Markdown ``#``) are
stripped as Aider's ``strip_filename`` does. Unlike Aider we refuse to read
prose as a path: a candidate with spaces that is not quoted in backticks is
ignored, and the block falls back to the previous block's path, then to
``default_path``, then to an error that says where to put the path. Unlike
Aider, a second ``<<<<<<< SEARCH`` inside an open block is an error: it
almost always means a ``>>>>>>> REPLACE`` line was lost, and guessing where
the block ends could edit the wrong lines.

Blocks of one file are grouped into one ``FileChange`` (in order); files keep
the order of their first block. An empty SEARCH means "append, or create the
file" (``old=""``, ``at_end=True``).
"""

from __future__ import annotations

import re

from nbedit.engine.models import Change, FileChange, Hunk
from nbedit.errors import PatchSyntaxError

__all__ = ["DIALECT", "looks_like", "marker_line", "parse"]

DIALECT = "search_replace"

_HEAD = re.compile(r"<{5,9} SEARCH>?")
_DIVIDER = re.compile(r"={5,9}")
_UPDATED = re.compile(r">{5,9} REPLACE")
_FENCE = "```"
_LOOKBACK = 6  # lines to walk back (past blanks and fences) for a path
# A word that names a file: optional directories, a stem of 2+ characters, an extension ("e.g." is not one).
_PATH_WORD = re.compile(r"(?:[\w.\-]+/)*[\w\-][\w.\-]*[\w\-]\.[A-Za-z][A-Za-z0-9]{0,7}")


def marker_line(text: str) -> int | None:
    """0-based index of the first ``<<<<<<< SEARCH`` line, or None."""
    if "SEARCH" not in text or "<<<<<" not in text:
        return None
    for index, line in enumerate(text.split("\n")):
        if _HEAD.fullmatch(line.strip()):
            return index
    return None


def looks_like(text: str) -> bool:
    return marker_line(text) is not None


def _error(
    message: str, line: int | None, hint: str | None = None, path: str | None = None
) -> PatchSyntaxError:
    return PatchSyntaxError(message, line=line, hint=hint, dialect=DIALECT, path=path)


def parse(text: str, *, default_path: str | None = None) -> Change:
    """Parse SEARCH/REPLACE blocks; ``default_path`` serves blocks that name no file."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    order: list[str] = []
    hunks_by_path: dict[str, list[Hunk]] = {}
    first_line: dict[str, int] = {}
    current_path: str | None = None
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if _UPDATED.fullmatch(stripped):
            raise _error(
                "'>>>>>>> REPLACE' without an open '<<<<<<< SEARCH' block",
                index + 1,
                hint="each block is '<<<<<<< SEARCH', the old lines, '=======', the new lines, '>>>>>>> REPLACE'",
            )
        if not _HEAD.fullmatch(stripped):
            _refuse_other_dialects(lines, index)
            index += 1
            continue
        head_number = index + 1
        named, prose = _find_path(lines, index)
        path = named or current_path or default_path
        if prose is not None and path is not None and _named_paths(prose) - {path}:
            raise _error(
                f"the line before the block ({prose[:60]!r}) names another file than {path!r}",
                head_number,
                hint="put the file path alone on the line before the block (or before its ``` fence)",
            )
        if path is None:
            raise _error(
                "the block does not say which file it edits",
                head_number,
                hint="put the file path alone on the line before the block (or before its ``` fence), "
                "or give a default path",
            )
        current_path = path
        search, index = _section(lines, index + 1, _DIVIDER, head_number, "=======")
        replace, index = _section(lines, index + 1, _UPDATED, head_number, ">>>>>>> REPLACE")
        index += 1
        hunk = Hunk(
            old=search,
            new=replace,
            whole_lines=True,
            at_end=not search,
            source_line=head_number,
        )
        if path not in hunks_by_path:
            order.append(path)
            hunks_by_path[path] = []
            first_line[path] = head_number
        hunks_by_path[path].append(hunk)
    if not order:
        raise _error(
            "no '<<<<<<< SEARCH' block found",
            None,
            hint="write blocks as: path line, '<<<<<<< SEARCH', old lines, '=======', new lines, '>>>>>>> REPLACE'",
        )
    files = tuple(
        FileChange(
            path=path, operation="update", hunks=tuple(hunks_by_path[path]), source_line=first_line[path]
        )
        for path in order
    )
    return Change(files=files, dialect=DIALECT)


def _refuse_other_dialects(lines: list[str], index: int) -> None:
    """Text between blocks may be prose, but never a diff or an apply_patch block.

    Planning only the SEARCH/REPLACE part of a reply that also carries a diff would
    silently drop part of the change; refusing says so instead.
    """
    line = lines[index]
    stripped = line.strip()
    following = lines[index + 1] if index + 1 < len(lines) else ""
    third = lines[index + 2] if index + 2 < len(lines) else ""
    other = None
    if stripped == "*** Begin Patch":
        other = "an apply_patch block"
    elif line.startswith("diff --git "):
        other = "a git diff"
    elif line.startswith("--- ") and following.startswith("+++ ") and third.startswith("@@"):
        other = "a unified diff"
    if other is not None:
        raise _error(
            f"this text mixes SEARCH/REPLACE blocks with {other}; only part of it would be applied",
            index + 1,
            hint="send the blocks and the other change separately (one %%patch cell or call each)",
        )


def _section(
    lines: list[str], start: int, closing: re.Pattern[str], head_number: int, closing_text: str
) -> tuple[str, int]:
    """Lines from ``start`` up to the closing marker; returns (text, index of the marker)."""
    index = start
    collected: list[str] = []
    while index < len(lines):
        stripped = lines[index].strip()
        if closing.fullmatch(stripped):
            return "".join(collected), index
        if _HEAD.fullmatch(stripped):
            raise _error(
                f"'<<<<<<< SEARCH' inside the block opened at line {head_number}, "
                f"which has no '{closing_text}' yet",
                index + 1,
                hint=f"close each block with '{closing_text}' before starting the next one",
            )
        if closing is _DIVIDER and _UPDATED.fullmatch(stripped):
            raise _error(
                f"'>>>>>>> REPLACE' before '=======' in the block opened at line {head_number}",
                index + 1,
                hint="separate the old lines from the new lines with a '=======' line",
            )
        collected.append(lines[index] + "\n")
        index += 1
    raise _error(
        f"the block opened at line {head_number} has no '{closing_text}' line (the text ends first)",
        head_number,
        hint=f"the block may be cut off; end it with '{closing_text}'",
    )


def _find_path(lines: list[str], head_index: int) -> tuple[str | None, str | None]:
    """(path, prose) named before the block at ``head_index``.

    The last non-blank line before the block, looking past fences, is the path
    if it looks like one; if it is prose, it is returned as ``prose`` so the
    caller can check it does not name a different file.
    """
    index = head_index - 1
    steps = 0
    while index >= 0 and steps < _LOOKBACK:
        stripped = lines[index].strip()
        steps += 1
        index -= 1
        if not stripped:
            continue
        if stripped.startswith(_FENCE):
            tag = stripped.lstrip("`").strip()
            if tag and ("." in tag or "/" in tag) and " " not in tag:
                return _path_candidate(tag), None
            if tag or index < 0:
                continue  # an opening fence with a language tag; the path is above it
            # A bare fence: an opening fence (look above) or the previous block's closing one (stop).
            if _UPDATED.fullmatch(lines[index].strip()):
                return None, None
            continue
        if _HEAD.fullmatch(stripped) or _DIVIDER.fullmatch(stripped) or _UPDATED.fullmatch(stripped):
            return None, None
        path = _path_candidate(stripped)
        return (path, None) if path else (None, stripped)
    return None, None


def _path_candidate(line: str) -> str | None:
    """Aider's ``strip_filename``, plus: prose (unquoted text with spaces) is not a path."""
    if line == "...":
        return None
    name = line.rstrip(":").lstrip("#").strip()
    quoted = len(name) > 1 and name.startswith("`") and name.endswith("`")
    name = name.strip("`").strip("*").strip("`").rstrip(":").strip()
    name = name.replace("\\_", "_")
    if not name:
        return None
    if not quoted and any(character.isspace() for character in name):
        return None
    return name


def _named_paths(prose: str) -> set[str]:
    """Words in a prose line that look like file paths (``src/app.py``, ``notes.md``)."""
    names = set()
    for word in prose.split():
        word = word.strip("`*'\"()[]{}<>,;:!?").rstrip(".")
        if _PATH_WORD.fullmatch(word):
            names.add(word)
    return names
