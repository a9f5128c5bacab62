"""Per-folder locks across real processes: found from the file, never from a home."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from nbedit.errors import WriteError
from nbedit.storage.locks import lock_paths

context = multiprocessing.get_context("fork")


def hold_lock(path: Path, acquired, release) -> None:  # type: ignore[no-untyped-def]
    with lock_paths([path]):
        acquired.set()
        release.wait(30)


def increment(path: Path, times: int) -> None:
    for _ in range(times):
        with lock_paths([path]):
            value = int(path.read_text())
            time.sleep(0.0005)  # widen the window a lost update would need
            path.write_text(str(value + 1))


def lock_in_order(paths: list[Path], times: int, counter: Path) -> None:
    for _ in range(times):
        with lock_paths(paths, timeout=20):
            value = int(counter.read_text())
            counter.write_text(str(value + 1))


def test_lock_blocks_another_process_until_released(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    acquired, release = context.Event(), context.Event()
    holder = context.Process(target=hold_lock, args=(target, acquired, release))
    holder.start()
    try:
        assert acquired.wait(30)
        with (
            pytest.raises(WriteError, match="another process is writing") as raised,
            lock_paths([target], timeout=0.2),
        ):
            pass
        assert raised.value.path == str(target)
    finally:
        release.set()
        holder.join(30)
    with lock_paths([target], timeout=5):
        pass


def test_lock_is_released_when_the_holder_is_killed(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    acquired, release = context.Event(), context.Event()
    holder = context.Process(target=hold_lock, args=(target, acquired, release))
    holder.start()
    assert acquired.wait(30)
    holder.kill()
    holder.join(30)
    with lock_paths([target], timeout=5):
        pass


def test_no_lost_updates_across_processes(tmp_path: Path) -> None:
    counter = tmp_path / "counter.txt"
    counter.write_text("0")
    workers = [context.Process(target=increment, args=(counter, 50)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert counter.read_text() == "200"


def test_opposite_orders_do_not_deadlock(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    counter = tmp_path / "counter.txt"
    counter.write_text("0")
    workers = [
        context.Process(target=lock_in_order, args=([first, second, counter], 40, counter)),
        context.Process(target=lock_in_order, args=([counter, second, first], 40, counter)),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert counter.read_text() == "80"


def test_locking_creates_nothing_in_the_tree_and_needs_no_home(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("a")
    with lock_paths([tree / "a.txt", tree / "new.txt"]):
        assert sorted(p.name for p in tree.iterdir()) == ["a.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree"]


def test_missing_folders_made_for_a_lock_are_removed_when_nothing_was_written(tmp_path: Path) -> None:
    with lock_paths([tmp_path / "new" / "deeper" / "f.txt"]):
        assert (tmp_path / "new" / "deeper").is_dir()
    assert list(tmp_path.iterdir()) == []


def test_spellings_of_one_path_share_a_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    monkeypatch.chdir(tmp_path)
    spellings = [
        Path("real/f.txt"),
        tmp_path / "real" / "f.txt",
        tmp_path / "alias" / "f.txt",
        Path("real/../real/f.txt"),
    ]
    with lock_paths(spellings):  # one folder, locked once, not deadlocked on
        acquired, release = context.Event(), context.Event()
        holder = context.Process(target=hold_lock, args=(tmp_path / "alias" / "g.txt", acquired, release))
        holder.start()
        assert not acquired.wait(0.5)  # the other spelling waits for the same folder lock
        release.set()
    assert acquired.wait(30)
    holder.join(30)


def test_lock_released_after_an_exception(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), lock_paths([tmp_path / "a"]):
        raise RuntimeError("inside")
    acquired, release = context.Event(), context.Event()
    holder = context.Process(target=hold_lock, args=(tmp_path / "a", acquired, release))
    holder.start()
    assert acquired.wait(30)
    release.set()
    holder.join(30)
