"""A diff of a notebook's raw JSON applies as JSON (issue 9 item 4), and the notebook items around it.

Every test writes real notebooks with nbformat into ``tmp_path``, makes the diffs
with real ``git diff`` where a diff is needed (``git apply`` is the oracle when a
notebook drifted), and asserts on the bytes on disk. Every refusal checks that
the file is byte-identical afterwards.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
import test_jupyter_support
from test_jupyter_support import run

import nbedit
from nbedit.engine.models import Hunk
from nbedit.engine.notebook import NotebookDocument
from nbedit.engine.notebook.raw import RAW_NOTE, looks_like_notebook_json
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch, NotebookError

REPO = Path(__file__).resolve().parents[1]
GIT = ("git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "core.autocrlf=false")
FUTURE = REPO / "tests" / "data" / "notebooks" / "nbformat-test4plus.ipynb"

ipython = test_jupyter_support.ipython  # the shared fixtures
shell = test_jupyter_support.shell


def view_diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/nb.ipynb", "b/nb.ipynb")
    return "".join(lines)


def git(folder: Path, *arguments: str) -> str:
    done = subprocess.run([*GIT, *arguments], cwd=folder, capture_output=True, check=True)
    return done.stdout.decode("utf-8")


def notebook(minor: int = 5) -> Any:
    built = nbformat.v4.new_notebook()
    built.nbformat_minor = minor
    built.cells = [
        nbformat.v4.new_markdown_cell("# Title\nsome text", id="md0"),
        nbformat.v4.new_code_cell("%pip install x\nimport os\nprint(os.getcwd())", id="code1"),
        nbformat.v4.new_code_cell("a = 1\nb = 2", id="code2"),
        nbformat.v4.new_code_cell("total = a + b\nprint(total)", id="code3"),
    ]
    if minor < 5:
        for cell in built.cells:
            del cell["id"]
    return built


def change(built: Any) -> Any:
    """What a person does between two commits: edit a line, run a cell, add a cell."""
    changed = nbformat.from_dict(json.loads(json.dumps(built)))
    changed.cells[1].source = "%pip install y\nimport os\nprint(os.getcwd())"
    changed.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="/home\n")]
    changed.cells[1].execution_count = 3
    extra = nbformat.v4.new_markdown_cell("new *notes*")
    if built.nbformat_minor >= 5:
        extra["id"] = "new4"
    else:
        extra.pop("id", None)
    changed.cells.insert(2, extra)
    return changed


def repository(tmp_path: Path, before: Any, after: Any, context: int = 3) -> tuple[Path, str, bytes, bytes]:
    """A real git repository holding ``before`` committed and ``after`` in the worktree; returns its diff."""
    path = tmp_path / "nb.ipynb"
    git(tmp_path, "init", "-q")
    nbformat.write(before, path)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "before")
    nbformat.write(after, path)
    wanted = path.read_bytes()
    diff = git(tmp_path, "diff", f"-U{context}")
    git(tmp_path, "checkout", "-q", "nb.ipynb")
    return path, diff, path.read_bytes(), wanted


# -- issue 9 item 4: raw JSON diffs ---------------------------------------------------------------


@pytest.mark.parametrize("context", [3, 1, 0])
def test_issue9_item4_git_diff_of_a_notebook_applies_as_json(tmp_path: Path, context: int) -> None:
    path, diff, _, wanted = repository(tmp_path, notebook(), change(notebook()), context)
    assert '-    "%pip install x\\n",' in diff  # really a diff of the JSON
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    file_plan = plan.files[0]
    assert file_plan.notebook and file_plan.hunks == ()
    assert file_plan.after_bytes == wanted
    assert RAW_NOTE in file_plan.notes
    assert any("cell 1: execution_count, outputs" in note for note in file_plan.notes)
    assert "changes the cell structure: inserts 1 cell" in file_plan.notes
    # the preview is the cell view's diff, with the cells named as read
    assert "-%pip install x\n+%pip install y\n" in plan.diff
    assert "+# %% nbedit cell new [markdown] id=new4\n+new *notes*\n" in plan.diff
    assert '"source"' not in plan.diff
    workspace.apply(plan)
    assert path.read_bytes() == wanted


def test_issue9_item4_raw_diff_moving_a_cell_is_previewed_with_the_cells_as_read(tmp_path: Path) -> None:
    after = notebook()
    after.cells[1], after.cells[2] = after.cells[2], after.cells[1]
    path, diff, _, wanted = repository(tmp_path, notebook(), after)
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert "changes the cell structure: reorders cells" in plan.files[0].notes
    assert "+# %% nbedit cell 2 [code] id=code2\n+a = 1\n" in plan.diff  # cell 2 keeps its name
    workspace.apply(plan)
    assert path.read_bytes() == wanted


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4])
def test_issue9_item4_raw_diff_of_nbformat_40_to_44_notebooks(tmp_path: Path, minor: int) -> None:
    path, diff, _, wanted = repository(tmp_path, notebook(minor), change(notebook(minor)))
    workspace = nbedit.Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_patch(diff))
    assert path.read_bytes() == wanted
    nbformat.validate(nbformat.read(path, as_version=nbformat.NO_CONVERT))


def test_issue9_item4_raw_diff_found_at_an_offset_matches_git_apply(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path, diff, before, _ = repository(tmp_path, notebook(), change(notebook()))
    drifted = notebook()
    drifted.cells.insert(0, nbformat.v4.new_markdown_cell("A cell added\nabove everything", id="top"))
    nbformat.write(drifted, path)
    oracle = tmp_path_factory.mktemp("oracle")  # outside the repository, so git apply patches its copy
    (oracle / "nb.ipynb").write_bytes(path.read_bytes())
    (oracle / "d.diff").write_text(diff, encoding="utf-8")
    subprocess.run(["git", "apply", "d.diff"], cwd=oracle, check=True)
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert any("offset +" in note for note in plan.files[0].notes)
    workspace.apply(plan)
    assert path.read_bytes() == (oracle / "nb.ipynb").read_bytes()


def test_issue9_item4_zero_context_insertion_in_a_moved_notebook_is_refused(tmp_path: Path) -> None:
    """A -U0 hunk that only inserts has nothing but its line number; when the hunks after it were
    found elsewhere, the file moved and that line number is stale: refused, not placed by guess."""
    after = notebook()
    after.cells.insert(2, nbformat.v4.new_markdown_cell("inserted", id="ins"))
    after.cells[4].source = "total = a + b + 1\nprint(total)"
    path, diff, before, _ = repository(tmp_path, notebook(), after, context=0)
    moved = notebook()
    moved.cells[0].source = "# Title\nsome text\nadded\nby a colleague"
    nbformat.write(moved, path)
    data = path.read_bytes()
    workspace = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(AmbiguousMatch, match="only inserts lines .* has moved since the diff was made"):
        workspace.plan_patch(diff)
    assert path.read_bytes() == data
    path.write_bytes(before)  # on the version it was made from, the same diff applies
    workspace.apply(workspace.plan_patch(diff))
    assert nbformat.read(path, as_version=4).cells[2].source == "inserted"


def test_issue9_item4_crlf_notebook_with_an_lf_diff_keeps_crlf(tmp_path: Path) -> None:
    path, diff, before, wanted = repository(tmp_path, notebook(), change(notebook()))
    path.write_bytes(before.replace(b"\n", b"\r\n"))
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert "raw JSON matched ignoring line endings" in plan.files[0].notes
    with pytest.raises(NoMatch, match="does not match the notebook's JSON"):
        workspace.plan_patch(diff, exact=True)
    workspace.apply(plan)
    assert path.read_bytes() == wanted.replace(b"\n", b"\r\n")


def test_issue9_item4_json_diff_that_no_longer_matches_is_refused_never_fuzzy(tmp_path: Path) -> None:
    """The regression: with a line number, fuzzy matching wrote JSON-quoted lines into cell sources."""
    path, diff, _, _ = repository(tmp_path, notebook(), change(notebook()))
    drifted = notebook()
    drifted.cells[1].source = "%pip install x==2\nimport os\nprint(os.getcwd())"
    nbformat.write(drifted, path)
    data = path.read_bytes()
    workspace = nbedit.Workspace(tmp_path, history=False)
    for threshold in (0.9, 0.5):
        with pytest.raises(
            NoMatch, match="looks like a diff of the notebook's JSON .* does not match"
        ) as caught:
            workspace.plan_patch(diff, threshold=threshold)
        assert "git diff" in caught.value.message
    assert path.read_bytes() == data


@pytest.mark.parametrize("dialect", ["edit", "search_replace"])
def test_issue9_item4_json_lines_are_never_matched_leniently_into_cells(tmp_path: Path, dialect: str) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), path)
    data = path.read_bytes()
    workspace = nbedit.Workspace(tmp_path, history=False)
    old = '    "%pip install  x\\n",\n    "import os\\n",\n'  # drifted: two spaces
    new = '    "%pip install y\\n",\n    "import os\\n",\n'
    with pytest.raises(NoMatch, match="does not match the notebook's JSON"):
        if dialect == "edit":
            workspace.plan_edit("nb.ipynb", old, new)
        else:
            workspace.plan_patch(f"nb.ipynb\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n")
    assert path.read_bytes() == data


def test_issue9_item4_exact_json_lines_in_a_search_block_edit_the_json(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), path)
    old = '    "%pip install x\\n",\n'
    new = '    "%pip install y\\n",\n'
    workspace = nbedit.Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_patch(f"nb.ipynb\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"))
    assert nbformat.read(path, as_version=4).cells[1].source.startswith("%pip install y\n")


@pytest.mark.parametrize(
    ("removed", "expected"),
    [
        ('   "cell_type": "code",\n', "is not a valid notebook .* at cells/1\\)"),
        ('   "metadata": {},\n', "is not a valid notebook"),
    ],
)
def test_issue9_item4_patched_json_must_be_a_valid_notebook(
    tmp_path: Path, removed: str, expected: str
) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), path)
    data = path.read_bytes()
    text = data.decode()
    line = text[: text.index(removed)].count("\n") + 1
    diff = f"--- a/nb.ipynb\n+++ b/nb.ipynb\n@@ -{line},1 +{line - 1},0 @@\n-{removed}"
    workspace = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(NotebookError, match=expected) as caught:
        workspace.plan_patch(diff)
    assert "nothing was changed" in caught.value.message or "the file was not changed" in caught.value.message
    assert path.read_bytes() == data


def test_issue9_item4_patched_text_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), path)
    data = path.read_bytes()
    text = data.decode()
    line = text[: text.index('   "cell_type": "markdown",')].count("\n") + 1
    diff = (
        f"--- a/nb.ipynb\n+++ b/nb.ipynb\n@@ -{line},1 +{line},1 @@\n"
        '-   "cell_type": "markdown",\n+   "cell_type": "markdown"\n'
    )
    workspace = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(NotebookError, match="the result is not a valid notebook .not JSON"):
        workspace.plan_patch(diff)
    assert path.read_bytes() == data


def test_issue9_item4_apply_patch_of_raw_json(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), path)
    data = path.read_bytes()
    workspace = nbedit.Workspace(tmp_path, history=False)
    ambiguous = (
        "*** Begin Patch\n*** Update File: nb.ipynb\n@@\n"
        '-   "execution_count": null,\n+   "execution_count": 1,\n*** End Patch\n'
    )
    with pytest.raises(AmbiguousMatch, match="occurs 3 times in the notebook's JSON") as caught:
        workspace.plan_patch(ambiguous)
    assert len(caught.value.locations) == 3
    assert path.read_bytes() == data
    unique = (
        "*** Begin Patch\n*** Update File: nb.ipynb\n@@\n"
        '-   "execution_count": null,\n+   "execution_count": 1,\n'
        '    "id": "code2",\n*** End Patch\n'
    )
    workspace.apply(workspace.plan_patch(unique))
    cells = nbformat.read(path, as_version=4).cells
    assert [cell.get("execution_count") for cell in cells] == [None, None, 1, None]
    assert path.read_bytes() == data.replace(
        b'"execution_count": null,\n   "id": "code2"', b'"execution_count": 1,\n   "id": "code2"'
    )


def test_issue9_item4_cell_view_diff_is_still_matched_on_the_cell_view(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), path)
    workspace = nbedit.Workspace(tmp_path, history=False)
    diff = (
        "--- a/nb.ipynb\n+++ b/nb.ipynb\n@@ -6,3 +6,3 @@\n"
        " print(os.getcwd())\n # %% nbedit cell 2 [code] id=code2\n-a = 1\n+a = 10\n"
    )
    plan = workspace.plan_patch(diff)
    assert RAW_NOTE not in plan.files[0].notes
    assert [hunk.cell for hunk in plan.files[0].hunks] == ["cell 2 (id code2, code)"]
    workspace.apply(plan)
    assert nbformat.read(path, as_version=4).cells[2].source == "a = 10\nb = 2"


def test_issue9_item4_cell_view_diff_whose_lines_are_also_json_lines(tmp_path: Path) -> None:
    """'}' is the JSON's last line and a code line: the raw reading breaks the JSON, so the view is meant."""
    built = notebook()
    built.cells[2].source = "config = {\n    'a': 1,\n}"
    path = tmp_path / "nb.ipynb"
    nbformat.write(built, path)
    workspace = nbedit.Workspace(tmp_path, history=False)
    view = workspace.view("nb.ipynb")
    line = view[: view.index("}\n# %% nbedit cell 3")].count("\n") + 1
    plan = workspace.plan_patch(f"--- a/nb.ipynb\n+++ b/nb.ipynb\n@@ -{line} +{line} @@\n-}}\n+}}  # done\n")
    assert RAW_NOTE not in plan.files[0].notes
    workspace.apply(plan)
    assert nbformat.read(path, as_version=4).cells[2].source == "config = {\n    'a': 1,\n}  # done"


def test_issue9_item4_raw_plan_is_reviewed_as_one_file_toggle(tmp_path: Path) -> None:
    path, diff, before, wanted = repository(tmp_path, notebook(), change(notebook()))
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert plan.without_hunks({(0, 0)}).files[0].after_bytes == wanted  # no located hunk to leave out
    from nbedit.jupyter.review import ReviewWidget

    widget = ReviewWidget(workspace, plan)
    assert list(widget.toggles) == [(0, None)]
    widget.toggles[(0, None)].value = False
    assert widget.selected_plan().files == ()
    widget.toggles[(0, None)].value = True
    widget.apply(raise_errors=True)
    assert path.read_bytes() == wanted


def test_issue9_item4_raw_diff_applied_twice_is_already_applied(tmp_path: Path) -> None:
    after = notebook()
    after.cells[1].source = "%pip install y\nimport os\nprint(os.getcwd())"
    path, diff, _, wanted = repository(tmp_path, notebook(), after)
    workspace = nbedit.Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_patch(diff))
    again = workspace.plan_patch(diff)
    assert again.already_applied
    assert not workspace.apply(again).changed
    assert path.read_bytes() == wanted


def test_issue9_item4_already_applied_needs_every_removed_line_gone(tmp_path: Path) -> None:
    """Deleting a cell leaves generic new text ('"cells": [', '  {') that is always there: only the
    absence of the removed lines proves the diff is applied, and they are still there elsewhere."""
    path, diff, _, wanted = repository(tmp_path, notebook(), change(notebook()))
    workspace = nbedit.Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_patch(diff))
    with pytest.raises(NoMatch, match="does not match the notebook's JSON"):
        workspace.plan_patch(diff)  # '"execution_count": null,' is removed here and still in other cells
    assert path.read_bytes() == wanted


def test_issue9_item4_same_result_from_api_cli_and_magic(tmp_path: Path, shell: Any) -> None:
    path, diff, before, wanted = repository(tmp_path, notebook(), change(notebook()))
    (tmp_path / "d.diff").write_text(diff, encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit.cli", "apply", "d.diff", "--yes", "--no-history"],
        cwd=tmp_path,
        capture_output=True,
        env={"PYTHONPATH": str(REPO), "NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert path.read_bytes() == wanted
    path.write_bytes(before)
    widget = run(shell, f"%%patch --yes\n{diff}")
    assert widget.status == "applied", widget.plain_text()
    assert path.read_bytes() == wanted


def test_looks_like_notebook_json() -> None:
    assert looks_like_notebook_json(Hunk('   "cell_type": "code",\n', '   "cell_type": "markdown",\n'))
    assert looks_like_notebook_json(Hunk('    "%pip install x\\n",\n', '    "%pip install y\\n",\n'))
    assert not looks_like_notebook_json(Hunk("x = {\n", "x = {\n    'a': 1,\n"))
    assert looks_like_notebook_json(Hunk('    "print(x)"\n', '    "print(y)"\n'))  # a source's last line
    assert not looks_like_notebook_json(Hunk('x = [\n  "hello",\n', 'x = [\n  "world",\n'))


# -- issue 9 item 9: the cell view is a faithful text ----------------------------------------------


def _small(tmp_path: Path, source: str = "a = 1\nb = 2") -> tuple[nbedit.Workspace, Path, bytes]:
    built = nbformat.v4.new_notebook()
    built.cells = [nbformat.v4.new_code_cell(source, id="one"), nbformat.v4.new_code_cell("c = 3", id="two")]
    built.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="kept\n")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(built, path)
    return nbedit.Workspace(tmp_path, history=False), path, path.read_bytes()


@pytest.mark.parametrize("dialect", ["edit", "search_replace"])
def test_issue9_item9_marker_line_in_new_text_is_refused_not_split(tmp_path: Path, dialect: str) -> None:
    workspace, path, data = _small(tmp_path)
    new = "a = 1\n# %% nbedit cell new [code]\nsplit = True\n"
    with pytest.raises(MatchError, match="is a cell marker of the cell view; it would split the cell"):
        if dialect == "edit":
            workspace.plan_edit("nb.ipynb", "a = 1\n", new)
        else:
            workspace.plan_patch(f"nb.ipynb\n<<<<<<< SEARCH\na = 1\n=======\n{new}>>>>>>> REPLACE\n")
    assert path.read_bytes() == data


def test_issue9_item9_escaped_marker_line_in_new_text_is_refused(tmp_path: Path) -> None:
    workspace, path, data = _small(tmp_path)
    with pytest.raises(MatchError, match="one\\s+backslash less"):
        workspace.plan_edit("nb.ipynb", "a = 1\n", "a = 1\n\\# %% nbedit cell 5\n")
    assert path.read_bytes() == data


def test_issue9_item9_escaped_line_copied_from_the_view_stays_as_it_was(tmp_path: Path) -> None:
    workspace, path, _ = _small(tmp_path, "# %% nbedit looks like a marker\nx = 1")
    view = workspace.view("nb.ipynb")
    assert "\\# %% nbedit looks like a marker\nx = 1\n" in view
    plan = workspace.plan_edit(
        "nb.ipynb", "\\# %% nbedit looks like a marker\nx = 1", "\\# %% nbedit looks like a marker\nx = 2"
    )
    assert "-x = 1\n+x = 2\n" in plan.diff
    workspace.apply(plan)
    assert nbformat.read(path, as_version=4).cells[0].source == "# %% nbedit looks like a marker\nx = 2"


# -- issue 11 item 2: cell edits never cross a cell marker ------------------------------------------


@pytest.mark.parametrize("dialect", ["edit", "search_replace"])
def test_issue11_item2_edit_spanning_a_cell_marker_is_refused(tmp_path: Path, dialect: str) -> None:
    workspace, path, data = _small(tmp_path)
    old = "b = 2\n# %% nbedit cell 1 [code] id=two\nc = 3"
    with pytest.raises(MatchError, match="runs across a cell marker .*a match must lie in one cell"):
        if dialect == "edit":
            workspace.plan_edit("nb.ipynb", old, "b = c = 3")
        else:
            workspace.plan_patch(f"nb.ipynb\n<<<<<<< SEARCH\n{old}\n=======\nb = c = 3\n>>>>>>> REPLACE\n")
    assert path.read_bytes() == data


def test_issue11_item2_merge_through_a_view_diff_is_previewed_as_a_merge(tmp_path: Path) -> None:
    workspace, path, _ = _small(tmp_path)
    diff = (
        "--- a/nb.ipynb\n+++ b/nb.ipynb\n@@ -1,5 +1,4 @@\n"
        " # %% nbedit cell 0 [code] id=one\n a = 1\n b = 2\n-# %% nbedit cell 1 [code] id=two\n c = 3\n"
    )
    plan = workspace.plan_patch(diff)
    assert "changes the cell structure: merges cell 1 into cell 0" in plan.files[0].notes
    workspace.apply(plan)
    cells = nbformat.read(path, as_version=4).cells
    assert [cell.source for cell in cells] == ["a = 1\nb = 2\nc = 3"]
    assert cells[0].outputs[0].text == "kept\n"


# -- issue 11 item 7: ambiguity in a notebook names the cells ----------------------------------------


def test_issue11_item7_ambiguity_names_cells_and_suggests_cell(tmp_path: Path) -> None:
    workspace, path, data = _small(tmp_path, "c = 3\nd = 4")
    with pytest.raises(AmbiguousMatch) as caught:
        workspace.plan_edit("nb.ipynb", "c = 3", "c = 30")
    message = caught.value.message
    assert "matches in cell 0 (id one, code) line 1; cell 1 (id two, code) line 1" in message
    assert "cell=ID_OR_INDEX (here, for example, one)" in message  # spelled for Python
    assert caught.value.locations == ((2, 1), (5, 1))  # still the cell view's lines
    assert caught.value.cells == ("cell 0 (id one, code)", "cell 1 (id two, code)")
    assert path.read_bytes() == data
    workspace.apply(workspace.plan_edit("nb.ipynb", "c = 3", "c = 30", cell="two"))
    assert [cell.source for cell in nbformat.read(path, as_version=4).cells] == ["c = 3\nd = 4", "c = 30"]


# -- issue 10 item 9 and 17: notebook detection and messages ------------------------------------------


def test_issue10_item9_upper_case_ipynb_is_a_notebook(tmp_path: Path) -> None:
    workspace, path, _ = _small(tmp_path)
    upper = tmp_path / "Report.IPYNB"
    path.rename(upper)
    assert workspace.view("Report.IPYNB").startswith("# %% nbedit cell 0 [code] id=one\n")
    workspace.apply(workspace.plan_edit("Report.IPYNB", "a = 1", 'a = "quoted"\nnew = 2'))
    cells = nbformat.read(upper, as_version=4).cells
    assert cells[0].source == 'a = "quoted"\nnew = 2\nb = 2'
    assert cells[0].outputs[0].text == "kept\n"


def test_issue10_item9_cell_on_a_plain_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_bytes(b"x = 1\n")
    workspace = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(NotebookError, match="applies only to notebooks"):
        workspace.plan_edit("app.py", "x = 1", "x = 2", cell=0)
    with pytest.raises(NotebookError, match="applies only to notebooks"):
        workspace.plan_patch("app.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", cell="0")
    assert (tmp_path / "app.py").read_bytes() == b"x = 1\n"


@pytest.mark.parametrize("version", [b"4.0", b"4.4", b'"4"'])
def test_issue10_item17_nbformat_written_as_a_decimal_is_named(tmp_path: Path, version: bytes) -> None:
    data = b'{"cells": [], "metadata": {}, "nbformat": ' + version + b', "nbformat_minor": 0}\n'
    (tmp_path / "nb.ipynb").write_bytes(data)
    workspace = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(NotebookError) as caught:
        workspace.plan_edit("nb.ipynb", "a", "b")
    assert "no top-level 'nbformat'" not in caught.value.message
    assert f'"nbformat": {version.decode()}, but' in caught.value.message
    assert '"nbformat": 4, "nbformat_minor"' in caught.value.message
    assert (tmp_path / "nb.ipynb").read_bytes() == data


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4])
def test_issue10_item17_nbformat_40_to_44_notebooks_are_edited(tmp_path: Path, minor: int) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(minor), path)
    workspace = nbedit.Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_edit("nb.ipynb", "a = 1", "a = 100"))
    written = json.loads(path.read_bytes())
    assert (written["nbformat"], written["nbformat_minor"]) == (4, minor)
    assert "id" not in written["cells"][2]
    nbformat.validate(nbformat.reads(path.read_text(), as_version=nbformat.NO_CONVERT))


# -- issue 12: cell types nbedit does not know are read-only -----------------------------------------


def _cell_bytes(data: bytes, index: int) -> bytes:
    document = NotebookDocument.parse(data, "nb.ipynb")
    cell = document.layout.cells[index]
    return data[cell.start : cell.end]


def test_issue12_unknown_cell_type_is_shown_read_only_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    data = FUTURE.read_bytes()
    path.write_bytes(data)
    workspace = nbedit.Workspace(tmp_path, history=False)
    view = workspace.view("nb.ipynb")
    assert "# %% nbedit cell 9 [future cell] id=future-10 read-only\n" in view
    future = _cell_bytes(data, 9)
    workspace.apply(workspace.plan_edit("nb.ipynb", 'print("hello")', 'print("hello, world")'))
    after = path.read_bytes()
    assert _cell_bytes(after, 9) == future
    assert after == data.replace(b'print(\\"hello\\")"', b'print(\\"hello, world\\")"')


def test_issue12_unknown_cell_type_cannot_be_edited_or_deleted(tmp_path: Path) -> None:
    built = {
        "cells": [
            {"cell_type": "heading", "level": 1, "metadata": {}, "source": "Old title"},
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "x = 1"},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 0,
    }
    path = tmp_path / "nb.ipynb"
    data = (json.dumps(built, indent=1) + "\n").encode()
    path.write_bytes(data)
    workspace = nbedit.Workspace(tmp_path, history=False)
    view = workspace.view("nb.ipynb")
    assert view.startswith("# %% nbedit cell 0 [heading] read-only\nOld title\n")
    with pytest.raises(NotebookError, match="cell 0 \\(heading\\) is a cell type nbedit does not know"):
        workspace.plan_edit("nb.ipynb", "Old title", "New title")
    deleted = view.replace("# %% nbedit cell 0 [heading] read-only\nOld title\n", "")
    with pytest.raises(NotebookError, match="deletes cell 0 \\(heading\\)"):
        workspace.plan_patch(view_diff(view, deleted))
    with pytest.raises(NotebookError, match="unknown cell type \\[heading\\]"):
        workspace.plan_patch(view_diff(view, view + "# %% nbedit cell new [heading]\nmore\n"))
    assert path.read_bytes() == data
    workspace.apply(workspace.plan_edit("nb.ipynb", "x = 1", "x = 2"))
    assert path.read_bytes() == data.replace(b'"source": "x = 1"', b'"source": "x = 2"')


def cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nbedit.cli", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "NO_COLOR": "1", "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
        timeout=120,
    )


def test_issue10_item9_and_issue11_item7_on_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_bytes(b"x = 1\n")
    refused = cli("edit", "app.py", "--old", "x = 1", "--new", "x = 2", "--cell", "0", "--yes", cwd=tmp_path)
    assert refused.returncode == 1 and "applies only to notebooks" in refused.stdout + refused.stderr
    assert (tmp_path / "app.py").read_bytes() == b"x = 1\n"
    _, path, data = _small(tmp_path, "c = 3\nd = 4")
    path.rename(tmp_path / "Report.IPYNB")
    ambiguous = cli(
        "edit", "Report.IPYNB", "--old", "c = 3", "--new", "c = 30", "--yes", "--no-history", cwd=tmp_path
    )
    output = ambiguous.stdout + ambiguous.stderr
    assert ambiguous.returncode == 1
    assert "cell 1 (id two, code) line 1" in output and "--cell ID|INDEX (here, for example, one)" in output
    assert "line 5, column 1" not in output  # no cell-view line numbers
    assert (tmp_path / "Report.IPYNB").read_bytes() == data
    edited = cli(
        "edit",
        "Report.IPYNB",
        "--old",
        "c = 3",
        "--new",
        "c = 30",
        "--cell",
        "two",
        "--yes",
        "--no-history",
        cwd=tmp_path,
    )
    assert edited.returncode == 0, edited.stdout + edited.stderr
    assert [cell.source for cell in nbformat.read(tmp_path / "Report.IPYNB", as_version=4).cells] == [
        "c = 3\nd = 4",
        "c = 30",
    ]
