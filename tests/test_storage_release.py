"""A replaced file's old inode is let go on another thread (``storage.beside.close_later``).

Some file systems free a file's blocks inside the rename that drops its last name (ext4 with
online discard: milliseconds per megabyte), so the writer keeps the old file open across the
replace and closes it on another thread once the write is done. These tests look at the real
descriptors of this process (``/proc/self/fd``): the old inode is still open right after the
rename, nothing stays open once the write is over (success or rollback), and the bytes on disk
are what the write says.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

import pytest

from nbedit import background
from nbedit.errors import WriteError
from nbedit.storage import atomic
from nbedit.storage.atomic import Write, apply_writes

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")


def descriptors() -> dict[str, str]:
    found = {}
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed meanwhile
            found[name] = os.readlink(f"/proc/self/fd/{name}")
    return found


def released() -> None:
    """Wait for the writer's release thread (at most 10 s)."""
    deadline = time.monotonic() + 10
    while any(call.name == "nbedit-release" for call in list(background._running)):  # noqa: SLF001
        assert time.monotonic() < deadline, "the old files were not let go"
        time.sleep(0.01)


def open_in(folder: Path) -> list[str]:
    """What this process holds open inside ``folder`` (other tests' stores may open and close their
    own files meanwhile: only this test's folder is compared)."""
    return sorted(target for target in descriptors().values() if target.startswith(str(folder)))


def replaced_but_open(folder: Path) -> list[str]:
    """Descriptors of files in ``folder`` whose name is gone (the old inodes the writer holds)."""
    return sorted(
        target
        for target in descriptors().values()
        if target.endswith(" (deleted)") and target.startswith(str(folder))
    )


def test_the_old_file_stays_open_across_the_rename_and_is_let_go_after(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    old, new = os.urandom(300_000), os.urandom(200_000)
    target.write_bytes(old)
    released()
    seen: list[list[str]] = []

    def look(step: str, path: object) -> None:
        if step == "fsync-dir":  # every file is renamed by now, the write is not over
            seen.append(replaced_but_open(tmp_path))

    apply_writes([Write(target, new, old)], fault=look)
    assert seen == [[f"{target} (deleted)"]]  # the rename did not drop the old inode
    assert target.read_bytes() == new
    released()
    assert open_in(tmp_path) == []
    assert not [name for name in os.listdir(tmp_path) if name != "data.bin"]


def test_a_rollback_closes_the_old_files_at_once(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_bytes(b"one\n" * 1000)
    second.write_bytes(b"two\n" * 1000)
    released()

    def fail(step: str, path: object) -> None:
        if step == "fsync-dir":
            raise OSError(5, "injected")

    writes = [Write(first, b"ONE\n", b"one\n" * 1000), Write(second, b"TWO\n", b"two\n" * 1000)]
    with pytest.raises(WriteError, match="nothing was changed"):
        apply_writes(writes, fault=fail)
    assert first.read_bytes() == b"one\n" * 1000 and second.read_bytes() == b"two\n" * 1000
    assert open_in(tmp_path) == []  # no thread to wait for: closed by the rollback itself
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


def test_more_files_than_are_held_open_are_all_written(tmp_path: Path) -> None:
    count = atomic.HELD_OPEN + 20
    paths = [tmp_path / f"f{index:03}.txt" for index in range(count)]
    for index, path in enumerate(paths):
        path.write_text(f"old {index}\n")
    released()
    held: list[int] = []

    def look(step: str, path: object) -> None:
        if step == "fsync-dir" and not held:
            held.append(len(replaced_but_open(tmp_path)))

    apply_writes(
        [
            Write(path, f"new {index}\n".encode(), f"old {index}\n".encode())
            for index, path in enumerate(paths)
        ],
        fault=look,
    )
    assert held == [atomic.HELD_OPEN]  # the rest were let go by their rename, as before
    assert [path.read_text() for path in paths] == [f"new {index}\n" for index in range(count)]
    released()
    assert open_in(tmp_path) == []


def test_a_file_with_another_name_and_an_empty_file_are_not_held(tmp_path: Path) -> None:
    linked, other_name, empty = tmp_path / "linked.txt", tmp_path / "other-name.txt", tmp_path / "empty.txt"
    linked.write_bytes(b"shared\n")
    os.link(linked, other_name)
    empty.write_bytes(b"")
    released()
    seen: list[list[str]] = []

    def look(step: str, path: object) -> None:
        if step == "fsync-dir" and not seen:
            seen.append(replaced_but_open(tmp_path))

    apply_writes([Write(linked, b"changed\n", b"shared\n"), Write(empty, b"now\n", b"")], fault=look)
    assert seen == [[]]  # the inode keeps its other name; the empty file has no blocks to free
    assert linked.read_bytes() == b"changed\n" and other_name.read_bytes() == b"shared\n"
    assert empty.read_bytes() == b"now\n"
    released()
    assert open_in(tmp_path) == []


def test_a_deleted_file_is_let_go_too(tmp_path: Path) -> None:
    doomed, kept = tmp_path / "doomed.txt", tmp_path / "kept.txt"
    doomed.write_bytes(b"x" * 100_000)
    kept.write_bytes(b"k\n")
    released()
    apply_writes([Write(doomed, None, b"x" * 100_000), Write(kept, b"K\n", b"k\n")])
    assert not doomed.exists() and kept.read_bytes() == b"K\n"
    released()
    assert open_in(tmp_path) == []
    assert sorted(os.listdir(tmp_path)) == ["kept.txt"]


def test_a_process_that_ends_right_after_the_write_leaves_the_right_bytes(tmp_path: Path) -> None:
    """The ``nbedit`` program ends with ``os._exit`` right after its output: a release thread
    cut short there loses nothing (the kernel closes the descriptors)."""
    import subprocess

    target = tmp_path / "data.bin"
    old, new = os.urandom(1 << 20), os.urandom(1 << 20)
    target.write_bytes(old)
    (tmp_path / "new.bin").write_bytes(new)
    program = (
        "import os, sys\n"
        "from nbedit.storage.atomic import Write, apply_writes\n"
        "target, new = sys.argv[1], open(sys.argv[2], 'rb').read()\n"
        "apply_writes([Write(target, new, open(target, 'rb').read())])\n"
        "os._exit(0)\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", program, str(target), str(tmp_path / "new.bin")],
        capture_output=True,
        text=True,
        check=False,
        cwd=str(Path(atomic.__file__).parents[2]),
    )
    assert finished.returncode == 0, finished.stderr
    assert target.read_bytes() == new
    assert sorted(os.listdir(tmp_path)) == ["data.bin", "new.bin"]
