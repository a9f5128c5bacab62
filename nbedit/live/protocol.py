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
from dataclasses import dataclass
from typing import Any, Literal

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

    def to_json(self) -> dict[str, Any]:
        return {
            "version": PROTOCOL_VERSION,
            "path": self.path,
            "kind": self.kind,
            "operation": self.operation,
            "new_path": self.new_path,
            "structural": self.structural,
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
    structural = old_notebook.get("metadata") != new_notebook.get("metadata")

    def key(cell: Mapping[str, Any]) -> object:
        if all("id" in c for c in old_cells + new_cells):
            return cell["id"]
        return (cell.get("cell_type"), _source(cell))

    edits: list[CellEdit] = []
    if len(old_cells) == len(new_cells) and [c.get("id") for c in old_cells] == [
        c.get("id") for c in new_cells
    ]:
        pairs = list(zip(range(len(old_cells)), range(len(new_cells))))
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
                pairs.extend(zip(range(i1, i2), range(j1, j2)))
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
        path=path, kind="notebook", cells=tuple(edits), structural=structural or bool(inserted or deleted)
    )


def text_change(path: str, before: str, after: str) -> LiveChange:
    """The runs of lines that turn ``before`` into ``after`` (line endings kept)."""
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    edits = tuple(
        TextEdit(i1, "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )
    return LiveChange(path=path, kind="text", lines=edits)


def changes_to_json(changes: Sequence[LiveChange]) -> str:
    return json.dumps({"version": PROTOCOL_VERSION, "changes": [change.to_json() for change in changes]})
