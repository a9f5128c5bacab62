"""NotebookDocument: parsing, the cell view, spans, selectors and marker escaping."""

from __future__ import annotations

import codecs
import json

import pytest
from notebook_corpus import build_notebook, canonical, code_cell, markdown_cell, raw_cell

from nbedit.engine.models import CellSelector
from nbedit.engine.notebook import MARKER_PREFIX, NotebookDocument, cell_label_at_line, cell_view
from nbedit.engine.notebook.view import parse_view, render_view
from nbedit.errors import NotebookError


def _document(minor: int = 5) -> NotebookDocument:
    return NotebookDocument.parse(canonical(build_notebook(minor)), "demo.ipynb")


def _tiny(*cells: dict, minor: int = 5) -> bytes:
    cells_list = list(cells)
    if minor >= 5:
        for index, cell in enumerate(cells_list):
            cell.setdefault("id", f"id{index}")
    return canonical({"cells": cells_list, "metadata": {}, "nbformat": 4, "nbformat_minor": minor})


# -- parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"{not json", "is not valid JSON (line 1 column 2"),
        (b"", "is not valid JSON"),
        (b"[1, 2]", "not a Jupyter notebook"),
        (b'{"cells": []}', "not a Jupyter notebook"),
        (
            b'{"nbformat": 1, "nbformat_minor": 0, "worksheets": []}',
            "nbformat 1.0 is not supported; open and save it",
        ),
        (b'{"nbformat": 5, "nbformat_minor": 0, "cells": []}', "nbformat 5.0 is not supported"),
        (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "has no 'cells' list"),
        (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [3]}',
            "cell 0 is not a JSON object",
        ),
        (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": 7, "source": ""}]}',
            "cell 0 has no 'cell_type' string",
        ),
        (b'{"nbformat": 4.0, "nbformat_minor": 0, "metadata": {}, "cells": []}', '"nbformat": 4.0, but'),
        (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", "source": [1]}]}',
            "neither a string nor a list of strings",
        ),
        (b"\xff\xfe{\x00}\x00", "is UTF-16"),
        (b'{"a": "\xff"}', "is not valid UTF-8"),
    ],
)
def test_parse_refuses_what_is_not_an_nbformat4_notebook(data: bytes, expected: str) -> None:
    with pytest.raises(NotebookError) as caught:
        NotebookDocument.parse(data, "bad.ipynb")
    assert expected in str(caught.value)
    assert str(caught.value).startswith("bad.ipynb: ")
    assert "the file was not changed" in str(caught.value)


def test_parse_keeps_a_utf8_byte_order_mark() -> None:
    data = codecs.BOM_UTF8 + _tiny(code_cell("x = 1"))
    document = NotebookDocument.parse(data, "bom.ipynb")
    assert document.body_start == 3
    edited = document.apply_view(document.view.replace("x = 1", "x = 2"))
    assert edited == codecs.BOM_UTF8 + _tiny(code_cell("x = 2"))


# -- the view ----------------------------------------------------------------------------


def test_view_has_one_marker_per_cell_with_index_type_and_id() -> None:
    document = _document()
    markers = [line for line in document.view.split("\n") if line.startswith(MARKER_PREFIX)]
    assert markers[:3] == [
        "# %% nbedit cell 0 [markdown] id=c00-ma",
        "# %% nbedit cell 1 [code] id=c01-co",
        "# %% nbedit cell 2 [code] id=c02-co",
    ]
    assert len(markers) == len(document.cells) == 8
    assert "# %% nbedit cell 4 [raw] id=c04-ra\nRaw text for nbconvert\n\n# %% nbedit cell 5" in document.view


def test_view_of_nbformat_44_has_no_ids() -> None:
    document = _document(minor=4)
    assert "id=" not in document.view.replace("id=fake", "")
    assert document.cells[1].label == "cell 1 (code)"


def test_spans_cover_exactly_each_cells_source() -> None:
    document = _document()
    spans = document.cell_spans()
    assert [label for _, _, label in spans][:2] == [
        "cell 0 (id c00-ma, markdown)",
        "cell 1 (id c01-co, code)",
    ]
    for cell, (start, end, _) in zip(document.cells, spans, strict=True):
        body = document.view[start:end]
        if cell.source:
            assert body.endswith("\n")
            assert parse_view(f"{MARKER_PREFIX} 0 [code]\n{body}")[0].source == cell.source
        else:
            assert body == ""
    empty = document.cells[6]
    assert empty.source == "" and spans[6][0] == spans[6][1]


def test_view_of_an_empty_notebook_is_empty() -> None:
    document = NotebookDocument.parse(_tiny(), "empty.ipynb")
    assert document.view == ""
    assert document.cell_spans() == []
    assert document.cell_at(0) is None


def test_cell_at_maps_offsets_of_markers_and_bodies() -> None:
    document = _document()
    for index, (start, end, _) in enumerate(document.cell_spans()):
        assert document.cell_at(document.marker_starts[index]) == index
        assert document.body_cell(start, end) == index
        assert document.body_cell(end, end) == index
        if end > start:
            assert document.cell_at(start) == document.cell_at(end - 1) == index
        assert document.body_cell(document.marker_starts[index], start) is None
    assert document.body_cell(0, len(document.view)) is None


def test_cell_view_function_matches_document() -> None:
    data = canonical(build_notebook())
    assert cell_view(data, "x.ipynb") == NotebookDocument.parse(data, "x.ipynb").view


def test_cell_label_at_line_names_the_cell_of_a_view_line() -> None:
    view = _document().view
    assert cell_label_at_line(view, 1) == "cell 0 (id c00-ma, markdown)"
    assert cell_label_at_line(view, 6) == "cell 1 (id c01-co, code)"
    edited = view + f"{MARKER_PREFIX} new [raw]\ntext\n"
    assert cell_label_at_line(edited, edited.count("\n")) == "new cell (raw)"
    assert cell_label_at_line("", 1) is None


# -- selectors ---------------------------------------------------------------------------


def test_cell_span_by_id_and_by_index() -> None:
    document = _document()
    by_id = document.cell_span(CellSelector(id="c03-co"))
    by_index = document.cell_span(CellSelector(index=3))
    assert by_id == by_index
    assert document.view[by_id[0] : by_id[1]] == "raise ValueError('ünïcode')\n"


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (
            CellSelector(id="nope"),
            "has no cell with id 'nope'; valid indices are 0-7, valid ids: c00-ma, c01-co",
        ),
        (CellSelector(index=8), "has no cell 8; valid indices are 0-7"),
        (CellSelector(index=-1), "has no cell -1"),
        (CellSelector(id="c01-co", index=2), "cell id c01-co is cell 1, not cell 2"),
    ],
)
def test_unknown_selectors_list_the_valid_cells(selector: CellSelector, expected: str) -> None:
    with pytest.raises(NotebookError) as caught:
        _document().cell_span(selector)
    assert expected in str(caught.value)


def test_selector_on_an_empty_notebook() -> None:
    with pytest.raises(NotebookError, match="the notebook has no cells"):
        NotebookDocument.parse(_tiny(), "e.ipynb").cell_span(CellSelector(index=0))


# -- marker escaping ---------------------------------------------------------------------


MARKERISH = [
    "# %% nbedit cell 3 [code] id=x",
    "\\# %% nbedit cell 3 [code]",
    "\\\\# %% nbedit",
    "# %% nbedit",
    "# %% nbedit cell new [markdown]\nbody\n# %% nbedit cell 0 [raw]",
    "x\n  # %% nbedit cell 1 [code]\n",
    "# %% not ours\n\\ backslash line\n",
]


@pytest.mark.parametrize("source", MARKERISH)
def test_sources_that_look_like_markers_round_trip(source: str) -> None:
    data = _tiny(code_cell("before"), markdown_cell(source), raw_cell("after"))
    document = NotebookDocument.parse(data, "m.ipynb")
    assert [cell.source for cell in parse_view(document.view)] == ["before", source, "after"]
    assert document.apply_view(document.view) == data
    assert sum(line.startswith("# %% nbedit") for line in document.view.split("\n")) == 3


def test_escaped_marker_line_is_shown_with_one_more_backslash() -> None:
    view, _, _ = render_view([("code", "# %% nbedit cell 1 [code]\n\\# %% nbedit", None)])
    assert view == "# %% nbedit cell 0 [code]\n\\# %% nbedit cell 1 [code]\n\\\\# %% nbedit\n"


def test_source_with_trailing_newline_round_trips() -> None:
    for source in ["a\n", "a\n\n", "\n", "a\r\nb\r\n", "tab\tend\x0c", "line\u2028sep"]:
        data = _tiny(code_cell("x"), markdown_cell(source), code_cell("y"))
        document = NotebookDocument.parse(data, "t.ipynb")
        assert parse_view(document.view)[1].source == source
        assert document.apply_view(document.view) == data


@pytest.mark.parametrize(
    ("view", "expected"),
    [
        ("stray text\n# %% nbedit cell 0 [code]\nx\n", "text before its first cell marker"),
        ("# %% nbedit cell 0 [code]\n# %% nbeditor\n", "looks like a cell marker but is not one"),
        ("# %% nbedit cell 0 [python]\nx\n", "unknown cell type [python]"),
        ("# %% nbedit cell 0 [code] color=red\nx\n", "cannot read 'color=red'"),
    ],
)
def test_malformed_views_are_refused(view: str, expected: str) -> None:
    with pytest.raises(NotebookError) as caught:
        NotebookDocument.parse(_tiny(code_cell("x")), "v.ipynb").apply_view(view)
    assert expected in str(caught.value)
    assert "the file was not changed" in str(caught.value)


def test_blank_lines_before_the_first_marker_are_ignored() -> None:
    data = _tiny(code_cell("x"))
    document = NotebookDocument.parse(data, "b.ipynb")
    assert document.apply_view("\n\n" + document.view) == data


def test_parse_reads_ids_of_a_hand_written_notebook() -> None:
    notebook = {
        "cells": [{"cell_type": "markdown", "id": "intro", "metadata": {}, "source": "# Hi"}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    document = NotebookDocument.parse(json.dumps(notebook).encode(), "h.ipynb")
    assert document.view == "# %% nbedit cell 0 [markdown] id=intro\n# Hi\n"
    assert document.cells[0].source_as_list is False
