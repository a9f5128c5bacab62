"""One located hunk per cell change: a diff hunk that edits, inserts and deletes cells, split.

A unified diff of the cell view groups nearby changes into one ``@@`` block, so
one hunk can edit cell 3, insert a cell after it and delete cell 5. A reviewer
decides per cell (nbdime shows one box per cell), and leaving a hunk out must
leave out exactly one cell's change. So after a notebook's hunks are located,
each one whose old text spans cell markers is cut into the smallest pieces that
each change one cell: its text, its marker (a retype), a whole deleted cell, or
a whole inserted one.

How: the hunk's old and new lines are aligned (``difflib``); every changed run
is owned by the cell it lies in (an inserted run that starts with a marker line
is a new cell of its own; a run that only appends lines belongs to the cell
before it); runs whose cells meet are merged, and so are pieces whose spans
would overlap. Each piece keeps the hunk's tier and explanation. The pieces
compose to exactly the hunk's replacement (equal lines between runs map one to
one), so applying all of them writes what the hunk writes, and any subset still
reads back as cells, because no piece starts or ends inside a marker line.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.models import Hunk, LocatedHunk
from nbedit.engine.text import split_lines

__all__ = ["split_by_cell"]

_MARKER = "# %% nbedit"
_MAX_LINES = 20_000  # a hunk larger than this stays whole (the alignment is quadratic)


def split_by_cell(view: str, located: Sequence[LocatedHunk]) -> tuple[LocatedHunk, ...]:
    """``located`` with each hunk that changes several cells replaced by one hunk per cell change."""
    result: list[LocatedHunk] = []
    for item in located:
        result.extend(_split(view, item))
    return tuple(result)


def _split(view: str, item: LocatedHunk) -> list[LocatedHunk]:
    match = item.match
    old_text = view[match.start : match.end]
    new_text = match.replacement
    if _MARKER not in old_text and _MARKER not in new_text:
        return [item]
    if (match.start and view[match.start - 1] != "\n") or (old_text and not old_text.endswith("\n")):
        return [item]  # not whole lines: nothing to cut along
    if new_text and not new_text.endswith("\n"):
        return [item]
    old_lines, new_lines = split_lines(old_text), split_lines(new_text)
    if len(old_lines) + len(new_lines) > _MAX_LINES:
        return [item]
    from difflib import SequenceMatcher  # only a hunk across cells needs it (difflib is slow to import)

    owners = _owners(view, match.start, old_lines)
    runs = [
        opcode
        for opcode in SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
        if opcode[0] != "equal"
    ]
    if len(runs) < 2:
        return [item]
    after = view[match.end : match.end + len(_MARKER)]
    ends_cell = [
        index == len(old_lines)
        and (match.end == len(view) or after == _MARKER)
        or index < len(old_lines)
        and old_lines[index].startswith(_MARKER)
        for index in range(len(old_lines) + 1)
    ]
    groups: list[tuple[set[object], int, int, int, int]] = []  # (cells, i1, i2, j1, j2)
    for _, i1, i2, j1, j2 in _whole_cells_apart(runs, old_lines, new_lines, owners, ends_cell):
        if i1 == i2 and new_lines[j1].startswith(_MARKER):
            cells: set[object] = {("new", j1)}
        elif i1 == i2:
            cells = {owners[i1 - 1] if i1 else owners[0] if owners else ("start", 0)}
        else:
            cells = set(owners[i1:i2])
        groups.append((cells, i1, i2, j1, j2))
    merged: list[tuple[set[object], int, int, int, int]] = []
    for cells, i1, i2, j1, j2 in groups:
        if merged and (merged[-1][0] & cells or merged[-1][2] > i1 or merged[-1][4] > j1):
            last = merged.pop()
            merged.append((last[0] | cells, last[1], max(last[2], i2), last[3], max(last[4], j2)))
        else:
            merged.append((cells, i1, i2, j1, j2))
    if len(merged) < 2:
        return [item]
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    pieces = []
    for _, i1, i2, j1, j2 in merged:
        old_piece = "".join(old_lines[i1:i2])
        new_piece = "".join(new_lines[j1:j2])
        piece_match = replace(
            match,
            start=match.start + starts[i1],
            end=match.start + starts[i2],
            replacement=new_piece,
            line=match.line + i1,
            line_count=i2 - i1,
        )
        hunk = Hunk(old_piece, new_piece, whole_lines=True, source_line=item.hunk.source_line)
        pieces.append(replace(item, hunk=hunk, match=piece_match))
    return pieces


def _whole_cells_apart(
    runs: Sequence[tuple[str, int, int, int, int]],
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    owners: Sequence[object],
    ends_cell: Sequence[bool],
) -> list[tuple[str, int, int, int, int]]:
    """Runs with whole deleted cells at their end cut off as runs of their own.

    The alignment puts an edited last line of one cell and the deletion of the next
    cell in one run when they touch; the deleted cell is its own change.
    """
    result: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in runs:
        cuts = [index for index in range(i1 + 1, i2) if owners[index] != owners[index - 1]]
        if not cuts or any(line.startswith(_MARKER) for line in new_lines[j1:j2]) or not ends_cell[i2]:
            result.append((tag, i1, i2, j1, j2))
            continue
        result.append((tag, i1, cuts[0], j1, j2))
        for start, end in zip(cuts, [*cuts[1:], i2], strict=True):
            result.append(("delete", start, end, j2, j2))
    return result


def _owners(view: str, start: int, old_lines: Sequence[str]) -> list[object]:
    """For each old line, the cell it belongs to: the view offset of the marker that opens it."""
    marker = view.rfind("\n" + _MARKER, 0, start + len(_MARKER))
    current: object = ("cell", marker + 1 if marker >= 0 else (0 if view.startswith(_MARKER) else -1))
    owners: list[object] = []
    offset = start
    for line in old_lines:
        if line.startswith(_MARKER):
            current = ("cell", offset)
        owners.append(current)
        offset += len(line)
    return owners
