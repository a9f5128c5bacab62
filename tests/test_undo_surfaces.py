"""Undo of an older entry is the same on every surface: ``Workspace.undo(id)``/``plan_undo(id)``,
``%nbedit undo ID`` (a real IPython shell), ``nbedit undo ENTRY`` (the CLI as a process) and the
agents' undo tool all take the entry's change out of the files as they are now (later edits stay),
refuse with nothing written when a later change is in the way, and record the undo as an entry
that can itself be undone. The newest entry keeps its exact undo.

Each case: a 20-line file, an older entry (line 2), a later one (line 15 or line 2 again).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import test_jupyter_support
from test_jupyter_support import run

from nbedit.agents import FunctionTools
from nbedit.errors import NothingToUndo, StaleFile
from nbedit.jupyter.review import ErrorView, ReviewWidget
from nbedit.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
BODY = "".join(f"line_{number} = {number}\n" for number in range(1, 21))
TWO_EDITS = BODY.replace("line_2 = 2\n", "line_2 = 200\n").replace("line_15 = 15", "line_15 = 1500")
AFTER_UNDO = BODY.replace("line_15 = 15", "line_15 = 1500")  # the older edit (line 2) taken out
ipython = test_jupyter_support.ipython  # the shared fixtures
shell = test_jupyter_support.shell


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mode, the history store included (a refusal records nothing)."""
    return {
        str(path.relative_to(root)): (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.name.endswith(("-wal", "-shm"))
    }


def two_entries(work: Workspace, target: Path, *, later_line: int) -> tuple[str, str]:
    """An older entry changing line 2, then a later one changing ``later_line`` (2: over it)."""
    target.write_text(BODY)
    older = work.apply(work.plan_edit(target.name, "line_2 = 2\n", "line_2 = 200\n")).entry_id
    old_text = "line_2 = 200\n" if later_line == 2 else f"line_{later_line} = {later_line}\n"
    new_text = "line_2 = 300\n" if later_line == 2 else f"line_{later_line} = {later_line}00\n"
    later = work.apply(work.plan_edit(target.name, old_text, new_text)).entry_id
    assert older and later
    return older, later


# -- Workspace ------------------------------------------------------------------------------------


def test_workspace_undo_of_an_older_entry_keeps_the_later_edit_and_can_be_undone(tmp_path: Path) -> None:
    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    target = tmp_path / "t.py"
    older, later = two_entries(work, target, later_line=15)
    plan = work.plan_undo(older)  # for review: nothing written yet
    assert any(f"undoes older history entry {older}" in note for note in plan.files[0].notes)
    assert later in plan.files[0].notes[-1]
    assert target.read_text() == TWO_EDITS
    undone = work.undo(older)
    assert target.read_text() == AFTER_UNDO
    newest = work.history()[0]
    assert (newest.id, newest.origin, newest.undoes) == (undone.entry_id, "undo", older)
    work.undo(undone.entry_id)  # the undo is an entry like any other: undoing it brings line 2 back
    assert target.read_text() == TWO_EDITS


def test_the_newest_entry_keeps_its_exact_undo(tmp_path: Path) -> None:
    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    target = tmp_path / "t.py"
    target.write_bytes(b"a = 1\r\nb = 1\r\n")  # CRLF: the exact undo writes back the recorded bytes
    entry = work.apply(work.plan_edit("t.py", "a = 1", "a = 2")).entry_id
    plan = work.plan_undo(entry)
    assert not any("undoes older" in note for file_plan in plan.files for note in file_plan.notes)
    work.undo(entry)
    assert target.read_bytes() == b"a = 1\r\nb = 1\r\n"


def test_workspace_undo_refused_when_a_later_entry_rewrote_the_lines(tmp_path: Path) -> None:
    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    target = tmp_path / "t.py"
    older, later = two_entries(work, target, later_line=2)
    before = snapshot(tmp_path)
    for attempt in (lambda: work.plan_undo(older), lambda: work.undo(older)):
        with pytest.raises(StaleFile) as refused:
            attempt()
        message = str(refused.value)
        assert f"cannot undo history entry {older}: t.py: it wrote line 2: 'line_2 = 200'" in message
        assert "reads differently there now" in message and later in message
        assert "nothing was written" in message and "Workspace.undo(ID)" in message
        assert snapshot(tmp_path) == before
    assert [entry.id for entry in work.history()] == [later, older]


def test_undoing_an_older_entry_twice_says_it_is_undone_already(tmp_path: Path) -> None:
    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    target = tmp_path / "t.py"
    older, _ = two_entries(work, target, later_line=15)
    undo = work.undo(older).entry_id
    before = snapshot(tmp_path)
    with pytest.raises(NothingToUndo) as refused:
        work.undo(older)
    message = str(refused.value)
    assert f"undone by history entry {undo}" in message and "Nothing was written" in message
    assert snapshot(tmp_path) == before


def test_an_older_notebook_cell_edit_is_undone_and_a_later_cell_edit_stays(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"value_{n} = {n}\nprint(value_{n})") for n in range(6)]
    target = tmp_path / "analysis.ipynb"
    nbformat.write(notebook, target)
    original = target.read_bytes()
    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    older = work.apply(work.plan_edit("analysis.ipynb", "value_1 = 1", "value_1 = 10")).entry_id
    work.apply(work.plan_edit("analysis.ipynb", "value_5 = 5", "value_5 = 50"))
    work.undo(older)
    assert target.read_bytes() == original.replace(b"value_5 = 5\\n", b"value_5 = 50\\n")


# -- the CLI, as a process ------------------------------------------------------------------------


def cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    home = str(cwd / ".home")
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "NBEDIT_HOME": home}
    return subprocess.run(
        [sys.executable, "-m", "nbedit.cli", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def cli_entries(tmp_path: Path, *, later_line: int) -> tuple[Path, str, str]:
    target = tmp_path / "t.py"
    target.write_text(BODY)
    first = cli("edit", "t.py", "--old", "line_2 = 2\n", "--new", "line_2 = 200\n", "--yes", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    old = "line_2 = 200\n" if later_line == 2 else f"line_{later_line} = {later_line}\n"
    new = "line_2 = 300\n" if later_line == 2 else f"line_{later_line} = {later_line}00\n"
    assert cli("edit", "t.py", "--old", old, "--new", new, "--yes", cwd=tmp_path).returncode == 0
    later, older = re.findall(r"\be\d{8}\b", cli("history", cwd=tmp_path).stdout)
    return target, older, later


def test_cli_undo_entry_previews_then_takes_the_older_change_out(tmp_path: Path) -> None:
    target, older, later = cli_entries(tmp_path, later_line=15)
    before = snapshot(tmp_path)
    preview = cli("undo", older, cwd=tmp_path)  # no terminal to ask, no --yes: preview only
    assert preview.returncode == 1 and "re-run with --yes" in preview.stderr
    assert "-line_2 = 200" in preview.stdout and "+line_2 = 2" in preview.stdout
    assert f"undoes older history entry {older}" in preview.stdout and later in preview.stdout
    dry = cli("undo", older, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "dry run: nothing written" in dry.stdout
    assert snapshot(tmp_path) == before
    done = cli("undo", older, "--yes", cwd=tmp_path)
    assert done.returncode == 0 and "undone: wrote t.py" in done.stdout, done.stderr
    assert target.read_text() == AFTER_UNDO
    history = cli("history", cwd=tmp_path).stdout
    undo_id = history.splitlines()[1].split("\t")[0]
    assert f"undoes {older}" in history.splitlines()[1]
    assert f"undo with: nbedit undo {undo_id})" in done.stdout  # a plain undo would walk past it
    # walking back skips undo entries: the latest edit not undone is the later one, now older than
    # the undo, so a plain `nbedit undo` takes it out in place too, back to the original bytes
    assert cli("undo", "--yes", cwd=tmp_path).returncode == 0
    assert target.read_text() == BODY


def test_cli_undo_entry_refused_when_a_later_entry_rewrote_the_lines(tmp_path: Path) -> None:
    _, older, later = cli_entries(tmp_path, later_line=2)
    before = snapshot(tmp_path)
    refused = cli("undo", older, "--yes", cwd=tmp_path)
    assert refused.returncode not in (0, None)
    # the panel's box drawn away, the words joined again
    said = " ".join((refused.stdout + refused.stderr).replace("│", " ").split())
    assert "StaleFile" in said and f"cannot undo history entry {older}" in said and later in said
    assert "nothing was written" in said and "nbedit undo ID" in said and "nbedit restore ID" in said
    assert "Traceback" not in said
    assert snapshot(tmp_path) == before


# -- the magic, in a real IPython shell -----------------------------------------------------------


def test_undo_magic_with_an_id_reviews_the_reverse_of_an_older_entry(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "t.py"
    target.write_text(BODY)
    run(shell, "%%edit t.py --yes\n<<<<<<< SEARCH\nline_2 = 2\n=======\nline_2 = 200\n>>>>>>> REPLACE\n")
    run(shell, "%%edit t.py --yes\n<<<<<<< SEARCH\nline_15 = 15\n=======\nline_15 = 1500\n>>>>>>> REPLACE\n")
    later, older = [entry.id for entry in run(shell, "%nbedit history").entries[:2]]
    written = target.read_bytes()
    review = run(shell, f"%nbedit undo {older}")
    assert isinstance(review, ReviewWidget) and review.status == "pending"
    assert target.read_bytes() == written  # a review: nothing written before Apply
    shown = review.static_html()  # what the page shows: the title, the file's note, the diff
    assert f"undo history entry {older}" in shown and f"undoes older history entry {older}" in shown
    assert later in shown
    review.apply()
    assert review.status == "applied", review.status_text
    assert target.read_text() == AFTER_UNDO
    newest = run(shell, "%nbedit history").entries[0]
    assert newest.undoes == older and newest.origin == "undo"
    assert f"undo with %nbedit undo {newest.id})" in review.status_text
    assert run(shell, f"%nbedit undo {newest.id} --yes").status == "applied"  # the undo is undone in turn
    assert target.read_text() == TWO_EDITS


def test_undo_magic_refusal_says_what_is_in_the_way_and_writes_nothing(shell: Any, tmp_path: Path) -> None:
    target = tmp_path / "t.py"
    target.write_text(BODY)
    run(shell, "%%edit t.py --yes\n<<<<<<< SEARCH\nline_2 = 2\n=======\nline_2 = 200\n>>>>>>> REPLACE\n")
    run(shell, "%%edit t.py --yes\n<<<<<<< SEARCH\nline_2 = 200\n=======\nline_2 = 300\n>>>>>>> REPLACE\n")
    later, older = [entry.id for entry in run(shell, "%nbedit history").entries[:2]]
    before = snapshot(tmp_path)
    view = run(shell, f"%nbedit undo {older}")
    assert isinstance(view, ErrorView) and isinstance(view.error, StaleFile)
    shown = repr(view)
    assert later in shown and "%nbedit undo ID" in shown and "nothing was written" in shown
    with pytest.raises(StaleFile):  # unattended (--yes): the cell fails
        run(shell, f"%nbedit undo {older} --yes")
    assert snapshot(tmp_path) == before


# -- the agents' undo -----------------------------------------------------------------------------


def test_agent_undo_reverses_its_own_older_edit_and_keeps_the_persons_later_one(tmp_path: Path) -> None:
    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    target = tmp_path / "t.py"
    target.write_text(BODY)
    tools = FunctionTools(work)
    tools.run("view", {"path": "t.py"})
    edited = tools.run("edit", {"path": "t.py", "old": "line_2 = 2", "new": "line_2 = 200"}, call_id="fc_1")
    assert edited.startswith("Edited"), edited
    person = work.apply(work.plan_edit("t.py", "line_15 = 15", "line_15 = 1500")).entry_id  # later
    text = tools.run("undo", {}, call_id="fc_2")  # the model's latest: older than the person's
    assert text.startswith("Undid"), text
    assert target.read_text() == AFTER_UNDO
    # the person's entry is not the model's to undo, older path or not
    before = snapshot(tmp_path)
    refused = tools.run("undo", {"entry_id": person}, call_id="fc_3")
    assert refused.startswith("Error:") and "a person's change" in refused
    assert "Nothing was written" in refused
    assert snapshot(tmp_path) == before


def test_agent_undo_refused_when_a_person_rewrote_its_lines(tmp_path: Path) -> None:
    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    target = tmp_path / "t.py"
    target.write_text(BODY)
    tools = FunctionTools(work)
    tools.run("view", {"path": "t.py"})
    tools.run("edit", {"path": "t.py", "old": "line_2 = 2", "new": "line_2 = 200"}, call_id="fc_1")
    person = work.apply(work.plan_edit("t.py", "line_2 = 200", "line_2 = 300")).entry_id
    before = snapshot(tmp_path)
    text = tools.run("undo", {}, call_id="fc_2")
    assert text.startswith("Error:") or "cannot undo" in text, text
    assert "cannot undo history entry" in text and person in text and "Nothing was written" in text
    assert snapshot(tmp_path) == before


def test_text_editor_undo_edit_takes_its_older_edit_out_and_keeps_a_persons_later_one(tmp_path: Path) -> None:
    from nbedit.agents import TextEditorTool

    work = Workspace(tmp_path, home=tmp_path / ".home", session="s")
    target = tmp_path / "t.py"
    target.write_text(BODY)
    tool = TextEditorTool(work, version="text_editor_20250124")

    def call(call_id: str, **arguments: str) -> dict[str, Any]:
        return tool.run({"type": "tool_use", "id": call_id, "name": "str_replace_editor", "input": arguments})

    assert not call("toolu_1", command="view", path=str(target))["is_error"]
    edited = call(
        "toolu_2", command="str_replace", path=str(target), old_str="line_2 = 2\n", new_str="line_2 = 200\n"
    )
    assert not edited["is_error"], edited["content"]
    work.apply(work.plan_edit("t.py", "line_15 = 15", "line_15 = 1500"))  # a person's edit, later
    undone = call("toolu_3", command="undo_edit", path=str(target))
    assert not undone["is_error"], undone["content"]
    assert target.read_text() == AFTER_UNDO
