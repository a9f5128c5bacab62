"""What an applied change looks like to an open tab: the edited cells or lines only.

A tab that shows a file keeps the person's unsaved typing and the notebook's outputs,
so it must never be reloaded whole. It gets, per file, just the cells whose source the
change rewrites (``CellEdit``) or the runs of lines it rewrites (``TextEdit``), each with
the text the plan was computed from: the receiver applies an edit only where the live
document still holds that old text, and reports a conflict otherwise.

Pure: bytes in, dataclasses out, and a JSON form for the wire. No I/O.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from nbedit._dataclass import dataclass

Kind = Literal["notebook", "text"]
CellOperation = Literal["replace", "insert", "delete"]

PROTOCOL_VERSION = 1


@dataclass(frozen=True)
class CellEdit:
    """One cell of a notebook the change touches.

    ``index`` is the cell's position in the document *before* the change for ``replace``
    and ``delete``, and its position *after* the change for ``insert``. ``cell_id`` is the
    nbformat 4.5 id when the notebook has one (receivers match on it first).
    """

    operation: CellOperation
    index: int
    cell_id: str | None
    cell_type: str
    old_source: str | None  # None for insert
    new_source: str | None  # None for delete


@dataclass(frozen=True)
class TextEdit:
    """Lines ``start_line`` .. ``start_line + count(old_text lines)`` (0-based, in the
    text before the change) hold ``old_text``; the change makes them ``new_text``.
    Texts keep their line endings; an insertion has ``old_text == ""``."""

    start_line: int
    old_text: str
    new_text: str


@dataclass(frozen=True)
class LiveChange:
    """One file's change as the open tabs need it.

    ``path`` is relative to the Jupyter server's root, with ``/`` separators.
    ``structural``: the notebook's cells were inserted, deleted or retyped, or its
    metadata changed, so an in-place update must also do those (receivers that cannot
    say so and leave the tab alone).
    """

    path: str
    kind: Kind
    cells: tuple[CellEdit, ...] = ()
    lines: tuple[TextEdit, ...] = ()
    structural: bool = False
    operation: str = "update"  # "update", "create", "delete", "rename"
    new_path: str | None = None
    metadata: dict[str, Any] | None = None  # the notebook's new metadata when the change sets it

    def to_json(self) -> dict[str, Any]:
        return {
            "version": PROTOCOL_VERSION,
            "path": self.path,
            "kind": self.kind,
            "operation": self.operation,
            "new_path": self.new_path,
            "structural": self.structural,
            "metadata": self.metadata,
            "cells": [
                {
                    "operation": cell.operation,
                    "index": cell.index,
                    "cell_id": cell.cell_id,
                    "cell_type": cell.cell_type,
                    "old_source": cell.old_source,
                    "new_source": cell.new_source,
                }
                for cell in self.cells
            ],
            "lines": [
                {"start_line": line.start_line, "old_text": line.old_text, "new_text": line.new_text}
                for line in self.lines
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LiveChange:
        return cls(
            path=str(data["path"]),
            kind="notebook" if data["kind"] == "notebook" else "text",
            operation=str(data.get("operation", "update")),
            new_path=data.get("new_path"),
            structural=bool(data.get("structural", False)),
            metadata=data["metadata"] if isinstance(data.get("metadata"), dict) else None,
            cells=tuple(
                CellEdit(
                    operation=cell["operation"],
                    index=int(cell["index"]),
                    cell_id=cell.get("cell_id"),
                    cell_type=str(cell.get("cell_type", "code")),
                    old_source=cell.get("old_source"),
                    new_source=cell.get("new_source"),
                )
                for cell in data.get("cells", ())
            ),
            lines=tuple(
                TextEdit(int(line["start_line"]), str(line["old_text"]), str(line["new_text"]))
                for line in data.get("lines", ())
            ),
        )


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def notebook_change(path: str, before: bytes, after: bytes) -> LiveChange:
    """The cell edits that turn the notebook ``before`` into ``after`` (both raw JSON).

    Cells are paired by id when both sides have ids, else by position when the count
    is unchanged, else by a sequence alignment on (type, source).
    """
    old_notebook = json.loads(before)
    new_notebook = json.loads(after)
    old_cells: list[Mapping[str, Any]] = list(old_notebook.get("cells", []))
    new_cells: list[Mapping[str, Any]] = list(new_notebook.get("cells", []))
    metadata_changed = old_notebook.get("metadata") != new_notebook.get("metadata")
    structural = metadata_changed

    with_ids = all("id" in cell for cell in old_cells + new_cells)

    def key(cell: Mapping[str, Any]) -> object:
        return cell["id"] if with_ids else (cell.get("cell_type"), _source(cell))

    edits: list[CellEdit] = []
    if len(old_cells) == len(new_cells) and [c.get("id") for c in old_cells] == [
        c.get("id") for c in new_cells
    ]:
        pairs = list(zip(range(len(old_cells)), range(len(new_cells)), strict=True))
        inserted: list[int] = []
        deleted: list[int] = []
    else:
        matcher = difflib.SequenceMatcher(
            None, [key(c) for c in old_cells], [key(c) for c in new_cells], autojunk=False
        )
        pairs, inserted, deleted = [], [], []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal" or (
                tag == "replace" and i2 - i1 == j2 - j1 and "id" not in (old_cells[i1] if old_cells else {})
            ):
                pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
            else:
                deleted.extend(range(i1, i2))
                inserted.extend(range(j1, j2))
    for old_index, new_index in pairs:
        old_cell, new_cell = old_cells[old_index], new_cells[new_index]
        if old_cell.get("cell_type") != new_cell.get("cell_type"):
            structural = True
        old_source, new_source = _source(old_cell), _source(new_cell)
        if old_source != new_source:
            edits.append(
                CellEdit(
                    "replace",
                    old_index,
                    old_cell.get("id"),
                    str(new_cell.get("cell_type", "code")),
                    old_source,
                    new_source,
                )
            )
    for old_index in deleted:
        cell = old_cells[old_index]
        edits.append(
            CellEdit(
                "delete", old_index, cell.get("id"), str(cell.get("cell_type", "code")), _source(cell), None
            )
        )
    for new_index in inserted:
        cell = new_cells[new_index]
        edits.append(
            CellEdit(
                "insert", new_index, cell.get("id"), str(cell.get("cell_type", "code")), None, _source(cell)
            )
        )
    return LiveChange(
        path=path,
        kind="notebook",
        cells=tuple(edits),
        structural=structural or bool(inserted or deleted),
        metadata=dict(new_notebook.get("metadata") or {}) if metadata_changed else None,
    )


def text_change(path: str, before: str, after: str) -> LiveChange:
    """The runs of lines that turn ``before`` into ``after`` (line endings kept).

    A pure insertion is anchored on a neighbouring unchanged line (the one above, or
    below at the top of the file), so every edit names old text the receiver can find
    again when the person's typing above it has moved the lines.
    """
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    edits: list[TextEdit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old_text, new_text = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        if tag == "insert" and i1 > 0:
            edits.append(TextEdit(i1 - 1, old_lines[i1 - 1], old_lines[i1 - 1] + new_text))
        elif tag == "insert" and old_lines:
            edits.append(TextEdit(0, old_lines[0], new_text + old_lines[0]))
        else:
            edits.append(TextEdit(i1, old_text, new_text))
    return LiveChange(path=path, kind="text", lines=tuple(edits))


def changes_to_json(changes: Sequence[LiveChange]) -> str:
    return json.dumps({"version": PROTOCOL_VERSION, "changes": [change.to_json() for change in changes]})


def changes_from_json(text: str | bytes) -> tuple[LiveChange, ...]:
    """The changes of a ``changes_to_json`` document; ``ValueError`` if it is not one."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("changes"), list):
        raise ValueError("expected a JSON object with a 'changes' list")
    try:
        return tuple(LiveChange.from_json(item) for item in data["changes"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"a change is malformed: {error}") from None


def file_change(path: str, notebook: bool, before: bytes, after: bytes) -> LiveChange | None:
    """The change an open tab of ``path`` needs to go from ``before`` to ``after``; None when
    the bytes are not UTF-8 text or JSON a tab could show (the tab is then left alone)."""
    try:
        if notebook:
            return notebook_change(path, before, after)
        return text_change(path, before.decode("utf-8"), after.decode("utf-8"))
    except (ValueError, TypeError, AttributeError):
        return None


def saved_holds(change: LiveChange, saved: bytes) -> bool:
    """Whether ``saved`` (the bytes a live document was saved as) holds every new text of ``change``."""
    if change.kind == "text":
        text = saved.decode("utf-8", errors="replace")
        return all(edit.new_text in text for edit in change.lines)
    try:
        cells = json.loads(saved).get("cells", [])
    except (ValueError, AttributeError):
        return False
    by_id = {cell.get("id"): cell for cell in cells if isinstance(cell, dict) and cell.get("id")}
    for edit in change.cells:
        if edit.operation == "delete":
            if edit.cell_id is not None and edit.cell_id in by_id:
                return False
            continue
        cell = by_id.get(edit.cell_id) if edit.cell_id else None
        if cell is None and edit.cell_id is None and 0 <= edit.index < len(cells):
            cell = cells[edit.index]
        if cell is None or _source(cell) != edit.new_source:
            return False
    return True
