"""Rewind in the notebook front end: ``%nbedit changes``/``%nbedit rewind`` in a real IPython shell,
the history table's checkpoint rows and Rewind button, and a stale preview re-planned by the
three-way rule (shown again, never written unseen)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nbedit.errors import RewindConflict
from nbedit.jupyter.review import ReviewWidget
from nbedit.rewind import Changes
from nbedit.workspace import Workspace
from tests import test_jupyter_support
from tests.test_jupyter_support import run

ipython = test_jupyter_support.ipython  # the shared fixtures
shell = test_jupyter_support.shell

TEXT = "".join(f"row {number}\n" for number in range(12)).encode()


def block(old: str, new: str) -> str:
    return f"<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"


def _person(path: Path, old: bytes, new: bytes) -> None:
    code = "import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.write_bytes(p.read_bytes().replace(sys.argv[2].encode(), sys.argv[3].encode()))"
    subprocess.run([sys.executable, "-c", code, str(path), old.decode(), new.decode()], check=True)


@pytest.fixture
def session(shell: Any, tmp_path: Path) -> tuple[Any, int]:
    """Four cell runs edit rows.txt (rows 1, 5, 9) and other.txt; returns the first one's In[n]."""
    (tmp_path / "rows.txt").write_bytes(TEXT)
    (tmp_path / "other.txt").write_bytes(b"other\n")
    first = shell.execution_count
    run(shell, "%%edit rows.txt --yes\n" + block("row 1\n", "cell A\n"))
    run(shell, "%%edit rows.txt --yes\n" + block("row 5\n", "cell B\n"))
    run(shell, "%%edit other.txt --yes\n" + block("other\n", "cell C\n"))
    run(shell, "%%edit rows.txt --yes\n" + block("row 9\n", "cell C again\n"))
    return shell, first


def test_changes_magic_shows_each_file_and_its_cells(session: tuple[Any, int], tmp_path: Path) -> None:
    shell, first = session
    _person(tmp_path / "rows.txt", b"row 11\n", b"typed\n")
    changes = run(shell, f"%nbedit changes --since In[{first + 1}]")
    assert isinstance(changes, Changes)
    assert [(file.path, file.authors, file.changed_outside) for file in changes.files] == [
        ("rows.txt", (f"In[{first + 1}]", f"In[{first + 3}]"), True),
        ("other.txt", (f"In[{first + 2}]",), False),
    ]
    html = changes._repr_html_()
    assert "cell B" in html and "changed outside nbedit" in html
    error = run(shell, "%nbedit changes --since In[9999]")
    assert "In[9999]" in str(error.error)  # an error panel, not a traceback


def test_rewind_magic_reviews_with_the_conflicted_file_unticked(
    session: tuple[Any, int], tmp_path: Path
) -> None:
    shell, first = session
    _person(tmp_path / "rows.txt", b"cell C again\n", b"person rewrote it\n")  # overlaps In[first+3]
    before = {name: (tmp_path / name).read_bytes() for name in ("rows.txt", "other.txt")}
    with pytest.raises(RewindConflict):
        run(shell, f"%nbedit rewind In[{first + 1}] --yes")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    review = run(shell, f"%nbedit rewind In[{first + 1}]")
    assert isinstance(review, ReviewWidget) and review.status == "pending"
    paths = [file_plan.path for file_plan in review.plan.files]
    conflicted = paths.index("rows.txt")
    assert (conflicted, None) in review.excluded_keys  # left out until the person ticks it
    assert any("CONFLICT" in note for note in review.plan.files[conflicted].notes)
    # the other file changes under the review where the rewind writes: stale, then Re-plan plans the
    # rewind again, and the conflicted file is unticked again (never written without a choice)
    (tmp_path / "other.txt").write_bytes(b"cell C, typed\n")
    review.apply()
    assert review.status == "stale"
    (tmp_path / "other.txt").write_bytes(b"cell C\n")
    review.replan()
    assert review.status == "pending"
    conflicted = [file_plan.path for file_plan in review.plan.files].index("rows.txt")
    assert (conflicted, None) in review.excluded_keys
    review.apply()
    assert review.status == "applied"
    assert (tmp_path / "other.txt").read_bytes() == b"other\n"
    assert (tmp_path / "rows.txt").read_bytes() == before["rows.txt"]
    # undo the rewind, then take the rewind's side: the person's overlapping line goes, the rest comes back
    assert run(shell, "%nbedit undo --yes").status == "applied"
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert run(shell, f"%nbedit rewind In[{first + 1}] --yes --resolve rewind").status == "applied"
    assert (tmp_path / "rows.txt").read_bytes() == TEXT.replace(b"row 1\n", b"cell A\n")  # In[first] stays


def test_history_table_folds_checkpoints_and_rewinds_from_a_row(
    session: tuple[Any, int], tmp_path: Path
) -> None:
    shell, first = session
    table = run(shell, "%nbedit history")
    labels = [row["checkpoint_label"] for row in table.rows]
    assert labels == [f"In[{first + count}]" for count in (3, 2, 1, 0)]
    _person(tmp_path / "rows.txt", b"row 11\n", b"kept\n")
    newest_first = table.rows
    target = newest_first[2]["id"]  # the second cell run
    table.buttons(target)["rewind"].click()
    assert isinstance(table.review, ReviewWidget)
    table.review.apply()
    assert (tmp_path / "rows.txt").read_bytes() == TEXT.replace(b"row 1\n", b"cell A\n").replace(
        b"row 11\n", b"kept\n"
    )
    assert (tmp_path / "other.txt").read_bytes() == b"other\n"
    assert table.rows[0]["origin"] == "rewind"  # the table refreshed after the decision


def test_a_stale_preview_is_replanned_onto_the_new_file_and_asked_again(tmp_path: Path) -> None:
    (tmp_path / "rows.txt").write_bytes(TEXT)
    workspace = Workspace(tmp_path, session="replan")
    widget = ReviewWidget(workspace, workspace.plan_edit("rows.txt", "row 2\n", "changed 2\n"))
    _person(tmp_path / "rows.txt", b"row 8\n", b"typed meanwhile\n")
    on_disk = (tmp_path / "rows.txt").read_bytes()
    widget.apply()
    assert widget.status == "pending" and "re-planned" in widget.status_text  # asked again
    assert (tmp_path / "rows.txt").read_bytes() == on_disk  # nothing written the person did not see
    assert "typed meanwhile" in widget.detail_html  # what changed on disk, shown
    assert (
        "changed 2" in widget.plan.diff
        and "typed meanwhile" not in widget.plan.diff.split("@@")[-1].split("+")[0]
    )
    widget.apply()
    assert widget.status == "applied"
    assert (tmp_path / "rows.txt").read_bytes() == on_disk.replace(b"row 2\n", b"changed 2\n")
    # an overlapping change is not moved: the plain stale state, with Re-plan
    widget = ReviewWidget(workspace, workspace.plan_edit("rows.txt", "row 4\n", "changed 4\n"))
    _person(tmp_path / "rows.txt", b"row 4\n", b"mine\n")
    widget.apply()
    assert widget.status == "stale" and b"mine" in (tmp_path / "rows.txt").read_bytes()
