"""A hunk whose old side ends without a newline ("\\ No newline at end of file"), found by a lenient
tier as the last line of a file that does end with one: the new side's final newline is the file's,
written once (found by review: the file ended "...\\n\\n").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbedit import Workspace

_PATCH = (
    "--- a/f.py\n+++ b/f.py\n@@ -2,3 +2,3 @@\n v1 = 1\n-v2 = 2\n+v2 = 'x'\n v3 = 3\n"
    "@@ -27,4 +27,4 @@\n v26 = 26\n v27 = 27\n-v28 = 28\n-v29 = 29\n\\ No newline at end of file\n"
    "+v28 = 'y'\n+v29 = 29\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_files_final_newline_is_not_written_twice(tmp_path: Path, newline: str) -> None:
    before = "".join(f"v{i} = {i}{newline}" for i in range(30)).encode()
    (tmp_path / "f.py").write_bytes(before)
    workspace = Workspace(tmp_path, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(_PATCH)
    assert plan.files[0].hunks[1].tier.value != "exact"  # found leniently (the file has its newline)
    workspace.apply(plan)
    expected = before.replace(b"v2 = 2", b"v2 = 'x'").replace(b"v28 = 28", b"v28 = 'y'")
    assert (tmp_path / "f.py").read_bytes() == expected
    workspace.undo()
    assert (tmp_path / "f.py").read_bytes() == before
    workspace.close()


def test_a_file_without_its_final_newline_takes_the_new_one(tmp_path: Path) -> None:
    before = "".join(f"v{i} = {i}\n" for i in range(30)).rstrip("\n").encode()
    (tmp_path / "f.py").write_bytes(before)
    workspace = Workspace(tmp_path, history=False)
    workspace.apply(workspace.plan_patch(_PATCH))
    expected = before.replace(b"v2 = 2", b"v2 = 'x'").replace(b"v28 = 28", b"v28 = 'y'") + b"\n"
    assert (tmp_path / "f.py").read_bytes() == expected
