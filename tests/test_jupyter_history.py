"""``%nbedit history`` / ``undo`` / ``restore`` / ``show``: the table widget and reviewed time travel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_jupyter_support
from test_jupyter_support import history_entries, run

from nbedit.errors import NothingToUndo, StaleFile
from nbedit.jupyter.history_widget import EntryDiffView, HistoryWidget
from nbedit.jupyter.review import ErrorView, ReviewWidget
from nbedit.workspace import Workspace

ipython = test_jupyter_support.ipython  # the shared fixtures
shell = test_jupyter_support.shell


def block(old: str, new: str) -> str:
    return f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"


@pytest.fixture
def edited(shell: Any, tmp_path: Path) -> Path:
    """f.py edited twice by magics in this kernel: a = 1 -> a = 2 -> a = 3."""
    target = tmp_path / "f.py"
    target.write_bytes(b"a = 1\nb = 1\n")
    run(shell, "%%edit f.py --yes\n" + block("a = 1\n", "a = 2\n"))
    run(shell, "%%edit f.py --yes\n" + block("a = 2\n", "a = 3\n"))
    assert target.read_bytes() == b"a = 3\nb = 1\n"
    return target


def test_history_table_lists_this_kernels_entries(shell: Any, edited: Path, nbedit_home: Path) -> None:
    other = Workspace(edited.parent, session="someone-else")
    other.apply(other.plan_edit("f.py", "b = 1", "b = 5"))
    table = run(shell, "%nbedit history")
    assert isinstance(table, HistoryWidget)
    mine = [entry.id for entry in table.entries]
    assert len(mine) == 2
    assert all(entry.session == table.workspace.session for entry in table.entries)
    bundle = table._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "nb-history" in bundle["text/html"] and mine[0] in bundle["text/html"]
    assert "In[" in bundle["text/plain"] and "magic" in bundle["text/plain"]
    table.all_sessions = True
    assert len(table.entries) == 3
    assert "all sessions" in table.title_text
    assert {row["session"] for row in table.rows} == {table.workspace.session, "someone-else"}
    assert len(run(shell, "%nbedit history --all").entries) == 3


def test_diff_button_shows_the_entry_diff(shell: Any, edited: Path) -> None:
    table = run(shell, "%nbedit history")
    newest = table.entries[0].id
    table.buttons(newest)["diff"].click()
    (shown,) = table._detail.children
    assert "a = 3" in shown.value and "a = 2" in shown.value


def test_undo_button_reviews_then_applies(shell: Any, edited: Path, nbedit_home: Path) -> None:
    table = run(shell, "%nbedit history")
    newest, oldest = (entry.id for entry in table.entries)
    assert "undo" in table.buttons(newest) and "undo" in table.buttons(oldest)  # Undo on every row
    table.buttons(newest)["undo"].click()
    review = table.review
    assert isinstance(review, ReviewWidget) and review.status == "pending"
    assert edited.read_bytes() == b"a = 3\nb = 1\n"  # reviewing wrote nothing
    assert "-a = 3" in review.plain_text() and "+a = 2" in review.plain_text()
    review.buttons["apply"].click()
    assert review.status == "applied", review.plain_text()
    assert edited.read_bytes() == b"a = 2\nb = 1\n"
    newest_entry = history_entries(nbedit_home)[0]
    assert newest_entry.origin == "undo" and newest_entry.undoes == newest
    assert table.entries[0].id == newest_entry.id  # the table refreshed after the decision


def test_restore_button_and_reject(shell: Any, edited: Path, nbedit_home: Path) -> None:
    table = run(shell, "%nbedit history")
    oldest = table.entries[-1].id
    table.buttons(oldest)["restore"].click()
    table.review.buttons["reject"].click()
    assert edited.read_bytes() == b"a = 3\nb = 1\n"
    table.buttons(oldest)["restore"].click()
    table.review.apply()
    assert edited.read_bytes() == b"a = 1\nb = 1\n"
    assert history_entries(nbedit_home)[0].origin == "restore"


def test_undo_review_goes_stale_when_the_file_changes(shell: Any, edited: Path) -> None:
    review = run(shell, "%nbedit undo")
    assert review.status == "pending"
    edited.write_bytes(b"a = 3\nb = 'edited by hand'\n")
    review.apply()
    assert review.status == "stale"
    assert edited.read_bytes() == b"a = 3\nb = 'edited by hand'\n"
    review.replan()  # history_ops refuses: the file is no longer what the entry wrote
    assert review.status == "error" and isinstance(review.error, StaleFile)
    assert edited.read_bytes() == b"a = 3\nb = 'edited by hand'\n"
    forced = run(shell, "%nbedit undo --force --yes")
    assert forced.status == "applied"
    assert edited.read_bytes() == b"a = 2\nb = 1\n"


def test_undo_magic_walks_back_and_then_says_nothing_to_undo(shell: Any, edited: Path) -> None:
    first = run(shell, "%nbedit undo --yes")
    assert first.status == "applied"
    # an undo says it undid, not that it applied
    assert first.plain_text().startswith("nbedit: undone: f.py (history entry")
    assert "undone: f.py" in first.static_html() and "applied to" not in first.plain_text()
    assert run(shell, "%nbedit undo --yes").status == "applied"
    assert edited.read_bytes() == b"a = 1\nb = 1\n"
    view = run(shell, "%nbedit undo")
    assert isinstance(view, ErrorView) and isinstance(view.error, NothingToUndo)
    with pytest.raises(NothingToUndo):  # unattended: the cell fails
        run(shell, "%nbedit undo --yes")


def test_restore_magic_after(shell: Any, edited: Path) -> None:
    table = run(shell, "%nbedit history")
    oldest = table.entries[-1].id
    restored = run(shell, f"%nbedit restore {oldest} --yes")
    assert restored.plain_text().startswith("nbedit: restored: f.py")
    assert edited.read_bytes() == b"a = 1\nb = 1\n"
    run(shell, f"%nbedit restore {oldest} --after --yes")
    assert edited.read_bytes() == b"a = 2\nb = 1\n"


def test_show_magic(shell: Any, edited: Path) -> None:
    oldest = run(shell, "%nbedit history").entries[-1].id
    view = run(shell, f"%nbedit show {oldest}")
    assert isinstance(view, EntryDiffView)
    bundle = view._repr_mimebundle_()
    assert "-a = 1" in bundle["text/plain"] and "+a = 2" in bundle["text/plain"]
    assert "nb-diff" in bundle["text/html"]
    missing = run(shell, "%nbedit show e0000ffff")
    assert isinstance(missing, ErrorView)


def test_history_widget_without_magics(tmp_path: Path) -> None:
    (tmp_path / "g.py").write_bytes(b"x = 1\n")
    workspace = Workspace(tmp_path, session="plain")
    workspace.apply(workspace.plan_edit("g.py", "x = 1", "x = 2"))
    table = HistoryWidget(workspace)
    (entry,) = table.entries
    review = table.undo(entry.id)
    assert isinstance(review, ReviewWidget)
    review.apply()
    assert (tmp_path / "g.py").read_bytes() == b"x = 1\n"
    assert "nb-history" in table._repr_html_()


def test_history_errors_show_in_the_widget(tmp_path: Path) -> None:
    (tmp_path / "g.py").write_bytes(b"x = 1\n")
    workspace = Workspace(tmp_path, session="plain")
    workspace.apply(workspace.plan_edit("g.py", "x = 1", "x = 2"))
    table = HistoryWidget(workspace)
    (tmp_path / "g.py").write_bytes(b"x = 'mine'\n")
    table.buttons(table.entries[0].id)["undo"].click()
    (panel,) = table._detail.children
    assert "StaleFile" in panel.value
    assert (tmp_path / "g.py").read_bytes() == b"x = 'mine'\n"


def test_restore_magic_names_the_later_entries_it_discards(shell: Any, edited: Path) -> None:
    newest, oldest = [entry.id for entry in run(shell, "%nbedit history").entries]
    review = run(shell, f"%nbedit restore {oldest}")
    assert review.status == "pending"
    note = f"restoring also discards what later history entries changed in this file: {newest}"
    assert note in review.plain_text() and note in review.static_html()
    review.reject()
    assert edited.read_bytes() == b"a = 3\nb = 1\n"
