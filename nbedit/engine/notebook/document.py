"""A notebook read once, shown as a cell view, and written back minimally.

``NotebookDocument.parse`` scans the bytes once (``scan.scan_notebook``: JSON
syntax checked as ``json.loads`` would, cell offsets recorded, only the small
members kept, outputs never held) and builds the cell view from the cells'
sources. ``edit`` reads an edited view back (``view.parse_view``; when only one
cell's body changed, that body alone), maps its cells to the originals, validates
the result (``validate``), splices it into the original bytes
(``write.splice_cells``) and, for source edits, checks the splice before anything
is written (``write.check_spliced``). A cell's full JSON object is parsed from
its bytes only when an edit needs it (a retyped cell, a cell rewritten whole, or
schema validation of a structural edit), so the document holds the file's bytes
and little else.

Mapping an edited view to the notebook: a marker's ``id=`` names the original cell
with that id (if a notebook repeats an id, the index tells those cells apart);
without an id, its index names the original cell at that index (how nbformat 4.4
cells, which have no ids, are found). Each original is claimed once;
a marker that names an already claimed cell (a copied marker) or ``new`` is a new
cell. Originals no marker claims are deleted. New cells get a fresh 8-character id
when the notebook's nbformat minor is >= 5 (an unused valid ``id=`` on a new marker
is kept) and no id for 4.4; the nbformat version is never changed.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Sequence

from nbedit._dataclass import dataclass, field
from nbedit.engine.models import CellSelector
from nbedit.engine.notebook.cells import UNCHANGED, NotebookCell, NotebookEdit  # importable from here too
from nbedit.engine.notebook.layout import Layout, Member, detect_style
from nbedit.engine.notebook.legacy import (
    LEGACY_VERSIONS,
    LegacyCells,
    legacy_edit,
    read_legacy_cells,
)
from nbedit.engine.notebook.reading import check_cells, notebook_version, scan_bytes
from nbedit.engine.notebook.scan import scan_worksheets
from nbedit.engine.notebook.table import SHOWN_ID, CellTable, NotebookCells
from nbedit.engine.notebook.validate import (
    already_invalid_note,
    is_source_only,
    schema_notes,
    structure_problems,
)
from nbedit.engine.notebook.view import (
    CELL_TYPES,
    CellSpan,
    CellSpans,
    ViewCell,
    parse_view,
    shown_type,
)
from nbedit.engine.notebook.write import (
    CellWrite,
    check_rewritten,
    check_spliced,
    source_value,
    splice_cell,
    splice_cells,
)
from nbedit.errors import NotebookError

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["NotebookCell", "NotebookDocument", "NotebookEdit"]

_ID_PATTERN = SHOWN_ID
_UNCHANGED = UNCHANGED
_CODE_ONLY_KEYS = ("outputs", "execution_count")


def _fresh_id() -> str:
    import uuid  # only new cells need it; it imports platform (a few ms of every first edit)

    return uuid.uuid4().hex[:8]


@dataclass(frozen=True, slots=True, eq=False)
class NotebookDocument:
    """A scanned notebook: its bytes, where each cell is in them, and the cell view.

    ``top`` holds the top-level members other than ``cells``; ``problems`` what
    ``validate.structure_problems`` found. Nothing here is mutated after ``parse``.
    The cells are kept column by column (``table``); ``cells`` and ``spans`` make a
    ``NotebookCell`` or a ``CellSpan`` when one is asked for.
    """

    path: str
    data: bytes = field(repr=False)
    layout: Layout = field(repr=False)
    top: dict[str, Any] = field(repr=False)
    cells: NotebookCells
    table: CellTable = field(repr=False)
    view: str = field(repr=False)
    spans: CellSpans = field(repr=False)
    marker_starts: Sequence[int] = field(repr=False)
    nbformat_minor: int
    body_start: int = 0  # 3 when the file starts with a UTF-8 byte-order mark
    problems: tuple[str, ...] = ()
    legacy: LegacyCells | None = field(default=None, repr=False)  # nbformat 2 or 3 (``legacy``)

    @classmethod
    def parse(cls, data: bytes, path: str, *, max_cells: int | None = None) -> NotebookDocument:
        """Read notebook bytes; ``NotebookError`` for anything that is not an nbformat 2, 3 or 4 notebook.

        ``FileTooLarge`` (``unit="cells"``) as soon as the scan passes ``max_cells`` cells.
        """
        scanned, body_start, is_ascii = scan_bytes(data, path, max_cells)
        notebook = scanned.top
        major, minor = notebook_version(path, scanned, LEGACY_VERSIONS)
        if major in LEGACY_VERSIONS:
            return cls._parse_legacy(path, data, body_start, is_ascii, notebook, major, minor)
        if scanned.layout is None:
            raise NotebookError(
                f"{path}: has no 'cells' list, so it is not a valid notebook; {_UNCHANGED}", path=path
            )
        table = scanned.cells
        check_cells(path, data, table)
        view, spans = table.finish()
        return cls(
            path,
            data,
            scanned.layout,
            notebook,
            NotebookCells(table),
            table,
            view,
            spans,
            spans.marker_starts,
            minor,
            body_start,
            structure_problems(notebook, table, data),
        )

    @classmethod
    def _parse_legacy(
        cls,
        path: str,
        data: bytes,
        body_start: int,
        is_ascii: bool,
        top: dict[str, Any],
        major: int,
        minor: int,
    ) -> NotebookDocument:
        """An nbformat 2 or 3 notebook: the cells of its worksheets, edited in place (``legacy``)."""
        layout, table = scan_worksheets(data, body_start, is_ascii=is_ascii)
        legacy, texts = read_legacy_cells(path, data, table, major)
        view, spans = table.finish(texts)
        return cls(
            path,
            data,
            layout,
            top,
            NotebookCells(table),
            table,
            view,
            spans,
            spans.marker_starts,
            minor,
            body_start,
            (),
            legacy,
        )

    # -- the view -----------------------------------------------------------------------------

    def cell_view(self) -> str:
        return self.view

    def cell_spans(self) -> list[CellSpan]:
        """``(start, end, label)`` of each cell's body (source plus its newline) in the view."""
        return list(self.spans)

    def cell_index(self, selector: CellSelector) -> int:
        """The index a selector names; ``NotebookError`` listing the valid ones otherwise."""
        if selector.id is not None:
            if selector.id in self.table.ids:
                index = self.table.ids.index(selector.id)
                if selector.index is not None and selector.index != index:
                    raise NotebookError(
                        f"{self.path}: cell id {selector.id} is cell {index}, not cell {selector.index}; "
                        f"give only one of them; {_UNCHANGED}",
                        path=self.path,
                    )
                return index
            raise NotebookError(
                f"{self.path}: has no cell with id {selector.id!r}; {self._valid_cells()}; {_UNCHANGED}",
                path=self.path,
            )
        if selector.index is None or not 0 <= selector.index < len(self.cells):
            raise NotebookError(
                f"{self.path}: has no {selector}; {self._valid_cells()}; {_UNCHANGED}", path=self.path
            )
        return selector.index

    def cell_span(self, selector: CellSelector) -> tuple[int, int]:
        span = self.spans[self.cell_index(selector)]
        return span.start, span.end

    def cell_at(self, offset: int) -> int | None:
        """Index of the cell whose marker line or body holds view offset ``offset``.

        An empty body has no characters, so its offset is the next marker's and
        belongs to the next cell; ``body_cell`` is the question for edits.
        """
        low = bisect_right(self.marker_starts, offset)
        return low - 1 if low else None

    def body_cell(self, start: int, end: int) -> int | None:
        """Index of the cell whose body holds all of ``[start, end]`` (None: a marker is touched).

        Bodies are separated by marker lines, so at most one cell qualifies; an
        empty span at the end of a body belongs to that body, which is where the
        view puts text inserted there.
        """
        low = bisect_right(self.spans.body_starts, start)
        if low == 0 or end > self.spans.end(low - 1):
            return None
        return low - 1

    def _valid_cells(self) -> str:
        if not self.cells:
            return "the notebook has no cells"
        ids = [cell_id for cell_id in self.table.ids if cell_id is not None]
        text = f"valid indices are 0-{len(self.cells) - 1}"
        if ids:
            shown = ", ".join(ids[:30]) + (f" and {len(ids) - 30} more" if len(ids) > 30 else "")
            text += f", valid ids: {shown}"
        return text

    # -- writing back -------------------------------------------------------------------------

    def apply_view(self, new_view: str, *, clear_outputs: bool = False) -> bytes:
        """The notebook bytes for an edited cell view (see ``edit``)."""
        return self.edit(new_view, clear_outputs=clear_outputs).data

    def edit(
        self,
        new_view: str,
        *,
        clear_outputs: bool = False,
        new_cell_id: Callable[[], str] = _fresh_id,
    ) -> NotebookEdit:
        """Read ``new_view`` back into the notebook; ``NotebookError`` if the result is invalid.

        ``clear_outputs`` empties the outputs and execution count of code cells whose
        source changed (others are untouched). ``new_cell_id`` makes fresh ids
        (tests pass a deterministic one).
        """
        if new_view == self.view:
            return NotebookEdit(self.data)
        try:
            return self._edit(new_view, clear_outputs, new_cell_id)
        except RecursionError:  # a value nested near the limit, read again deeper in the stack here
            raise NotebookError(
                f"{self.path}: a value in this notebook is nested too deeply for nbedit to rewrite it "
                f"safely (deeper than Python's recursion limit allows here); {_UNCHANGED}",
                path=self.path,
            ) from None

    def _edit(self, new_view: str, clear_outputs: bool, new_cell_id: Callable[[], str]) -> NotebookEdit:
        if self.legacy is not None:
            return legacy_edit(self, new_view, clear_outputs=clear_outputs)
        one_body = self._changed_body(new_view)
        if one_body is not None:
            index, view_cell = one_body
            write, change = self._claimed_write(index, view_cell, clear_outputs)
            if change is None:
                return NotebookEdit(self.data)
            if write.original == index and write.replace and is_source_only([write]):
                return self._edit_one_cell(write, change)
            writes = [CellWrite({}, original) for original in range(len(self.cells))]
            writes[index] = write
            changes = [change]
        else:
            writes, changes = self._plan_writes(parse_view(new_view), clear_outputs, new_cell_id)
        if not changes:
            return NotebookEdit(self.data)
        notes = self._validate(writes)
        style = detect_style(self.data, self.layout, escapes_matter=not all(map(_is_ascii, writes)))
        data = splice_cells(self.data, self.layout, style, writes)
        if is_source_only(writes):
            check_spliced(self.data, data, self.layout, writes, self.path)
        return NotebookEdit(data, tuple(changes), tuple(notes))

    def _edit_one_cell(self, write: CellWrite, change: str) -> NotebookEdit:
        """``edit`` when one cell's members are rewritten and every other cell stays: what the
        general path writes, without building a write per cell (see ``write.splice_cell``)."""
        notes = [already_invalid_note(self.problems)] if self.problems else []
        style = detect_style(self.data, self.layout, escapes_matter=not _is_ascii(write))
        data = splice_cell(self.data, self.layout, style, write)
        check_rewritten(self.data, data, self.layout, [write], self.path)
        return NotebookEdit(data, (change,), tuple(notes), rewritten_cell=write.original)

    def _changed_body(self, new_view: str) -> tuple[int, ViewCell] | None:
        """The one cell whose body alone differs in ``new_view``, read back; None if it is not so.

        Most edits change one cell's text. Comparing the two views from both ends
        (slices compare with ``memcmp``) finds the changed stretch; when it lies inside
        one cell's body, the new view is the old one with that body replaced, so reading
        back the cell's marker line and new body alone gives what ``parse_view`` would
        give for the whole view. Anything else (a marker touched or added, a body that
        would run into the next marker) returns None and the whole view is read back.
        """
        old = self.view
        prefix = _common_prefix(old, new_view)
        suffix = _common_suffix(old, new_view, min(len(old), len(new_view)) - prefix)
        index = self.body_cell(prefix, len(old) - suffix)
        if index is None:
            return None
        span = self.spans[index]
        body = new_view[span.start : len(new_view) - (len(old) - span.end)]
        if body and not body.endswith("\n") and span.end != len(old):
            return None  # the next marker would no longer start a line
        try:
            cells = parse_view(old[self.marker_starts[index] : span.start] + body)
        except NotebookError:
            return None  # the whole view says where (its line numbers)
        if len(cells) != 1 or cells[0].index != index:
            return None
        return index, cells[0]

    def raw_cell(self, index: int) -> dict[str, Any]:
        """Cell ``index`` as ``json.loads`` reads it, parsed from its bytes now."""
        cell = self.layout.cells[index]
        return json.loads(self.data[cell.start : cell.end])  # type: ignore[no-any-return]

    def _member_value(self, members: dict[str, Member], key: str) -> bytes | None:
        """The bytes of a member's value, an empty array as ``b"[]"`` (None: no such member)."""
        member = members.get(key)
        if member is None:
            return None
        value = self.data[member.value_start : member.value_end]
        return b"[]" if value[:1] == b"[" and not value[1:-1].strip(b" \t\r\n") else value

    def _key_order(self, index: int) -> tuple[str, ...]:
        return tuple(self.layout.cells[index].members)

    def _plan_writes(
        self, view_cells: Sequence[ViewCell], clear_outputs: bool, new_cell_id: Callable[[], str]
    ) -> tuple[list[CellWrite], list[str]]:
        by_id: dict[str, int] = {}
        for index, cell_id in enumerate(self.table.ids):
            if cell_id is not None:
                by_id.setdefault(cell_id, index)
        used_ids = set(by_id)
        claimed: set[int] = set()
        writes: list[CellWrite] = []
        changes: list[str] = []
        for view_cell in view_cells:
            original = self._claim(view_cell, by_id, claimed)
            if original is None:
                self._check_type(view_cell)
                cell_id = self._new_id(view_cell, used_ids, new_cell_id)
                write = self._new_cell(view_cell, cell_id)
                writes.append(write)
                changes.append(f"new {write.cell['cell_type']} cell at position {len(writes) - 1}")
                continue
            claimed.add(original)
            write, change = self._claimed_write(original, view_cell, clear_outputs)
            writes.append(write)
            if change is not None:
                changes.append(change)
        for index in range(len(self.cells)):
            if index not in claimed:
                cell = self.cells[index]
                if cell.read_only:
                    raise NotebookError(
                        f"{self.path}: the edit deletes {cell.label}, a cell type nbedit does not know; such "
                        f"cells are read-only in the cell view, so keep its marker and text as they are; "
                        f"{_UNCHANGED}",
                        path=self.path,
                    )
                changes.append(f"{cell.label}: deleted")
        if [write.original for write in writes] != list(range(len(self.cells))) and not changes:
            changes.append("cells reordered")
        return writes, changes

    def _claimed_write(
        self, original: int, view_cell: ViewCell, clear_outputs: bool
    ) -> tuple[CellWrite, str | None]:
        """What becomes of original cell ``original``, read back as ``view_cell``, and the change."""
        before = self.cells[original]
        if before.read_only:
            self._check_read_only(before, view_cell)
            return CellWrite({}, original), None
        self._check_type(view_cell)
        cell_type = view_cell.cell_type or before.cell_type
        if cell_type != before.cell_type:
            return (
                self._retyped_cell(before, cell_type, view_cell.source),
                f"{before.label}: type changed to {cell_type}",
            )
        if view_cell.source != before.source:
            return (
                self._edited_cell(before, view_cell.source, clear_outputs),
                f"{before.label}: source changed",
            )
        return CellWrite({}, original), None

    def _check_type(self, view_cell: ViewCell) -> None:
        if view_cell.cell_type is not None and view_cell.cell_type not in CELL_TYPES:
            raise NotebookError(
                f"cell view line {view_cell.line}: unknown cell type [{view_cell.cell_type}]; "
                f"use [code], [markdown] or [raw]; {_UNCHANGED}",
                path=self.path,
            )

    def _check_read_only(self, before: NotebookCell, view_cell: ViewCell) -> None:
        """A cell of a type nbedit does not know must come back exactly as the view showed it."""
        if view_cell.cell_type in (None, shown_type(before.cell_type)) and view_cell.source == before.source:
            return
        raise NotebookError(
            f"{self.path}: {before.label} is a cell type nbedit does not know ({before.cell_type!r}); it is shown "
            f"read-only in the cell view and kept byte for byte, so its text and type cannot be edited; "
            f"edit other cells, or change it in Jupyter; {_UNCHANGED}",
            path=self.path,
        )

    def _claim(self, view_cell: ViewCell, by_id: dict[str, int], claimed: set[int]) -> int | None:
        index = view_cell.index
        if index is not None and (index >= len(self.cells) or index in claimed):
            index = None
        if view_cell.id is not None:
            original = by_id.get(view_cell.id)
            if original is not None and original not in claimed:
                return original
            # a notebook with duplicate ids: the index tells the cells apart
            return index if index is not None and self.cells[index].id == view_cell.id else None
        return index

    def _new_id(self, view_cell: ViewCell, used_ids: set[str], new_cell_id: Callable[[], str]) -> str | None:
        if self.nbformat_minor < 5:
            return None
        wanted = view_cell.id
        if wanted is not None and not _ID_PATTERN.fullmatch(wanted):
            raise NotebookError(
                f"cell view line {view_cell.line}: {wanted!r} is not a valid cell id "
                f"(1-64 letters, digits, '-' or '_'); change it or drop id= to get a fresh one; {_UNCHANGED}",
                path=self.path,
            )
        cell_id = wanted if wanted is not None and wanted not in used_ids else new_cell_id()
        while cell_id in used_ids:
            cell_id = new_cell_id()
        used_ids.add(cell_id)
        return cell_id

    def _template(self, cell_type: str) -> NotebookCell | None:
        for cell in self.cells:
            if cell.cell_type == cell_type:
                return cell
        return self.cells[0] if self.cells else None

    def _new_cell(self, view_cell: ViewCell, cell_id: str | None) -> CellWrite:
        cell_type = view_cell.cell_type or "code"
        template = self._template(cell_type)
        as_list = template.source_as_list if template is not None else True
        cell: dict[str, Any] = {"cell_type": cell_type}
        if cell_id is not None:
            cell["id"] = cell_id
        cell["metadata"] = {}
        cell["source"] = source_value(view_cell.source, as_list)
        if cell_type == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
        key_order = self._key_order(template.index) if template is not None else ()
        return CellWrite(cell, None, None, key_order)

    def _edited_cell(self, before: NotebookCell, source: str, clear_outputs: bool) -> CellWrite:
        members = self.layout.cells[before.index].members
        cell: dict[str, Any] = {"source": source_value(source, before.source_as_list)}
        if clear_outputs and before.cell_type == "code":
            if self._member_value(members, "outputs") != b"[]":
                cell["outputs"] = []
            if self._member_value(members, "execution_count") != b"null":
                cell["execution_count"] = None
        if any(key not in members for key in cell):
            raw = self.raw_cell(before.index)
            return CellWrite({**raw, **cell}, before.index, None, tuple(raw))
        return CellWrite(cell, before.index, tuple(cell))

    def _retyped_cell(self, before: NotebookCell, cell_type: str, source: str) -> CellWrite:
        raw = self.raw_cell(before.index)
        if cell_type == "code" and raw.get("attachments"):
            raise NotebookError(
                f"{self.path}: {before.label} has attachments, which a code cell cannot hold; "
                f"keep it {before.cell_type}, or remove the attachments first; {_UNCHANGED}",
                path=self.path,
            )
        cell = {key: value for key, value in raw.items() if key not in _CODE_ONLY_KEYS}
        if cell_type == "code":
            cell.pop("attachments", None)
            cell["execution_count"] = None
            cell["outputs"] = []
        cell["cell_type"] = cell_type
        cell["source"] = source_value(source, before.source_as_list)
        template = self._template(cell_type)
        key_order = self._key_order(template.index) if template is not None else ()
        return CellWrite(cell, before.index, None, key_order + tuple(raw))

    def _validate(self, writes: Sequence[CellWrite]) -> list[str]:
        """Notes about validity; ``NotebookError`` if the edit breaks the schema (see ``validate``)."""
        if is_source_only(writes):
            return [already_invalid_note(self.problems)] if self.problems else []
        original_cells = [self.raw_cell(index) for index in range(len(self.cells))]
        labels = [cell.label for cell in self.cells]
        return schema_notes(self.path, self.top, original_cells, labels, writes, self.nbformat_minor)


def _common_prefix(old: str, new: str) -> int:
    """Length of the longest common prefix, found by halving (each slice comparison is a ``memcmp``)."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(old: str, new: str, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit``."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if old[len(old) - middle : len(old) - low] == new[len(new) - middle : len(new) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _is_ascii(write: CellWrite) -> bool:
    """Whether everything ``write`` puts into the file is ASCII (so ``\\u`` escaping cannot matter)."""
    if write.replace is not None and set(write.replace) <= {"source", "outputs", "execution_count"}:
        source = write.cell.get("source", "")
        return "".join(source).isascii() if isinstance(source, list) else str(source).isascii()
    return json.dumps(write.cell, ensure_ascii=False).isascii()
