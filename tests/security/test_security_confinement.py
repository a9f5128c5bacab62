"""Issue 10 items 1-3 and 7: nothing outside the root is written, whatever is swapped in after the preview.

Each case plans a change, then changes the tree the way an attacker (or an unlucky
sync tool) would during the review, then applies. Before write-time confinement
every one of these wrote or deleted outside the root.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from security_support import snapshot

import nbedit
from nbedit.errors import HistoryError, NbeditError, NothingToUndo


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "conf.txt").write_bytes(b"setting = 1\n")
    (root / "conf.txt").write_bytes(b"setting = 1\n")
    (outside / "conf.txt").write_bytes(b"setting = 1\n")  # the same bytes, so a stale check alone passes
    return root, outside


def workspace(root: Path, **options: object) -> nbedit.Workspace:
    return nbedit.Workspace(root, **{"history": False, **options})  # type: ignore[arg-type]


def swap_folder_for_link(root: Path, outside: Path) -> None:
    shutil.rmtree(root / "sub")
    (root / "sub").symlink_to(outside, target_is_directory=True)


def test_a_dangling_link_planted_where_an_add_lands(places: tuple[Path, Path]) -> None:
    root, outside = places
    ws = workspace(root)
    plan = ws.plan_patch("*** Begin Patch\n*** Add File: new.txt\n+payload\n*** End Patch\n")
    (root / "new.txt").symlink_to(outside / "planted.txt")
    before = snapshot(outside)
    with pytest.raises(NbeditError):
        ws.apply(plan)
    assert snapshot(outside) == before
    assert not (outside / "planted.txt").exists()


@pytest.mark.parametrize("operation", ["add", "update", "delete"])
def test_a_parent_folder_replaced_by_a_link(places: tuple[Path, Path], operation: str) -> None:
    root, outside = places
    ws = workspace(root)
    patch = {
        "add": "*** Begin Patch\n*** Add File: sub/new.txt\n+payload\n*** End Patch\n",
        "update": "*** Begin Patch\n*** Update File: sub/conf.txt\n@@\n-setting = 1\n+setting = 2\n*** End Patch\n",
        "delete": "*** Begin Patch\n*** Delete File: sub/conf.txt\n*** End Patch\n",
    }[operation]
    plan = ws.plan_patch(patch)
    swap_folder_for_link(root, outside)
    before = snapshot(outside)
    with pytest.raises(nbedit.OutsideWorkspace, match="outside the workspace root|symbolic link"):
        ws.apply(plan)
    assert snapshot(outside) == before


def test_the_file_replaced_by_a_link_to_an_outside_file_with_the_same_bytes(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    ws = workspace(root)
    plan = ws.plan_edit("conf.txt", "setting = 1", "setting = 2")
    (root / "conf.txt").unlink()
    (root / "conf.txt").symlink_to(outside / "conf.txt")
    before = snapshot(outside)
    with pytest.raises(nbedit.OutsideWorkspace):
        ws.apply(plan)
    assert snapshot(outside) == before


def test_a_link_inside_the_root_is_still_written_through(places: tuple[Path, Path]) -> None:
    root, _ = places
    (root / "alias.txt").symlink_to("sub/conf.txt")
    ws = workspace(root)
    ws.apply(ws.plan_edit("alias.txt", "setting = 1", "setting = 2"))
    assert (root / "alias.txt").is_symlink()
    assert (root / "sub" / "conf.txt").read_bytes() == b"setting = 2\n"


@pytest.mark.parametrize("dialect", ["codex", "git"])
def test_deleting_a_link_removes_the_link_not_its_target(places: tuple[Path, Path], dialect: str) -> None:
    root, _ = places
    (root / "link.txt").symlink_to("conf.txt")
    patch = {
        "codex": "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch\n",
        "git": "diff --git a/link.txt b/link.txt\ndeleted file mode 100644\n--- a/link.txt\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-setting = 1\n",
    }[dialect]
    ws = workspace(root, history=True)
    ws.apply(ws.plan_patch(patch))
    assert not (root / "link.txt").is_symlink() and not (root / "link.txt").exists()
    assert (root / "conf.txt").read_bytes() == b"setting = 1\n"


@pytest.mark.parametrize("how", ["undo", "restore-force", "undo-force"])
def test_undo_and_restore_recheck_recorded_paths(places: tuple[Path, Path], how: str) -> None:
    root, outside = places
    ws = workspace(root, history=True, session="s")
    result = ws.apply(ws.plan_edit("sub/conf.txt", "setting = 1", "setting = 2"))
    (outside / "conf.txt").write_bytes(b"setting = 2\n")  # what the entry wrote: undo's check passes
    swap_folder_for_link(root, outside)
    before = snapshot(outside)
    with pytest.raises(nbedit.OutsideWorkspace):
        if how == "undo":
            ws.undo()
        elif how == "undo-force":
            ws.undo(force=True)
        else:
            assert result.entry_id is not None
            ws.restore(result.entry_id, force=True)
    assert snapshot(outside) == before


def test_an_entry_cannot_be_restored_in_another_root(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for root in (first, second):
        root.mkdir()
        (root / "conf.txt").write_bytes(b"mine = " + root.name.encode() + b"\n")
    ws_a = workspace(first, history=True)
    entry = ws_a.apply(ws_a.plan_edit("conf.txt", "mine = a", "mine = A")).entry_id
    assert entry is not None
    ws_b = workspace(second, history=True)
    for force in (False, True):
        with pytest.raises(HistoryError, match="recorded in the workspace root"):
            ws_b.restore(entry, force=force)
        with pytest.raises(HistoryError, match="recorded in the workspace root"):
            ws_b.undo(entry, force=force)
    assert (second / "conf.txt").read_bytes() == b"mine = b\n"
    assert (first / "conf.txt").read_bytes() == b"mine = A\n"


def test_a_shared_session_undoes_only_its_own_root(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for root in (first, second):
        root.mkdir()
        (root / "conf.txt").write_bytes(b"value = 1\n")
    ws_a = workspace(first, history=True, session="shared")
    ws_a.apply(ws_a.plan_edit("conf.txt", "value = 1", "value = 2"))
    ws_b = workspace(second, history=True, session="shared")
    with pytest.raises(NothingToUndo):
        ws_b.undo()
    assert (second / "conf.txt").read_bytes() == b"value = 1\n"
    assert (first / "conf.txt").read_bytes() == b"value = 2\n"
    ws_a.undo()
    assert (first / "conf.txt").read_bytes() == b"value = 1\n"


def test_undo_of_an_entry_after_its_folder_moved_inside_the_root_stays_inside(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    ws = workspace(root, history=True)
    ws.apply(ws.plan_edit("sub/conf.txt", "setting = 1", "setting = 2"))
    os.rename(root / "sub", root / "moved")
    (root / "sub").symlink_to("moved", target_is_directory=True)  # a link that stays inside the root
    ws.undo()
    assert (root / "moved" / "conf.txt").read_bytes() == b"setting = 1\n"
    assert (outside / "conf.txt").read_bytes() == b"setting = 1\n"


@pytest.mark.parametrize("content", [b"keep me\n", b"no final newline"])
def test_a_hunkless_git_delete_of_a_file_with_content_is_refused(tmp_path: Path, content: bytes) -> None:
    """Issue 10 item 8: 'deleted file mode' with no hunk removes only an empty file, as git apply does."""
    (tmp_path / "notes.txt").write_bytes(content)
    patch = "diff --git a/notes.txt b/notes.txt\ndeleted file mode 100644\nindex e69de29..0000000\n"
    workspace = nbedit.Workspace(tmp_path, history=False)
    with pytest.raises(nbedit.NbeditError) as caught:
        workspace.apply(workspace.plan_patch(patch))
    assert "removal patch leaves file contents" in str(caught.value)
    assert (tmp_path / "notes.txt").read_bytes() == content
    (tmp_path / "empty.txt").write_bytes(b"")
    workspace.apply(workspace.plan_patch(patch.replace("notes.txt", "empty.txt")))
    assert not (tmp_path / "empty.txt").exists()
