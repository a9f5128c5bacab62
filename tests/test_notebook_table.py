"""The notebook's cells as columns (``engine/notebook/table.py``): what a batch reads whole must be
what reading the cells one by one gives, for every kind of odd cell, wherever it falls in a batch.

The scan reads cells ``_BATCH`` at a time; a batch of ordinary cells is read column by column,
any other one cell by cell. These tests put odd cells (a read-only type, a negative or missing
execution count, no metadata, non-ASCII text, a bad source or id) at every place of small batches
and compare the document with ``json.loads`` of the same bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from notebook_corpus import code_cell, markdown_cell, raw_cell

from nbedit.engine.notebook import NotebookDocument
from nbedit.engine.notebook import scan as scan_module
from nbedit.engine.notebook.view import render_cell
from nbedit.errors import NotebookError


def canonical(notebook: dict[str, Any]) -> bytes:
    """nbformat's layout without nbformat (which would refuse the invalid cells on purpose here)."""
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _notebook(cells: list[dict[str, Any]]) -> dict[str, Any]:
    for index, cell in enumerate(cells):
        cell.setdefault("id", f"c{index}")
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _plain_cells(count: int) -> list[dict[str, Any]]:
    return [
        code_cell(f"x{index} = {index}\nprint(x{index})", count=index + 1)
        if index % 3
        else markdown_cell(f"# Part {index}")
        for index in range(count)
    ]


def _odd(kind: str) -> dict[str, Any]:
    if kind == "heading":
        return {"cell_type": "heading", "level": 2, "metadata": {}, "source": "A heading", "id": "bad id!"}
    if kind == "negative count":
        return code_cell("y = 1", count=-3)
    if kind == "no count":
        cell = code_cell("y = 2")
        del cell["execution_count"]
        return cell
    if kind == "no metadata":
        cell = markdown_cell("no metadata")
        del cell["metadata"]
        return cell
    if kind == "no outputs":
        cell = code_cell("y = 3")
        del cell["outputs"]
        return cell
    if kind == "non-ascii":
        return code_cell("s = 'café ✓'\nprint(s)  # é")
    if kind == "string source":
        cell = raw_cell("one string")
        cell["source"] = "raw as one string"
        return cell
    if kind == "no source":
        cell = markdown_cell("x")
        del cell["source"]
        return cell
    raise AssertionError(kind)


ODD = (
    "heading",
    "negative count",
    "no count",
    "no metadata",
    "no outputs",
    "non-ascii",
    "string source",
    "no source",
)


def _expected_view(cells: list[dict[str, Any]]) -> str:
    parts = []
    for index, cell in enumerate(cells):
        source = cell.get("source", "")
        source = source if isinstance(source, str) else "".join(source)
        cell_id = cell.get("id")
        if cell["cell_type"] not in ("code", "markdown", "raw") and cell_id == "bad id!":
            cell_id = None
        parts.append(render_cell(index, cell["cell_type"], source, cell_id))
    return "".join(parts)


@pytest.mark.parametrize("batch", [1, 3, 4])
@pytest.mark.parametrize("kind", ODD)
def test_an_odd_cell_anywhere_in_a_batch_reads_as_json_reads_it(
    kind: str, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_module, "_BATCH", batch)
    for place in range(batch + 1):
        cells = _plain_cells(7)
        cells.insert(place, _odd(kind))
        data = canonical(_notebook(cells))
        document = NotebookDocument.parse(data, "odd.ipynb")
        expected = json.loads(data)["cells"]
        assert document.view == _expected_view(expected)
        for index, cell in enumerate(expected):
            assert document.raw_cell(index) == cell
            source = cell.get("source", "")
            assert document.cells[index].source == (source if isinstance(source, str) else "".join(source))
            assert document.cells[index].source_as_list == isinstance(cell.get("source"), list)
            assert document.cells[index].read_only == (cell["cell_type"] == "heading")
        problems = document.problems
        if kind in ("negative count", "no count"):
            assert problems == (f"code cell {place} has no valid 'execution_count' (a number or null)",)
        elif kind == "no metadata":
            assert problems == (f"cell {place} has no 'metadata' object",)
        elif kind == "no outputs":
            assert problems == (f"code cell {place} has no 'outputs' list",)
        else:
            assert problems == ()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ({"source": ["a", 1]}, "has a 'source' that is neither a string nor a list of strings"),
        ({"source": {"a": 1}}, "has a 'source' that is neither a string nor a list of strings"),
        ({"id": 12}, "has a non-string id 12"),
        ({"cell_type": 3}, "has no 'cell_type' string (3)"),
    ],
)
def test_the_first_bad_cell_is_named_whatever_the_batch(
    damage: dict[str, Any], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for batch in (1, 4, 2048):
        monkeypatch.setattr(scan_module, "_BATCH", batch)
        cells = _plain_cells(9)
        cells[5].update(damage)
        cells[7].update(damage)
        with pytest.raises(NotebookError, match=re.escape(f"cell 5 {message}")):
            NotebookDocument.parse(canonical(_notebook(cells)), "bad.ipynb")


def test_a_cell_that_is_not_an_object_is_named_before_later_bad_cells() -> None:
    cells: list[Any] = _plain_cells(6)
    data = canonical(_notebook(cells)).replace(b'"id": "c2"', b'"id": 2', 1)
    notebook = json.loads(data)
    notebook["cells"].insert(1, [1, 2])
    with pytest.raises(NotebookError, match="cell 1 is not a JSON object"):
        NotebookDocument.parse(json.dumps(notebook, indent=1).encode(), "bad.ipynb")


def test_the_document_keeps_no_object_per_cell() -> None:
    """What makes 10^5 cells cheap: offsets in arrays, the sources in the view only."""
    data = canonical(_notebook(_plain_cells(500)))
    document = NotebookDocument.parse(data, "many.ipynb")
    assert document.layout.cells.made == {}  # no ObjectLayout until an edit asks for one
    assert not isinstance(document.table.sources, list)  # read back from the view
    assert document.table.types.count("code") == 333
    assert len({id(cell_type) for cell_type in document.table.types}) == 2  # interned
    edited = document.edit(document.view.replace("x250 = 250\n", "x250 = -250\n", 1))
    assert edited.data == data.replace(b'"x250 = 250\\n"', b'"x250 = -250\\n"', 1)
    assert set(document.layout.cells.made) <= {250, *range(20)}  # the edited cell, the first 20 for key order
