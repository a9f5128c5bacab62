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


def _uniform_cells(cell_type: str, count: int, ids: str) -> list[dict[str, Any]]:
    """``count`` cells of one type; ``ids``: "all", "none" (nbformat 4.4) or "some"."""
    make = {"code": code_cell, "markdown": markdown_cell, "raw": raw_cell}[cell_type]
    cells = [make(f"v{index} = {index}\nprint(v{index})") for index in range(count)]
    for index, cell in enumerate(cells):
        if ids == "all" or (ids == "some" and index % 2):
            cell["id"] = f"u{index}"
    return cells


@pytest.mark.parametrize("batch", [1, 4, 512])
@pytest.mark.parametrize("ids", ["all", "none", "some"])
@pytest.mark.parametrize("cell_type", ["code", "markdown", "raw"])
def test_a_batch_of_one_cell_type_reads_as_json_reads_it(
    cell_type: str, ids: str, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch reader's shortcuts (one cell type, every id a string or none) give what the
    general path gives: the view, the sources, the interned types, the ids shown."""
    monkeypatch.setattr(scan_module, "_BATCH", batch)
    cells = _uniform_cells(cell_type, 9, ids)
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 4 if ids == "none" else 5}
    data = canonical(notebook)
    document = NotebookDocument.parse(data, "uniform.ipynb")
    expected = json.loads(data)["cells"]
    assert document.view == _expected_view(expected)
    assert len({id(each) for each in document.table.types}) == 1
    for index, cell in enumerate(expected):
        assert document.raw_cell(index) == cell
        assert document.cells[index].id == cell.get("id")
        assert document.cells[index].source == "".join(cell["source"])
    assert document.problems == ()


@pytest.mark.parametrize(
    ("original", "damaged"),
    [
        (b'"source": [\n    "v1000 = 1000\\n",', b'"source": [\n    1000,'),
        (b'"id": "u1000"', b'"id": 1000'),
        (b'"execution_count": null,\n   "id": "u1000"', b'"execution_count": -1,\n   "id": "u1000"'),
    ],
)
def test_a_bad_cell_in_the_middle_of_a_big_uniform_batch_is_named_and_the_file_kept(
    original: bytes, damaged: bytes, tmp_path: Any
) -> None:
    """2,000 code cells with ids (batches of 512 read by whole columns): one bad cell in the middle
    is named as when the batch is read cell by cell, and planning an edit leaves the file as it was."""
    from nbedit.workspace import Workspace

    data = canonical(_notebook(_uniform_cells("code", 2000, "all")))
    assert data.count(original) == 1, original
    bad = data.replace(original, damaged)
    json.loads(bad)  # still JSON: the reader, not the scanner, refuses it
    path = tmp_path / "big.ipynb"
    path.write_bytes(bad)
    workspace = Workspace(tmp_path)
    if b"-1" in damaged:  # a negative count: the schema problem is named, the edit still planned
        assert NotebookDocument.parse(bad, "big.ipynb").problems == (
            "code cell 1000 has no valid 'execution_count' (a number or null)",
        )
        return
    expected = "cell 1000 has a 'source'" if b"1000," in damaged else "cell 1000 has a non-string id 1000"
    with pytest.raises(NotebookError, match=re.escape(expected)) as raised:
        workspace.plan_edit("big.ipynb", "v5 = 5\n", "v5 = 6\n")
    assert "was not changed" in str(raised.value) or "unchanged" in str(raised.value)
    assert path.read_bytes() == bad


_CELL_1000 = b'  {\n   "cell_type": "code",\n   "execution_count": null,\n   "id": "u1000"'


@pytest.mark.parametrize(
    "damage",
    [
        (b'"source": [\n    "v1000', b'"source": [\n    ,"v1000'),
        (b'"id": "u1000",', b'"id": "u1000",,'),
        (b"  },\n" + _CELL_1000, b"  }\n" + _CELL_1000),
    ],
)
def test_broken_json_in_the_middle_of_a_big_batch_is_refused_as_json_refuses_it(
    damage: tuple[bytes, bytes], tmp_path: Any
) -> None:
    from nbedit.workspace import Workspace

    data = canonical(_notebook(_uniform_cells("code", 2000, "all")))
    assert data.count(damage[0]) == 1, damage
    bad = data.replace(*damage)
    with pytest.raises(json.JSONDecodeError) as decoding:
        json.loads(bad)
    where = f"line {decoding.value.lineno} column {decoding.value.colno}: {decoding.value.msg}"
    path = tmp_path / "broken.ipynb"
    path.write_bytes(bad)
    with pytest.raises(NotebookError, match=re.escape(f"is not valid JSON ({where})")):
        Workspace(tmp_path).plan_edit("broken.ipynb", "v5 = 5\n", "v5 = 6\n")
    assert path.read_bytes() == bad


def _apart(texts: list[str], separators: list[str]) -> bytes:
    """A notebook whose cells (``texts``) are apart by ``separators``: nbformat's layout otherwise."""
    body = texts[0] + "".join(separator + text for separator, text in zip(separators, texts[1:], strict=True))
    top = '\n ],\n "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n'
    return ('{\n "cells": [\n  ' + body + top).encode()


@pytest.mark.parametrize(
    "odd",
    [",\n\n  ", ", ", ",", "\n  ,\n  ", ",\n   ", ",\r\n  ", ",\t"],
)
@pytest.mark.parametrize("window", [None, 64])
def test_cells_apart_by_other_text_than_the_first_two_read_as_json_reads_them(
    odd: str, window: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan takes the text after the first cell as the usual one between cells; any other
    (more or less whitespace, none) is read by the general rule, with the same cells and offsets,
    also when windows of 64 characters cut the cells and the text between them everywhere."""
    if window is not None:
        monkeypatch.setattr(scan_module, "_WINDOW", window)
        monkeypatch.setattr(scan_module, "_MARGIN", 16)
    cells = _uniform_cells("code", 12, "all")
    texts = [json.dumps(cell, indent=1, sort_keys=True).replace("\n", "\n  ") for cell in cells]
    separators = [",\n  "] * 11
    for place in (1, 5, 10):
        separators[place] = odd
    data = _apart(texts, separators)
    document = NotebookDocument.parse(data, "apart.ipynb")
    expected = json.loads(data)["cells"]
    assert document.view == _expected_view(expected)
    for index, cell in enumerate(expected):
        assert document.raw_cell(index) == cell
    edited = document.edit(document.view.replace("v10 = 10\n", "v10 = -10\n", 1))
    assert edited.data == data.replace(b'"v10 = 10\\n"', b'"v10 = -10\\n"', 1)


@pytest.mark.parametrize("place", [0, 1, 6])
@pytest.mark.parametrize("broken", ["", "\n  ", "\n  ,,\n  ", ",\n  ,", "\n  ]"])
@pytest.mark.parametrize("window", [None, 64])
def test_cells_not_apart_by_one_comma_are_refused_as_json_refuses_them(
    broken: str, place: int, window: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if window is not None:
        monkeypatch.setattr(scan_module, "_WINDOW", window)
        monkeypatch.setattr(scan_module, "_MARGIN", 16)
    cells = _uniform_cells("markdown", 9, "all")
    texts = [json.dumps(cell, indent=1, sort_keys=True).replace("\n", "\n  ") for cell in cells]
    separators = [",\n  "] * 8
    separators[place] = broken
    data = _apart(texts, separators)
    with pytest.raises(json.JSONDecodeError) as decoding:
        json.loads(data)
    where = f"line {decoding.value.lineno} column {decoding.value.colno}: {decoding.value.msg}"
    with pytest.raises(NotebookError, match=re.escape(f"is not valid JSON ({where})")):
        NotebookDocument.parse(data, "broken.ipynb")
