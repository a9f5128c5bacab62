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


def cell_entries(document: dict) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [(entry["cell"]["index"], entry["cell"]["type"], entry["state"]) for entry in document["files"][0]["cells"]]


def static_cells(html: str) -> list[list[str]]:
    """The static HTML's cell boxes (``<tbody>``), each as its rows' text with the tags taken out."""
    import re
    from html import unescape

    def words(markup: str) -> str:
        return " ".join(unescape(re.sub(r"<[^>]+>", " ", markup)).split())

    return [
        [words(row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.S)]
        for body in re.findall(r"<tbody[^>]*>(.*?)</tbody>", html, flags=re.S)
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
    assert "sections" in file and file["sections"] == []  # the cells are the drawing
    entries = cell_entries(document)
    # every cell once, in reading order: the deleted cell where it was, the new one where it goes
    assert entries == [
        ("0", "markdown", "same"),
        ("1", "code", "same"),
        ("2", "markdown", "retyped"),
        ("3", "code", "same"),
        ("4", "code", "same"),
        ("5", "code", "same"),
        ("6", "code", "deleted"),
        ("7", "code", "same"),
        ("8", "code", "same"),
        ("new", "markdown", "inserted"),
    ]
    retyped = file["cells"][2]
    assert retyped["from"] == "code" and retyped["rows"] == [["c", 1, 1, "step_1 = 1"]]
    assert file["cells"][6]["rows"] == [["r", 1, None, "step_5 = 5"]]  # line 1 of the cell, not of the view
    assert file["cells"][9]["rows"] == [["a", None, 1, "The end."]]
    assert all(entry.get("hunks") for entry in file["cells"] if entry["state"] != "same")
    # the structure is said by badges, not by note lines repeating them
    assert file["badges"] == ["inserts 1 cell", "deletes 1 cell", "changes the type of 1 cell"]
    assert file["notes"] == []
    # the static fallback (nbconvert, GitHub) draws the same cells: a box per cell, numbered within it
    boxes = static_cells(plan_to_html(plan))
    assert boxes == [
        ["▣ cell 0 · markdown · id " + file["cells"][0]["cell"]["id"] + " unchanged · 1 line"],
        ["▣ cell 1 · code · id " + file["cells"][1]["cell"]["id"] + " unchanged · 1 line"],
        ["± cell 2 · markdown · id " + file["cells"][2]["cell"]["id"] + " retyped code → markdown hunk 1",
         "1 1 step_1 = 1"],
        ["⋯ 3 unchanged cells (cell 3 to cell 5)"],
        ["− cell 6 · code · id " + file["cells"][6]["cell"]["id"] + " deleted hunk 2", "1 - step_5 = 5"],
        ["▣ cell 7 · code · id " + file["cells"][7]["cell"]["id"] + " unchanged · 1 line"],
        ["▣ cell 8 · code · id " + file["cells"][8]["cell"]["id"] + " unchanged · 1 line"],
        ["+ new cell · markdown inserted hunk 3", "1 + The end."],
    ]
    html = plan_to_html(plan)
    for badge in file["badges"]:  # the structure is a badge on the file, not a note line
        assert f">{badge}</span>" in html
    assert 'class="nb-note"' not in html and "# %% nbedit" not in html


def test_an_edit_is_numbered_within_its_cell(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("a = 1\nb = 2"), nbformat.v4.new_code_cell(
        "".join(f"line_{number} = {number}\n" for number in range(1, 21)) + "done = True"
    )]
    nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("n.ipynb", "line_15 = 15", "line_15 = 'fifteen'")
    (file,) = review_document(plan)["files"]
    (same, edited) = file["cells"]
    assert same["state"] == "same" and same["lines"] == 2 and "rows" not in same
    assert edited["state"] == "edited" and edited["outputs"] == "kept" and edited["hunks"] == [0]
    rows = edited["rows"]
    assert rows[0] == ["g", 11, 1, 1]  # lines 1-11 of the cell, collapsed
    assert [row[1] for row in rows[1:4]] == [12, 13, 14]
    assert rows[4][:3] == ["r", 15, None] and rows[5][:3] == ["a", None, 15]
    assert rows[-1] == ["g", 3, 19, 19]  # lines 19-21
    from nbedit.render.cells import cell_lines

    assert cell_lines(plan.files[0], 1)[18:] == ["line_19 = 19", "line_20 = 20", "done = True"]


def test_cleared_outputs_are_listed_with_their_types_and_sizes(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('hi')\nplot()")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hi\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo" * 300, "text/plain": "<Figure>"}),
    ]
    notebook.cells = [cell]
    nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    workspace = Workspace(tmp_path, history=False, clear_outputs=True)
    plan = workspace.plan_edit("n.ipynb", "plot()", "plot(dpi=200)")
    (file,) = review_document(plan)["files"]
    assert file["outputs"] == "cleared"
    assert not any("clear_outputs" in note for note in file["notes"])
    (entry,) = file["cells"]
    assert "outputs" not in entry
    stream, image = entry["cleared"]
    assert stream.startswith("stream ") and stream.endswith(" B")
    assert image.startswith("display_data image/png 3.") and image.endswith(" KB")
    (box,) = static_cells(plan_to_html(plan))
    assert box[0].startswith("± cell 0 · code") and f"clears 2 outputs: {stream}, {image}" in box[0]
    assert "outputs kept" not in box[0] and box[-1] == "2 + plot( dpi=200 )"


def test_gap_lines_are_the_hidden_unchanged_lines(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("".join(f"line {number}\r\n" for number in range(1, 41)))
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_edit("f.py", "line 20\r\n", "line twenty\r\n")
    (file,) = review_document(plan)["files"]
    gaps = [section["gap"] for section in file["sections"] if "gap" in section]
    assert [count for count, _, _ in gaps] == [16, 17]
    count, old_line, _ = gaps[1]
    assert gap_lines(plan.files[0], old_line, count) == [f"line {number}" for number in range(24, 41)]


def test_cells_are_read_as_the_engine_reads_them() -> None:
    from nbedit.engine.notebook.view import parse_view
    from nbedit.render.cells import _cells_of

    views = [
        "# %% nbedit cell 0 [code] id=a\nx = 1\n\n# %% nbedit cell new [markdown]\n# Title\n# %% nbedit cell 1 [raw]\n",
        "# %% nbedit cell 0 [code]\r\ny = 2\r\n# %% nbedit cell 1 [code]\n",
        "# %% nbedit cell 0 [code]\n\\# %% nbedit cell 9 [code]\nz = 3\n",  # an escaped marker in a source
        "",
    ]
    for view in views:
        expected = [(cell.source, cell.index, cell.cell_type, cell.id) for cell in parse_view(view)]
        assert [(cell.source, cell.index, cell.cell_type, cell.id) for cell in _cells_of(view)] == expected
