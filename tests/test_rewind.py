"""Rewind and "changes since" on real files: checkpoints, three-way rewinds, conflicts, redo.

A person's edit is made by another process (a separate Python writing the file the way
an editor does), never by the test's own workspace, so nbedit sees it only on disk.
Expected files are built from the known edits directly, never by the merge under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nbedit.agents.functions import FunctionTools
from nbedit.errors import HistoryError, NothingToUndo, OptionError, RewindConflict, StaleFile
from nbedit.workspace import Workspace

LINES = [f"line {number}\r\n" for number in range(30)]


def _person_edits(path: Path, old: str, new: str) -> None:
    """Another process replaces ``old`` with ``new`` in ``path`` (an editor's save, in place)."""
    code = (
        "import sys, pathlib\n"
        "path = pathlib.Path(sys.argv[1])\n"
        "data = path.read_bytes()\n"
        "old, new = sys.argv[2].encode(), sys.argv[3].encode()\n"
        "assert data.count(old) == 1, data\n"
        "path.write_bytes(data.replace(old, new))\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path), old, new], check=True)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


def _cell(workspace: Workspace, count: int, path: str, old: str, new: str) -> str:
    result = workspace.apply(workspace.plan_edit(path, old, new), execution_count=count)
    assert result.entry_id is not None
    return result.entry_id


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Workspace]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "lines.txt").write_bytes("".join(LINES).encode())
    (root / "tail.py").write_bytes(b"x = 1\ny = 2\nz = 3")  # no final newline
    return root, Workspace(root, session="kernel-a", origin="magic")


def test_checkpoints_group_cell_runs_and_agent_turns(project: tuple[Path, Workspace]) -> None:
    root, workspace = project
    _cell(workspace, 1, "lines.txt", "line 1\r\n", "cell one\r\n")
    _cell(workspace, 1, "tail.py", "x = 1", "x = 10")  # the same cell run edits a second file
    tools = FunctionTools(workspace)
    with tools.session.turn("t-1"):
        assert "Edited" in tools.run(
            "edit", {"path": "lines.txt", "old": "line 5\r\n", "new": "agent\r\n"}, call_id="c1"
        )
        assert "Edited" in tools.run(
            "edit", {"path": "tail.py", "old": "y = 2", "new": "y = 20"}, call_id="c2"
        )
    assert "Edited" in tools.run("edit", {"path": "tail.py", "old": "z = 3", "new": "z = 30"}, call_id="c3")
    _cell(workspace, 2, "lines.txt", "line 9\r\n", "cell two\r\n")
    checkpoints = workspace.checkpoints()
    assert [(c.kind, c.label, len(c.entries)) for c in checkpoints] == [
        ("cell", "In[1]", 2),
        ("turn", "agent turn t-1", 2),
        ("turn", "agent:edit:c3", 1),
        ("cell", "In[2]", 1),
    ]
    assert [entry.origin for entry in checkpoints[1].entries] == ["agent:edit:c1", "agent:edit:c2"]
    assert checkpoints[0].paths == ("lines.txt", "tail.py")


def test_changes_since_show_each_file_who_wrote_it_and_edits_outside_nbedit(
    project: tuple[Path, Workspace],
) -> None:
    root, workspace = project
    _cell(workspace, 1, "lines.txt", "line 1\r\n", "cell one\r\n")
    second = _cell(workspace, 2, "lines.txt", "line 3\r\n", "cell two\r\n")
    tools = FunctionTools(workspace)
    tools.run("edit", {"path": "tail.py", "old": "y = 2", "new": "y = 20"}, call_id="call-9")
    _person_edits(root / "tail.py", "z = 3", "z = 33")
    changes = workspace.changes("In[2]")
    assert [(file.path, file.authors, file.changed_outside) for file in changes.files] == [
        ("lines.txt", ("In[2]",), False),
        ("tail.py", ("agent:edit:call-9",), True),
    ]
    assert changes.files[0].entries == (second,)
    text = changes.text()
    assert "-line 3\r\n+cell two" in text.replace("\r\n", "\r\n") and "line 1" not in text.split("@@")[0]
    assert "changed outside nbedit since its last entry" in text
    assert "+cell one" not in text  # In[1] is before the checkpoint
    # by entry id, by time, and the same through the notebook's HTML
    assert [file.path for file in workspace.changes(second).files] == ["lines.txt", "tail.py"]
    assert len(workspace.changes("10min").files) == 2
    assert "tail.py" in changes._repr_html_()
    with pytest.raises(HistoryError, match="no edit was recorded by cell In\\[7\\]"):
        workspace.changes("In[7]")
    with pytest.raises(HistoryError, match="names no checkpoint"):
        workspace.changes("yesterday-ish")


def test_rewind_to_each_checkpoint_keeps_a_later_edit_by_someone_else_byte_exact(tmp_path: Path) -> None:
    edits = [(count, f"line {count * 2}\r\n", f"cell {count}\r\n") for count in range(1, 11)]
    person = ("line 27\r\n", "person's line\r\n")  # made after cell 6, touching nothing nbedit wrote
    for target in range(1, 11):
        root = tmp_path / f"case-{target}"
        root.mkdir()
        (root / "lines.txt").write_bytes("".join(LINES).encode())
        workspace = Workspace(root, session=f"kernel-{target}", origin="magic", home=tmp_path / "home")
        for count, old, new in edits:
            _cell(workspace, count, "lines.txt", old, new)
            if count == 6:
                _person_edits(root / "lines.txt", *person)
        before_rewind = (root / "lines.txt").read_bytes()
        result = workspace.rewind(f"In[{target}]")
        expected = LINES.copy()
        for count, _old, new in edits[: target - 1]:
            expected[count * 2] = new
        expected[27] = person[1]
        assert (root / "lines.txt").read_bytes() == "".join(expected).encode()
        assert workspace.history()[0].origin == "rewind" and result.entry_id == workspace.history()[0].id
        # redo: undoing the rewind brings the later state back exactly, and undoing that undo rewinds again
        undone = workspace.undo()
        assert (root / "lines.txt").read_bytes() == before_rewind
        workspace.undo(undone.entry_id)
        assert (root / "lines.txt").read_bytes() == "".join(expected).encode()


def test_an_overlapping_edit_is_refused_with_the_conflict_shown_and_nothing_written(
    project: tuple[Path, Workspace],
) -> None:
    root, workspace = project
    _cell(workspace, 1, "tail.py", "x = 1", "x = 10")
    _cell(workspace, 2, "lines.txt", "line 4\r\n", "cell two\r\n")
    _person_edits(root / "lines.txt", "cell two\r\n", "person rewrote cell two's line\r\n")
    before = _snapshot(root)
    planned = workspace.plan_rewind("In[1]")
    assert [conflict.path for conflict in planned.conflicts] == ["lines.txt"]
    shown = planned.conflicts[0].text()
    assert (
        "<<<<<<< rewind" in shown
        and "line 4" in shown
        and "person rewrote" in shown
        and ">>>>>>> on disk now" in shown
    )
    with pytest.raises(RewindConflict) as raised:
        workspace.rewind("In[1]")
    assert raised.value.conflicts[0].path == "lines.txt" and "person rewrote" in str(raised.value)
    assert _snapshot(root) == before  # not even the file without a conflict was written

    # the person chooses: keep leaves the conflicted file exactly as it is, the rest is rewound
    workspace.rewind("In[1]", resolve="keep")
    assert (root / "lines.txt").read_bytes() == before["lines.txt"]
    assert (root / "tail.py").read_bytes() == b"x = 1\ny = 2\nz = 3"
    workspace.undo()
    assert _snapshot(root) == before
    # or takes the rewind's side in the overlapping lines
    workspace.rewind("In[1]", resolve={"lines.txt": "rewind", "tail.py": "keep"})
    assert (root / "lines.txt").read_bytes() == "".join(LINES).encode()


def test_a_file_changed_between_plan_and_apply_is_refused_and_left_byte_identical(
    project: tuple[Path, Workspace],
) -> None:
    root, workspace = project
    _cell(workspace, 1, "lines.txt", "line 2\r\n", "cell one\r\n")
    planned = workspace.plan_rewind("In[1]")
    _person_edits(root / "lines.txt", "line 20\r\n", "typed meanwhile\r\n")
    before = _snapshot(root)
    with pytest.raises(StaleFile):
        planned.apply(workspace)
    assert _snapshot(root) == before
    # planned again, the typing is kept
    workspace.rewind("In[1]")
    assert (root / "lines.txt").read_bytes() == "".join(LINES).encode().replace(
        b"line 20\r\n", b"typed meanwhile\r\n"
    )


def test_files_nbedit_created_or_deleted_since_are_deleted_or_brought_back(
    project: tuple[Path, Workspace],
) -> None:
    root, workspace = project
    workspace.apply(
        workspace.plan_patch("*** Begin Patch\n*** Add File: new.md\n+fresh\n*** End Patch\n"),
        execution_count=1,
    )
    workspace.apply(
        workspace.plan_patch("*** Begin Patch\n*** Delete File: tail.py\n*** End Patch\n"), execution_count=2
    )
    workspace.rewind("In[1]")
    assert not (root / "new.md").exists()
    assert (root / "tail.py").read_bytes() == b"x = 1\ny = 2\nz = 3"
    # a created file someone edited since is a conflict: deleting it would lose their edit
    workspace.apply(
        workspace.plan_patch("*** Begin Patch\n*** Add File: new.md\n+fresh\n*** End Patch\n"),
        execution_count=3,
    )
    _person_edits(root / "new.md", "fresh", "fresh, and mine")
    with pytest.raises(RewindConflict, match="nbedit created this file"):
        workspace.rewind("In[3]")
    assert (root / "new.md").read_bytes() == b"fresh, and mine\n"


def test_edits_of_another_session_are_kept_unless_all_sessions(
    project: tuple[Path, Workspace], tmp_path: Path
) -> None:
    root, workspace = project
    other = Workspace(root, session="kernel-b", origin="magic")
    _cell(workspace, 1, "lines.txt", "line 2\r\n", "mine\r\n")
    _cell(other, 1, "lines.txt", "line 12\r\n", "theirs\r\n")
    _cell(workspace, 2, "lines.txt", "line 22\r\n", "mine again\r\n")
    workspace.rewind("In[1]")
    assert (root / "lines.txt").read_bytes() == "".join(LINES).encode().replace(b"line 12\r\n", b"theirs\r\n")
    with pytest.raises(HistoryError, match="several kernel sessions"):
        Workspace(root, session="cli").plan_rewind("In[1]")
    workspace.undo()
    workspace.rewind("In[1]@kernel-a", all_sessions=True)
    assert (root / "lines.txt").read_bytes() == "".join(LINES).encode()
    with pytest.raises(NothingToUndo):
        Workspace(root, session="kernel-c").rewind("10min")


def test_a_notebook_rewind_keeps_a_tab_save_in_another_cell(project: tuple[Path, Workspace]) -> None:
    import nbformat

    root, workspace = project
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"value_{index} = {index}") for index in range(6)]
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
    (root / "analysis.ipynb").write_text(nbformat.writes(notebook) + "\n")
    workspace.apply(workspace.plan_edit("analysis.ipynb", "value_1 = 1", "value_1 = 100"), execution_count=1)
    # a JupyterLab tab saves the notebook with an edit in another cell (a whole-file save)
    saved = json.loads((root / "analysis.ipynb").read_text())
    saved["cells"][4]["source"] = "value_4 = 'typed in the tab'"
    (root / "analysis.ipynb").write_text(json.dumps(saved, indent=1, ensure_ascii=False) + "\n")
    workspace.rewind("In[1]")
    cells = json.loads((root / "analysis.ipynb").read_text())["cells"]
    sources = ["".join(cell["source"]) for cell in cells]
    assert sources[1] == "value_1 = 1" and sources[4] == "value_4 = 'typed in the tab'"


def test_an_agent_rewinds_its_own_turn_and_keeps_the_person_s_cells(project: tuple[Path, Workspace]) -> None:
    root, workspace = project
    tools = FunctionTools(workspace)
    with tools.session.turn():
        tools.run("edit", {"path": "lines.txt", "old": "line 3\r\n", "new": "agent 3\r\n"}, call_id="a")
        tools.run("edit", {"path": "tail.py", "old": "x = 1", "new": "x = 'agent'"}, call_id="b")
    _cell(workspace, 5, "lines.txt", "line 8\r\n", "cell five\r\n")  # same kernel, after the turn
    decision = tools.session.rewind()
    assert decision.outcome == "applied" and decision.result.entry_id
    assert (root / "lines.txt").read_bytes() == "".join(LINES).encode().replace(
        b"line 8\r\n", b"cell five\r\n"
    )
    assert (root / "tail.py").read_bytes() == b"x = 1\ny = 2\nz = 3"
    with pytest.raises(NothingToUndo):
        FunctionTools(Workspace(root, session="elsewhere")).session.rewind()


def test_the_cli_shows_changes_and_rewinds_and_refuses_a_conflict(project: tuple[Path, Workspace]) -> None:
    root, workspace = project
    _cell(workspace, 1, "lines.txt", "line 2\r\n", "cell one\r\n")
    _cell(workspace, 2, "tail.py", "y = 2", "y = 22")
    environment = {**os.environ, "NBEDIT_SESSION": "cli-test"}

    def nbedit(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "nbedit", *arguments, "--root", str(root)],
            capture_output=True, text=True, env=environment, check=False,
        )  # fmt: skip

    shown = nbedit("changes", "--since", "In[1]")
    assert shown.returncode == 0, shown.stderr
    assert (
        "lines.txt: written by In[1]" in shown.stdout
        and "+cell one" in shown.stdout
        and "tail.py" in shown.stdout
    )
    _person_edits(root / "tail.py", "y = 22", "y = 'person'")
    before = _snapshot(root)
    refused = nbedit("rewind", "In[2]", "--yes")
    assert (
        refused.returncode == 1 and "RewindConflict" in refused.stderr and "<<<<<<< rewind" in refused.stderr
    )
    assert _snapshot(root) == before
    done = nbedit("rewind", "In[1]", "--yes", "--resolve", "keep")
    assert done.returncode == 0, done.stderr
    assert (root / "lines.txt").read_bytes() == "".join(LINES).encode()
    assert (root / "tail.py").read_bytes() == before["tail.py"]


def test_a_move_is_taken_back_to_the_old_name(project: tuple[Path, Workspace]) -> None:
    root, workspace = project
    move = "*** Begin Patch\n*** Update File: tail.py\n*** Move to: moved/tail.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    workspace.apply(workspace.plan_patch(move), execution_count=1)
    assert not (root / "tail.py").exists() and (root / "moved" / "tail.py").exists()
    changes = workspace.changes("In[1]")
    assert sorted(file.path for file in changes.files) == ["moved/tail.py", "tail.py"]
    workspace.rewind("In[1]")
    assert (root / "tail.py").read_bytes() == b"x = 1\ny = 2\nz = 3"
    assert not (root / "moved" / "tail.py").exists()


def test_changes_name_the_session_of_another_kernel(project: tuple[Path, Workspace]) -> None:
    root, workspace = project
    other = Workspace(root, session="kernel-b", origin="magic")
    _cell(workspace, 1, "lines.txt", "line 2\r\n", "mine\r\n")
    _cell(other, 4, "lines.txt", "line 12\r\n", "theirs\r\n")
    (changed,) = workspace.changes("In[1]").files
    assert changed.authors == ("In[1]", "In[4] [kernel-b]")
    assert not changed.changed_outside and not changed.gaps


def test_without_a_history_there_is_nothing_to_rewind_and_nothing_is_written(
    project: tuple[Path, Workspace],
) -> None:
    root, workspace = project
    _cell(workspace, 1, "lines.txt", "line 2\r\n", "mine\r\n")
    before = _snapshot(root)
    off = Workspace(root, history=False, session="kernel-a")
    with pytest.raises(HistoryError, match="history is turned off"):
        off.rewind("In[1]")
    with pytest.raises(HistoryError, match="history is turned off"):
        off.changes("In[1]")
    with pytest.raises(OptionError, match="resolve must be"):
        workspace.rewind("In[1]", resolve="maybe")
    assert _snapshot(root) == before


def test_a_rewind_hunk_left_out_stays_byte_exact_in_a_cp1252_crlf_file(tmp_path: Path) -> None:
    root = tmp_path / "latin"
    root.mkdir()
    base = "".join(f"línea {number}\r\n" for number in range(20)).encode("cp1252")
    (root / "a.txt").write_bytes(base)
    workspace = Workspace(root, session="kernel-latin", origin="magic")
    for count in (2, 8, 14):
        workspace.apply(
            workspace.plan_edit("a.txt", f"línea {count}\r\n", f"cambio {count}\r\n"), execution_count=count
        )
    planned = workspace.plan_rewind("In[2]")
    (file_plan,) = planned.plan.files
    assert len(file_plan.hunks) == 3  # one toggle per cell run taken back
    workspace.apply(planned.plan.without_hunks({(0, 1)}), origin="rewind")  # keep In[8]'s change
    expected = base.replace("línea 8\r\n".encode("cp1252"), "cambio 8\r\n".encode("cp1252"))
    assert (root / "a.txt").read_bytes() == expected


def test_a_notebook_rewind_has_a_toggle_per_cell_change(project: tuple[Path, Workspace]) -> None:
    import nbformat

    root, workspace = project
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"value_{index} = {index}") for index in range(6)]
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
    (root / "toggles.ipynb").write_text(nbformat.writes(notebook) + "\n")
    original = (root / "toggles.ipynb").read_bytes()
    workspace.apply(workspace.plan_edit("toggles.ipynb", "value_1 = 1", "value_1 = 100"), execution_count=1)
    middle = (root / "toggles.ipynb").read_bytes()
    workspace.apply(workspace.plan_edit("toggles.ipynb", "value_4 = 4", "value_4 = 400"), execution_count=2)
    planned = workspace.plan_rewind("In[1]")
    (file_plan,) = planned.plan.files
    assert file_plan.notebook and len(file_plan.hunks) == 2
    workspace.apply(planned.plan, origin="rewind")
    assert (root / "toggles.ipynb").read_bytes() == original
    workspace.undo()
    # leave In[1]'s hunk out: only In[2]'s change is taken back, byte-exact as In[1] left the notebook
    planned = workspace.plan_rewind("In[1]")
    workspace.apply(planned.plan.without_hunks({(0, 0)}), origin="rewind")
    cells = json.loads((root / "toggles.ipynb").read_text())["cells"]
    assert ["".join(cell["source"]) for cell in cells][1:5:3] == ["value_1 = 100", "value_4 = 4"]
    assert (root / "toggles.ipynb").read_bytes() == middle
