"""nbformat 2 and 3 notebooks (real files from nbformat's sdist): cell texts edited in place, never converted."""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from nbedit.engine.notebook import NotebookDocument
from nbedit.errors import NotebookError
from nbedit.workspace import Workspace

DATA = Path(__file__).parent / "data" / "old-notebooks"
OLD = sorted(DATA.glob("*.ipynb"))


def texts(data: bytes) -> list[tuple[str, str]]:
    """(cell type, text) of every cell as nbformat itself reads the file, in its own version."""
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=nbformat.NO_CONVERT)
    except nbformat.ValidationError:
        # nbformat's reader refuses a version 3 file without worksheets, or a worksheet without
        # cells (its own tests of those two files); there are no cells to show
        return []
    found = []
    for sheet in notebook.get("worksheets", []):
        for cell in sheet.get("cells", []):
            text = cell.get("input", cell.get("source", "")) if cell.cell_type == "code" else cell.get("source", "")
            found.append((cell.cell_type, text))
    return found


@pytest.mark.parametrize("path", OLD, ids=lambda path: path.name)
def test_the_view_shows_what_nbformat_reads(path: Path) -> None:
    data = path.read_bytes()
    document = NotebookDocument.parse(data, path.name)
    assert document.legacy is not None and document.legacy.major in (2, 3)
    assert [(cell.cell_type, cell.source) for cell in document.cells] == texts(data)
    assert document.edit(document.view).data == data  # nothing changed, nothing rewritten


@pytest.mark.parametrize("name", ["test2.ipynb", "test3.ipynb"])
def test_every_cell_text_edits_in_place_and_reads_back(name: str) -> None:
    data = (DATA / name).read_bytes()
    document = NotebookDocument.parse(data, name)
    original = texts(data)
    for index, cell in enumerate(document.cells):
        if cell.read_only:
            continue
        start, end = document.spans[index].start, document.spans[index].end
        new_text = cell.source + "\nadded = 'é'  # a line\n" if cell.source else "first = 1"
        new_body = new_text + "\n"
        edited = document.edit(document.view[:start] + new_body + document.view[end:])
        assert edited.changes == (f"{cell.label}: source changed",)
        expected = list(original)
        expected[index] = (cell.cell_type, new_text)
        assert texts(edited.data) == expected, index  # nbformat reads exactly the new text ...
        notebook = nbformat.reads(edited.data.decode(), as_version=nbformat.NO_CONVERT)
        assert notebook.nbformat == document.legacy.major  # ... in the file's own version
        # bytes before the cell's text member and after it are the original's
        member = document.layout.cells[index].members["input" if cell.cell_type == "code" else "source"]
        assert edited.data[: member.value_start] == data[: member.value_start]
        tail = len(data) - member.value_end
        assert edited.data[len(edited.data) - tail :] == data[member.value_end :]


def test_a_workspace_edit_of_an_old_notebook(tmp_path: Path) -> None:
    target = tmp_path / "old.ipynb"
    shutil.copyfile(DATA / "test3.ipynb", target)
    before = target.read_bytes()
    workspace = Workspace(tmp_path, history=False)
    assert "# %% nbedit cell 3 [code]" in workspace.view("old.ipynb")
    plan = workspace.plan_edit("old.ipynb", 'print("hello")', 'print("hello, old notebook")')
    (file_plan,) = plan.files
    assert file_plan.notebook and file_plan.hunks[0].cell == "cell 3 (code)"
    workspace.apply(plan)
    after = target.read_bytes()
    assert texts(after)[3] == ("code", 'print("hello, old notebook")')
    assert texts(after)[:3] == texts(before)[:3] and texts(after)[4:] == texts(before)[4:]
    assert b'"worksheets"' in after and b'"nbformat": 3' in after  # never converted
    assert len(after) - len(before) == len(", old notebook")


@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        ('print("hello")\n', 'print("hello")\n# %% nbedit cell new [code]\nx = 1\n', "adding cells"),
        ("# %% nbedit cell 3 [code]\n", "# %% nbedit cell 3 [markdown]\n", "changing cell 3 (code) to [markdown]"),
    ],
)
def test_structural_edits_are_refused_and_write_nothing(tmp_path: Path, old: str, new: str, what: str) -> None:
    target = tmp_path / "old.ipynb"
    shutil.copyfile(DATA / "test3.ipynb", target)
    before = target.read_bytes()
    document = NotebookDocument.parse(before, "old.ipynb")
    assert old in document.view
    with pytest.raises(NotebookError) as raised:
        document.edit(document.view.replace(old, new, 1))
    message = str(raised.value)
    assert what in message and "nbformat 3" in message and "never does as a side effect" in message
    assert "the file was not changed" in message
    workspace = Workspace(tmp_path, history=False)
    view = workspace.view("old.ipynb")
    diff = "".join(
        difflib.unified_diff(
            view.splitlines(True), view.replace(old, new, 1).splitlines(True), "a/old.ipynb", "b/old.ipynb"
        )
    )
    with pytest.raises(NotebookError, match=re.escape(what)):
        workspace.apply(workspace.plan_patch(diff))
    assert target.read_bytes() == before


def test_heading_cells_are_read_only(tmp_path: Path) -> None:
    data = (DATA / "test3.ipynb").read_bytes()
    document = NotebookDocument.parse(data, "old.ipynb")
    heading = document.cells[0]
    assert heading.cell_type == "heading" and heading.read_only
    assert document.view.startswith("# %% nbedit cell 0 [heading] read-only\nnbconvert latex test\n")
    with pytest.raises(NotebookError, match="read-only"):
        document.edit(document.view.replace("nbconvert latex test", "a new title", 1))


def test_deleting_a_cell_of_an_old_notebook_is_refused() -> None:
    data = (DATA / "test2.ipynb").read_bytes()
    document = NotebookDocument.parse(data, "old.ipynb")
    start = document.marker_starts[1]
    end = document.marker_starts[2]
    with pytest.raises(NotebookError, match="deleting cells"):
        document.edit(document.view[:start] + document.view[end:])


def test_nbformat_1_and_5_are_still_refused() -> None:
    for version in (1, 5):
        data = b'{"nbformat": %d, "nbformat_minor": 0, "worksheets": []}' % version
        with pytest.raises(NotebookError, match="not supported"):
            NotebookDocument.parse(data, "odd.ipynb")


def test_a_git_diff_of_an_old_notebooks_json(tmp_path: Path) -> None:
    target = tmp_path / "old.ipynb"
    shutil.copyfile(DATA / "test3.ipynb", target)
    old = target.read_text()
    new = old.replace('"print(\\"hello\\")"', '"print(\\"hello, raw\\")"', 1)
    assert new != old
    diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/old.ipynb", "b/old.ipynb"))
    workspace = Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    (file_plan,) = plan.files
    # no false notes: the file was valid (nbformat 3's schema) and nothing outside the cells changed
    assert not any("invalid" in note or "does not show" in note for note in file_plan.notes), file_plan.notes
    workspace.apply(plan)
    assert target.read_text() == new
    assert texts(target.read_bytes())[3] == ("code", 'print("hello, raw")')
