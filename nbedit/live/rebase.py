"""Re-plan a change against an open tab's live document (after a ``LiveConflict``).

The tab has unsaved typing in the very cells or lines the change rewrites. Rather
than make the person save or undo it, the same change can be located again with
the tab's text as the base: for a notebook, the edited cells' live sources replace
the ones on disk (other cells stay as on disk, so typing elsewhere stays the tab's
business); for a text file, the tab's whole text is the base. The change is
carried over as a zero-context unified diff of what the plan did, so nbedit's
matcher places it (and refuses to guess) exactly as for any other diff.

Pure: bytes and texts in, bytes and text out.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from nbedit.live.protocol import notebook_change

__all__ = ["live_base", "zero_context_diff"]

_BOM = b"\xef\xbb\xbf"


def live_base(
    notebook: bool, before: bytes, after: bytes, document: object, encoding: str | None
) -> bytes | None:
    """The bytes the tab's live document stands for, or None if ``document`` is not usable.

    ``document`` is what the tab sent: a text file's text, or a notebook's cells as
    ``[{"id", "cell_type", "source"}, ...]``.
    """
    if not notebook:
        if not isinstance(document, str):
            return None
        data = document.encode(encoding or "utf-8", errors="surrogateescape")
        return _BOM + data if before.startswith(_BOM) and not data.startswith(_BOM) else data
    if not isinstance(document, list):
        return None
    live: dict[str, str] = {
        str(cell["id"]): str(cell.get("source", ""))
        for cell in document
        if isinstance(cell, Mapping) and cell.get("id")
    }
    edited = {
        edit.cell_id
        for edit in notebook_change("", before, after).cells
        if edit.operation != "insert" and edit.cell_id in live and live[edit.cell_id] != edit.old_source
    }
    if not edited:
        return None
    spliced = _spliced(before, {cell_id: live[cell_id] for cell_id in edited if cell_id})
    if spliced is not None:
        return spliced
    data = json.loads(before)  # a notebook nbedit cannot read as a cell view: nbformat's layout
    for cell in data.get("cells", []):
        if cell.get("id") in edited:
            cell["source"] = _source_like(cell.get("source", ""), live[cell["id"]])
    return (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _spliced(before: bytes, sources: Mapping[str, str]) -> bytes | None:
    """``before`` with the cells of these ids given these sources, every other byte kept
    (nbedit's own notebook writer, through the cell view)."""
    from nbedit.engine.notebook import NotebookDocument, render_cell
    from nbedit.errors import NbeditError

    try:
        document = NotebookDocument.parse(before, "live.ipynb")
        view = document.cell_view()
        for index, span in reversed(list(enumerate(document.cell_spans()))):
            cell = document.raw_cell(index)
            cell_id = cell.get("id")
            if cell_id not in sources:
                continue
            body = render_cell(index, str(cell.get("cell_type", "code")), sources[cell_id], cell_id)
            view = view[: span.start] + body.split("\n", 1)[1] + view[span.end :]
        return document.apply_view(view)
    except (NbeditError, ValueError, KeyError, IndexError):
        return None


def _source_like(original: Any, text: str) -> list[str] | str:
    """``text`` in the form the file stores sources (a list of lines, as nbformat writes, or a string)."""
    if isinstance(original, list):
        return text.splitlines(keepends=True)
    return text


def zero_context_diff(path: str, before: str, after: str) -> str:
    """A unified diff of ``before`` -> ``after`` with no context lines (hunks that fit where
    the live text around them differs from the disk's)."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
            n=0,
        )
    )
    out: list[str] = []
    for line in lines:
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def combined_diff(files: Sequence[tuple[str, str, str]]) -> str:
    """One diff of several files' (path, before, after)."""
    return "".join(zero_context_diff(path, before, after) for path, before, after in files)
