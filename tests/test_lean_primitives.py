"""The stand-ins a command uses so that it need not import ``threading`` or ``contextlib``.

Each is checked against what it stands in for: the history's ``Closing`` flag against
``threading.Event`` (and that a ``set`` from another thread wakes a waiter, and that closing a
store stops its idle compactor at once), ``lock_paths`` as a class against the generator it was
(every folder descriptor closed and every folder it made removed, on success, on an error in the
block and on a refused lock), and the locks that were ``threading``'s (``_thread``'s own types).
"""

from __future__ import annotations

import _thread
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nbedit import _gc
from nbedit.engine import digest
from nbedit.errors import WriteError
from nbedit.storage import history as history_module
from nbedit.storage.database import Database
from nbedit.storage.history_state import Closing
from nbedit.storage.locks import lock_paths
from nbedit.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]


def open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# --- Closing: threading.Event's is_set / set / clear / wait -----------------------------------------


@pytest.mark.parametrize(
    "steps",
    [
        "",
        "s",
        "sc",
        "ss",
        "cc",
        "scs",
        "w",
        "sw",
        "swc",
        "scw",
        "wsw",
        "wswcw",
        "swswcwsw",
    ],
)
def test_closing_reads_as_an_event_after_every_sequence(steps: str) -> None:
    closing, event = Closing(), threading.Event()
    for step in steps:
        for flag in (closing, event):
            if step == "s":
                flag.set()
            elif step == "c":
                flag.clear()
        if step == "w":
            assert closing.wait(0.01) == event.wait(0.01)
        assert closing.is_set() == event.is_set()
    assert closing.wait(0) == event.wait(0)


def test_closing_wakes_a_waiter_set_from_another_thread() -> None:
    closing = Closing()
    woke: list[tuple[bool, float]] = []

    def waiter() -> None:
        started = time.monotonic()
        woke.append((closing.wait(30), time.monotonic() - started))

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.1)  # the waiter is (most likely) inside wait by now; either way it must wake
    closing.set()
    thread.join(10)
    assert woke and woke[0][0] is True and woke[0][1] < 10
    closing.clear()
    assert closing.wait(0.05) is False  # cleared: the next wait times out again


def test_closing_makes_no_event_until_someone_waits() -> None:
    code = (
        "import sys\n"
        "from nbedit.storage.history_state import Closing\n"
        "flag = Closing(); flag.set(); flag.clear(); flag.set()\n"
        "assert flag.is_set() and 'threading' not in sys.modules\n"
        "assert flag.wait(0) and 'threading' in sys.modules\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr


def test_closing_a_store_stops_its_idle_compactor_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the compactor waits IDLE_SECONDS (here a minute) on the store's Closing flag; close() sets it
    monkeypatch.setattr(history_module, "IDLE_SECONDS", 60.0)
    root = tmp_path / "root"
    root.mkdir()
    workspace = Workspace(root, home=tmp_path / "home")
    text = "".join(f"value_{number} = compute({number}, '')\n" for number in range(6000))  # linked, not packed
    (root / "big.py").write_text(text, encoding="utf-8")
    workspace.apply(workspace.plan_edit("big.py", "value_10 = compute(10, '')", "value_10 = compute(10, 'x')"))
    store = workspace._history  # noqa: SLF001 - the compactor is the store's own thread
    assert store is not None
    compactor = store._compactor  # noqa: SLF001
    assert compactor is not None and compactor.running()  # a copy was linked: it waits to pack it
    started = time.monotonic()
    workspace.close()
    deadline = time.monotonic() + 10
    while compactor.running() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not compactor.running()
    assert time.monotonic() - started < 10  # not the minute it was waiting for


# --- lock_paths as a class -----------------------------------------------------------------------


def test_a_lock_releases_everything_after_its_block(tmp_path: Path) -> None:
    target = tmp_path / "new folder" / "deeper" / "file.txt"  # folders made for the lock, then removed
    before = open_descriptors()
    with lock_paths([target], timeout=5):
        assert (tmp_path / "new folder" / "deeper").is_dir()
    assert not (tmp_path / "new folder").exists()
    assert open_descriptors() == before
    with lock_paths([target], timeout=0.2):  # released: a new lock gets it at once
        pass


def test_a_lock_releases_everything_after_an_error_in_its_block(tmp_path: Path) -> None:
    target = tmp_path / "made" / "file.txt"
    before = open_descriptors()
    with pytest.raises(KeyError), lock_paths([target], timeout=5):
        raise KeyError("in the block")
    assert not (tmp_path / "made").exists()
    assert open_descriptors() == before
    with lock_paths([target], timeout=0.2):
        pass


def test_a_refused_lock_leaves_nothing_open_and_nothing_made(tmp_path: Path) -> None:
    held = tmp_path / "file.txt"
    held.write_text("x")
    with lock_paths([held], timeout=5):  # another open file description: flock refuses the second
        before = open_descriptors()
        waiting = lock_paths([tmp_path / "other" / "file.txt", held], timeout=0.2)
        with pytest.raises(WriteError, match="another process is writing"), waiting:
            pass
        assert not (tmp_path / "other").exists()  # the folder made for the first path is gone again
        assert open_descriptors() == before


def test_nothing_is_locked_until_the_block_is_entered(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    waiting = lock_paths([target], timeout=5)
    with lock_paths([target], timeout=0.2):  # the first object has not taken the folder
        pass
    with waiting:
        pass


# --- threading's locks are _thread's ------------------------------------------------------------


def test_the_locks_are_the_ones_threading_would_make(tmp_path: Path) -> None:
    assert type(_gc._lock) is type(threading.Lock())  # noqa: SLF001
    assert type(digest._lock) is type(threading.Lock())  # noqa: SLF001
    database = Database(str(tmp_path / "history.sqlite3"), busy_timeout=1.0)
    assert type(database._lock) is type(threading.RLock()) is _thread.RLock  # noqa: SLF001


def test_the_open_databases_are_held_weakly_for_the_fork_handlers(tmp_path: Path) -> None:
    # what a WeakSet did, without _weakrefset: each live Database is listed (the fork handlers take
    # its lock), and one that is gone is dropped from the list
    import gc

    from nbedit.storage import database as database_module

    first = Database(str(tmp_path / "one.sqlite3"), busy_timeout=1.0)
    second = Database(str(tmp_path / "two.sqlite3"), busy_timeout=1.0)
    key = id(first)
    live = [weak() for weak in database_module._OPEN.values()]  # noqa: SLF001
    assert first in live and second in live
    first.close()
    del first, live
    gc.collect()
    assert key not in database_module._OPEN  # noqa: SLF001
    assert any(weak() is second for weak in database_module._OPEN.values())  # noqa: SLF001
    pid = os.fork()  # the handlers run over the list: the child gets fresh locks and works
    if pid == 0:
        try:
            second.connect().execute("SELECT 1").fetchall()
            os._exit(0 if type(second._lock) is _thread.RLock else 1)  # noqa: SLF001
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    second.close()


# --- Entry and FileSummary, made when the history is first listed -----------------------------------


def test_entry_and_file_summary_are_the_same_classes_from_every_module() -> None:
    import pickle

    from nbedit import storage
    from nbedit.storage import entries, records
    from nbedit.storage import history as history_module

    assert records.Entry is history_module.Entry is storage.Entry is entries.Entry
    assert records.FileSummary is history_module.FileSummary is entries.FileSummary
    entry = records.Entry(
        "e00000001", "s", 1.0, "cli", None, "applied", (records.FileSummary("a.py", None, 1, 2),),
        ("exact",), "a.py: +1 -2", None,
    )
    assert pickle.loads(pickle.dumps(entry)) == entry
    # a pickle written when the classes lived in records still reads (records gives them by name)
    older = pickle.dumps(entry, 0).replace(b"nbedit.storage.entries", b"nbedit.storage.records")
    assert b"nbedit.storage.records" in older and pickle.loads(older) == entry
    with pytest.raises(AttributeError):
        records.NoSuchName  # noqa: B018
    with pytest.raises(AttributeError):
        history_module.NoSuchName  # noqa: B018


_APPLY_AND_LOOK = """
import os, sys
from nbedit import _dataclass
from nbedit.workspace import Workspace
if not os.path.exists("f.txt"):
    with open("f.txt", "w") as handle:
        handle.write("".join(f"line {n}\\n" for n in range(40)))
diff = "--- a/f.txt\\n+++ b/f.txt\\n@@ -3,3 +3,3 @@\\n line 2\\n-line 3\\n+line three\\n line 4\\n"
reverse = diff.replace("-line 3", "-line x").replace("+line three", "+line 3").replace("-line x", "-line three")
workspace = Workspace(".", home="home")
workspace.apply(workspace.plan_patch(diff if sys.argv[1] == "forth" else reverse))
print(sorted(_dataclass._made))
"""


def test_an_apply_makes_no_class_it_does_not_use(tmp_path: Path) -> None:
    # _dataclass makes these when first named (each class ~30 us of a start): the NamedTuple machinery
    # (a change new to the history packs a region delta, a namedtuple: not the same change again),
    # FrozenInstanceError (made when one is raised), the empty metadata (read by dataclasses.fields)
    made = []
    for way in ("forth", "back", "forth"):
        completed = subprocess.run(
            [sys.executable, "-c", _APPLY_AND_LOOK, way],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            cwd=tmp_path,
            timeout=60,
        )
        assert completed.returncode == 0, completed.stderr
        made.append(completed.stdout.strip())
    assert made[0] == "['NamedTuple', '_NamedTupleMeta']"  # the first "after" is packed as a region delta
    assert made[2] == "[]"  # the benchmark's case: the history holds both versions
    assert (tmp_path / "f.txt").read_text(encoding="utf-8").startswith("line 0\nline 1\nline 2\nline three\n")
