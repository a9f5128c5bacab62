"""Issue 10 items 10-13: locks across homes, crashes, damaged histories and files nbedit did not make."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import nbedit
from nbedit.errors import HistoryError, StaleFile
from nbedit.storage.atomic import is_temp_file
from nbedit.warnings import NbeditWarning

context = multiprocessing.get_context("fork")


def _writer(root: str, home: str, text: str, barrier, results) -> None:  # type: ignore[no-untyped-def]
    ws = nbedit.Workspace(root, home=home)
    plan = ws.plan_edit("counter.txt", "count = 0", f"count = {text}")
    barrier.wait(30)
    try:
        ws.apply(plan)
        results.put("applied")
    except StaleFile:
        results.put("stale")
    except Exception as error:  # noqa: BLE001 - reported to the test
        results.put(f"error {type(error).__name__}: {error}")


def test_two_homes_never_both_apply(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    trials = int(os.environ.get("NBEDIT_LOCK_TRIALS", "20"))
    for trial in range(trials):
        (root / "counter.txt").write_bytes(b"count = 0\n")
        barrier, results = context.Barrier(2), context.Queue()
        writers = [
            context.Process(
                target=_writer, args=(str(root), str(tmp_path / f"home-{who}"), who, barrier, results)
            )
            for who in ("a", "b")
        ]
        for writer in writers:
            writer.start()
        outcomes = sorted(results.get(timeout=60) for _ in writers)
        for writer in writers:
            writer.join(30)
        assert outcomes == ["applied", "stale"], f"trial {trial}: {outcomes}"
        assert (root / "counter.txt").read_bytes() in (b"count = a\n", b"count = b\n")


CRASH = """
import os, signal, sys
sys.path.insert(0, {repository!r})
import nbedit
ws = nbedit.Workspace({root!r}, session="crash")
plan = ws.plan_patch(
    "*** Begin Patch\\n*** Update File: a.txt\\n@@\\n-a\\n+A\\n*** Update File: b.txt\\n@@\\n-b\\n+B\\n*** End Patch\\n"
)
real_replace = os.replace
def replace(*args, **kwargs):
    if args[1] == "b.txt":
        os.kill(os.getpid(), signal.SIGKILL)  # a crash between the two renames
    return real_replace(*args, **kwargs)
os.replace = replace
ws.apply(plan)
"""


def test_a_crash_mid_rename_is_recorded_as_partial_and_undone_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"a\n")
    (root / "b.txt").write_bytes(b"b\n")
    script = CRASH.format(repository=str(Path(nbedit.__file__).parents[1]), root=str(root))
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert completed.returncode == -signal.SIGKILL
    assert (root / "a.txt").read_bytes() == b"A\n" and (root / "b.txt").read_bytes() == b"b\n"
    assert [path.name for path in root.iterdir() if is_temp_file(path.name)]  # the crash left a temp copy
    ws = nbedit.Workspace(root, session="crash")
    [entry] = ws.history()
    assert entry.partial and entry.status == "applied"
    # recovery removed the temporary copy that writer provably made
    assert [path.name for path in root.iterdir() if is_temp_file(path.name)] == []
    result = ws.undo()  # no --force needed: only a.txt was written, so only a.txt is reverted
    assert result.written == ("a.txt",)
    assert (root / "a.txt").read_bytes() == b"a\n" and (root / "b.txt").read_bytes() == b"b\n"


MOVE_CRASH = """
import os, signal, sys
sys.path.insert(0, {repository!r})
import nbedit
ws = nbedit.Workspace({root!r}, session="crash")
plan = ws.plan_patch(
    "*** Begin Patch\\n*** Update File: a.txt\\n*** Move to: b.txt\\n@@\\n-a\\n+A\\n*** End Patch\\n"
)
real_replace = os.replace
def replace(*args, **kwargs):
    if str(args[1]).endswith(".old"):
        os.kill(os.getpid(), signal.SIGKILL)  # the new copy is written, the old file not yet removed
    return real_replace(*args, **kwargs)
os.replace = replace
ws.apply(plan)
"""


def test_a_move_cut_short_by_a_crash_is_undone_without_force(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"a\n")
    script = MOVE_CRASH.format(repository=str(Path(nbedit.__file__).parents[1]), root=str(root))
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert completed.returncode == -signal.SIGKILL, completed.stderr
    assert (root / "a.txt").read_bytes() == b"a\n" and (root / "b.txt").read_bytes() == b"A\n"
    ws = nbedit.Workspace(root, session="crash")
    [entry] = ws.history()
    assert entry.partial
    assert ws.undo().written == ("b.txt",)
    assert sorted(path.name for path in root.iterdir()) == ["a.txt"]
    assert (root / "a.txt").read_bytes() == b"a\n"


def test_damage_found_after_open_points_to_doctor_which_repairs_it(tmp_path: Path, nbedit_home: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"one\n")
    ws = nbedit.Workspace(tmp_path)
    first = ws.apply(ws.plan_edit("notes.txt", "one", "two")).entry_id
    assert first is not None
    database = nbedit_home / "history.sqlite3"
    ws._store().close()  # type: ignore[no-untyped-call]
    for companion in ("-wal", "-shm"):
        Path(str(database) + companion).unlink(missing_ok=True)
    database.write_bytes(os.urandom(8192))
    with pytest.raises(HistoryError, match="nbedit doctor --repair"):
        ws.apply(ws.plan_edit("notes.txt", "two", "three"))
    assert (tmp_path / "notes.txt").read_bytes() == b"two\n"
    checked = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor"], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 1 and "damaged" in checked.stdout and "--repair" in checked.stdout
    repaired = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor", "--repair", "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "moved the damaged database" in repaired.stdout
    assert list(nbedit_home.glob("history.sqlite3.corrupt-*"))
    again = nbedit.Workspace(tmp_path)
    second = again.apply(again.plan_edit("notes.txt", "two", "three")).entry_id
    assert second is not None and int(second[1:], 16) > int(first[1:], 16)


def test_an_emptied_database_never_reuses_entry_ids(tmp_path: Path, nbedit_home: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"0\n")
    ws = nbedit.Workspace(tmp_path)
    ids = [ws.apply(ws.plan_edit("notes.txt", f"{n}", f"{n + 1}")).entry_id for n in range(3)]
    ws._store().close()  # type: ignore[no-untyped-call]
    database = nbedit_home / "history.sqlite3"
    for companion in ("-wal", "-shm"):
        Path(str(database) + companion).unlink(missing_ok=True)
    database.write_bytes(b"")
    fresh = nbedit.Workspace(tmp_path)
    with pytest.warns(NbeditWarning, match="was empty"):
        later = fresh.apply(fresh.plan_edit("notes.txt", "3", "4")).entry_id
    assert later not in ids and int(later[1:], 16) > max(int(i[1:], 16) for i in ids)  # type: ignore[index]


def test_doctor_on_a_healthy_and_on_an_absent_history(tmp_path: Path) -> None:
    absent = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor"], capture_output=True, text=True, timeout=120
    )
    assert absent.returncode == 0 and "no history database yet" in absent.stdout
    (tmp_path / "notes.txt").write_bytes(b"one\n")
    ws = nbedit.Workspace(tmp_path)
    ws.apply(ws.plan_edit("notes.txt", "one", "two"))
    healthy = subprocess.run(
        [sys.executable, "-m", "nbedit", "doctor"], capture_output=True, text=True, timeout=120
    )
    assert healthy.returncode == 0 and "database ok: 1 entries" in healthy.stdout


def _dead_pid() -> int:
    process = context.Process(target=int)
    process.start()
    process.join()
    assert process.pid is not None
    return process.pid


@pytest.mark.parametrize("history", [True, False])
def test_user_files_named_like_temporary_files_are_never_deleted(tmp_path: Path, history: bool) -> None:
    pid = _dead_pid()
    lookalikes = [tmp_path / f".notes.txt.nbedit-{pid}-0badcafe.{suffix}" for suffix in ("tmp", "old")]
    for path in lookalikes:
        path.write_bytes(b"my own data\n")
    (tmp_path / "notes.txt").write_bytes(b"one\n")
    ws = nbedit.Workspace(tmp_path, history=history)
    ws.apply(ws.plan_edit("notes.txt", "one", "two"))
    if history:
        ws.undo()
    assert all(path.read_bytes() == b"my own data\n" for path in lookalikes)


def test_the_lock_is_found_from_the_file_not_from_the_home(tmp_path: Path) -> None:
    """A writer holding the lock through one home blocks a writer using another home."""
    (tmp_path / "notes.txt").write_bytes(b"one\n")
    code = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from nbedit.storage.locks import lock_paths
        with lock_paths([Path({str(tmp_path / "notes.txt")!r})], root=Path({str(tmp_path)!r})):
            print("locked", flush=True)
            time.sleep(3)
        """
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "NBEDIT_HOME": str(tmp_path / "other-home")},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        from nbedit.storage.locks import lock_paths

        with (
            pytest.raises(nbedit.WriteError, match="another process is writing"),
            lock_paths([tmp_path / "notes.txt"], root=tmp_path, timeout=0.3),
        ):
            pass
    finally:
        holder.wait(30)
