"""Undo of an older history entry (the history table's Undo on any row): renames, modes, created and
deleted files are reversed too, and a later change in the way refuses the undo with nothing written.

Real files, real history store; each case applies an entry, then a later one, then undoes the older.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from nbedit.errors import StaleFile
from nbedit.history_reverse import plan_reverse
from nbedit.workspace import Workspace

BODY = "".join(f"line_{number} = {number}\n" for number in range(1, 21))


def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path, home=tmp_path / ".home", session="s", history=True)


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".home" not in path.parts
    }


RENAME = """\
diff --git a/old_name.py b/new_name.py
similarity index 90%
rename from old_name.py
rename to new_name.py
--- a/old_name.py
+++ b/new_name.py
@@ -1,3 +1,3 @@
-line_1 = 1
+line_1 = 100
 line_2 = 2
 line_3 = 3
"""

CHMOD = """\
diff --git a/tool.sh b/tool.sh
old mode 100644
new mode 100755
"""


def test_an_older_rename_is_moved_back_with_its_text_and_later_edits_stay(tmp_path: Path) -> None:
    (tmp_path / "old_name.py").write_text(BODY)
    work = workspace(tmp_path)
    renamed = work.apply(work.plan_patch(RENAME)).entry_id
    assert not (tmp_path / "old_name.py").exists()
    work.apply(work.plan_edit("new_name.py", "line_15 = 15", "line_15 = 1500"))  # a later edit, elsewhere
    reverse = plan_reverse(work, renamed)
    (file_plan,) = reverse.plan.files
    assert (file_plan.path, file_plan.new_path) == ("new_name.py", "old_name.py")
    result = work.apply(reverse.plan, **reverse.apply_options)
    assert not (tmp_path / "new_name.py").exists()
    assert (tmp_path / "old_name.py").read_text() == BODY.replace("line_15 = 15", "line_15 = 1500")
    assert result.entry_id and work.history()[0].undoes == renamed


def test_an_older_mode_change_is_set_back(tmp_path: Path) -> None:
    tool = tmp_path / "tool.sh"
    tool.write_text("echo one\n" + BODY)
    os.chmod(tool, 0o644)
    work = workspace(tmp_path)
    chmod = work.apply(work.plan_patch(CHMOD)).entry_id
    assert stat.S_IMODE(tool.stat().st_mode) == 0o755
    work.apply(work.plan_edit("tool.sh", "echo one", "echo two"))
    reverse = plan_reverse(work, chmod)
    work.apply(reverse.plan, **reverse.apply_options)
    assert stat.S_IMODE(tool.stat().st_mode) == 0o644
    assert tool.read_text().startswith("echo two\n")  # the later text edit stays


def test_a_later_mode_change_refuses_the_undo_and_writes_nothing(tmp_path: Path) -> None:
    tool = tmp_path / "tool.sh"
    tool.write_text(BODY)
    os.chmod(tool, 0o644)
    work = workspace(tmp_path)
    chmod = work.apply(work.plan_patch(CHMOD)).entry_id
    to_750 = CHMOD.replace("100755", "100750").replace("100644", "100755")
    later = work.apply(work.plan_patch(to_750)).entry_id
    assert stat.S_IMODE(tool.stat().st_mode) == 0o750
    before = snapshot(tmp_path)
    with pytest.raises(StaleFile) as refused:
        plan_reverse(work, chmod)
    message = str(refused.value)
    assert "mode from 644 to 755, and the mode is 750 now" in message and later in message
    assert "nothing was written" in message
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("in_the_way", ["old name taken again", "renamed file deleted"])
def test_a_rename_with_a_later_change_in_the_way_is_refused(tmp_path: Path, in_the_way: str) -> None:
    (tmp_path / "old_name.py").write_text(BODY)
    work = workspace(tmp_path)
    renamed = work.apply(work.plan_patch(RENAME)).entry_id
    if in_the_way == "old name taken again":
        added = "*** Begin Patch\n*** Add File: old_name.py\n+fresh = True\n*** End Patch\n"
        work.apply(work.plan_patch(added))
        expected = "a file named old_name.py exists again; moving it back would overwrite that file"
    else:
        work.apply(work.plan_patch("*** Begin Patch\n*** Delete File: new_name.py\n*** End Patch\n"))
        expected = "new_name.py: it renamed the file to this name, and is gone now"
    before = snapshot(tmp_path)
    with pytest.raises(StaleFile) as refused:
        plan_reverse(work, renamed)
    assert expected in str(refused.value)
    assert snapshot(tmp_path) == before


def test_created_and_deleted_files_are_reversed_or_refused(tmp_path: Path) -> None:
    (tmp_path / "keep.py").write_text(BODY)
    (tmp_path / "gone.py").write_text("old = True\n")
    work = workspace(tmp_path)
    both = work.apply(
        work.plan_patch(
            "*** Begin Patch\n*** Add File: made.py\n+made = True\n*** Delete File: gone.py\n*** End Patch\n"
        )
    ).entry_id
    work.apply(work.plan_edit("keep.py", "line_3 = 3", "line_3 = 30"))  # a later entry on another file
    reverse = plan_reverse(work, both)
    work.apply(reverse.plan, **reverse.apply_options)
    assert not (tmp_path / "made.py").exists() and (tmp_path / "gone.py").read_text() == "old = True\n"
    # made again and then edited: undoing the creation would delete the edit, so it is refused
    again = work.apply(work.plan_patch("*** Begin Patch\n*** Add File: made.py\n+made = 1\n*** End Patch\n"))
    work.apply(work.plan_edit("made.py", "made = 1", "made = 2"))
    before = snapshot(tmp_path)
    with pytest.raises(StaleFile, match="it created this file, and the file changed since"):
        plan_reverse(work, again.entry_id)
    assert snapshot(tmp_path) == before


def test_the_history_table_undoes_an_older_rename_through_a_review(tmp_path: Path) -> None:
    from nbedit.jupyter.history_widget import HistoryWidget
    from nbedit.jupyter.review import ReviewWidget

    (tmp_path / "old_name.py").write_text(BODY)
    work = workspace(tmp_path)
    renamed = work.apply(work.plan_patch(RENAME)).entry_id
    work.apply(work.plan_edit("new_name.py", "line_20 = 20", "line_20 = 2000"))
    table = HistoryWidget(work)
    review = table.undo(renamed)
    assert isinstance(review, ReviewWidget), review
    assert "new_name.py → old_name.py" in review.static_html() and "renamed" in review.static_html()
    assert (tmp_path / "new_name.py").exists()  # the review writes nothing before Apply
    review.apply()
    assert review.status == "applied", review.status_text
    assert (tmp_path / "old_name.py").read_text() == BODY.replace("line_20 = 20", "line_20 = 2000")
    assert not (tmp_path / "new_name.py").exists()
