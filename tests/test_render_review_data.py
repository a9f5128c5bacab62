"""The review widget's document: a plan as rows, with notebook cells named and their fate marked."""

from __future__ import annotations

import difflib
from pathlib import Path

import nbformat

from nbedit.render.html import plan_to_html
from nbedit.render.review_data import gap_lines, review_document
from nbedit.workspace import Workspace


def notebook_view(tmp_path: Path) -> str:
    """Write ``n.ipynb`` once (a markdown cell, then eight code cells) and return its cell view."""
    if not (tmp_path / "n.ipynb").exists():  # cell ids are random: write once, then read
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_markdown_cell("# Title")]
        notebook.cells += [nbformat.v4.new_code_cell(f"step_{index} = {index}") for index in range(8)]
        nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    return Workspace(tmp_path, history=False).view("n.ipynb")


def notebook_plan(tmp_path: Path, change: dict[str, str], clear_outputs: bool = False):  # type: ignore[no-untyped-def]
    view = notebook_view(tmp_path)
    workspace = Workspace(tmp_path, history=False, clear_outputs=clear_outputs)
    new_view = view
    for old, new in change.items():
        assert old in new_view, old
        new_view = new_view.replace(old, new)
    diff = "".join(
        difflib.unified_diff(view.splitlines(True), new_view.splitlines(True), "a/n.ipynb", "b/n.ipynb")
    )
    return workspace, view, workspace.plan_patch(diff)


def cell_rows(document: dict) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [
        (row[3]["index"], row[3]["type"], row[4])
        for section in document["files"][0]["sections"]
        for row in section.get("rows", ())
        if row[0] == "m"
    ]


def test_inserted_deleted_and_retyped_cells_are_marked(tmp_path: Path) -> None:
    lines = notebook_view(tmp_path).splitlines(True)
    marker_2 = next(line for line in lines if line.startswith("# %% nbedit cell 2 "))
    marker_6 = next(line for line in lines if line.startswith("# %% nbedit cell 6 "))
    _, _, plan = notebook_plan(
        tmp_path,
        {
            marker_2: marker_2.replace("[code]", "[markdown]"),  # retype cell 2
            marker_6 + "step_5 = 5\n": "",  # delete cell 6
            "step_7 = 7\n": "step_7 = 7\n# %% nbedit cell new [markdown]\nThe end.\n",  # insert after 8
        },
    )
    document = review_document(plan)
    (file,) = document["files"]
    assert file["notebook"] and file["outputs"] == "kept"
    marked = [row for row in cell_rows(document) if row[2]]
    assert ("2", "code", "replaced") in marked and ("2", "markdown", "retyped") in marked
    assert ("6", "code", "deleted") in marked
    assert ("new", "markdown", "inserted") in marked
    # the static fallback draws the same cell headers
    html = plan_to_html(plan)
    assert '<tr class="m mr">' in html and '<tr class="m ma">' in html and "cell 6 · code" in html
    assert "outputs are kept" in html


def test_cleared_outputs_are_said_once(tmp_path: Path) -> None:
    _, _, plan = notebook_plan(tmp_path, {"step_3 = 3": "step_3 = 33"}, clear_outputs=True)
    (file,) = review_document(plan)["files"]
    assert file["outputs"] == "cleared"
    assert not any("clear_outputs" in note for note in file["notes"])
    html = plan_to_html(plan)
    assert "edited code cells lose their outputs" in html and "outputs are kept" not in html


def test_gap_lines_are_the_hidden_unchanged_lines(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("".join(f"line {number}\r\n" for number in range(1, 41)))
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("f.py", "line 20\r\n", "line twenty\r\n")
    (file,) = review_document(plan)["files"]
    gaps = [section["gap"] for section in file["sections"] if "gap" in section]
    assert [count for count, _, _ in gaps] == [16, 17]
    count, old_line, _ = gaps[1]
    assert gap_lines(plan.files[0], old_line, count) == [f"line {number}" for number in range(24, 41)]
