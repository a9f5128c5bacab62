"""Writing an edited cell view back: byte-stable for canonical and hand-formatted files.

Every serialiser in ``notebook_corpus.FORMATS`` is deterministic, so the expected
bytes after an edit are that serialiser applied to the expected notebook: equal
bytes mean only the targeted cell changed and the file kept its own formatting.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from notebook_corpus import (
    FORMATS,
    build_notebook,
    canonical,
    code_cell,
    compact_escaped,
    markdown_cell,
    normalised,
    raw_cell,
    set_source,
)

from nbedit.engine.notebook import NotebookDocument, render_cell
from nbedit.engine.notebook.scan import scan_notebook
from nbedit.errors import NotebookError

FORMAT_NAMES = sorted(FORMATS)
MINORS = [4, 5]


def _rows(document: NotebookDocument) -> list[tuple[int | None, str, str | None, str]]:
    """The view as editable rows: (original index or None, type, id, source)."""
    return [(cell.index, cell.cell_type, cell.id, cell.source) for cell in document.cells]


def _view(rows: list[tuple[int | None, str, str | None, str]]) -> str:
    return "".join(
        render_cell(index, cell_type, source, cell_id) for index, cell_type, cell_id, source in rows
    )


def _document(notebook: dict[str, Any], format_name: str) -> tuple[NotebookDocument, bytes]:
    data = FORMATS[format_name](notebook)
    return NotebookDocument.parse(data, "corpus.ipynb"), data


def _with_id(cell: dict[str, Any], minor: int, cell_id: str) -> dict[str, Any]:
    if minor >= 5:
        cell["id"] = cell_id
    return cell


def _changed_region(before: bytes, after: bytes) -> tuple[int, int]:
    """(first differing offset, offset from the end of the last differing byte) of two byte strings."""
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    return prefix, suffix


# -- no-op and source edits ----------------------------------------------------------------


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_unchanged_view_gives_identical_bytes(format_name: str, minor: int) -> None:
    document, data = _document(build_notebook(minor), format_name)
    assert document.apply_view(document.view) is data
    assert document.apply_view(_view(_rows(document))) == data
    assert document.edit(document.view).changes == ()


SOURCE_EDITS = [
    (1, "import math\n\nvalue = math.tau\nprint(value)"),
    (1, "import math\n\nvalue = math.pi\nprint(value, 'é → ✓ 日本')\nprint('\\x1b[1m bold')"),
    (3, 'raise ValueError("quote \\" and \\\\ backslash")\n'),
    (0, "# Analyse\n\nEntirely new text with a tab\there."),
    (6, "Now the empty markdown cell has text"),
    (7, ""),
    (5, "# %% nbedit cell 2 [markdown] id=c02-co\nstill code"),
]


@pytest.mark.parametrize(("index", "source"), SOURCE_EDITS)
@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_editing_one_cell_changes_only_its_source(
    format_name: str, minor: int, index: int, source: str
) -> None:
    notebook = build_notebook(minor)
    document, data = _document(notebook, format_name)
    rows = _rows(document)
    rows[index] = (*rows[index][:3], source)
    result = document.apply_view(_view(rows))
    assert result == FORMATS[format_name](set_source(notebook, index, source))
    layout = scan_notebook(data).layout
    assert layout is not None
    prefix, suffix = _changed_region(data, result)
    assert layout.cells[index].start < prefix and len(data) - suffix <= layout.cells[index].end


@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_editing_two_cells_keeps_everything_between_them(format_name: str) -> None:
    notebook = build_notebook(5)
    document, _ = _document(notebook, format_name)
    rows = _rows(document)
    rows[1] = (*rows[1][:3], "value = 1")
    rows[7] = (*rows[7][:3], "summary = 'ß'")
    expected = set_source(set_source(notebook, 1, "value = 1"), 7, "summary = 'ß'")
    assert document.apply_view(_view(rows)) == FORMATS[format_name](expected)


def test_edited_code_cell_keeps_outputs_and_count() -> None:
    notebook = build_notebook(5)
    document, _ = _document(notebook, "canonical")
    result = json.loads(document.apply_view(document.view.replace("Image(data)", "Image(other)")))
    assert result["cells"][2]["outputs"] == notebook["cells"][2]["outputs"]
    assert result["cells"][2]["execution_count"] == 2


def test_unicode_escaping_follows_the_file() -> None:
    notebook = build_notebook(5)
    document, data = _document(notebook, "compact-escaped")
    assert data.isascii()
    result = document.apply_view(document.view.replace("value = math.pi", "value = 'π'"))
    assert result.isascii() and b"\\u03c0" in result
    canonical_document, _ = _document(notebook, "canonical")
    result = canonical_document.apply_view(canonical_document.view.replace("value = math.pi", "value = 'π'"))
    assert "'π'".encode() in result


def test_ascii_file_with_escaped_backslash_u_is_not_taken_for_ensure_ascii() -> None:
    notebook = {
        "cells": [code_cell('print("\\\\u00e9")')],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    data = json.dumps(notebook, indent=1, sort_keys=True).encode()
    assert b"\\\\u00e9" in data
    document = NotebookDocument.parse(data, "x.ipynb")
    result = document.apply_view(document.view + "# %% nbedit cell new [markdown]\ncafé\n")
    assert "café".encode() in result


# -- structure: insert, delete, retype, reorder ------------------------------------------------


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_inserted_cells_are_formatted_like_their_neighbours(format_name: str, minor: int) -> None:
    notebook = build_notebook(minor)
    document, _ = _document(notebook, format_name)
    rows: list[tuple[int | None, str, str | None, str]] = _rows(document)
    new_id = "new-1" if minor >= 5 else None
    rows.insert(0, (None, "markdown", new_id, "# Inserted first ✓"))
    rows.insert(4, (None, "code", "new-2" if minor >= 5 else None, "y = 2\nprint(y)"))
    rows.append((None, "raw", "new-3" if minor >= 5 else None, "raw at the end\n"))
    result = document.apply_view(_view(rows))
    expected = copy.deepcopy(notebook)
    expected["cells"].insert(0, _with_id(markdown_cell("# Inserted first ✓"), minor, "new-1"))
    expected["cells"].insert(4, _with_id(code_cell("y = 2\nprint(y)"), minor, "new-2"))
    expected["cells"].append(_with_id(raw_cell("raw at the end\n"), minor, "new-3"))
    assert result == FORMATS[format_name](expected)


def test_nbformat_44_stays_44_without_ids() -> None:
    notebook = build_notebook(4)
    document, data = _document(notebook, "canonical")
    view = (
        document.view.replace("print(value)", "print(value + 1)")
        + "# %% nbedit cell new [code] id=wanted\nz = 3\n"
    )
    result = json.loads(document.apply_view(view))
    assert result["nbformat"] == 4 and result["nbformat_minor"] == 4
    assert all("id" not in cell for cell in result["cells"])
    assert result["cells"][-1]["source"] == ["z = 3"]


def test_new_cells_get_fresh_unique_ids_in_45() -> None:
    notebook = build_notebook(5)
    document, _ = _document(notebook, "canonical")
    ids = iter(["c01-co", "c01-co", "fresh-a", "fresh-b"])
    view = document.view + "# %% nbedit cell new [code]\na\n# %% nbedit cell new [code] id=c03-co\nb\n"
    result = json.loads(document.edit(view, new_cell_id=lambda: next(ids)).data)
    assert [cell["id"] for cell in result["cells"][-2:]] == ["fresh-a", "fresh-b"]
    random_ids = json.loads(document.apply_view(view))
    fresh = [cell["id"] for cell in random_ids["cells"][-2:]]
    assert all(re.fullmatch(r"[0-9a-f]{8}", cell_id) for cell_id in fresh) and fresh[0] != fresh[1]


def test_new_cell_keeps_an_unused_valid_id() -> None:
    document, _ = _document(build_notebook(5), "canonical")
    result = json.loads(document.apply_view(document.view + "# %% nbedit cell new [raw] id=my-cell_2\nr\n"))
    assert result["cells"][-1] == {"cell_type": "raw", "id": "my-cell_2", "metadata": {}, "source": ["r"]}


def test_new_cell_with_invalid_id_is_refused() -> None:
    document, _ = _document(build_notebook(5), "canonical")
    with pytest.raises(NotebookError, match=r"line \d+: 'bad/id' is not a valid cell id"):
        document.apply_view(document.view + "# %% nbedit cell new [raw] id=bad/id\nr\n")


def test_copied_marker_makes_a_new_cell() -> None:
    notebook = build_notebook(5)
    document, _ = _document(notebook, "canonical")
    copied = "# %% nbedit cell 1 [code] id=c01-co\ncopy = True\n"
    edit = document.edit(document.view + copied, new_cell_id=lambda: "copy-1")
    result = json.loads(edit.data)
    assert result["cells"][1] == notebook["cells"][1]
    assert result["cells"][-1]["id"] == "copy-1" and result["cells"][-1]["source"] == ["copy = True"]
    assert edit.changes == ("new code cell at position 8",)


def test_marker_without_type_keeps_the_cells_type_and_new_cells_are_code() -> None:
    notebook = build_notebook(4)
    document, _ = _document(notebook, "canonical")
    view = (
        document.view.replace("# %% nbedit cell 0 [markdown]", "# %% nbedit cell 0")
        + "# %% nbedit cell new\nn = 1\n"
    )
    result = json.loads(document.apply_view(view))
    assert result["cells"][0]["cell_type"] == "markdown"
    assert result["cells"][-1]["cell_type"] == "code"


@pytest.mark.parametrize("format_name", FORMAT_NAMES)
@pytest.mark.parametrize("deleted", [[0], [3], [7], [1, 2, 3], list(range(8))])
def test_deleting_cells(format_name: str, deleted: list[int]) -> None:
    notebook = build_notebook(5)
    document, _ = _document(notebook, format_name)
    rows = [row for row in _rows(document) if row[0] not in deleted]
    edit = document.edit(_view(rows))
    expected = copy.deepcopy(notebook)
    expected["cells"] = [cell for index, cell in enumerate(notebook["cells"]) if index not in deleted]
    assert edit.data == FORMATS[format_name](expected)
    assert len([change for change in edit.changes if change.endswith("deleted")]) == len(deleted)


@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_inserting_into_an_empty_notebook(format_name: str) -> None:
    empty = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    document, _ = _document(empty, format_name)
    view = render_cell(None, "markdown", "# One", "one") + render_cell(None, "code", "x = 1", "two")
    expected = dict(
        empty, cells=[_with_id(markdown_cell("# One"), 5, "one"), _with_id(code_cell("x = 1"), 5, "two")]
    )
    result = document.apply_view(view)
    if format_name in ("canonical", "tabs-crlf"):
        assert result == FORMATS[format_name](expected)
    else:  # no cell to copy key order or source form from: the content is what counts
        assert normalised(json.loads(result)) == normalised(json.loads(FORMATS[format_name](expected)))


@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_reordering_cells(format_name: str) -> None:
    notebook = build_notebook(5)
    document, _ = _document(notebook, format_name)
    rows = _rows(document)
    order = [0, 2, 1, 3, 4, 5, 7, 6]
    result = document.apply_view(_view([rows[index] for index in order]))
    expected = dict(notebook, cells=[notebook["cells"][index] for index in order])
    assert result == FORMATS[format_name](expected)


def _retyped(cell: dict[str, Any], cell_type: str) -> dict[str, Any]:
    """The expected cell after a type change, built like the corpus builds cells."""
    source = "".join(cell["source"])
    extra = {key: value for key, value in cell.items() if key in ("metadata", "attachments")}
    if cell_type == "code":
        extra.pop("attachments", None)
    built = {"code": code_cell, "markdown": markdown_cell, "raw": raw_cell}[cell_type](source, **extra)
    if "id" in cell:
        built["id"] = cell["id"]
    return built


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("format_name", FORMAT_NAMES)
@pytest.mark.parametrize(
    ("index", "cell_type"), [(1, "markdown"), (3, "raw"), (4, "code"), (4, "markdown"), (6, "code")]
)
def test_changing_a_cells_type(format_name: str, minor: int, index: int, cell_type: str) -> None:
    notebook = build_notebook(minor)
    document, _ = _document(notebook, format_name)
    rows = _rows(document)
    rows[index] = (rows[index][0], cell_type, rows[index][2], rows[index][3])
    edit = document.edit(_view(rows))
    expected = copy.deepcopy(notebook)
    expected["cells"][index] = _retyped(notebook["cells"][index], cell_type)
    assert edit.data == FORMATS[format_name](expected)
    assert edit.changes == (f"{document.cells[index].label}: type changed to {cell_type}",)


def test_markdown_with_attachments_keeps_them_as_raw() -> None:
    notebook = build_notebook(5)
    document, data = _document(notebook, "compact-escaped")
    result = json.loads(document.apply_view(document.view.replace("[markdown] id=c00-ma", "[raw] id=c00-ma")))
    assert result["cells"][0]["cell_type"] == "raw"
    assert result["cells"][0]["attachments"] == notebook["cells"][0]["attachments"]
    assert result["cells"][1:] == json.loads(data)["cells"][1:]


def test_markdown_with_attachments_cannot_become_code() -> None:
    document, _ = _document(build_notebook(5), "canonical")
    with pytest.raises(NotebookError) as caught:
        document.apply_view(document.view.replace("[markdown] id=c00-ma", "[code] id=c00-ma"))
    message = str(caught.value)
    assert "cell 0 (id c00-ma, markdown) has attachments" in message
    assert "the file was not changed" in message


# -- clear_outputs -----------------------------------------------------------------------------


@pytest.mark.parametrize("format_name", FORMAT_NAMES)
def test_clear_outputs_empties_only_edited_code_cells(format_name: str) -> None:
    notebook = build_notebook(5)
    document, _ = _document(notebook, format_name)
    rows = _rows(document)
    rows[2] = (*rows[2][:3], "Image(other)")
    rows[0] = (*rows[0][:3], "# Edited markdown")
    result = document.apply_view(_view(rows), clear_outputs=True)
    expected = set_source(set_source(notebook, 2, "Image(other)"), 0, "# Edited markdown")
    expected["cells"][2]["outputs"] = []
    expected["cells"][2]["execution_count"] = None
    assert result == FORMATS[format_name](expected)
    assert json.loads(result)["cells"][1]["outputs"] == notebook["cells"][1]["outputs"]


# -- validation --------------------------------------------------------------------------------


def _small(cells: list[dict[str, Any]], minor: int = 5) -> dict[str, Any]:
    for index, cell in enumerate(cells):
        if minor >= 5:
            cell.setdefault("id", f"cell{index}")
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


def test_type_change_that_breaks_the_schema_is_refused() -> None:
    notebook = _small([markdown_cell("text", metadata={"format": 5}), code_cell("x = 1")])
    data = canonical(notebook)
    document = NotebookDocument.parse(data, "v.ipynb")
    with pytest.raises(NotebookError) as caught:
        document.apply_view(document.view.replace("[markdown]", "[raw]"))
    message = str(caught.value)
    assert "the edit would make the notebook invalid: cell 0 (id cell0, markdown)" in message
    assert "5 is not of type 'string'" in message and "metadata/format" in message
    assert "the file was not changed" in message


def test_already_invalid_notebook_can_still_be_edited_elsewhere() -> None:
    notebook = _small([code_cell("x = 1"), code_cell("y = 2")])
    notebook["cells"][0]["metadata"]["scrolled"] = "sideways"  # invalid: true, false or "auto"
    data = json.dumps(notebook, indent=1).encode()
    document = NotebookDocument.parse(data, "old.ipynb")
    edit = document.edit(document.view.replace("y = 2", "y = 3"))
    assert json.loads(edit.data)["cells"][1]["source"] == ["y = 3"]
    edit = document.edit(document.view.replace("x = 1", "x = 0"))
    assert json.loads(edit.data)["cells"][0]["source"] == ["x = 0"]
    # a structural edit runs the schema validator, which finds the old problem and says so
    edit = document.edit(document.view + render_cell(None, "markdown", "new"))
    assert json.loads(edit.data)["cells"][2]["source"] == ["new"]
    assert any("already invalid" in note and "nbformat schema" in note for note in edit.notes)


def test_hand_written_cell_without_execution_count_is_rewritten_whole_when_outputs_are_cleared() -> None:
    notebook = _small(
        [code_cell("x = 1", outputs=[{"output_type": "stream", "name": "stdout", "text": "1\n"}])], minor=4
    )
    del notebook["cells"][0]["execution_count"]
    data = json.dumps(notebook, indent=2).encode()
    document = NotebookDocument.parse(data, "h.ipynb")
    result = json.loads(document.apply_view(document.view.replace("x = 1", "x = 2"), clear_outputs=True))
    assert result["cells"][0] == {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": ["x = 2"],
    }


def test_compact_source_string_form_is_kept() -> None:
    notebook = _small([code_cell("a = 1\nb = 2")])
    data = compact_escaped(dict(notebook, cells=[dict(notebook["cells"][0], source="a = 1\nb = 2")]))
    document = NotebookDocument.parse(data, "s.ipynb")
    result = document.apply_view(document.view.replace("b = 2", "b = 3"))
    assert b'"source":"a = 1\\nb = 3"' in result
    assert result.replace(b"b = 3", b"b = 2") == data


def test_duplicate_ids_are_told_apart_by_index() -> None:
    notebook = _small([code_cell("a = 1", count=1), code_cell("b = 2", count=2), markdown_cell("m")])
    notebook["cells"][1]["id"] = notebook["cells"][0]["id"]
    notebook["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["2\n"]}]
    data = json.dumps(notebook, indent=1).encode()
    document = NotebookDocument.parse(data, "dup.ipynb")
    edit = document.edit(document.view.replace("m\n", "changed\n"))
    assert edit.changes == ("cell 2 (id cell2, markdown): source changed",)
    assert edit.data == data.replace(b'"m"', b'"changed"')


def test_marker_without_id_in_45_maps_by_index() -> None:
    notebook = build_notebook(5)
    document, data = _document(notebook, "canonical")
    view = document.view.replace("# %% nbedit cell 1 [code] id=c01-co", "# %% nbedit cell 1 [code]")
    assert document.apply_view(view) == data
