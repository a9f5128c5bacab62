"""Check a change against a live shared document, and the edits that apply it there.

A jupyter-collaboration room holds a notebook as a ``YNotebook`` (cells in a pycrdt
array, each source a shared text) and a text file as a ``YUnicode`` (one shared text).
Everyone connected edits them; nobody has to have saved. So before nbedit touches one,
every place the change rewrites must still hold the text the plan was computed from,
and the change must be expressible as edits of the shared structure (no whole-document
``set``, which would reset what others are looking at):

* a cell source: one splice of the changed middle (prefix and suffix untouched, so a
  collaborator's cursor outside it stays put); outputs and other cells are not touched;
* a retyped, inserted or deleted cell: only when the live list of cells (ids and types)
  is still the one on disk the plan was made from, so positions mean the same thing;
* notebook metadata: only the keys the change sets or removes, each still at its old value;
* a run of lines of a text file: found at its line and spliced like a cell source.

``check_notebook``/``check_text`` return the differences (the "conflict") or an
``apply`` function to run inside one transaction. Nothing here talks to the server:
``collab`` finds the document, runs the check and ``apply`` together, and saves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from nbedit._dataclass import dataclass, field
from nbedit.engine.text import common_ends
from nbedit.live.protocol import CellEdit, LiveChange, TextEdit

_MISSING = object()


@dataclass(frozen=True)
class Difference:
    """A place the change rewrites whose live text is not the plan's old text."""

    where: str
    expected: str
    live: str | None


@dataclass(frozen=True)
class Check:
    """The verdict on a change: ``unsupported`` (say why), ``differences``, or ``apply``."""

    differences: tuple[Difference, ...] = ()
    unsupported: str = ""
    apply: Callable[[], None] | None = field(default=None, compare=False)


def splice(text: Any, old: str, new: str, offset: int = 0) -> None:
    """Turn ``old`` (at UTF-8 byte ``offset`` of the shared ``text``) into ``new`` by one
    splice of the changed middle. pycrdt indexes shared text by UTF-8 bytes."""
    prefix, suffix = common_ends(old, new)
    start = offset + len(old[:prefix].encode("utf-8"))
    old_end = offset + len(old[: len(old) - suffix].encode("utf-8"))
    middle = new[prefix : len(new) - suffix]
    if old_end > start:
        del text[start:old_end]
    if middle:
        text.insert(start, middle)


# ---------------------------------------------------------------------- notebooks


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _describe(edit: CellEdit) -> str:
    return f"cell {edit.index + 1}" + (f" (id {edit.cell_id})" if edit.cell_id else "")


def _has_ids(document: Any) -> bool:
    """Cell ids belong to nbformat 4.5 and later; the room gives every cell one regardless,
    and drops them again when it saves an older notebook (as jupyter_ydoc does)."""
    meta = document._ymeta
    return (int(meta.get("nbformat", 4) or 4), int(meta.get("nbformat_minor", 5) or 0)) >= (4, 5)


def live_cells(document: Any) -> list[dict[str, Any]]:
    """The live notebook's cells as a re-plan needs them: id (None before nbformat 4.5),
    type and source."""
    ids = _has_ids(document)
    return [
        {
            "id": ycell.get("id") if ids else None,
            "cell_type": ycell.get("cell_type"),
            "source": str(ycell.get("source", "")),
        }
        for ycell in document.ycells
    ]


def _find(cells: list[dict[str, Any]], edit: CellEdit) -> int | None:
    if edit.cell_id:
        return next((index for index, cell in enumerate(cells) if cell["id"] == edit.cell_id), None)
    return edit.index if 0 <= edit.index < len(cells) else None


def _new_cell(document: Any, cell_type: str, source: str, cell_id: str | None, metadata: Any) -> Any:
    cell: dict[str, Any] = {"cell_type": cell_type, "source": source, "metadata": metadata or {}}
    if cell_id:
        cell["id"] = cell_id
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    return document.create_ycell(cell)


def check_notebook(document: Any, change: LiveChange, before: bytes | None) -> Check:
    """Check ``change`` against the live ``document``; ``before`` is the file on disk (what
    the plan was computed from), needed for structural changes and metadata."""
    cells = live_cells(document)
    on_disk: dict[str, Any] | None = None
    if before is not None and (change.structural or change.metadata is not None):
        try:
            on_disk = json.loads(before)
        except ValueError:
            on_disk = None
    disk_cells = [
        {"id": cell.get("id"), "cell_type": cell.get("cell_type"), "source": _source(cell)}
        for cell in (on_disk or {}).get("cells", [])
    ]
    differences: list[Difference] = []
    if change.structural:
        if on_disk is None:
            return Check(unsupported="the file on disk is not a notebook the change was planned from")
        shape = [(cell["id"], cell["cell_type"]) for cell in cells]
        if shape != [(cell["id"], cell["cell_type"]) for cell in disk_cells]:
            differences.append(
                Difference(
                    "the list of cells",
                    expected=f"{len(disk_cells)} cells as saved",
                    live=f"{len(cells)} cells, added, removed, moved or retyped and not saved",
                )
            )
            return Check(differences=tuple(differences))

    replaced: list[tuple[int, CellEdit]] = []
    retyped: list[tuple[int, CellEdit]] = []
    deleted: list[int] = []
    for edit in change.cells:
        if edit.operation == "insert":
            continue
        index = _find(cells, edit)
        if index is None:
            differences.append(Difference(_describe(edit), edit.old_source or "", None))
            continue
        if cells[index]["source"] != edit.old_source:
            differences.append(Difference(_describe(edit), edit.old_source or "", cells[index]["source"]))
        elif edit.operation == "delete":
            deleted.append(index)
        elif cells[index]["cell_type"] != edit.cell_type:
            if not change.structural:
                differences.append(
                    Difference(f"{_describe(edit)}'s type", edit.cell_type, str(cells[index]["cell_type"]))
                )
            else:
                retyped.append((index, edit))
        else:
            replaced.append((index, edit))
    inserted = sorted((edit for edit in change.cells if edit.operation == "insert"), key=lambda e: e.index)

    metadata_keys: dict[str, Any] = {}
    if change.metadata is not None:
        if on_disk is None:
            return Check(unsupported="the file on disk is not a notebook the change was planned from")
        old_metadata = on_disk.get("metadata") or {}
        live_metadata = _live_metadata(document)
        for key in sorted(set(old_metadata) | set(change.metadata)):
            old, new = old_metadata.get(key, _MISSING), change.metadata.get(key, _MISSING)
            if old == new:
                continue
            if live_metadata.get(key, _MISSING) != old:
                differences.append(
                    Difference(
                        f"notebook metadata {key!r}",
                        json.dumps(None if old is _MISSING else old),
                        json.dumps(live_metadata.get(key)),
                    )
                )
            metadata_keys[key] = new
    if differences:
        return Check(differences=tuple(differences))
    if change.structural and not (retyped or deleted or inserted or metadata_keys):
        return Check(unsupported="the change retypes a cell without changing its source")

    def apply() -> None:
        ycells = document.ycells
        for index, edit in replaced:
            assert edit.old_source is not None and edit.new_source is not None
            splice(ycells[index]["source"], edit.old_source, edit.new_source)
        for index, edit in retyped:
            ycell = ycells[index]
            metadata = ycell.get("metadata")
            ycells[index] = _new_cell(
                document,
                edit.cell_type,
                edit.new_source or "",
                ycell.get("id"),
                metadata.to_py() if hasattr(metadata, "to_py") else metadata,
            )
        for index in sorted(deleted, reverse=True):
            del ycells[index]
        for edit in inserted:
            ycells.insert(
                edit.index, _new_cell(document, edit.cell_type, edit.new_source or "", edit.cell_id, {})
            )
        if metadata_keys:
            shared = document._ymeta.get("metadata")
            for key, value in metadata_keys.items():
                if value is _MISSING:
                    if key in shared:
                        del shared[key]
                else:
                    shared[key] = value

    return Check(apply=apply)


def _live_metadata(document: Any) -> dict[str, Any]:
    shared = document._ymeta.get("metadata")
    if shared is None:
        return {}
    return dict(shared.to_py() if hasattr(shared, "to_py") else shared)


# ---------------------------------------------------------------------- text files


def check_text(document: Any, change: LiveChange, before: bytes | None) -> Check:
    """Check ``change`` (runs of lines) against the live text ``document``."""
    if before is not None and b"\r" in before:
        # the room turned the file's CR line endings into LF when it loaded it: its save would
        # rewrite every line of the file
        return Check(
            unsupported="the file has CRLF (or CR) line endings, which the room's save would rewrite"
        )
    live = str(document.get())
    lines = live.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    differences: list[Difference] = []
    for edit in change.lines:
        count = len(edit.old_text.splitlines(keepends=True))
        found = "".join(lines[edit.start_line : edit.start_line + count])
        if found != edit.old_text or edit.start_line > len(lines):
            first, last = edit.start_line + 1, edit.start_line + max(count, 1)
            differences.append(
                Difference(
                    f"line {first}" if first == last else f"lines {first}-{last}", edit.old_text, found
                )
            )
    if differences:
        return Check(differences=tuple(differences))
    edits: tuple[TextEdit, ...] = change.lines

    def apply() -> None:
        text = document._ysource
        # bottom-up, so the offsets of the runs above stay valid
        for edit in sorted(edits, key=lambda item: item.start_line, reverse=True):
            begin = starts[min(edit.start_line, len(lines))]
            splice(text, edit.old_text, edit.new_text, offset=len(live[:begin].encode("utf-8")))

    return Check(apply=apply)
