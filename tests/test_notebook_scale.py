"""Large notebooks: memory stays a small multiple of the file (no timing assertions here)."""

from __future__ import annotations

import tracemalloc

import pytest
from notebook_corpus import big_image_notebook, canonical, many_cells_notebook, set_source

from nbedit.engine.notebook import NotebookDocument


@pytest.mark.slow
def test_editing_one_cell_of_a_50_megabyte_notebook_needs_one_more_copy_of_it_at_most() -> None:
    # The input bytes are allocated before tracing starts; scanning holds one Latin-1
    # copy (freed before the edit), the edit builds the result. Outputs are never parsed
    # all at once, so the peak stays near one file size (it was 3x with json.loads).
    notebook = big_image_notebook(50)
    data = canonical(notebook)
    assert len(data) > 45_000_000
    tracemalloc.start()
    try:
        document = NotebookDocument.parse(data, "big.ipynb")
        result = document.apply_view(document.view.replace("print(x1)\n", "print(x1 + 1)\n", 1))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * len(data)
    del document
    expected = set_source(notebook, 1, "x1 = 1\nprint(x1 + 1)\n# done")
    assert result == canonical(expected)


def test_two_thousand_cells_view_and_edit() -> None:
    notebook = many_cells_notebook(2000)
    document = NotebookDocument.parse(canonical(notebook), "many.ipynb")
    assert document.view.count("# %% nbedit cell ") == 2000
    start, end, label = document.cell_spans()[1999]
    assert label == "cell 1999 (id cell-1999, code)"
    result = document.apply_view(document.view[:start] + "last = True\n" + document.view[end:])
    assert result == canonical(set_source(notebook, 1999, "last = True"))
