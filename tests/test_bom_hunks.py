"""A diff of a file with a UTF-8 byte-order mark, made from its bytes, applies as ``git apply`` applies it.

``diff -u`` and ``git diff`` show the BOM as the start of line 1; nbedit's decoded text keeps it
in the codec instead (``engine/bom_hunks.py``). Found by ``tests/test_forced_paths_real.py``: a
real release step with every file given a BOM was refused where line 1 changed
(``requirements/typing.txt`` of click 8.1.4 -> 8.1.5) and where a file was deleted (packaging's
``tox.ini``, 20.1 -> 20.2). Each expected result here is what ``git apply`` wrote for the same
bytes and diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbedit import Workspace
from nbedit.errors import NoMatch

BOM = b"\xef\xbb\xbf"


def apply(tmp_path: Path, before: bytes, diff: str, *, history: bool = False) -> Workspace:
    (tmp_path / "a.txt").write_bytes(before)
    workspace = Workspace(tmp_path, history=history, home=tmp_path.parent / "home", live=None)
    workspace.apply(workspace.plan_patch(diff))
    return workspace


HEADER = "--- a/a.txt\n+++ b/a.txt\n"


def test_a_changed_first_line_of_a_bom_file_keeps_the_bom(tmp_path: Path) -> None:
    diff = HEADER + "@@ -1,2 +1,2 @@\n-\ufeffline one\n+\ufeffline 1\n line two\n"
    workspace = apply(tmp_path, BOM + b"line one\nline two\n", diff, history=True)
    assert (tmp_path / "a.txt").read_bytes() == BOM + b"line 1\nline two\n"
    workspace.undo()
    assert (tmp_path / "a.txt").read_bytes() == BOM + b"line one\nline two\n"


def test_a_first_context_line_with_the_bom_still_applies(tmp_path: Path) -> None:
    diff = HEADER + "@@ -1,2 +1,2 @@\n \ufeffline one\n-line two\n+line 2\n"
    apply(tmp_path, BOM + b"line one\nline two\n", diff)
    assert (tmp_path / "a.txt").read_bytes() == BOM + b"line one\nline 2\n"


def test_a_diff_that_takes_the_bom_away_writes_none(tmp_path: Path) -> None:
    diff = HEADER + "@@ -1,2 +1,2 @@\n-\ufeffline one\n+line 1\n line two\n"
    apply(tmp_path, BOM + b"line one\nline two\n", diff)
    assert (tmp_path / "a.txt").read_bytes() == b"line 1\nline two\n"


def test_a_diff_that_only_takes_the_bom_away_is_not_a_no_op(tmp_path: Path) -> None:
    diff = HEADER + "@@ -1,2 +1,2 @@\n-\ufeffline one\n+line one\n line two\n"
    apply(tmp_path, BOM + b"line one\nline two\n", diff)
    assert (tmp_path / "a.txt").read_bytes() == b"line one\nline two\n"


def test_a_bom_file_deleted_by_a_diff_of_its_bytes_is_deleted(tmp_path: Path) -> None:
    diff = "--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-\ufeffline one\n-line two\n"
    apply(tmp_path, BOM + b"line one\nline two\n", diff)
    assert not (tmp_path / "a.txt").exists()


def test_a_bom_in_the_diff_of_a_file_without_one_is_still_refused(tmp_path: Path) -> None:
    diff = HEADER + "@@ -1,2 +1,2 @@\n-\ufeffline one\n+\ufeffline 1\n line two\n"
    with pytest.raises(NoMatch):
        apply(tmp_path, b"line one\nline two\n", diff)
    assert (tmp_path / "a.txt").read_bytes() == b"line one\nline two\n"


def test_a_u_feff_inside_a_bom_file_is_text_for_an_old_new_edit(tmp_path: Path) -> None:
    """Only a diff's line 1 carries the BOM: elsewhere U+FEFF is a zero-width no-break space."""
    (tmp_path / "a.txt").write_bytes(BOM + "word\nx\ufeffword\n".encode())
    workspace = Workspace(tmp_path, history=False, live=None)
    workspace.apply(workspace.plan_edit("a.txt", "\ufeffword", "WORD"))
    assert (tmp_path / "a.txt").read_bytes() == BOM + b"word\nxWORD\n"
