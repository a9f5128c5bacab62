"""Issue 10 items 4-6 and issue 11 item 1: permissions, owners and modes are kept, and are part of a version.

The cases about what a user may write run nbedit as an unprivileged user made for
the test (``conftest.other_user``); root may write anything, so they would prove
nothing as root.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import nbedit
from nbedit.render.text import plan_to_plain_diff

EDIT = """
import json, nbedit
ws = nbedit.Workspace(".", history=False)
try:
    ws.apply(ws.plan_edit({path!r}, "old", "new"), force={force})
    print(json.dumps({{"ok": True}}))
except nbedit.NbeditError as error:
    print(json.dumps({{"ok": False, "error": type(error).__name__, "message": error.message}}))
"""


def user_home(user, shared: Path) -> Path:  # type: ignore[no-untyped-def]
    """A home the user may write, so a refusal can only come from the file's permissions."""
    home = shared / "user-home"
    home.mkdir(exist_ok=True)
    os.chown(home, user.uid, user.gid)
    return home


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_read_only_file_is_refused_unless_forced(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    os.chown(shared, other_user.uid, other_user.gid)
    target = shared / "locked.txt"
    target.write_bytes(b"old\n")
    os.chown(target, other_user.uid, other_user.gid)
    target.chmod(0o444)
    refused = other_user.run(
        EDIT.format(path="locked.txt", force=False), cwd=shared, home=user_home(other_user, shared)
    )
    assert refused["ok"] is False and refused["error"] == "WriteError"
    assert "could not write this file in place" in refused["message"] and "--force" in refused["message"]
    assert target.read_bytes() == b"old\n" and mode_of(target) == 0o444
    forced = other_user.run(
        EDIT.format(path="locked.txt", force=True), cwd=shared, home=user_home(other_user, shared)
    )
    assert forced["ok"] is True
    assert target.read_bytes() == b"new\n" and mode_of(target) == 0o444


def test_another_users_file_in_a_writable_folder_is_refused(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    shared.chmod(0o777)
    target = shared / "roots.txt"
    target.write_bytes(b"old\n")
    target.chmod(0o644)
    refused = other_user.run(
        EDIT.format(path="roots.txt", force=False), cwd=shared, home=user_home(other_user, shared)
    )
    assert refused["ok"] is False and refused["error"] == "WriteError"
    info = target.stat()
    assert target.read_bytes() == b"old\n" and (info.st_uid, info.st_gid) == (0, 0)


def test_a_setgid_file_keeps_its_group_and_bits(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    os.chown(shared, other_user.uid, other_user.gid)
    target = shared / "team.txt"
    target.write_bytes(b"old\n")
    os.chown(target, 0, other_user.group_id)  # root's file, shared with the user's group (group-writable)
    target.chmod(0o2775)
    assert (
        other_user.run(
            EDIT.format(path="team.txt", force=False), cwd=shared, home=user_home(other_user, shared)
        )["ok"]
        is True
    )
    info = target.stat()
    assert target.read_bytes() == b"new\n"
    assert info.st_gid == other_user.group_id  # the owner becomes the writer (as editors do); the group stays
    assert mode_of(target) == 0o2775


def test_root_editing_a_users_file_keeps_its_owner(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    target = shared / "theirs.txt"
    target.write_bytes(b"old\n")
    os.chown(target, other_user.uid, other_user.group_id)
    target.chmod(0o640)
    ws = nbedit.Workspace(shared, history=False)
    ws.apply(ws.plan_edit("theirs.txt", "old", "new"))
    info = target.stat()
    assert (info.st_uid, info.st_gid, mode_of(target)) == (other_user.uid, other_user.group_id, 0o640)


def test_no_history_needs_no_writable_home(other_user, shared: Path) -> None:  # type: ignore[no-untyped-def]
    os.chown(shared, other_user.uid, other_user.gid)
    target = shared / "notes.txt"
    target.write_bytes(b"old\n")
    os.chown(target, other_user.uid, other_user.gid)
    home = shared / "roots-home"
    home.mkdir(mode=0o755)  # root's, so the user cannot write in it
    completed = subprocess.run(
        ["setpriv", f"--reuid={other_user.uid}", f"--regid={other_user.gid}", "--init-groups", "--",
         other_user.python, "-m", "nbedit", "edit", "notes.txt", "--old", "old", "--new", "new", "--yes",
         "--no-history"],
        cwd=shared, env={**other_user.environment, "NBEDIT_HOME": str(home)}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert target.read_bytes() == b"new\n"
    assert list(home.iterdir()) == []


def test_no_history_works_when_the_home_is_not_even_a_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"old\n")
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("not a folder")
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "edit", "notes.txt", "--old", "old", "--new", "new", "--yes",
         "--no-history"],
        cwd=tmp_path, env={**os.environ, "NBEDIT_HOME": str(blocker)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "notes.txt").read_bytes() == b"new\n"


@pytest.mark.parametrize("mode", [0o600, 0o755, 0o4750, 0o640])
def test_undo_brings_back_the_exact_mode(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "tool.sh"
    target.write_bytes(b"old\n")
    target.chmod(mode)
    os.umask(old_umask := os.umask(0o022))
    ws = nbedit.Workspace(tmp_path)
    ws.apply(ws.plan_edit("tool.sh", "old", "new"))
    assert mode_of(target) == mode
    ws.undo()
    assert target.read_bytes() == b"old\n" and mode_of(target) == mode
    # a deleted file comes back with its mode, not the umask's
    ws.apply(ws.plan_patch("*** Begin Patch\n*** Delete File: tool.sh\n*** End Patch\n"))
    assert not target.exists()
    ws.undo()
    assert target.read_bytes() == b"old\n" and mode_of(target) == mode
    assert old_umask == 0o022


MODE_ONLY = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
MODE_AND_CONTENT = (
    "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n--- a/run.sh\n+++ b/run.sh\n"
    "@@ -1 +1 @@\n-echo old\n+echo new\n"
)


@pytest.mark.parametrize("patch", [MODE_ONLY, MODE_AND_CONTENT], ids=["mode-only", "mode-and-content"])
def test_a_git_mode_change_is_previewed_recorded_undone_and_restored(tmp_path: Path, patch: str) -> None:
    target = tmp_path / "run.sh"
    target.write_bytes(b"echo old\n")
    target.chmod(0o644)
    ws = nbedit.Workspace(tmp_path)
    plan = ws.plan_patch(patch)
    assert "mode 100644 -> 100755" in plan_to_plain_diff(plan)
    entry = ws.apply(plan).entry_id
    assert entry is not None and mode_of(target) == 0o755
    undone = ws.undo()
    assert undone.written == ("run.sh",)
    assert mode_of(target) == 0o644 and target.read_bytes() == b"echo old\n"
    ws.restore(entry, which="after")
    assert mode_of(target) == 0o755
    ws.restore(entry)
    assert mode_of(target) == 0o644 and target.read_bytes() == b"echo old\n"


def test_the_cli_preview_names_the_mode_change(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_bytes(b"echo old\n")
    (tmp_path / "run.sh").chmod(0o644)
    (tmp_path / "change.diff").write_text(MODE_ONLY)
    completed = subprocess.run(
        [sys.executable, "-m", "nbedit", "apply", "change.diff", "--dry-run"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert "mode 100644 -> 100755" in completed.stdout
    assert mode_of(tmp_path / "run.sh") == 0o644


def test_a_chmod_made_during_review_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"old\n")
    target.chmod(0o644)
    ws = nbedit.Workspace(tmp_path)
    plan = ws.plan_edit("notes.txt", "old", "new")
    target.chmod(0o600)  # the user tightens it while reviewing
    ws.apply(plan)
    assert target.read_bytes() == b"new\n" and mode_of(target) == 0o600
    ws.undo()
    assert target.read_bytes() == b"old\n" and mode_of(target) == 0o600


def test_a_chmod_during_review_of_a_change_that_sets_the_mode_refuses_it(tmp_path: Path) -> None:
    # the preview said "100644 -> 100755"; a 0600 chosen since (a file made private) is not
    # loosened unasked: stale, like a file whose bytes changed since the preview
    target = tmp_path / "run.sh"
    target.write_bytes(b"echo old\n")
    target.chmod(0o644)
    ws = nbedit.Workspace(tmp_path, history=False)
    plan = ws.plan_patch(MODE_AND_CONTENT)
    target.chmod(0o600)
    with pytest.raises(nbedit.StaleFile, match="its permissions changed since the preview") as refused:
        ws.apply(plan)
    assert refused.value.path == "run.sh" and "nothing was written" in str(refused.value)
    assert mode_of(target) == 0o600 and target.read_bytes() == b"echo old\n"
    target.chmod(0o644)  # put back as previewed: the same plan applies
    ws.apply(plan)
    assert mode_of(target) == 0o755


def test_a_chmod_during_review_of_a_notebook_edit_is_kept(tmp_path: Path) -> None:
    import json

    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                   "source": ["x = 1"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    target = tmp_path / "book.ipynb"
    target.write_text(json.dumps(notebook, indent=1) + "\n")
    target.chmod(0o644)
    ws = nbedit.Workspace(tmp_path, history=False)
    plan = ws.plan_edit("book.ipynb", "x = 1", "x = 2")
    target.chmod(0o600)
    ws.apply(plan)
    assert "x = 2" in target.read_text() and mode_of(target) == 0o600
