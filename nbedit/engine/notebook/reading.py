"""Notebook bytes read into a scan, or refused with what to do: the reader's checks of the input.

``document.NotebookDocument.parse`` calls these in order: ``scan_bytes`` (the
encoding: UTF-8, a byte-order mark allowed, never UTF-16; then the one-pass scan of
``scan``, its errors said with line and column as ``json`` counts them, and the cell
limit), ``notebook_version`` (an ``nbformat`` that is a whole number, and one this
reader knows) and ``check_cells`` (every cell is an object with a ``cell_type``
string, a ``source`` that is a string or a list of strings and an id that is a
string). Each refusal is a ``NotebookError`` (or ``FileTooLarge``) that names the
problem and says the file was not changed.
"""

from __future__ import annotations

import codecs
import json

from nbedit.engine.notebook.cells import UNCHANGED, checked_cell_type
from nbedit.engine.notebook.scan import (
    DuplicateCells,
    JsonSyntaxError,
    NotebookScan,
    TooManyCells,
    check_utf8,
    scan_notebook,
)
from nbedit.engine.notebook.table import BAD_VALUE, NOT_AN_OBJECT, CellTable
from nbedit.engine.notebook.view import CELL_TYPES
from nbedit.errors import FileTooLarge, NotebookError

__all__ = ["check_cells", "notebook_version", "scan_bytes"]

_UNCHANGED = UNCHANGED


def scan_bytes(data: bytes, path: str, max_cells: int | None) -> tuple[NotebookScan, int, bool]:
    """The scan of notebook bytes, where the JSON starts (3 after a byte-order mark), and whether
    the bytes are ASCII; ``FileTooLarge`` (``unit="cells"``) as soon as the scan passes ``max_cells``."""
    body_start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise NotebookError(
            f"{path}: is UTF-16; notebooks are UTF-8 JSON, so re-save it as UTF-8 in Jupyter; {_UNCHANGED}",
            path=path,
        )
    try:
        is_ascii = check_utf8(data, body_start)
    except UnicodeDecodeError as error:
        raise NotebookError(
            f"{path}: byte {error.start} is not valid UTF-8, so this is not a notebook "
            f"nbedit can edit; {_UNCHANGED}",
            path=path,
        ) from None
    try:
        scanned = scan_notebook(data, body_start, is_ascii=is_ascii, max_cells=max_cells)
    except TooManyCells as error:
        raise FileTooLarge(
            f"{path}: has more than {error.limit:,} cells, over the {error.limit:,}-cell limit; "
            f"{_UNCHANGED} and it was not read further. Split the notebook into several, or raise "
            "max_cells (Workspace(max_cells=...)) if you really mean to edit it as one",
            path=path,
            size=error.limit + 1,
            limit=error.limit,
            unit="cells",
        ) from None
    except DuplicateCells:
        raise NotebookError(
            f"{path}: has two top-level 'cells' arrays (Jupyter would silently use the last); "
            f"delete the one you do not want; {_UNCHANGED}",
            path=path,
        ) from None
    except JsonSyntaxError as error:
        line = data.count(b"\n", body_start, error.position) + 1
        line_start = max(data.rfind(b"\n", body_start, error.position) + 1, body_start)
        # json counts columns in characters
        column = len(data[line_start : error.position].decode("utf-8", "replace")) + 1
        raise NotebookError(
            f"{path}: is not valid JSON (line {line} column {column}: {error.message}); "
            f"repair it or open it in Jupyter first; {_UNCHANGED}",
            path=path,
        ) from None
    return scanned, body_start, is_ascii


def notebook_version(path: str, scanned: NotebookScan, legacy: tuple[int, ...]) -> tuple[int, int]:
    """The notebook's ``(nbformat, nbformat_minor)``: version 4, or one of the ``legacy`` versions."""
    notebook = scanned.top
    version = notebook.get("nbformat")
    if scanned.is_object and isinstance(version, (int, float, str)) and not isinstance(version, (int, bool)):
        major_text, _, minor_text = str(version).partition(".")
        example = (
            f'"nbformat": {int(major_text)}, "nbformat_minor": {int(minor_text or 0)}'
            if major_text.isdigit() and (minor_text.isdigit() or not minor_text)
            else '"nbformat": 4, "nbformat_minor": 4'
        )
        raise NotebookError(
            f'{path}: has "nbformat": {json.dumps(version)}, but the notebook format version is a whole '
            f"number with the minor version in its own member ({example}); "
            f"fix those two members (or open and save the file in Jupyter) and retry; {_UNCHANGED}",
            path=path,
        )
    if not scanned.is_object or not isinstance(version, int):
        raise NotebookError(
            f"{path}: is JSON but not a Jupyter notebook (no top-level 'nbformat'); "
            f"edit it as a plain text file instead (use a different extension); {_UNCHANGED}",
            path=path,
        )
    major = notebook["nbformat"]
    minor = notebook.get("nbformat_minor", 0)
    if major in legacy and isinstance(minor, int):
        return major, minor
    if major != 4 or not isinstance(minor, int):
        version = f"{major}.{minor}"
        advice = (
            "open and save it in Jupyter to upgrade it to nbformat 4"
            if major < 4
            else "nbedit reads versions 2, 3 and 4"
        )
        raise NotebookError(
            f"{path}: nbformat {version} is not supported; {advice}, then retry; {_UNCHANGED}", path=path
        )
    return major, minor


def check_cells(path: str, data: bytes, table: CellTable) -> None:
    """Refuse the first cell nbedit cannot show, as the cells are read: in order.

    The common case is three checks over whole columns; only a notebook with an odd cell
    walks its cells, and parses such a cell again from its bytes to name what is wrong.
    (A cell of a type nbedit does not know is shown read-only: ``table`` gave it the id the
    view may show, and its source or "".)
    """
    known = frozenset(CELL_TYPES)
    if known.issuperset(table.types) and not table.bad_sources and BAD_VALUE not in table.ids:
        return
    bad_sources = set(table.bad_sources)
    for index, cell_type in enumerate(table.types):
        if cell_type is NOT_AN_OBJECT or cell_type is BAD_VALUE:
            cell_bytes = data[table.starts[index] : table.ends[index]]
            raw = None if cell_type is NOT_AN_OBJECT else json.loads(cell_bytes)
            checked_cell_type(path, index, raw)  # raises
        if cell_type not in known:
            continue
        if index in bad_sources:
            raise NotebookError(
                f"{path}: cell {index} has a 'source' that is neither a string nor a list of strings; "
                f"{_UNCHANGED}",
                path=path,
            )
        if table.ids[index] is BAD_VALUE:
            cell_id = json.loads(data[table.starts[index] : table.ends[index]]).get("id")
            raise NotebookError(
                f"{path}: cell {index} has a non-string id {cell_id!r}; {_UNCHANGED}", path=path
            )
