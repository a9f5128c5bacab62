"""Per-file locks across real processes."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from nbedit.errors import WriteError
from nbedit.storage.locks import lock_file_for, lock_paths

context = multiprocessing.get_context("fork")


def hold_lock(path: Path, home: Path, acquired, release) -> None:  # type: ignore[no-untyped-def]
    with lock_paths([path], home=home):
        acquired.set()
        release.wait(30)


def increment(path: Path, home: Path, times: int) -> None:
    for _ in range(times):
        with lock_paths([path], home=home):
            value = int(path.read_text())
            time.sleep(0.0005)  # widen the window a lost update would need
            path.write_text(str(value + 1))


def lock_in_order(paths: list[Path], home: Path, times: int, counter: Path) -> None:
    for _ in range(times):
        with lock_paths(paths, home=home, timeout=20):
            value = int(counter.read_text())
            counter.write_text(str(value + 1))


def test_lock_blocks_another_process_until_released(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    home = tmp_path / "home"
    acquired, release = context.Event(), context.Event()
    holder = context.Process(target=hold_lock, args=(target, home, acquired, release))
    holder.start()
    try:
        assert acquired.wait(30)
        with (
            pytest.raises(WriteError, match="another process is writing") as raised,
            lock_paths([target], home=home, timeout=0.2),
        ):
            pass
        assert raised.value.path == str(target)
    finally:
        release.set()
        holder.join(30)
    with lock_paths([target], home=home, timeout=5):
        pass


def test_lock_is_released_when_the_holder_is_killed(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    home = tmp_path / "home"
    acquired, release = context.Event(), context.Event()
    holder = context.Process(target=hold_lock, args=(target, home, acquired, release))
    holder.start()
    assert acquired.wait(30)
    holder.kill()
    holder.join(30)
    with lock_paths([target], home=home, timeout=5):
        pass


def test_no_lost_updates_across_processes(tmp_path: Path) -> None:
    counter = tmp_path / "counter.txt"
    counter.write_text("0")
    home = tmp_path / "home"
    workers = [context.Process(target=increment, args=(counter, home, 50)) for _ in range(4)]
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
    home = tmp_path / "home"
    workers = [
        context.Process(target=lock_in_order, args=([first, second, counter], home, 40, counter)),
        context.Process(target=lock_in_order, args=([counter, second, first], home, 40, counter)),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert counter.read_text() == "80"


def test_lock_files_live_in_home_not_in_the_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("a")
    home = tmp_path / "home"
    with lock_paths([tree / "a.txt", tree / "new.txt"], home=home):
        assert sorted(p.name for p in tree.iterdir()) == ["a.txt"]
    assert len(list((home / "locks").glob("*.lock"))) == 2


def test_spellings_of_one_path_share_a_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    spellings = [
        Path("real/f.txt"),
        tmp_path / "real" / "f.txt",
        tmp_path / "alias" / "f.txt",
        Path("real/../real/f.txt"),
    ]
    assert len({lock_file_for(path, home) for path in spellings}) == 1
    with lock_paths(spellings, home=home):  # duplicates are locked once, not deadlocked on
        pass


def test_lock_released_after_an_exception(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(RuntimeError), lock_paths([tmp_path / "a"], home=home):
        raise RuntimeError("inside")
    acquired, release = context.Event(), context.Event()
    holder = context.Process(target=hold_lock, args=(tmp_path / "a", home, acquired, release))
    holder.start()
    assert acquired.wait(30)
    release.set()
    holder.join(30)


def test_unwritable_home_is_a_write_error(tmp_path: Path) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("a file where the home directory should be")
    with pytest.raises(WriteError, match="NBEDIT_HOME"), lock_paths([tmp_path / "a"], home=blocker):
        pass
    assert os.path.isfile(blocker)
