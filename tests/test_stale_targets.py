"""Every target of a plan is checked again at write time, not only the file it edits.

The preview was computed from the files as they were; between it and Apply anything may
happen. The file edited was always re-checked; these cases are about the plan's other
targets: the new name of a rename (it must still hold what the preview saw there, which is
nothing unless the move may overwrite a file), a file a plan creates (still absent), a file
it deletes (unchanged) and a file whose mode it sets (still the mode it was previewed from).
Forward plans and the plans of undo (the exact one and the reverse of an older entry),
restore and rewind all come through the same write path, so each is tried here with real
files: the conflicting file is made between plan and apply, the apply is refused with a
``StaleFile`` naming the path and what to do, every file stays byte-identical (mode
included) and the history gains nothing.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_cli import _run_on_terminal
from test_history_reverse import BODY, CHMOD, RENAME, workspace  # the same files and changes

from nbedit.errors import StaleFile
from nbedit.history_reverse import plan_entry_undo
from nbedit.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
PRECIOUS = b"written by hand meanwhile\r\n"


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mode (the history store is compared by its entries)."""
    return {
        str(path.relative_to(root)): (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".home" not in path.relative_to(root).parts
    }


def entries(work: Workspace) -> list[tuple[str, str, str | None, bool]]:
    """Every entry of the history, any session, with its status (a refusal records none)."""
    return [
        (entry.id, entry.status, entry.undoes, entry.partial) for entry in work.history(all_sessions=True)
    ]


def refused(work: Workspace, root: Path, apply, path: str, says: str) -> StaleFile:  # type: ignore[no-untyped-def]
    """``apply()`` raises StaleFile about ``path``, and nothing on disk or in the history changed."""
    files, history = snapshot(root), entries(work)
    with pytest.raises(StaleFile) as raised:
        apply()
    error = raised.value
    assert error.path == path, str(error)
    assert says in str(error) and "nothing was written" in str(error), str(error)
    assert snapshot(root) == files
    assert entries(work) == history
    return error


# -- forward plans --------------------------------------------------------------------------------


def test_a_rename_never_lands_on_a_file_created_since_the_preview(tmp_path: Path) -> None:
    (tmp_path / "old_name.py").write_text(BODY)
    work = workspace(tmp_path)
    plan = work.plan_patch(RENAME)
    (tmp_path / "new_name.py").write_bytes(PRECIOUS)  # made while the preview was on screen
    error = refused(
        work, tmp_path, lambda: work.apply(plan), "new_name.py",
        "new_name.py: a file was created there since the preview; this change moves old_name.py to "
        "new_name.py and would overwrite it",
    )  # fmt: skip
    assert error.expected is None and error.actual is not None
    assert "Move new_name.py out of the way and apply again" in str(error)
    (tmp_path / "new_name.py").unlink()  # out of the way: the same reviewed plan applies
    work.apply(plan)
    assert not (tmp_path / "old_name.py").exists()
    assert (tmp_path / "new_name.py").read_text() == BODY.replace("line_1 = 1\n", "line_1 = 100\n")


@pytest.mark.parametrize("meanwhile", ["changed", "deleted"])
def test_a_move_allowed_to_overwrite_replaces_only_the_file_the_preview_showed(
    tmp_path: Path, meanwhile: str
) -> None:
    (tmp_path / "a.txt").write_text("moved\n")
    (tmp_path / "b.txt").write_text("shown as replaced\n")
    work = workspace(tmp_path)
    move = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-moved\n+moved here\n*** End Patch\n"
    plan = work.plan_patch(move, overwrite=True)
    if meanwhile == "changed":
        (tmp_path / "b.txt").write_bytes(PRECIOUS)
    else:
        (tmp_path / "b.txt").unlink()
    what = "changed on disk" if meanwhile == "changed" else "was deleted"
    refused(work, tmp_path, lambda: work.apply(plan), "b.txt", f"b.txt: {what} since the preview")
    replanned = work.plan_patch(move, overwrite=True)  # planned again against the files as they are
    work.apply(replanned)
    assert (tmp_path / "b.txt").read_text() == "moved here\n" and not (tmp_path / "a.txt").exists()


def test_an_unchanged_overwritten_target_is_replaced_as_previewed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("moved\n")
    (tmp_path / "b.txt").write_text("shown as replaced\n")
    work = workspace(tmp_path)
    move = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-moved\n+moved here\n*** End Patch\n"
    entry = work.apply(work.plan_patch(move, overwrite=True)).entry_id
    assert (tmp_path / "b.txt").read_text() == "moved here\n" and entry is not None


def test_an_added_file_made_by_hand_since_the_preview_is_never_overwritten(tmp_path: Path) -> None:
    work = workspace(tmp_path)
    plan = work.plan_patch("*** Begin Patch\n*** Add File: made.py\n+made = True\n*** End Patch\n")
    (tmp_path / "made.py").write_bytes(PRECIOUS)
    refused(work, tmp_path, lambda: work.apply(plan), "made.py", "made.py: was created since the preview")


def test_a_chmod_during_review_of_a_mode_change_is_refused(tmp_path: Path) -> None:
    tool = tmp_path / "tool.sh"
    tool.write_text(BODY)
    os.chmod(tool, 0o644)
    work = workspace(tmp_path)
    plan = work.plan_patch(CHMOD)
    os.chmod(tool, 0o600)
    refused(
        work, tmp_path, lambda: work.apply(plan), "tool.sh",
        "tool.sh: its permissions changed since the preview (from 0644 to 0600); this change sets them to 0755",
    )  # fmt: skip


def test_a_file_made_at_the_new_name_while_the_entry_is_recorded_is_refused_by_the_last_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # after the pipeline's own checks, before any file is replaced: the writer's compare
    # right before the replace finds the new name taken (its "original" is: no file)
    from nbedit.storage.history import HistoryStore

    (tmp_path / "old_name.py").write_text(BODY)
    work = workspace(tmp_path)
    plan = work.plan_patch(RENAME)
    real_begin = HistoryStore.begin

    def begin_then_someone_writes(self: HistoryStore, draft: object) -> str:
        entry = real_begin(self, draft)  # type: ignore[arg-type]
        (tmp_path / "new_name.py").write_bytes(PRECIOUS)
        return entry

    monkeypatch.setattr(HistoryStore, "begin", begin_then_someone_writes)
    with pytest.raises(StaleFile, match="new_name.py: was created since the preview; nothing was written"):
        work.apply(plan)
    monkeypatch.undo()
    assert (tmp_path / "new_name.py").read_bytes() == PRECIOUS
    assert (tmp_path / "old_name.py").read_text() == BODY
    assert entries(work) == []  # the pending entry was dropped


# -- undo of an older entry (the reverse plan) ----------------------------------------------------


def renamed_then_edited(root: Path) -> tuple[Workspace, str]:
    """An entry renaming old_name.py, then a later one editing the renamed file: undoing the
    first is the reverse plan (moves the file back, the later edit stays)."""
    (root / "old_name.py").write_text(BODY)
    work = workspace(root)
    renamed = work.apply(work.plan_patch(RENAME)).entry_id
    work.apply(work.plan_edit("new_name.py", "line_15 = 15", "line_15 = 1500"))
    assert renamed is not None
    return work, renamed


def test_the_reverse_of_an_older_rename_refuses_a_file_made_at_the_old_name_since_the_preview(
    tmp_path: Path,
) -> None:
    work, renamed = renamed_then_edited(tmp_path)
    undo = plan_entry_undo(work, renamed)  # reviewed: the old name was free then
    assert [(f.path, f.new_path) for f in undo.plan.files] == [("new_name.py", "old_name.py")]
    (tmp_path / "old_name.py").write_bytes(PRECIOUS)
    error = refused(
        work, tmp_path, lambda: undo.apply(work), "old_name.py",
        "old_name.py: a file was created there since the preview; this undo moves new_name.py to "
        "old_name.py and would overwrite it",
    )  # fmt: skip
    assert "plan the undo again" in str(error)
    (tmp_path / "old_name.py").unlink()
    undo.apply(work)
    assert (tmp_path / "old_name.py").read_text() == BODY.replace("line_15 = 15", "line_15 = 1500")


class MeanwhileWorkspace(Workspace):
    """A workspace that runs ``meanwhile`` right before its next write: what a person does
    between the plan ``Workspace.undo`` makes and the write it hands that plan to."""

    meanwhile = None

    def apply(self, plan, **options):  # type: ignore[no-untyped-def, override]
        step, self.meanwhile = self.meanwhile, None
        if step is not None:
            step()
        return super().apply(plan, **options)


def test_workspace_undo_of_an_older_rename_refuses_a_file_made_at_the_old_name_meanwhile(
    tmp_path: Path,
) -> None:
    (tmp_path / "old_name.py").write_text(BODY)
    work = MeanwhileWorkspace(tmp_path, home=tmp_path / ".home", session="s")
    renamed = work.apply(work.plan_patch(RENAME)).entry_id
    work.apply(work.plan_edit("new_name.py", "line_15 = 15", "line_15 = 1500"))
    assert renamed is not None
    files, history = snapshot(tmp_path), entries(work)
    work.meanwhile = lambda: (tmp_path / "old_name.py").write_bytes(PRECIOUS)
    with pytest.raises(StaleFile) as raised:
        work.undo(renamed)
    assert raised.value.path == "old_name.py" and "would overwrite it" in str(raised.value)
    assert snapshot(tmp_path) == {**files, "old_name.py": (PRECIOUS, snapshot(tmp_path)["old_name.py"][1])}
    assert entries(work) == history


def test_the_history_tables_undo_review_refuses_a_file_made_at_the_old_name_before_apply(
    tmp_path: Path,
) -> None:
    from nbedit.jupyter.history_widget import HistoryWidget

    work, renamed = renamed_then_edited(tmp_path)
    review = HistoryWidget(work).undo(renamed)  # the Undo button of that row: a review
    (tmp_path / "old_name.py").write_bytes(PRECIOUS)  # made while the review is on screen
    files, history = snapshot(tmp_path), entries(work)
    review.apply()
    assert review.status == "stale", review.status_text
    assert "old_name.py: a file was created there since the preview" in review.status_text
    assert snapshot(tmp_path) == files and entries(work) == history


def test_the_reverse_of_older_creates_and_deletes_rechecks_both_files(tmp_path: Path) -> None:
    (tmp_path / "keep.py").write_text(BODY)
    (tmp_path / "gone.py").write_text("old = True\n")
    work = workspace(tmp_path)
    both = work.apply(
        work.plan_patch(
            "*** Begin Patch\n*** Add File: made.py\n+made = True\n*** Delete File: gone.py\n*** End Patch\n"
        )
    ).entry_id
    work.apply(work.plan_edit("keep.py", "line_3 = 3", "line_3 = 30"))
    assert both is not None
    undo = plan_entry_undo(work, both)
    (tmp_path / "gone.py").write_bytes(PRECIOUS)  # the deleted file's name taken again meanwhile
    refused(work, tmp_path, lambda: undo.apply(work), "gone.py", "gone.py: was created since the preview")
    (tmp_path / "gone.py").unlink()
    (tmp_path / "made.py").write_text("made = 'edited meanwhile'\n")  # the created file edited meanwhile
    refused(work, tmp_path, lambda: undo.apply(work), "made.py", "made.py: changed on disk since the preview")


def test_the_reverse_of_an_older_mode_change_refuses_a_chmod_made_meanwhile(tmp_path: Path) -> None:
    tool = tmp_path / "tool.sh"
    tool.write_text("echo one\n" + BODY)
    os.chmod(tool, 0o644)
    work = workspace(tmp_path)
    chmod = work.apply(work.plan_patch(CHMOD)).entry_id
    work.apply(work.plan_edit("tool.sh", "echo one", "echo two"))
    assert chmod is not None
    undo = plan_entry_undo(work, chmod)
    os.chmod(tool, 0o700)
    refused(
        work, tmp_path, lambda: undo.apply(work), "tool.sh",
        "tool.sh: its permissions changed since the preview (from 0755 to 0700); this undo sets them to 0644",
    )  # fmt: skip


# -- restore and rewind ---------------------------------------------------------------------------


def test_restore_refuses_a_file_made_meanwhile_where_it_brings_one_back(tmp_path: Path) -> None:
    (tmp_path / "gone.py").write_text("old = True\n")
    os.chmod(tmp_path / "gone.py", 0o644)
    work = workspace(tmp_path)
    deleted = work.apply(work.plan_patch("*** Begin Patch\n*** Delete File: gone.py\n*** End Patch\n")).entry_id
    assert deleted is not None
    from nbedit.history_ops import plan_restore

    restore = plan_restore(work, deleted)
    (tmp_path / "gone.py").write_bytes(PRECIOUS)
    error = refused(work, tmp_path, lambda: restore.apply(work), "gone.py", "was created since the preview")
    assert error.expected is None


def test_restore_of_a_mode_refuses_a_chmod_made_meanwhile(tmp_path: Path) -> None:
    tool = tmp_path / "tool.sh"
    tool.write_text(BODY)
    os.chmod(tool, 0o644)
    work = workspace(tmp_path)
    chmod = work.apply(work.plan_patch(CHMOD)).entry_id
    assert chmod is not None
    from nbedit.history_ops import plan_restore

    restore = plan_restore(work, chmod)
    os.chmod(tool, 0o750)
    refused(work, tmp_path, lambda: restore.apply(work), "tool.sh", "this restore sets them to 0644")


def test_rewind_refuses_a_file_made_meanwhile_where_it_brings_one_back(tmp_path: Path) -> None:
    (tmp_path / "tail.py").write_text("x = 1\n")
    work = workspace(tmp_path)
    work.apply(work.plan_patch("*** Begin Patch\n*** Delete File: tail.py\n*** End Patch\n"), execution_count=1)
    rewind = work.plan_rewind("In[1]")
    (tmp_path / "tail.py").write_bytes(PRECIOUS)
    refused(work, tmp_path, lambda: rewind.apply(work), "tail.py", "tail.py: was created since the preview")


# -- the CLI, as a process on a terminal ----------------------------------------------------------


def _undo_on_terminal(root: Path, entry: str, meanwhile: Callable[[], object]) -> tuple[int, str]:
    """``nbedit undo ENTRY`` on a pseudo-terminal: at its question, run ``meanwhile``, then say yes."""
    return _run_on_terminal(
        ["undo", entry], root, b"y\n", b"[y/N]", meanwhile=meanwhile,
        environment={"NBEDIT_HOME": str(root / ".home")},
    )  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_cli_undo_of_an_older_rename_refuses_a_file_made_at_the_old_name_while_it_asked(tmp_path: Path) -> None:
    work, renamed = renamed_then_edited(tmp_path)
    files, history = snapshot(tmp_path), entries(work)
    code, output = _undo_on_terminal(tmp_path, renamed, lambda: (tmp_path / "old_name.py").write_bytes(PRECIOUS))
    assert code == 1, output
    assert "old_name.py: a file was created there since the preview" in output
    assert "nothing was written" in output
    now = snapshot(tmp_path)
    assert now.pop("old_name.py")[0] == PRECIOUS and now == files
    assert entries(work) == history
