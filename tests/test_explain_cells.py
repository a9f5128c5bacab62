""""Why here?" of a notebook hunk counts lines within the cells, also when the hunk spans cells.

A change of the cell structure (two cells merged, a cell retyped) is one hunk whose match
crosses a marker line of the cell view. It is described from its first line in one cell to its
last line in another, never by lines of the internal cell view, and the comparison of expected
and found text shows a marker line as the header of its cell, not as a line of code. The widget's
page data, the static HTML and ``plan.explain()`` share the text, so each is checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbedit.engine.explain import COMPARISON_LABEL, cell_line, cell_place, found_text, reason
from nbedit.engine.models import Tier
from nbedit.jupyter.review import ReviewWidget
from nbedit.render.markup import hunk_why_html
from nbedit.render.review_data import review_document
from nbedit.render.summary import summarize_file
from nbedit.workspace import Workspace

CELLS = [
    ("markdown", "m1", "# Title\nintro"),
    ("code", "c2", "import os\nx = 1\ny = 2\nz = 3"),
    ("code", "c3", "print(x)\nprint(y)\nprint(z)"),
]
# the cell view:  1 marker 0 | 2-3 cell 0 | 4 marker 1 | 5-8 cell 1 | 9 marker 2 | 10-12 cell 2
MERGE = """\
--- a/book.ipynb
+++ b/book.ipynb
@@ -6,5 +6,4 @@
 x = 1
 y = 2\t
 z = 3
-# %% nbedit cell 2 [code] id=c3
 print(x)
"""
RETYPE = """\
--- a/book.ipynb
+++ b/book.ipynb
@@ -7,4 +7,4 @@
 y = 2\t
 z = 3
-# %% nbedit cell 2 [code] id=c3
+# %% nbedit cell 2 [markdown] id=c3
 print(x)
"""
NEW_CELL = """\
--- a/book.ipynb
+++ b/book.ipynb
@@ -6,4 +6,6 @@
 x = 1
 y = 2\t
 z = 3
+# %% nbedit cell new [code]
+w = 4
 # %% nbedit cell 2 [code] id=c3
"""
# an edit of cell 1 and a new cell after it: planned as two hunks, the insertion one of its own
NEW_CELL_AT_THE_END_OF_ONE = """\
--- a/book.ipynb
+++ b/book.ipynb
@@ -6,5 +6,7 @@
 x = 1
-y = 2\t
+y = 20
 z = 3
+# %% nbedit cell new [code]
+w = 4
 # %% nbedit cell 2 [code] id=c3
 print(x)
"""
MARKER = "# %% nbedit cell"


def notebook(root: Path) -> Workspace:
    cells = [
        {"cell_type": kind, "id": cell_id, "metadata": {}, "source": source.splitlines(keepends=True)}
        | ({"execution_count": None, "outputs": []} if kind == "code" else {})
        for kind, cell_id, source in CELLS
    ]
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "book.ipynb").write_text(json.dumps(document, indent=1) + "\n")
    return Workspace(root, history=False)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (MERGE, "lines 2-4 of cell 1 (id c2, code) to line 1 of cell 2 (id c3, code), cell structure"),
        (RETYPE, "lines 3-4 of cell 1 (id c2, code) to line 1 of cell 2 (id c3, code), cell structure"),
    ],
)
def test_a_hunk_across_cells_is_described_within_the_cells_on_every_surface(
    tmp_path: Path, change: str, where: str
) -> None:
    plan = notebook(tmp_path).plan_patch(change)
    (file_plan,) = plan.files
    (located,) = file_plan.hunks
    assert located.tier is Tier.TRAILING_WHITESPACE and located.match.line >= 6  # a line of the cell view
    assert cell_line(file_plan, located) is None  # no single cell to count in
    shown = reason(located, found_text(file_plan, located), cell_place(file_plan, located))
    assert shown.summary.startswith(f"Not found verbatim; placed at {where}, where the file has")
    explained = plan.explain()
    assert f"hunk 1, {where}: matched ignoring trailing whitespace" in explained
    view_lines = f"lines {located.match.line}-"
    assert view_lines not in explained and view_lines not in shown.summary
    # the comparison: the marker the change and the file share is the next cell's header
    comparison = dict(shown.rows)[COMPARISON_LABEL].split("\n")
    assert "── cell 2 (id c3, code) ──" in comparison
    assert not [line for line in comparison if MARKER in line]
    assert "── cell 2 (id c3, code) ──" in explained and MARKER not in explained
    # the widget's page data and the static HTML say the same
    why = review_document(plan)["files"][0]["hunks"][0]["why"]
    assert why["summary"] == shown.summary and MARKER not in json.dumps(why["rows"])
    markup = hunk_why_html(file_plan, 0)
    assert where in markup and "── cell 2 (id c3, code) ──" in markup and MARKER not in markup
    # the header's list of inexact hunks and the include toggle's name
    (flag,) = summarize_file(file_plan).flags
    assert flag.describe() == f"hunk 1 ({where}): matched ignoring trailing whitespace"
    widget = ReviewWidget(Workspace(tmp_path, history=False), plan)
    assert [toggle.description for toggle in widget._toggles.values()] == [
        f"hunk 1 ({where}) · ⚠ trailing-whitespace"
    ]


def test_a_new_cell_after_a_cells_last_line_is_placed_at_the_end_of_that_cell(tmp_path: Path) -> None:
    plan = notebook(tmp_path).plan_patch(NEW_CELL_AT_THE_END_OF_ONE)
    (file_plan,) = plan.files
    inserted = [located for located in file_plan.hunks if located.match.line_count == 0]
    (located,) = inserted
    assert located.cell == "cell 1 (id c2, code)"
    # the insertion point is the next cell's marker line: it lies after line 4 of cell 1, not
    # on "line 1" of the cell below
    assert cell_line(file_plan, located) == (5, 1)
    assert "line 5 of cell 1 (id c2, code)" in plan.explain()
    assert "line 1 of cell 1" not in plan.explain()


def test_a_hunk_that_ends_on_the_next_cells_marker_names_that_cells_header(tmp_path: Path) -> None:
    plan = notebook(tmp_path).plan_patch(NEW_CELL)
    (file_plan,) = plan.files
    (located,) = file_plan.hunks
    where = "lines 2-4 of cell 1 (id c2, code) to the header of cell 2 (id c3, code), cell structure"
    assert f"hunk 1, {where}: matched ignoring trailing whitespace" in plan.explain()


def test_a_hunk_within_one_cell_keeps_its_in_cell_line(tmp_path: Path) -> None:
    plan = notebook(tmp_path).plan_edit("book.ipynb", "print(y)\n", "print(y + 1)\n")
    (file_plan,) = plan.files
    (located,) = file_plan.hunks
    assert cell_place(file_plan, located) == (2, 1) == cell_line(file_plan, located)
    assert "hunk 1, line 2 of cell 2 (id c3, code): exact match, score 1.00" in plan.explain()
