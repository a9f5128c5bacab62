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
``<<<<<<< SEARCH>`` accepted. A block with more than one ``=======`` line (a
reStructuredText underline in the old or new text) reads several ways; each
reading is kept as an alternative and the planner takes the one whose old text
is in the file, refusing when more than one is (never "the first divider").

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

Blocks of one file are grouped into one ``FileChange`` (in order, marked
``sequential``: each block applies to the text the previous blocks left, as
Aider applies them); files keep the order of their first block. An empty SEARCH means "append, or create the
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
        body, dividers, index = _block_body(lines, index + 1, head_number)
        index += 1
        readings = [("".join(body[:divider]), "".join(body[divider + 1 :])) for divider in dividers]
        search, replace = readings[0]
        hunk = Hunk(
            old=search,
            new=replace,
            whole_lines=True,
            at_end=not search,
            source_line=head_number,
            alternatives=tuple(readings[1:]),
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
            path=path,
            operation="update",
            hunks=tuple(hunks_by_path[path]),
            source_line=first_line[path],
            sequential=True,
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


def _block_body(lines: list[str], start: int, head_number: int) -> tuple[list[str], list[int], int]:
    """The block's lines up to ``>>>>>>> REPLACE``, the positions of its divider lines, and the index of the end marker.

    A block normally has one ``=======`` line. More than one (a reStructuredText
    underline in the old or new text) gives several readings; the planner keeps
    the one whose old text is in the file and refuses when several are.
    """
    index = start
    body: list[str] = []
    dividers: list[int] = []
    while index < len(lines):
        stripped = lines[index].strip()
        if _UPDATED.fullmatch(stripped):
            if not dividers:
                raise _error(
                    f"'>>>>>>> REPLACE' before '=======' in the block opened at line {head_number}",
                    index + 1,
                    hint="separate the old lines from the new lines with a '=======' line",
                )
            return body, dividers, index
        if _HEAD.fullmatch(stripped):
            closing = ">>>>>>> REPLACE" if dividers else "======="
            raise _error(
                f"'<<<<<<< SEARCH' inside the block opened at line {head_number}, which has no '{closing}' yet",
                index + 1,
                hint=f"close each block with '{closing}' before starting the next one",
            )
        if _DIVIDER.fullmatch(stripped):
            dividers.append(len(body))
        body.append(lines[index] + "\n")
        index += 1
    closing = ">>>>>>> REPLACE" if dividers else "======="
    raise _error(
        f"the block opened at line {head_number} has no '{closing}' line (the text ends first)",
        head_number,
        hint=f"the block may be cut off; end it with '{closing}'",
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
