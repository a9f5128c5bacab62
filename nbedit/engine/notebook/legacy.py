"""Notebooks in nbformat 2 and 3: their cell sources viewed and edited in place, never converted.

Jupyter still opens these files (it upgrades them in memory), and many real
notebooks shipped in packages are in them. Their cells sit in
``worksheets[i].cells`` instead of ``cells``, a code cell keeps its text in
``input`` (other cells in ``source``), and an old ``heading`` cell has a
``level``. Upgrading the file to version 4 would rewrite every cell: an edit of
one line must never do that, so this module reads the cells where they are and
writes back only the values of the members that changed, byte for byte
elsewhere, like the version 4 writer (``write.splice_members`` splices and
``check_spliced`` proves it: a flat layout of every worksheet's cells is all
they need).

What an edit may do here: change the text of any code, markdown or raw cell
(with ``clear_outputs``, empty an edited code cell's ``outputs``). Adding,
deleting, moving or retyping cells would mean writing cells in the old schema
or converting the file, so such an edit is refused with what to do instead.
``heading`` cells are shown read-only, as cell types nbedit does not know are in
version 4.

How a list of lines reads back follows nbformat's own readers: version 2 joins
the lines with ``"\\n"``; version 3 joins them as they are when the first ends
with a newline (``splitlines(True)``) and with ``"\\n"`` otherwise. A new value
keeps the cell's form (one string, or lines in the form the cell used) and is
checked to read back as exactly the text meant.
"""

from __future__ import annotations

import json

from nbedit._dataclass import dataclass
from nbedit.engine.notebook.cells import UNCHANGED, NotebookCell, NotebookEdit, checked_cell_type
from nbedit.engine.notebook.layout import Layout, detect_style
from nbedit.engine.notebook.table import NOT_AN_OBJECT, CellTable
from nbedit.engine.notebook.view import parse_view, shown_type
from nbedit.engine.notebook.write import CellWrite, check_spliced, splice_members
from nbedit.errors import NotebookError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Protocol

    from nbedit.engine.notebook.view import ViewCell

    class NotebookDocument(Protocol):
        """What this module uses of ``document.NotebookDocument`` (which imports this module)."""

        path: str
        data: bytes
        cells: Sequence[NotebookCell]
        table: CellTable
        layout: Layout
        legacy: LegacyCells | None

        def _check_read_only(self, before: NotebookCell, view_cell: ViewCell) -> None: ...


__all__ = ["LEGACY_VERSIONS", "LegacyCells", "legacy_edit", "read_legacy_cells", "source_key"]

LEGACY_VERSIONS = (2, 3)
_UNCHANGED = UNCHANGED


@dataclass(frozen=True, slots=True)
class LegacyCells:
    """What an nbformat 2/3 document needs besides its cells: the version and each cell's text member."""

    major: int
    keys: tuple[str | None, ...]  # "input" or "source"; None when the cell has neither
    forms: tuple[str, ...]  # "string", "lines" (splitlines(True)) or "joined" (lines joined with "\n")


def source_key(cell_type: str) -> str:
    return "input" if cell_type == "code" else "source"


def join_source(value: Any, major: int) -> str | None:
    """The text a stored value means, read the way nbformat's reader for ``major`` reads it."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        return None
    if major == 3 and value and value[0].endswith(("\n", "\r")):
        return "".join(value)
    return "\n".join(value)


def _form(value: Any, major: int) -> str:
    if isinstance(value, str):
        return "string"
    if major == 2 or (len(value) > 1 and not value[0].endswith(("\n", "\r"))):
        return "joined"
    return "lines"


def stored_value(text: str, form: str, major: int) -> Any:
    """``text`` in the cell's own form; a form that would not read back exactly gives one string."""
    if form == "string":
        return text
    candidates: list[Any] = []
    if form == "lines":
        candidates.append(text.splitlines(keepends=True))
    candidates.append([] if text == "" else text.split("\n"))
    for candidate in candidates:
        if join_source(candidate, major) == text:
            return candidate
    return text


def read_legacy_cells(path: str, data: bytes, table: CellTable, major: int) -> tuple[LegacyCells, list[str]]:
    """Put into ``table`` the cells of every worksheet as the cell view shows them (its columns
    were read the version 4 way); say how each cell stores its text, and give each one's text."""
    keys: list[str | None] = []
    forms: list[str] = []
    texts: list[str] = []
    for index in range(len(table)):
        start, end = table.starts[index], table.ends[index]
        raw = json.loads(data[start:end]) if table.types[index] is not NOT_AN_OBJECT else None
        cell_type = checked_cell_type(path, index, raw)
        key = source_key(cell_type)
        if key not in raw and "source" in raw:
            key = "source"
        value = raw.get(key, "")
        text = join_source(value, major)
        if text is None:
            raise NotebookError(
                f"{path}: cell {index} has an {key!r} that is neither a string nor a list of strings; "
                f"{_UNCHANGED}",
                path=path,
            )
        keys.append(key if key in raw else None)
        forms.append(_form(value, major) if key in raw else "lines")
        table.types[index] = cell_type
        table.ids[index] = None
        texts.append(text)
        table.kinds[index] = type(value)
    return LegacyCells(major, tuple(keys), tuple(forms)), texts


def _refusal(document: NotebookDocument, what: str) -> NotebookError:
    assert document.legacy is not None
    return NotebookError(
        f"{document.path}: is an nbformat {document.legacy.major} notebook, where nbedit edits the text of "
        f"existing cells in place; {what} would mean converting the file to nbformat 4, which nbedit never "
        f"does as a side effect of an edit. Change only cell text here, or open the notebook in Jupyter, "
        f"save it (Jupyter converts it to nbformat 4) and retry; {_UNCHANGED}",
        path=document.path,
    )


def legacy_edit(document: NotebookDocument, new_view: str, *, clear_outputs: bool) -> NotebookEdit:
    """``NotebookDocument.edit`` for an nbformat 2/3 document: changed cell texts only."""
    legacy = document.legacy
    assert legacy is not None
    view_cells = parse_view(new_view)
    if len(view_cells) != len(document.cells) or any(
        view_cell.index is None or view_cell.index != position
        for position, view_cell in enumerate(view_cells)
    ):
        added = len(view_cells) - len(document.cells)
        what = (
            "adding cells"
            if added > 0
            else "deleting cells"
            if added < 0
            else "moving cells (or writing a 'new' marker)"
        )
        raise _refusal(document, what)
    writes: list[CellWrite] = []
    changes: list[str] = []
    for before, view_cell in zip(document.cells, view_cells, strict=True):
        if view_cell.id is not None:
            raise _refusal(document, f"giving {before.label} an id")
        if view_cell.cell_type not in (None, shown_type(before.cell_type)):
            if before.read_only:
                document._check_read_only(before, view_cell)
            raise _refusal(document, f"changing {before.label} to [{view_cell.cell_type}]")
        if view_cell.source == before.source:
            writes.append(CellWrite({}, before.index))
            continue
        if before.read_only:
            document._check_read_only(before, view_cell)
        key = legacy.keys[before.index]
        if key is None:
            raise _refusal(
                document, f"giving {before.label} text (it has no '{source_key(before.cell_type)}')"
            )
        cell: dict[str, Any] = {key: stored_value(view_cell.source, legacy.forms[before.index], legacy.major)}
        if clear_outputs and before.cell_type == "code":
            members = document.layout.cells[before.index].members
            if "outputs" in members and json.loads(_member_bytes(document, before.index, "outputs")) != []:
                cell["outputs"] = []
        writes.append(CellWrite(cell, before.index, tuple(cell)))
        changes.append(f"{before.label}: source changed")
    if not changes:
        return NotebookEdit(document.data)
    escapes_matter = not all(json.dumps(write.cell, ensure_ascii=False).isascii() for write in writes)
    style = detect_style(document.data, document.layout, escapes_matter=escapes_matter)
    data = splice_members(document.data, document.layout, style, writes)
    check_spliced(document.data, data, document.layout, writes, document.path)
    return NotebookEdit(data, tuple(changes), ())


def _member_bytes(document: NotebookDocument, index: int, key: str) -> bytes:
    member = document.layout.cells[index].members[key]
    return document.data[member.value_start : member.value_end]
