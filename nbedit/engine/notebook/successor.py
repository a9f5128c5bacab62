"""The next edit of a big notebook starts from the last one's result, proved, not re-scanned.

In a kernel, one edit follows another: the second reads the bytes the first wrote, and
scanning 50 MB of outputs again costs 130 to 250 ms (``scan``) to learn what the first
edit's plan already knew. So when a plan rewrites the source of one cell of a big
notebook, the document of the new bytes is derived from the old one at once: the new
bytes are compared with the old (``memcmp``) and must equal them outside that cell's
object, so every other cell is the same bytes at offsets shifted by the size difference
(when the plan's own check, ``write.check_rewritten``, has just compared every byte outside
that cell's rewritten values, the plan says which cell and that proof is not made twice);
that one cell is parsed again from the new bytes (``json.loads`` of its UTF-8, as the
scan checks it) and must keep its type, its id, the kind of its source and its shape;
the view gets that cell's body rendered again. Anything else (a legacy notebook, a cell
that changed its type or shape, an odd cell) is not derived, and the next plan scans.

The next plan uses the derived document only if the bytes it read are equal to the
bytes the document was derived for (``==`` over the whole file, never a size or a
time), so it sees exactly what a fresh scan of those bytes would give; it is derived then,
when asked for (not at the peak of the plan that wrote them). Only the last one is kept, and
only for notebooks of ``DERIVED_FROM`` bytes or more (below that a scan costs less than the
comparisons).
"""

from __future__ import annotations

import json
import threading
from array import array
from bisect import bisect_right

from nbedit.engine.notebook.layout import CellLayouts, Layout, Member, ObjectLayout
from nbedit.engine.notebook.scan import _MemberReader
from nbedit.engine.notebook.table import CellTable, NotebookCells
from nbedit.engine.notebook.validate import structure_problems
from nbedit.engine.notebook.view import CellSpans, ViewSources

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from nbedit.engine.notebook.document import NotebookDocument

__all__ = ["DERIVED_FROM", "derive", "forget", "recall", "remember"]

DERIVED_FROM = 1 << 20  # bytes from which a notebook's next document is derived
_ORDINARY = frozenset({"code", "markdown", "raw"})

# the last derived document, or what derives it (document, after, proved cell) until asked for
_last: list[NotebookDocument | tuple[NotebookDocument, bytes, int | None]] = []
_lock = threading.Lock()


def remember(document: NotebookDocument, after: bytes, *, proved_cell: int | None = None) -> None:
    """Keep what derives the document of ``after``, the bytes a plan of ``document`` wrote.

    ``proved_cell``: ``NotebookEdit.rewritten_cell`` of the edit that made ``after`` from
    ``document.data`` (``derive``). The document is derived when the next plan asks for it
    (``recall``), not here: deriving here held a second view of the notebook at the peak of
    this plan and its apply (0.36x the file for 100,000 small cells), for an edit that may
    never come."""
    if len(after) < DERIVED_FROM or after is document.data:
        return
    with _lock:
        _last[:] = [(document, after, proved_cell)]


def recall(data: bytes, path: str, max_cells: int | None) -> NotebookDocument | None:
    """The document of exactly ``data`` (compared byte for byte) derived from the last plan, for
    ``path``; else None.

    The document handed back reads ``data`` itself, so the kept copy of the same bytes can go.
    """
    with _lock:
        kept = _last[0] if _last else None
    if kept is None:
        return None
    if isinstance(kept, tuple):  # remembered, not derived yet
        document, after, proved_cell = kept
        if len(after) != len(data) or (after is not data and after != data):
            return None
        derived = derive(document, after, proved_cell=proved_cell)
        with _lock:
            if _last and _last[0] is kept:
                _last[:] = [derived] if derived is not None else []
        if derived is None:
            return None
        kept = derived
    if len(kept.data) != len(data) or (max_cells is not None and len(kept.cells) > max_cells):
        return None
    if kept.data is not data:
        if kept.data != data:
            return None
        kept = _on(kept, data)
        with _lock:
            _last[:] = [kept]
    if kept.path == path:
        return kept
    from nbedit._dataclass import replace

    return replace(kept, path=path)


def _on(document: NotebookDocument, data: bytes) -> NotebookDocument:
    """``document`` reading ``data`` (equal bytes, another object) instead of its own."""
    from nbedit._dataclass import replace

    layout = document.layout
    reader = layout.cells.reader
    is_ascii = isinstance(reader, _MemberReader) and reader.ascii
    cells = CellLayouts(layout.cells.starts, layout.cells.ends, _MemberReader(data, is_ascii))
    return replace(
        document, data=data, layout=Layout(layout.top, layout.cells_start, layout.cells_end, cells)
    )


def forget() -> None:
    with _lock:
        _last.clear()


def derive(
    document: NotebookDocument, after: bytes, *, proved_cell: int | None = None
) -> NotebookDocument | None:
    """The document ``NotebookDocument.parse(after)`` would give, when ``after`` differs from
    ``document.data`` inside one cell's object only (module docstring); None otherwise.

    ``proved_cell``: only for ``after`` made from ``document.data`` by ``NotebookDocument.edit``
    with ``check_rewritten`` passed for that cell alone (``NotebookEdit.rewritten_cell``): every
    byte outside that cell's rewritten member values was compared there, and those values lie
    strictly inside the cell's object, so the comparisons below would only repeat that proof."""
    before = document.data
    table = document.table
    if document.legacy is not None or table.misshapen or table.bad_sources or not len(table):
        return None
    delta = len(after) - len(before)
    if proved_cell is not None:
        index = proved_cell
    else:
        changed = _first_difference(before, after)
        if changed is None:
            return None
        index = bisect_right(table.starts, changed) - 1
    if not 0 <= index < len(table) or table.types[index] not in _ORDINARY:
        return None
    start, end = table.starts[index], table.ends[index]
    new_end = end + delta
    # the same bytes up to ``changed`` (past the cell's "{"), and from the cell's "}" on
    if proved_cell is None and not (
        start < changed and changed < new_end and _same_tail(before, after, end - 1)
    ):
        return None
    cell = _one_cell(after, start, new_end)
    if cell is None or (cell.types[0], cell.ids[0], cell.kinds[0]) != (
        table.types[index],
        table.ids[index],
        table.kinds[index],
    ):
        return None
    view, spans = document.view, document.spans
    body_start, body_end = spans.body_starts[index], spans.end(index)
    one_view, one_spans = cell.finish()
    body = one_view[one_spans.body_starts[0] :]  # the body alone: its marker names cell 0
    new_view = view[:body_start] + body + view[body_end:]
    shift = len(body) - (body_end - body_start)

    derived_table = CellTable()
    derived_table.writer = None
    derived_table.starts = _shifted(table.starts, index + 1, delta)
    derived_table.ends = _shifted(table.ends, index, delta)
    derived_table.types, derived_table.ids, derived_table.kinds = table.types, table.ids, table.kinds
    marker_starts = _shifted(spans.marker_starts, index + 1, shift)
    body_starts = _shifted(spans.body_starts, index + 1, shift)
    derived_spans = CellSpans(marker_starts, body_starts, len(new_view), table.types, table.ids)
    derived_table.sources = ViewSources(new_view, derived_spans)

    layout = document.layout
    top = layout.top

    def moved(offset: int) -> int:
        return offset + delta if offset >= end else offset

    members: dict[str, Member] = {}
    for key, member in top.members.items():
        members[key] = Member(
            key,
            moved(member.key_start),
            moved(member.key_end),
            moved(member.value_start),
            moved(member.value_end),
        )
    reader = layout.cells.reader
    is_ascii = isinstance(reader, _MemberReader) and reader.ascii and after[start:new_end].isascii()
    cells = CellLayouts(derived_table.starts, derived_table.ends, _MemberReader(after, is_ascii))
    derived_layout = Layout(
        ObjectLayout(top.start, moved(top.end), members), layout.cells_start, moved(layout.cells_end), cells
    )
    from nbedit._dataclass import replace

    return replace(
        document,
        data=after,
        layout=derived_layout,
        cells=NotebookCells(derived_table),
        table=derived_table,
        view=new_view,
        spans=derived_spans,
        marker_starts=marker_starts,
        problems=structure_problems(document.top, derived_table, after),
    )


def _first_difference(before: bytes, after: bytes, chunk: int = 1 << 20) -> int | None:
    """The offset of the first byte where the two differ (None: one starts with the other)."""
    shortest = min(len(before), len(after))
    view = memoryview(after)
    low = 0
    while low < shortest:
        high = min(low + chunk, shortest)
        if not before.startswith(view[low:high], low):
            while high - low > 1:  # before[:low] == after[:low], before[:high] != after[:high]
                middle = (low + high) // 2
                if before.startswith(view[low:middle], low):
                    low = middle
                else:
                    high = middle
            return low
        low = high
    return None


def _same_tail(before: bytes, after: bytes, end: int) -> bool:
    """``after`` ends with ``before[end:]`` (compared in C, no copy)."""
    return len(after) >= len(before) - end and after.endswith(memoryview(before)[end:])


def _one_cell(after: bytes, start: int, end: int) -> CellTable | None:
    """Cell bytes ``after[start:end]`` read as the scan reads a cell (None: not one ordinary cell)."""
    try:
        value = json.loads(str(after[start:end], "utf-8"))  # strict UTF-8, as the scan checks it
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None  # the scan of these bytes says what is wrong
    if type(value) is not dict:
        return None
    cell = CellTable()
    cell.starts.append(start)
    cell.ends.append(end)
    cell.add_batch([value], None)
    if cell.misshapen or cell.bad_sources or len(cell.types) != 1:
        return None
    return cell


def _shifted(offsets: array[int], first: int, delta: int) -> array[int]:
    """``offsets`` with ``delta`` added from index ``first`` on (a new array)."""
    if not delta or first >= len(offsets):
        return array("q", offsets)
    return offsets[:first] + array("q", map(delta.__add__, offsets[first:]))
