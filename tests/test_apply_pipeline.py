"""The apply pipeline's windows: what runs meanwhile, what is checked when, what a crash leaves.

``Workspace.apply`` checks a file early by its identity (inode, size, times), records
the history entry while the temporary copy is flushed on another thread, and compares
every byte right before the replace. These tests change the file in each window and
expect the same refusal, byte-identical files and no history entry; they check that
no temporary file has a name before the entry is durable, that a failing history home
fails the apply exactly as before even though it was opened meanwhile, and that the
threads started for a plan are joined.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import nbedit
import nbedit.storage.atomic as atomic
import nbedit.storage.temp_copies as temp_copies
from nbedit import background
from nbedit.errors import HistoryError, StaleFile, WriteError
from nbedit.storage.atomic import Write, apply_writes, identity_of, is_temp_file
from nbedit.storage.history import HistoryStore

BIG = b"".join(b"line %06d of a file big enough to be checked by its identity\n" % i for i in range(4000))
EDITED = BIG.replace(b"line 001234 of", b"LINE 001234 of", 1)


def temp_names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if is_temp_file(path.name))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "big.py").write_bytes(BIG)
    (folder / "small.txt").write_bytes(b"alpha\nbeta\n")
    return folder


def workspace(root: Path, home: Path | None = None, history: bool = True) -> nbedit.Workspace:
    return nbedit.Workspace(root, history=history, home=home or root.parent / "home", session="pipeline")


def plan_big(ws: nbedit.Workspace) -> nbedit.Plan:
    return ws.plan_edit("big.py", "line 001234 of", "LINE 001234 of")


# -- the windows -----------------------------------------------------------------------


@pytest.mark.parametrize("history", [True, False])
def test_a_file_changed_before_the_lock_is_refused_with_what_changed(root: Path, history: bool) -> None:
    ws = workspace(root, history=history)
    plan = plan_big(ws)
    changed = BIG.replace(b"line 000007 of", b"someone else 7", 1)
    (root / "big.py").write_bytes(changed)
    with pytest.raises(StaleFile, match="changed on disk since the preview") as error:
        ws.apply(plan)
    assert "someone else 7" in error.value.diff
    assert (root / "big.py").read_bytes() == changed
    assert temp_names(root) == []
    if history:
        assert ws.history(all_sessions=True) == []


def test_a_rewrite_within_one_clock_tick_is_caught_by_the_last_compare(root: Path) -> None:
    """Size, inode and both times unchanged: only the full compare before the replace sees it."""
    target = root / "big.py"
    same_size = BIG.replace(b"line 000007 of", b"LINE 000007 of", 1)
    ws = workspace(root)
    for _attempt in range(200):
        target.write_bytes(BIG)
        plan = plan_big(ws)
        before = identity_of(os.stat(target))
        with open(target, "r+b") as handle:  # in place: same inode, same size
            handle.write(same_size)
        if identity_of(os.stat(target)) == before:
            break
    else:
        # Multigrain time stamps (Linux 6.13+) give a file read since its last change a fine
        # time at the next one, so the race cannot be won here: the workspace is told the
        # rewritten file's identity instead, which is what such a rewrite looks like elsewhere.
        ws._source._identities["big.py"] = (plan.files[0].before_bytes, identity_of(os.stat(target)))  # noqa: SLF001
    assert ws._source.unchanged("big.py", plan.files[0].before_bytes)  # noqa: SLF001 - the early check passes
    with pytest.raises(StaleFile, match="changed on disk since the preview; nothing was written"):
        ws.apply(plan)
    assert target.read_bytes() == same_size
    assert temp_names(root) == [] and ws.history(all_sessions=True) == []


def test_a_file_changed_while_the_entry_is_recorded_is_refused_and_the_entry_dropped(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changed = BIG.replace(b"line 000009 of", b"LINE 000009 of", 1)
    real_begin = HistoryStore.begin

    def begin_then_someone_writes(self: HistoryStore, draft: object) -> str:
        entry = real_begin(self, draft)  # type: ignore[arg-type]
        (root / "big.py").write_bytes(changed)
        return entry

    monkeypatch.setattr(HistoryStore, "begin", begin_then_someone_writes)
    ws = workspace(root)
    with pytest.raises(StaleFile, match="changed on disk since the preview; nothing was written"):
        ws.apply(plan_big(ws))
    assert (root / "big.py").read_bytes() == changed
    assert temp_names(root) == []
    monkeypatch.undo()
    assert ws.history(all_sessions=True) == []  # the pending entry was aborted


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("rewrite", "changed on disk"),
        ("same size", "changed on disk"),
        ("delete", "was deleted"),
        ("link", "became a symbolic link"),
        ("create", "was created"),
    ],
)
def test_a_file_changed_right_before_the_replace_is_refused(
    tmp_path: Path, change: str, message: str
) -> None:
    target = tmp_path / "big.py"
    target.write_bytes(BIG)
    created = tmp_path / "new.txt"
    writes = [
        Write(target, EDITED, BIG, identity=identity_of(os.stat(target))),
        Write(created, b"new\n", None),
    ]
    (tmp_path / "elsewhere.txt").write_bytes(BIG)

    def someone_else(point: str, path: Path) -> None:
        if point != "verify" or path != target:
            return
        if change == "rewrite":
            target.write_bytes(b"other\n")
        elif change == "same size":
            with open(target, "r+b") as handle:
                handle.write(b"X")
        elif change == "delete":
            target.unlink()
        elif change == "link":
            target.unlink()
            target.symlink_to(tmp_path / "elsewhere.txt")
        else:
            created.write_bytes(b"someone else's\n")

    before = {path.name: (path.read_bytes() if path.exists() else None) for path in (target, created)}
    with pytest.raises(StaleFile, match=f"{message} since the preview; nothing was written"):
        apply_writes(writes, root=tmp_path, fault=someone_else)
    assert temp_names(tmp_path) == []
    if change == "create":
        assert created.read_bytes() == b"someone else's\n" and target.read_bytes() == BIG
    elif change in ("rewrite", "same size"):
        assert target.read_bytes() != before["big.py"] and not created.exists()
    elif change == "link":
        assert target.is_symlink() and (tmp_path / "elsewhere.txt").read_bytes() == BIG
    else:
        assert not target.exists() and not created.exists()


def test_an_unchanged_identity_skips_the_early_compare_but_never_the_last(tmp_path: Path) -> None:
    """A write whose identity matches but whose original is wrong: refused right before the replace."""
    target = tmp_path / "big.py"
    target.write_bytes(BIG)
    wrong = BIG.replace(b"line 000001", b"LINE 000001", 1)
    points: list[str] = []
    with pytest.raises(StaleFile, match="changed on disk"):
        apply_writes(
            [Write(target, EDITED, wrong, identity=identity_of(os.stat(target)))],
            fault=lambda point, path: points.append(point),
        )
    assert points == ["write", "fsync", "verify"]  # passed the early check, stopped by the last
    assert target.read_bytes() == BIG and temp_names(tmp_path) == []
    with pytest.raises(StaleFile, match="changed on disk"):  # no identity: the early compare stops it
        apply_writes([Write(target, EDITED, wrong)], fault=lambda point, path: points.append(point + "!"))
    assert not any(point.endswith("!") for point in points)


# -- what runs meanwhile, and what a crash would leave -----------------------------------


def test_no_temporary_file_has_a_name_while_the_entry_is_recorded(tmp_path: Path) -> None:
    target = tmp_path / "big.py"
    target.write_bytes(BIG)
    seen: list[list[str]] = []

    def record() -> None:  # a crash here must leave nothing a recovery could not attribute
        seen.append(temp_names(tmp_path))

    apply_writes([Write(target, EDITED, BIG)], root=tmp_path, meanwhile=record)
    assert seen == [[]]
    assert target.read_bytes() == EDITED and temp_names(tmp_path) == []


def test_without_unnamed_files_the_entry_is_recorded_before_any_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(temp_copies, "ANONYMOUS", 0)  # a system without O_TMPFILE
    target = tmp_path / "big.py"
    target.write_bytes(BIG)
    order: list[str] = []
    apply_writes(
        [Write(target, EDITED, BIG)],
        meanwhile=lambda: order.append("meanwhile " + ",".join(temp_names(tmp_path))),
        fault=lambda point, path: order.append(point),
    )
    assert order == ["meanwhile ", "write", "fsync", "verify", "replace", "fsync-dir"]
    assert target.read_bytes() == EDITED


@pytest.mark.parametrize("point", ["write", "fsync"])
@pytest.mark.parametrize("size", ["small", "written beside"])
def test_a_write_failing_while_the_entry_is_recorded_rolls_back(
    tmp_path: Path, point: str, size: str
) -> None:
    target = tmp_path / "big.py"
    original = BIG if size == "small" else BIG * (atomic.WRITTEN_BESIDE // len(BIG) + 1)
    target.write_bytes(original)
    recorded: list[bool] = []

    def fault(at: str, path: Path) -> None:
        if at == point:
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(WriteError, match="writing a temporary copy of .*nothing was changed"):
        apply_writes(
            [Write(target, original + b"more\n", original)],
            fault=fault,
            meanwhile=lambda: recorded.append(True),
        )
    assert target.read_bytes() == original and temp_names(tmp_path) == []
    # a small file is written before the recording starts, a big one beside it
    assert recorded == ([] if point == "write" and size == "small" else [True])


def test_a_big_file_written_beside_the_recording_lands_whole(tmp_path: Path) -> None:
    target = tmp_path / "big.py"
    original = BIG * (atomic.WRITTEN_BESIDE // len(BIG) + 1)
    target.write_bytes(original)
    os.chmod(target, 0o640)
    edited = original.replace(b"line 003999", b"LINE 003999")
    seen: list[list[str]] = []
    apply_writes([Write(target, edited, original)], meanwhile=lambda: seen.append(temp_names(tmp_path)))
    assert seen == [[]] and target.read_bytes() == edited
    assert os.stat(target).st_mode & 0o777 == 0o640 and temp_names(tmp_path) == []


@pytest.mark.parametrize("error", [HistoryError("the store is broken"), KeyboardInterrupt()])
def test_what_the_recording_raises_is_raised_as_is_after_the_rollback(
    tmp_path: Path, error: BaseException
) -> None:
    target = tmp_path / "big.py"
    target.write_bytes(BIG)

    def record() -> None:
        raise error

    with pytest.raises(type(error)) as raised:
        apply_writes([Write(target, EDITED, BIG)], meanwhile=record)
    assert raised.value is error
    assert target.read_bytes() == BIG and temp_names(tmp_path) == []
    assert not [call for call in background._running if call.name == "nbedit-write"]


def test_apply_leaves_no_thread_of_its_own_running(root: Path) -> None:
    ws = workspace(root)
    ws.apply(plan_big(ws))
    names = {thread.name for thread in threading.enumerate() if thread.name.startswith("nbedit-")}
    names |= {call.name for call in background._running}  # threads started by nbedit.background
    assert names <= {"nbedit-history-compact"}  # the store's idle packing, started on purpose
    assert (root / "big.py").read_bytes() == EDITED
    (entry,) = ws.history()
    ws.undo(entry.id)
    assert (root / "big.py").read_bytes() == BIG
    ws.close()


# -- the history store, opened while planning ----------------------------------------------


def _broken_home(kind: str, base: Path) -> Path:
    if kind == "a file":
        home = base / "home-file"
        home.write_text("not a folder\n")
        return home
    if kind == "under a file":
        (base / "plain").write_text("x\n")
        return base / "plain" / "home"
    home = base / "newer"
    home.mkdir()
    import sqlite3

    connection = sqlite3.connect(home / "history.sqlite3")
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    return home


@pytest.mark.parametrize("kind", ["a file", "under a file", "a newer schema"])
def test_a_home_that_cannot_open_fails_the_apply_as_before(root: Path, tmp_path: Path, kind: str) -> None:
    home = _broken_home(kind, tmp_path)
    with pytest.raises(HistoryError) as direct:
        HistoryStore.open_or_recreate(home)
    ws = workspace(root, home=home)
    plan = plan_big(ws)  # the store starts opening here, on another thread
    with pytest.raises(HistoryError) as raised:
        ws.apply(plan)
    assert str(raised.value) == str(direct.value)
    assert (root / "big.py").read_bytes() == BIG and temp_names(root) == []
    # the same error every time, and the workspace still works without a history
    with pytest.raises(HistoryError):
        ws.apply(plan_big(ws))
    workspace(root, home=home, history=False).apply(plan_big(workspace(root, history=False)))
    assert (root / "big.py").read_bytes() == EDITED


def test_a_store_opened_for_a_plan_never_applied_is_closed_cleanly(root: Path, tmp_path: Path) -> None:
    ws = workspace(root, home=tmp_path / "quiet")
    plan_big(ws)
    ws.close()  # joins the opening and closes what it opened
    ws.apply(plan_big(ws))  # opens again when next used
    assert len(ws.history()) == 1
    ws.close()


# -- the notebook read while its modules import --------------------------------------------


_FRESH_PLAN = r"""
import sys
from pathlib import Path
import nbedit
assert "nbedit.engine.notebook" not in sys.modules
ws = nbedit.Workspace(sys.argv[1], history=False)
try:
    plan = ws.plan_edit(sys.argv[2], "print(1)", "print(2)")
except nbedit.NbeditError as error:
    print("ERROR", type(error).__name__, error)
else:
    sys.stdout.buffer.write(plan.files[0].after_bytes)
"""


def _notebook(path: Path) -> bytes:
    import json

    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": [f"print({i})\n", "x = 1"]} for i in range(3)]  # fmt: skip
    data = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1).encode()
    path.write_bytes(data)
    return data


def test_a_notebook_read_meanwhile_plans_exactly_as_one_read_in_line(root: Path) -> None:
    _notebook(root / "n.ipynb")
    fresh = subprocess.run(
        [sys.executable, "-c", _FRESH_PLAN, str(root), "n.ipynb"], capture_output=True, check=True
    ).stdout
    in_line = workspace(root, history=False).plan_edit("n.ipynb", "print(1)", "print(2)").files[0].after_bytes
    assert fresh == in_line and b"print(2)" in fresh


@pytest.mark.parametrize("kind", ["folder", "missing"])
def test_a_notebook_that_cannot_be_read_meanwhile_fails_as_before(root: Path, kind: str) -> None:
    if kind == "folder":
        (root / "n.ipynb").mkdir()
    fresh = subprocess.run(
        [sys.executable, "-c", _FRESH_PLAN, str(root), "n.ipynb"], capture_output=True, text=True, check=True
    ).stdout
    with pytest.raises(nbedit.NbeditError) as in_line:
        workspace(root, history=False).plan_edit("n.ipynb", "print(1)", "print(2)")
    assert fresh.strip() == f"ERROR {type(in_line.value).__name__} {in_line.value}"


def test_a_new_home_is_flushed_once_for_its_database_and_its_linked_copies(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "new-home"
    flushed: list[str] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:  # the real fsync, with a note of what it flushed
        with contextlib.suppress(OSError):
            flushed.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    ws = workspace(root, home=home)
    ws.apply(plan_big(ws))
    ws.close()
    assert flushed.count(str(home)) == 1  # the database and the blob folder: one fsync of the home
    assert str(home / "blobs") in flushed  # the link itself is made durable in its folder
    assert (home / "blobs").is_dir() and (root / "big.py").read_bytes() == EDITED


def test_a_big_file_flushed_while_planning_is_joined_before_its_link(root: Path, tmp_path: Path) -> None:
    big = BIG * (atomic.WRITTEN_BESIDE // len(BIG) + 1)  # over the size flushed early
    (root / "big.py").write_bytes(big)
    ws = workspace(root, home=tmp_path / "flushed")
    plan = ws.plan_edit("big.py", "line 003999 of", "LINE 003999 of", replace_all=True)
    assert "big.py" in ws._source._syncing  # noqa: SLF001 - the flush started with the read
    ws.apply(plan)
    assert ws._source._syncing == {}  # noqa: SLF001 - joined before the entry linked the file
    assert not [call for call in background._running if call.name == "nbedit-flush"]
    assert os.listdir(tmp_path / "flushed" / "blobs")  # the old file is the entry's linked keyframe
    (entry,) = ws.history()
    ws.undo(entry.id)
    assert (root / "big.py").read_bytes() == big
    ws.close()
