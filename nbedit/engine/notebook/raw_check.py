"""Is a notebook patched as raw JSON still a notebook, and what did the patch change?

``raw`` applies a diff of the ``.ipynb`` text to the text itself; this module checks
what came out before anything is written. The result must parse as JSON and, when
the notebook was valid before, pass nbformat's schema (version 4, or version 3's
for an old notebook; version 2 has none); then the document reader must accept it.
The plan's preview is the cell view of the patched notebook with its markers naming
the cells as they were before the diff (``_pairing``: ids first, else equal cells,
else cells edited in place), plus notes naming what changed outside the cell view
(outputs, metadata, the cell structure), which a cell-view diff does not show.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nbedit.engine.notebook.cells import UNCHANGED
from nbedit.errors import NbeditError, NotebookError

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["check_notebook"]

_UNCHANGED = UNCHANGED


def check_notebook(path: str, before: bytes, after: bytes) -> tuple[str, list[str]]:
    """The cell view of the patched notebook and notes; ``NotebookError`` if it is no valid notebook."""
    from nbedit.engine.notebook.document import NotebookDocument

    advice = (
        "the diff was applied to the notebook's JSON and the result is not a valid notebook "
        "({problem}); check that the diff was made from this version of the notebook "
        "(git diff of the .ipynb), or edit the cells through the cell view; " + _UNCHANGED
    )
    try:
        after_notebook = json.loads(after.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as error:
        raise NotebookError(f"{path}: " + advice.format(problem=f"not JSON: {error}"), path=path) from None
    problem = _schema_problem(after_notebook)
    notes: list[str] = []
    if problem is not None:
        before_problem = _schema_problem(json.loads(before.decode("utf-8-sig")))
        if before_problem is None:
            raise NotebookError(f"{path}: " + advice.format(problem=problem), path=path)
        notes.append(f"the notebook was already invalid before this diff ({before_problem}); it still is")
    try:
        document = NotebookDocument.parse(after, path)
    except NbeditError as error:
        raise NotebookError(f"{path}: " + advice.format(problem=error.message), path=path) from None
    before_notebook = _as_cells(json.loads(before.decode("utf-8-sig")))
    after_notebook = _as_cells(after_notebook)
    notes.extend(_outside_view_changes(before_notebook, after_notebook))
    return _display_view(before_notebook, after_notebook, document), notes


def _as_cells(notebook: Any) -> Any:
    """An nbformat 2/3 notebook shaped like version 4 for comparing (its worksheets' cells as
    ``cells``, a code cell's ``input`` as ``source``); the file itself is never converted."""
    if not isinstance(notebook, dict) or notebook.get("nbformat") not in (2, 3):
        return notebook
    sheets = notebook.get("worksheets")
    cells: list[Any] = []
    for sheet in sheets if isinstance(sheets, list) else []:
        found = sheet.get("cells") if isinstance(sheet, dict) else None
        for cell in found if isinstance(found, list) else []:
            if isinstance(cell, dict) and "input" in cell:
                cell = {("source" if key == "input" else key): value for key, value in cell.items()}
            cells.append(cell)
    shaped = {key: value for key, value in notebook.items() if key != "worksheets"}
    shaped["cells"] = cells
    return shaped


def _schema_problem(notebook: Any) -> str | None:
    if not isinstance(notebook, dict):
        return "the JSON is not an object"
    major, minor = notebook.get("nbformat"), notebook.get("nbformat_minor", 0)
    from nbformat.validator import get_validator

    if major == 3 and type(minor) is int:
        legacy = get_validator(3, minor) or get_validator(3)  # type: ignore[no-untyped-call]
        if legacy is None or not any(True for _ in legacy.iter_errors(notebook)):
            return None
        return "nbformat 3's schema refuses it"
    if major == 2:
        return None  # nbformat has no schema for version 2 (Jupyter reads it leniently)
    if major != 4 or type(minor) is not int:
        return f"nbformat {major}.{minor} is not nbformat 4"

    validator = get_validator(4, minor)  # type: ignore[no-untyped-call]
    if validator is None:
        validator = get_validator(4)  # type: ignore[no-untyped-call]
    if not any(True for _ in validator.iter_errors(notebook)):
        return None
    # the fast validator's messages are terse ("must be valid exactly by one definition"):
    # jsonschema's best match names the member that is wrong
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    detailed = get_validator(4, minor, name="jsonschema") or get_validator(4, name="jsonschema")  # type: ignore[no-untyped-call]
    best = best_match(detailed.iter_errors(notebook))
    if best is None:
        return "nbformat's schema refuses it"
    where = "/".join(str(part) for part in best.absolute_path)
    if best.context:  # "not valid under any of the given schemas": say what the closest schema missed
        inner = best_match(best.context)
        where = "/".join(str(part) for part in inner.absolute_path) or where
        best = inner
    message = str(best.message)
    if len(message) > 200:
        message = message[:200] + "..."
    return message + (f" at {where}" if where else "")


def _cell_key(cell: Any) -> tuple[str, ...]:
    if not isinstance(cell, dict):
        return ("?",)
    if isinstance(cell.get("id"), str):
        return ("id", cell["id"])
    source = cell.get("source", "")
    return (
        "source",
        str(cell.get("cell_type")),
        "".join(source) if isinstance(source, list) else str(source),
    )


def _pairing(before_cells: Sequence[Any], after_cells: Sequence[Any]) -> dict[int, int]:
    """After-cell position -> the before-cell it is (ids first, else equal cells, else edited in place)."""
    pairs: dict[int, int] = {}
    for tag, before_start, before_end, after_start, after_end in _cell_opcodes(
        [_cell_key(cell) for cell in before_cells], [_cell_key(cell) for cell in after_cells]
    ):
        if tag == "equal" or (tag == "replace" and before_end - before_start == after_end - after_start):
            for step in range(after_end - after_start):
                before_cell, after_cell = before_cells[before_start + step], after_cells[after_start + step]
                if tag == "equal" or _same_identity(before_cell, after_cell):
                    pairs[after_start + step] = before_start + step
    # a moved cell is a deletion and an insertion to the alignment; its id says it is one cell
    taken = set(pairs.values())
    by_id = {
        cell["id"]: index
        for index, cell in enumerate(before_cells)
        if index not in taken and isinstance(cell, dict) and isinstance(cell.get("id"), str)
    }
    for position, cell in enumerate(after_cells):
        if position not in pairs and isinstance(cell, dict) and cell.get("id") in by_id:
            pairs[position] = by_id.pop(cell["id"])
    return pairs


def _cell_opcodes(before: list[tuple[str, ...]], after: list[tuple[str, ...]]) -> Any:
    """The alignment of two notebooks' cell keys: one difflib call up to ``ALIGN_LINES`` cells
        (both sides), above that ``resync.aligned_opcodes`` (cut at cells once on each side, the gaps
    by difflib; difflib's cost is cells times the equal
        runs: a raw diff editing every 5th of 4,000 cells took 0.7 s, issue 27)."""
    from nbedit.engine.diff_counts import ALIGN_LINES

    if len(before) + len(after) > ALIGN_LINES:
        from nbedit.engine.resync import aligned_opcodes

        return aligned_opcodes(before, after, ALIGN_LINES)
    import difflib

    return difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()


def _same_identity(before: Any, after: Any) -> bool:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return False
    return before.get("id") == after.get("id")


def _display_view(before_notebook: dict[str, Any], after_notebook: dict[str, Any], document: Any) -> str:
    """The patched notebook's cell view, its markers naming the cells as read before the diff."""
    from nbedit.engine.notebook.view import render_cell

    before_cells, after_cells = before_notebook.get("cells", []), after_notebook.get("cells", [])
    pairs = _pairing(
        before_cells if isinstance(before_cells, list) else [],
        after_cells if isinstance(after_cells, list) else [],
    )
    parts = []
    for position, cell in enumerate(document.cells):
        original = pairs.get(position)
        parts.append(render_cell(original, cell.cell_type, cell.source, cell.id))
    return "".join(parts)


def _outside_view_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What the diff changed that the cell view does not show (outputs, metadata, counts)."""
    changes: list[str] = []
    for key in sorted(set(before) | set(after)):
        if key != "cells" and before.get(key) != after.get(key):
            changes.append("notebook metadata" if key == "metadata" else f"notebook '{key}'")
    before_cells = before.get("cells", []) if isinstance(before.get("cells"), list) else []
    after_cells = after.get("cells", []) if isinstance(after.get("cells"), list) else []
    pairs = _pairing(before_cells, after_cells)
    for position, cell in enumerate(after_cells):
        original = pairs.get(position)
        if original is None or not isinstance(cell, dict):
            continue
        old = before_cells[original]
        members = sorted(
            key
            for key in set(cell) | set(old)
            if key not in ("source", "cell_type") and cell.get(key) != old.get(key)
        )
        if members:
            changes.append(f"cell {original}: {', '.join(members)}")
    notes: list[str] = []
    inserted = len(after_cells) - len(pairs)
    deleted = len(before_cells) - len(pairs)
    moved = [pairs[position] for position in sorted(pairs)] != sorted(pairs.values())
    structure = [
        *([f"inserts {inserted} cell{'s' if inserted > 1 else ''}"] if inserted else []),
        *([f"deletes {deleted} cell{'s' if deleted > 1 else ''}"] if deleted else []),
        *(["reorders cells"] if moved else []),
    ]
    if structure:
        notes.append("changes the cell structure: " + ", ".join(structure))
    if changes:
        shown = "; ".join(changes[:8]) + (f" and {len(changes) - 8} more" if len(changes) > 8 else "")
        notes.append(f"changes the cell view does not show: {shown}")
    return notes
