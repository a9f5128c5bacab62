"""Is the edited notebook still valid? Proved for source edits, checked by nbformat otherwise.

nbformat's schema validator costs about 1.4 s to import in a fresh process
(nbformat, jsonschema, fastjsonschema) and a quarter of a second per 50 MB
notebook, while most edits change nothing but the text of a few cells. So there
are two paths:

* **Source edits** (``is_source_only``): every cell of the result is an original
  cell whose bytes are copied except for rewritten ``source`` values and, with
  ``clear_outputs``, ``outputs``/``execution_count`` of code cells that already had
  those members; cells may also be deleted or reordered. The v4 schema (every
  minor) checks ``cells`` item by item (no ``minItems``, no uniqueness), allows a
  string or a list of strings as ``source`` of every cell type, and ``[]`` and
  ``null`` as a code cell's ``outputs`` and ``execution_count``. The writer
  produces exactly those values, so such an edit cannot make a valid notebook
  invalid, nor make any cell invalid that was valid: nothing is imported and
  nothing is run.
* **Structural edits** (a new cell, a retyped cell, a cell rewritten whole because
  it lacked a member): the whole edited notebook goes through nbformat's default
  (fast) validator; when that fails, each cell the edit wrote is validated alone
  with jsonschema to name the cell and the problem. Only problems in cells this
  edit wrote refuse it.

What is checked about the *input*: ``document.NotebookDocument.parse`` refuses
what nbedit cannot edit (not UTF-8 JSON, not nbformat 4, no ``cells`` list, a cell
that is not an object, of an unknown type, or with a malformed ``source`` or
``id``), and ``structure_problems`` cheaply finds the schema's structural
requirements that are missing (``metadata`` objects, a code cell's ``outputs`` list
and ``execution_count``). Those problems do not refuse the edit (a notebook that
was already invalid can still be edited, as Jupyter itself allows) but the edit's
notes name them. Full schema validation of the input (output formats, metadata
values, ...) happens only on the structural path, which then reports a notebook
that was invalid before the edit in its notes too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nbedit.engine.notebook.table import CellTable
from nbedit.engine.notebook.view import cell_label
from nbedit.engine.notebook.write import CellWrite
from nbedit.errors import NotebookError

TYPE_CHECKING = False  # typing stays out of a run: it costs milliseconds (tests/test_startup.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["already_invalid_note", "is_source_only", "schema_notes", "structure_problems"]

_SOURCE_ONLY_MEMBERS = frozenset({"source", "outputs", "execution_count"})
_UNCHANGED = "the file was not changed"


def is_source_only(writes: Sequence[CellWrite]) -> bool:
    """Every cell of the result is an original cell with at most its source (and outputs) rewritten."""
    return all(
        write.original is not None
        and write.replace is not None
        and _SOURCE_ONLY_MEMBERS.issuperset(write.replace)
        for write in writes
    )


def structure_problems(top: dict[str, Any], cells: CellTable, data: bytes) -> tuple[str, ...]:
    """The schema's structural requirements the notebook misses, as short phrases.

    The scan listed the cells that miss one (``CellTable.misshapen``); only those are
    read again from their bytes, to say what they miss.
    """
    problems: list[str] = []
    if not isinstance(top.get("metadata"), dict):
        problems.append("the notebook has no 'metadata' object")
    for index in cells.misshapen:
        cell = json.loads(data[cells.starts[index] : cells.ends[index]])
        if not isinstance(cell.get("metadata"), dict):
            problems.append(f"cell {index} has no 'metadata' object")
        if cell.get("cell_type") != "code":
            continue
        if not isinstance(cell.get("outputs"), list):
            problems.append(f"code cell {index} has no 'outputs' list")
        count = cell.get("execution_count", "missing")
        if count is not None and (type(count) is not int or count < 0):
            problems.append(f"code cell {index} has no valid 'execution_count' (a number or null)")
    return tuple(problems)


def already_invalid_note(problems: Sequence[str]) -> str:
    shown = "; ".join(problems[:3]) + (f" and {len(problems) - 3} more" if len(problems) > 3 else "")
    return f"the notebook was already invalid before this edit ({shown}); the edit left that as it was"


def schema_notes(
    path: str,
    top: dict[str, Any],
    original_cells: Sequence[dict[str, Any]],
    original_labels: Sequence[str],
    writes: Sequence[CellWrite],
    minor: int,
) -> list[str]:
    """Validate the edited notebook with nbformat; ``NotebookError`` if a written cell breaks the schema."""
    from nbformat.validator import get_validator

    fast = get_validator(4, minor)  # type: ignore[no-untyped-call]
    if fast is None:
        return [f"nbformat 4.{minor} has no schema here; the result was not validated"]
    original = dict(top, cells=list(original_cells))
    edited = dict(top, cells=[_whole_cell(write, original_cells) for write in writes])
    if not list(fast.iter_errors(edited)):
        return []
    detailed = get_validator(4, minor, name="jsonschema")  # type: ignore[no-untyped-call]
    for position, write in enumerate(writes):
        if write.original is not None and write.replace == ():
            continue
        problem = _cell_problem(detailed, original, _whole_cell(write, original_cells))
        if problem is None:
            continue
        if write.original is not None and _cell_problem(detailed, original, original_cells[write.original]):
            continue  # the cell was already invalid; this edit does not make it worse
        label = (
            cell_label(position, write.cell["cell_type"], write.cell.get("id"))
            if write.original is None
            else original_labels[write.original]
        )
        raise NotebookError(
            f"{path}: the edit would make the notebook invalid: {label}: {problem}; "
            f"fix the cell view and retry; {_UNCHANGED}",
            path=path,
        )
    return [
        "the notebook was already invalid before this edit (nbformat schema); the edit left that as it was"
    ]


def _whole_cell(write: CellWrite, original_cells: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if write.original is not None and write.replace is not None:
        return {**original_cells[write.original], **write.cell}
    return write.cell


def _cell_problem(validator: Any, notebook: dict[str, Any], cell: dict[str, Any]) -> str | None:
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    alone = dict(notebook)
    alone["cells"] = [cell]
    errors = [
        error for error in validator.iter_errors(alone) if list(error.absolute_path)[:2] == ["cells", 0]
    ]
    if not errors:
        return None
    best = best_match(errors)
    where = "/".join(str(part) for part in list(best.absolute_path)[2:])
    return f"{best.message}" + (f" (at {where})" if where else "")
