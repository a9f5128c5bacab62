"""A notebook plan as the review widget draws it: one entry per cell, the way nbdime shows notebooks.

The engine diffs notebooks in their cell view (a marker line per cell, then its
source), which is right for matching but wrong for reading: line numbers count
lines of the whole view, a block of context can start in the middle of the
previous cell, and unchanged cells are drawn in full. Here the two views are
read back into cells and paired (a marker's index names the original cell), so
each entry is one cell:

* ``same``: unchanged, drawn as a one-line header (its lines are sent on request);
* ``edited``, ``inserted``, ``deleted``, ``retyped``: the cell's own line diff, with
  line numbers *within the cell*, unchanged runs inside it collapsed;

with the hunks (toggles) that touch the cell. A hunk of a diff can touch several
cells (an edit, an insert and a delete in one ``@@`` block); its toggle is then
shown in each of those cells and names the others, because leaving it out leaves
out all of them. What the engine's notes said about the structure (inserted,
deleted, retyped cells) is carried by each cell's badge instead.

With ``clear_outputs``, an edited code cell's entry lists the outputs that go
(their types and sizes), read from the notebook's bytes for those cells only.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from typing import Any

from nbedit.engine.models import FilePlan
from nbedit.engine.notebook.view import ViewCell, _parse_marker, parse_view
from nbedit.engine.text import common_ends, split_lines, strip_newline
from nbedit.errors import NotebookError
from nbedit.render.highlight import Segment, highlight_pair
from nbedit.render.rows import CONTEXT_LINES, _opcodes

__all__ = ["STRUCTURE_NOTE", "cached_cells", "cell_lines", "notebook_cells", "structure_badges"]

STRUCTURE_NOTE = "changes the cell structure: "
MAX_CELL_ROWS = 400  # rows drawn for one inserted or deleted cell; the rest are counted
_KIND = {"context": "c", "removed": "r", "added": "a"}


_MARKER_LINE = re.compile(r"^# %% nbedit[^\n]*(?:\n|$)", re.MULTILINE)
# A marker as the view writes it (index or new, a known type, an optional id, read-only): read here
# in one match; any other spelling is read, and refused if need be, by ``_parse_marker``.
_PLAIN_MARKER = re.compile(
    r"# %% nbedit cell (?:(?P<index>[0-9]+)|new) \[(?P<type>code|markdown|raw)\]"
    r"(?: id=(?P<id>[A-Za-z0-9_-]+))?(?: read-only)?[\r\n]*"
)


def _marker(line: str) -> tuple[int | None, str | None, str | None]:
    plain = _PLAIN_MARKER.fullmatch(line)
    if plain is None:
        return _parse_marker(line, 0)
    index = plain["index"]
    return (None if index is None else int(index)), plain["type"], plain["id"]


def _cells_of(view: str) -> list[ViewCell]:
    """``parse_view`` for drawing: the same cells, found by searching for marker lines instead
    of reading every line in Python (a 110,000-line view in milliseconds). A view with an escaped
    marker line in a source (rare) is read by ``parse_view`` itself."""
    if "\\# %% nbedit" in view or (view and not view.startswith("# %% nbedit")):
        return parse_view(view)
    found = list(_MARKER_LINE.finditer(view))
    cells: list[ViewCell] = []
    for position, marker in enumerate(found):
        end = found[position + 1].start() if position + 1 < len(found) else len(view)
        body = view[marker.end() : end]
        if body.endswith("\n"):
            body = body[:-1]
        index, cell_type, cell_id = _marker(marker.group())
        cells.append(ViewCell(body, index, cell_type, cell_id, 0))
    return cells


def _lines(source: str) -> list[str]:
    return split_lines(source + "\n") if source else []


def _header(cell: ViewCell, position: int | None) -> dict[str, Any]:
    header: dict[str, Any] = {
        "index": "new" if position is None else str(position),
        "type": cell.cell_type or "code",
    }
    if cell.id:
        header["id"] = cell.id
    return header


def _trimmed(rows: list[list[Any]], context: int) -> list[list[Any]]:
    """Rows with unchanged runs far from any change collapsed to ``["g", count, old, new]``."""
    changed = [index for index, row in enumerate(rows) if row[0] != "c"]
    if not changed:
        return rows
    keep = [False] * len(rows)
    for index in changed:
        for near in range(max(0, index - context), min(len(rows), index + context + 1)):
            keep[near] = True
    out: list[list[Any]] = []
    index = 0
    while index < len(rows):
        if keep[index]:
            out.append(rows[index])
            index += 1
            continue
        start = index
        while index < len(rows) and not keep[index]:
            index += 1
        if index - start < 2:
            out.extend(rows[start:index])
        else:
            out.append(["g", index - start, rows[start][1], rows[start][2]])
    return out


def _diff_rows(old: str, new: str) -> list[list[Any]]:
    """A cell's line diff as page rows: ``rows._change_rows`` drawn straight into lists, trimmed.

    The same rows, numbers and word highlights as ``_change_rows`` (tests compare the two), built
    without a row object per line: an unchanged line is sliced, stripped and drawn only when it
    survives the trim (most of a long cell is collapsed into a gap), and nothing goes through the
    rows module's alignment cache, whose row objects would stay alive for the garbage collector to
    walk while the entries are cached whole anyway (``cached_cells``).
    """
    old_lines, new_lines = _lines(old), _lines(new)
    head, tail = common_ends(old_lines, new_lines)
    old_middle = old_lines[head : len(old_lines) - tail]
    new_middle = new_lines[head : len(new_lines) - tail]
    # context rows carry their raw line until the trim decides they are drawn
    rows: list[list[Any]] = [["c", line, line, old_lines[line - 1]] for line in range(1, head + 1)]
    first = head + 1
    for tag, i1, i2, j1, j2 in _opcodes(old_middle, new_middle):
        if tag == "equal":
            rows.extend(
                ["c", first + i1 + offset, first + j1 + offset, old_middle[i1 + offset]]
                for offset in range(i2 - i1)
            )
            continue
        removed, added = old_middle[i1:i2], new_middle[j1:j2]
        old_texts: list[str | list[list[Any]]] = [strip_newline(line) for line in removed]
        new_texts: list[str | list[list[Any]]] = [strip_newline(line) for line in added]
        for pair in range(min(len(removed), len(added))):
            old_segments, new_segments = highlight_pair(removed[pair], added[pair])
            old_texts[pair], new_texts[pair] = _segments_text(old_segments), _segments_text(new_segments)
        rows.extend(["r", first + i1 + offset, None, text] for offset, text in enumerate(old_texts))
        rows.extend(["a", None, first + j1 + offset, text] for offset, text in enumerate(new_texts))
    old_tail, new_tail = len(old_lines) - tail, len(new_lines) - tail
    rows.extend(
        ["c", old_tail + offset + 1, new_tail + offset + 1, old_lines[old_tail + offset]]
        for offset in range(tail)
    )
    shown = _trimmed(rows, CONTEXT_LINES)
    for row in shown:
        if row[0] == "c":
            row[3] = strip_newline(row[3])
    return shown


def _segments_text(segments: tuple[Segment, ...]) -> str | list[list[Any]]:
    if len(segments) == 1 and not segments[0].changed:
        return segments[0].text
    return [[segment.text, 1 if segment.changed else 0] for segment in segments]


def _one_side(source: str, kind: str) -> tuple[list[list[Any]], int]:
    lines = [strip_newline(line) for line in _lines(source)]
    shown = lines[:MAX_CELL_ROWS]
    rows = [
        [kind, number if kind == "r" else None, number if kind == "a" else None, text]
        for number, text in enumerate(shown, start=1)
    ]
    return rows, len(lines) - len(shown)


def _pairs(old_cells: list[ViewCell], new_cells: list[ViewCell]) -> list[tuple[int | None, int | None]]:
    """(old position, new position) in reading order; None on the side a cell is missing from."""
    by_id = {cell.id: position for position, cell in enumerate(old_cells) if cell.id}
    claimed: set[int] = set()
    matched: list[int | None] = []
    for cell in new_cells:
        original = None
        if cell.id and by_id.get(cell.id) is not None and by_id[cell.id] not in claimed:
            original = by_id[cell.id]
        elif cell.index is not None and cell.index < len(old_cells) and cell.index not in claimed:
            original = cell.index
        if original is not None:
            claimed.add(original)
        matched.append(original)
    pairs: list[tuple[int | None, int | None]] = []
    shown_old = 0
    for new_position, original in enumerate(matched):
        if original is not None:
            while shown_old < original:  # deleted cells stay where they were
                if shown_old not in claimed:
                    pairs.append((shown_old, None))
                shown_old += 1
            shown_old = max(shown_old, original + 1)
        pairs.append((original, new_position))
    pairs.extend((position, None) for position in range(shown_old, len(old_cells)) if position not in claimed)
    return pairs


_MARKER_START = re.compile(r"^# %% nbedit", re.MULTILINE)


def _cell_lines_at(view: str) -> list[int]:
    """The 1-based view line of each cell's marker (found by the regex engine, lines counted in C:
    a 110,000-line view is not split into a list of lines for this)."""
    numbers: list[int] = []
    line, position = 1, 0
    for found in _MARKER_START.finditer(view):
        line += view.count("\n", position, found.start())
        position = found.start()
        numbers.append(line)
    return numbers


def _owner(markers: list[int], line: int) -> int | None:
    """The cell (position) whose marker or body holds view ``line`` (``markers`` ascending)."""
    position = bisect.bisect_right(markers, line) - 1
    return position if position >= 0 else None


def _cells_between(markers: list[int], first: int, last: int) -> set[int]:
    """The cells (positions) holding any view line from ``first`` to ``last``."""
    low, high = _owner(markers, first), _owner(markers, last)
    if high is None:
        return set()
    return set(range(0 if low is None else low, high + 1))


def _hunk_cells(
    file_plan: FilePlan, old_markers: list[int], new_markers: list[int]
) -> list[tuple[set[int], set[int]]]:
    """For each hunk, the old cells and the new cells (positions) its change touches."""
    before = file_plan.display_before or ""
    result: list[tuple[set[int], set[int]]] = []
    order = sorted(range(len(file_plan.hunks)), key=lambda index: file_plan.hunks[index].match.start)
    shift = 0
    touched: dict[int, tuple[set[int], set[int]]] = {}
    for index in order:
        match = file_plan.hunks[index].match
        old_count = before.count("\n", match.start, match.end)
        new_count = match.replacement.count("\n")
        first, last = match.line, match.line + max(old_count, 1) - 1
        old_side = _cells_between(old_markers, first, last)
        new_first = match.line + shift
        new_side = _cells_between(new_markers, new_first, new_first + max(new_count, 1) - 1)
        if not old_count and new_count:
            old_side = set()  # a pure insertion touches only what it inserts
        if not new_count and old_count:
            new_side = set()  # a pure deletion touches only what it deletes
        touched[index] = (old_side, new_side)
        shift += new_count - old_count
    for index in range(len(file_plan.hunks)):
        result.append(touched[index])
    return result


def _size(count: int) -> str:
    if count < 1000:
        return f"{count} B"
    if count < 1_000_000:
        return f"{count / 1000:.1f} KB"
    return f"{count / 1_000_000:.1f} MB"


def _output_note(output: dict[str, Any]) -> str:
    kind = str(output.get("output_type", "output"))
    data = output.get("data")
    types = [key for key in data if key != "text/plain"] if isinstance(data, dict) else []
    name = f"{kind} {types[0]}" if types else kind
    return f"{name} {_size(len(json.dumps(output, ensure_ascii=False).encode()))}"


def _cleared_outputs(file_plan: FilePlan, positions: list[int]) -> dict[int, list[str]]:
    """The outputs each of these original cells loses (``clear_outputs``), as "type size" words."""
    from nbedit.engine.notebook.document import NotebookDocument

    if not positions or file_plan.before_bytes is None:
        return {}
    try:
        document = NotebookDocument.parse(file_plan.before_bytes, file_plan.path)
    except NotebookError:
        return {}
    found: dict[int, list[str]] = {}
    for position in positions:
        outputs = document.raw_cell(position).get("outputs")
        if isinstance(outputs, list):
            found[position] = [_output_note(output) for output in outputs if isinstance(output, dict)]
    return found


def notebook_cells(file_plan: FilePlan, cleared: bool) -> list[dict[str, Any]]:
    """The review entries of a notebook plan, one per cell in reading order (see module docstring)."""
    before, after = file_plan.display_before or "", file_plan.display_after or ""
    old_cells, new_cells = _cells_of(before), _cells_of(after)
    pairs = _pairs(old_cells, new_cells)
    touched = _hunk_cells(file_plan, _cell_lines_at(before), _cell_lines_at(after))
    edited_code = [
        old
        for old, new in pairs
        if old is not None
        and new is not None
        and (old_cells[old].cell_type or "code") == "code"
        and old_cells[old].source != new_cells[new].source
    ]
    outputs = _cleared_outputs(file_plan, edited_code) if cleared else {}
    by_old: dict[int, list[int]] = {}
    by_new: dict[int, list[int]] = {}
    for index, (old_side, new_side) in enumerate(touched):
        for cell in old_side:
            by_old.setdefault(cell, []).append(index)
        for cell in new_side:
            by_new.setdefault(cell, []).append(index)
    entries: list[dict[str, Any]] = []
    for old, new in pairs:
        found = set(by_old.get(old, ()) if old is not None else ()) | set(
            by_new.get(new, ()) if new is not None else ()
        )
        hunks = sorted(found)
        if old is not None and new is not None:
            before_cell, after_cell = old_cells[old], new_cells[new]
            old_type, new_type = before_cell.cell_type or "code", after_cell.cell_type or "code"
            header = _header(after_cell, old)
            if before_cell.id and "id" not in header:
                header["id"] = before_cell.id
            if old_type == new_type and before_cell.source == after_cell.source:
                entry: dict[str, Any] = {
                    "state": "same",
                    "cell": header,
                    "lines": before_cell.source.count("\n") + 1 if before_cell.source else 0,
                }
                if hunks:
                    entry["near"] = hunks  # hunks whose context (not change) lies in this cell
                entries.append(entry)
                continue
            entry = {"state": "retyped" if old_type != new_type else "edited", "cell": header, "hunks": hunks}
            if old_type != new_type:
                entry["from"] = old_type
            entry["rows"] = _diff_rows(before_cell.source, after_cell.source)
            if old in outputs:
                entry["cleared"] = outputs[old]
            elif new_type == "code" and old_type == "code":
                entry["outputs"] = "kept"
        elif new is not None:
            rows, more = _one_side(new_cells[new].source, "a")
            entry = {"state": "inserted", "cell": _header(new_cells[new], None), "hunks": hunks, "rows": rows}
            if more:
                entry["more"] = more
        else:
            assert old is not None
            rows, more = _one_side(old_cells[old].source, "r")
            entry = {"state": "deleted", "cell": _header(old_cells[old], old), "hunks": hunks, "rows": rows}
            if more:
                entry["more"] = more
        entries.append(entry)
    shown = {index for entry in entries for index in entry.get("hunks", ())}
    for entry in entries:
        near = entry.pop("near", ())
        missing = [index for index in near if index not in shown]
        if missing:  # a hunk that changes no cell's text (only context here): its toggle still shows
            entry["hunks"] = missing
            shown.update(missing)
    return entries


@functools.lru_cache(maxsize=16)
def cached_cells(file_plan: FilePlan, cleared: bool) -> list[dict[str, Any]]:
    """``notebook_cells`` once per plan: the widget's state and the static ``text/html`` of the same
    review both draw it (read it, never change it: the entries are shared)."""
    return notebook_cells(file_plan, cleared)


def cell_lines(file_plan: FilePlan, position: int) -> list[str]:
    """The lines of original cell ``position`` (for an unchanged cell or a collapsed run inside one)."""
    cells = _cells_of(file_plan.display_before or "")
    if not 0 <= position < len(cells):
        return []
    return [strip_newline(line) for line in _lines(cells[position].source)]


def structure_badges(notes: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(badges, remaining notes): the structure summary as badges; per-cell notes the entries show."""
    badges: list[str] = []
    remaining: list[str] = []
    for note in notes:
        if note.startswith(STRUCTURE_NOTE):
            badges.extend(part.strip() for part in note[len(STRUCTURE_NOTE) :].split(","))
        elif (
            note == "cells reordered"
            or note.endswith(": deleted")
            or ": type changed to " in note
            or (note.startswith("new ") and " cell at position " in note)
        ):
            continue
        else:
            remaining.append(note)
    return badges, remaining
