"""Notebooks through the workspace: every dialect is matched on the cell view.

Each test writes a real notebook into ``tmp_path``, plans and applies a change,
and asserts on the bytes on disk: the targeted cell changes, every other byte is
identical, and after any refusal the file is byte-identical to before.
"""

from __future__ import annotations

import copy
import difflib
import json
from pathlib import Path
from typing import Any

import pytest
from notebook_corpus import FORMATS, build_notebook, code_cell, markdown_cell, set_source

import nbedit
from nbedit.engine.notebook import NotebookDocument
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch, NotebookError

FORMAT_NAMES = sorted(FORMATS)
CELL_1 = "cell 1 (id c01-co, code)"
EDITED_SOURCE = "import math\n\nvalue = math.pi\nprint(value * 2)"


def _workspace(
    tmp_path: Path, notebook: dict[str, Any], format_name: str = "canonical"
) -> tuple[nbedit.Workspace, Path, bytes]:
    path = tmp_path / "nb.ipynb"
    data = FORMATS[format_name](notebook)
    path.write_bytes(data)
    return nbedit.Workspace(tmp_path, history=False), path, data


def _view_diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/nb.ipynb", "b/nb.ipynb")
    return "".join(lines)


def _dialects(view: str) -> dict[str, str]:
    after = view.replace("print(value)\n", "print(value * 2)\n")
    return {
        "unified": _view_diff(view, after),
        "apply_patch": (
            "*** Begin Patch\n*** Update File: nb.ipynb\n@@\n value = math.pi\n-print(value)\n+print(value * 2)\n"
            "*** End Patch\n"
        ),
        "search_replace": (
            "nb.ipynb\n```python\n<<<<<<< SEARCH\nprint(value)\n=======\nprint(value * 2)\n>>>>>>> REPLACE\n```\n"
        ),
    }


@pytest.mark.parametrize("minor", [4, 5])
@pytest.mark.parametrize("format_name", FORMAT_NAMES)
@pytest.mark.parametrize("dialect", ["edit", "unified", "apply_patch", "search_replace"])
def test_every_dialect_changes_only_the_targeted_cell(
    tmp_path: Path, dialect: str, format_name: str, minor: int
) -> None:
    notebook = build_notebook(minor)
    workspace, path, data = _workspace(tmp_path, notebook, format_name)
    view = workspace.view("nb.ipynb")
    if dialect == "edit":
        plan = workspace.plan_edit("nb.ipynb", "print(value)", "print(value * 2)")
    else:
        plan = workspace.plan_patch(_dialects(view)[dialect])
    (file_plan,) = plan.files
    assert file_plan.notebook
    assert file_plan.before == file_plan.display_before == view
    assert file_plan.after == file_plan.display_after == view.replace("print(value)\n", "print(value * 2)\n")
    assert file_plan.before_bytes == data
    label = CELL_1 if minor >= 5 else "cell 1 (code)"
    assert [hunk.cell for hunk in file_plan.hunks] == [label]
    assert "+print(value * 2)" in plan.diff
    workspace.apply(plan)
    assert path.read_bytes() == FORMATS[format_name](set_source(notebook, 1, EDITED_SOURCE))


def test_cell_selector_limits_the_search_to_one_cell(tmp_path: Path) -> None:
    notebook = build_notebook(5)
    workspace, path, data = _workspace(tmp_path, notebook)
    with pytest.raises(AmbiguousMatch) as caught:
        workspace.plan_edit("nb.ipynb", "value", "amount")
    assert "cell 1 (id c01-co, code)" in str(caught.value) and "cell 7 (id c07-co, code)" in str(caught.value)
    for selector in ("c07-co", 7, "7"):
        plan = workspace.plan_edit("nb.ipynb", "value", "amount", cell=selector)
        assert [hunk.cell for hunk in plan.files[0].hunks] == ["cell 7 (id c07-co, code)"]
    workspace.apply(plan)
    expected = set_source(notebook, 7, 'text = "tab\\tquote\\"backslash\\\\"\nsummary = amount * 2')
    assert path.read_bytes() == FORMATS["canonical"](expected)


def test_unknown_cell_selector_is_refused(tmp_path: Path) -> None:
    workspace, path, data = _workspace(tmp_path, build_notebook(5))
    with pytest.raises(NotebookError, match="has no cell with id 'nope'.*valid ids: c00-ma"):
        workspace.plan_edit("nb.ipynb", "value", "amount", cell="nope")
    with pytest.raises(NotebookError, match="has no cell 99; valid indices are 0-7"):
        workspace.plan_edit("nb.ipynb", "value", "amount", cell=99)
    assert path.read_bytes() == data


def test_no_match_names_the_cells_of_the_candidates(tmp_path: Path) -> None:
    workspace, path, data = _workspace(tmp_path, build_notebook(5))
    with pytest.raises(NoMatch) as caught:
        workspace.plan_edit("nb.ipynb", "value = math.pi\nprint(values_list_long)\n", "x", exact=True)
    assert any(candidate.cell == CELL_1 for candidate in caught.value.candidates)
    assert f"({CELL_1})" in str(caught.value)
    assert path.read_bytes() == data


def test_a_match_across_a_cell_boundary_is_refused(tmp_path: Path) -> None:
    notebook = {
        "cells": [code_cell("first = 1\nsecond = 2", id="aa"), code_cell("third = 3\nfourth = 4", id="bb")],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    workspace, path, data = _workspace(tmp_path, notebook)
    old = "second = 2\n#%% nbedit cell 1 [code] id=bb\nthird = 3\n"
    with pytest.raises(MatchError) as caught:
        workspace.plan_patch(f"nb.ipynb\n<<<<<<< SEARCH\n{old}=======\nmerged = 5\n>>>>>>> REPLACE\n")
    # the drifted marker line is a line the change deletes, so it must be in the notebook exactly
    assert "is not in the file" in str(caught.value)
    assert path.read_bytes() == data


def test_a_view_diff_with_marker_lines_edits_the_structure(tmp_path: Path) -> None:
    notebook = build_notebook(5)
    workspace, path, data = _workspace(tmp_path, notebook)
    marker = "# %% nbedit cell 5 [code] id=c05-co\n"
    # an old/new edit may not write a marker (issue 11 item 2); a diff of the cell view may
    with pytest.raises(MatchError, match="runs across a cell marker"):
        workspace.plan_edit(
            "nb.ipynb", marker, "# %% nbedit cell new [markdown] id=added\nInserted *here*\n" + marker
        )
    assert path.read_bytes() == data
    view = workspace.view("nb.ipynb")
    after = view.replace(marker, "# %% nbedit cell new [markdown] id=added\nInserted *here*\n" + marker)
    plan = workspace.plan_patch(_view_diff(view, after))
    assert [hunk.cell for hunk in plan.files[0].hunks] == ["cell 5 (id c05-co, code), cell structure"]
    assert "new markdown cell at position 5" in plan.files[0].notes
    assert "changes the cell structure: inserts 1 cell" in plan.files[0].notes
    workspace.apply(plan)
    expected = copy.deepcopy(notebook)
    inserted = markdown_cell("Inserted *here*")
    inserted["id"] = "added"
    expected["cells"].insert(5, inserted)
    assert path.read_bytes() == FORMATS["canonical"](expected)


def test_editing_a_marker_line_changes_the_cell_type(tmp_path: Path) -> None:
    notebook = build_notebook(4)
    workspace, path, _ = _workspace(tmp_path, notebook, "indent2-reordered")
    plan = workspace.plan_edit("nb.ipynb", "cell 4 [raw]", "cell 4 [markdown]")
    assert [hunk.cell for hunk in plan.files[0].hunks] == ["cell 4 (raw), marker line"]
    workspace.apply(plan)
    cell = json.loads(path.read_bytes())["cells"][4]
    assert cell["cell_type"] == "markdown" and cell["metadata"] == {"format": "text/restructuredtext"}


def test_unified_diff_deleting_a_cell(tmp_path: Path) -> None:
    notebook = build_notebook(5)
    workspace, path, _ = _workspace(tmp_path, notebook, "tabs-crlf")
    document = NotebookDocument.parse(path.read_bytes(), "nb.ipynb")
    start = document.marker_starts[3]
    after = document.view[:start] + document.view[document.marker_starts[4] :]
    plan = workspace.plan_patch(_view_diff(document.view, after))
    workspace.apply(plan)
    expected = copy.deepcopy(notebook)
    del expected["cells"][3]
    assert path.read_bytes() == FORMATS["tabs-crlf"](expected)


def test_replacement_dropping_the_final_newline_keeps_the_next_marker(tmp_path: Path) -> None:
    notebook = build_notebook(5)
    workspace, path, _ = _workspace(tmp_path, notebook)
    plan = workspace.plan_edit("nb.ipynb", "print(value)\n", "print(value * 2)")
    assert "# %% nbedit cell 2 [code] id=c02-co" in plan.files[0].after.split("\n")
    workspace.apply(plan)
    assert path.read_bytes() == FORMATS["canonical"](set_source(notebook, 1, EDITED_SOURCE))


def test_clear_outputs_through_the_workspace(tmp_path: Path) -> None:
    notebook = build_notebook(5)
    workspace, path, _ = _workspace(tmp_path, notebook, "compact-escaped")
    plan = workspace.plan_edit("nb.ipynb", "Image(data)", "Image(other)", clear_outputs=True)
    workspace.apply(plan)
    expected = set_source(notebook, 2, "from IPython.display import Image\nImage(other)")
    expected["cells"][2]["outputs"] = []
    expected["cells"][2]["execution_count"] = None
    assert path.read_bytes() == FORMATS["compact-escaped"](expected)


def test_leaving_out_a_hunk_replans_the_notebook(tmp_path: Path) -> None:
    notebook = build_notebook(5)
    workspace, path, _ = _workspace(tmp_path, notebook, "string-sources")
    view = workspace.view("nb.ipynb")
    after = view.replace("print(value)\n", "print(value * 2)\n").replace("summary = value", "summary = other")
    plan = workspace.plan_patch(_view_diff(view, after), clear_outputs=True)
    assert [hunk.cell for hunk in plan.files[0].hunks] == [CELL_1, "cell 7 (id c07-co, code)"]
    kept = plan.without_hunks({(0, 1)})
    assert "summary = other" not in kept.files[0].after_bytes.decode()
    assert kept.files[0].after == view.replace("print(value)\n", "print(value * 2)\n")
    workspace.apply(kept)
    expected = set_source(notebook, 1, EDITED_SOURCE)
    expected["cells"][1]["outputs"] = []
    expected["cells"][1]["execution_count"] = None
    assert path.read_bytes() == FORMATS["string-sources"](expected)


def test_refused_results_leave_the_file_untouched(tmp_path: Path) -> None:
    workspace, path, data = _workspace(tmp_path, build_notebook(5))
    with pytest.raises(NotebookError, match="has attachments"):
        workspace.plan_edit("nb.ipynb", "[markdown] id=c00-ma", "[code] id=c00-ma")
    view = workspace.view("nb.ipynb")
    with pytest.raises(NotebookError, match="not a valid cell id"):
        workspace.plan_patch(
            _view_diff(
                view,
                view.replace(
                    "# %% nbedit cell 7", "# %% nbedit cell new [raw] id=no/slash\nx\n# %% nbedit cell 7"
                ),
            )
        )
    with pytest.raises(NotebookError, match="unknown cell type"):
        workspace.plan_edit("nb.ipynb", "cell 4 [raw]", "cell 4 [rawish]")
    assert path.read_bytes() == data


def test_schema_violation_is_refused_and_nothing_written(tmp_path: Path) -> None:
    notebook = {
        "cells": [markdown_cell("text", metadata={"scrolled": "yes"}, id="m")],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    workspace, path, data = _workspace(tmp_path, notebook)
    with pytest.raises(NotebookError, match=r"invalid: cell 0 \(id m, markdown\): .*metadata/scrolled"):
        workspace.plan_edit("nb.ipynb", "[markdown]", "[code]")
    assert path.read_bytes() == data


def test_invalid_notebook_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b'{"cells": [')
    workspace = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(NotebookError, match="is not valid JSON.*the file was not changed"):
        workspace.plan_edit("nb.ipynb", "a", "b")
    assert path.read_bytes() == b'{"cells": ['


def test_nbformat_44_notebook_through_a_patch_stays_44(tmp_path: Path) -> None:
    notebook = build_notebook(4)
    workspace, path, _ = _workspace(tmp_path, notebook, "indent2-reordered")
    view = workspace.view("nb.ipynb")
    after = view.replace(
        "# %% nbedit cell 2 [code]\n", "# %% nbedit cell new [code]\nnew = 1\n# %% nbedit cell 2 [code]\n"
    )
    workspace.apply(workspace.plan_patch(_view_diff(view, after)))
    result = json.loads(path.read_bytes())
    assert result["nbformat_minor"] == 4 and all("id" not in cell for cell in result["cells"])
    expected = copy.deepcopy(notebook)
    expected["cells"].insert(2, code_cell("new = 1"))
    assert path.read_bytes() == FORMATS["indent2-reordered"](expected)


def test_cell_selector_does_not_mistake_new_text_elsewhere_for_applied(tmp_path: Path) -> None:
    workspace, path, data = _workspace(tmp_path, build_notebook(5))
    with pytest.raises(NoMatch, match=r"the old text is not in cell 3 \(id c03-co, code\)"):
        workspace.plan_edit("nb.ipynb", "summary = value", "summary = valu", cell=3)
    plan = workspace.plan_edit("nb.ipynb", "summary = value * 2", "summary = value * 3", cell=7)
    workspace.apply(plan)
    again = workspace.plan_edit("nb.ipynb", "summary = value * 2", "summary = value * 3", cell=7, exact=True)
    assert again.files[0].already_applied and again.files[0].after_bytes == path.read_bytes()
