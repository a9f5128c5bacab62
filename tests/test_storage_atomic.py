"""The atomic writer: all-or-nothing across files, atomic per file, nothing left behind."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from nbedit.errors import NotAFile, WriteError
from nbedit.storage.atomic import Write, apply_writes, is_temp_file, remove_leftovers, temp_name

FAULT_POINTS = ("write", "fsync", "replace", "fsync-dir")


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every file (bytes), link (target) and directory under root."""
    result: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            result[key] = "link:" + os.readlink(path)
        elif path.is_dir():
            result[key] = "dir"
        else:
            result[key] = path.read_bytes()
    return result


def temp_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if is_temp_file(path.name)]


def dead_pid() -> int:
    process = multiprocessing.get_context("fork").Process(target=int)
    process.start()
    process.join()
    assert process.pid is not None
    return process.pid


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_bytes(b"alpha\n")
    (tmp_path / "b.txt").write_bytes(b"beta\r\n")
    (tmp_path / "gone.txt").write_bytes(b"to be deleted\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.txt").write_bytes(b"gamma\n")
    return tmp_path


def change_everything(root: Path) -> list[Write]:
    """Replace two files, delete one, create one in new directories, move one."""
    return [
        Write(root / "a.txt", b"ALPHA\n", b"alpha\n"),
        Write(root / "b.txt", b"BETA\r\n", b"beta\r\n"),
        Write(root / "gone.txt", None, b"to be deleted\n"),
        Write(root / "new" / "deeper" / "d.txt", b"delta\n", None),
        Write(root / "sub" / "c.txt", None, b"gamma\n"),
        Write(root / "sub" / "moved.txt", b"gamma\n", None),
    ]


def test_applies_every_kind_of_write(tree: Path) -> None:
    apply_writes(change_everything(tree))
    assert snapshot(tree) == {
        "a.txt": b"ALPHA\n",
        "b.txt": b"BETA\r\n",
        "new": "dir",
        "new/deeper": "dir",
        "new/deeper/d.txt": b"delta\n",
        "sub": "dir",
        "sub/moved.txt": b"gamma\n",
    }


@pytest.mark.parametrize("point", FAULT_POINTS)
@pytest.mark.parametrize("failing", [0, 1, 3, 5])
def test_fault_at_any_point_changes_nothing(tree: Path, point: str, failing: int) -> None:
    writes = change_everything(tree)
    before = snapshot(tree)
    failing_target = writes[failing].path
    calls: list[tuple[str, Path]] = []

    def fault(name: str, path: Path) -> None:
        calls.append((name, path))
        # fsync-dir is called per directory, the others per file.
        hit = path == failing_target.parent if name == "fsync-dir" else path == failing_target
        if name == point and hit:
            raise OSError(28, "No space left on device")

    if point in ("write", "fsync") and writes[failing].data is None:
        pytest.skip("deletes are not written to a temporary file")
    with pytest.raises(WriteError) as raised:
        apply_writes(writes, fault=fault)
    assert any(name == point for name, _ in calls)
    assert "nothing was changed" in str(raised.value)
    assert "No space left on device" in str(raised.value)
    assert snapshot(tree) == before
    assert temp_files(tree) == []


@pytest.mark.parametrize("point", FAULT_POINTS)
def test_interrupt_rolls_back_and_propagates(tree: Path, point: str) -> None:
    before = snapshot(tree)

    def fault(name: str, path: Path) -> None:
        if name == point:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        apply_writes(change_everything(tree), fault=fault)
    assert snapshot(tree) == before
    assert temp_files(tree) == []


@pytest.mark.parametrize("mode", [0o755, 0o600, 0o640])
def test_existing_permission_bits_are_kept(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "script.sh"
    target.write_bytes(b"echo one\n")
    target.chmod(mode)
    apply_writes([Write(target, b"echo two\n", b"echo one\n")])
    assert target.read_bytes() == b"echo two\n"
    assert stat.S_IMODE(target.stat().st_mode) == mode


def test_explicit_mode_wins(tmp_path: Path) -> None:
    target = tmp_path / "tool"
    target.write_bytes(b"x\n")
    target.chmod(0o644)
    apply_writes(
        [Write(target, b"y\n", b"x\n", mode=0o755), Write(tmp_path / "new", b"n\n", None, mode=0o700)]
    )
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


def test_new_file_gets_umask_mode(tmp_path: Path) -> None:
    old_umask = os.umask(0o027)
    try:
        apply_writes([Write(tmp_path / "fresh.txt", b"hi\n", None)])
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "fresh.txt").stat().st_mode) == 0o640


def test_rollback_restores_permission_bits(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_bytes(b"old\n")
    target.chmod(0o751)
    other = tmp_path / "other.txt"

    def fault(name: str, path: Path) -> None:
        if name == "replace" and path == other:
            raise OSError("boom")

    with pytest.raises(WriteError):
        apply_writes([Write(target, b"new\n", b"old\n", mode=0o600), Write(other, b"x", None)], fault=fault)
    assert target.read_bytes() == b"old\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert not other.exists()


def test_refuses_to_replace_or_delete_a_directory(tree: Path) -> None:
    before = snapshot(tree)
    with pytest.raises(NotAFile, match="is a directory"):
        apply_writes([Write(tree / "a.txt", b"changed", b"alpha\n"), Write(tree / "sub", b"file", None)])
    with pytest.raises(NotAFile, match="is a directory"):
        apply_writes([Write(tree / "sub", None, b"")])
    assert snapshot(tree) == before


def test_refuses_special_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotAFile, match="not a regular file"):
        apply_writes([Write(fifo, b"x", b"")])


def test_refuses_a_file_in_the_way_of_a_directory(tree: Path) -> None:
    before = snapshot(tree)
    with pytest.raises(NotAFile, match="parent of this path is a file"):
        apply_writes([Write(tree / "a.txt" / "inner.txt", b"x", None)])
    assert snapshot(tree) == before


def test_refuses_the_same_target_twice(tree: Path) -> None:
    with pytest.raises(WriteError, match="appears twice"):
        apply_writes([Write(tree / "a.txt", b"1", b"alpha\n"), Write(tree / "a.txt", b"2", b"alpha\n")])
    assert (tree / "a.txt").read_bytes() == b"alpha\n"


def test_writes_through_symbolic_links(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_bytes(b"one\n")
    link = tmp_path / "link.txt"
    link.symlink_to("real.txt")
    apply_writes([Write(link, b"two\n", b"one\n")])
    assert link.is_symlink()
    assert real.read_bytes() == b"two\n"


def test_deleting_a_link_removes_only_the_link_and_rollback_restores_it(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_bytes(b"one\n")
    link = tmp_path / "link.txt"
    link.symlink_to("real.txt")
    other = tmp_path / "other.txt"

    def fault(name: str, path: Path) -> None:
        if name == "fsync-dir":
            raise OSError("boom")

    with pytest.raises(WriteError):
        apply_writes([Write(link, None, b"one\n"), Write(other, b"x", None)], fault=fault)
    assert link.is_symlink() and os.readlink(link) == "real.txt"
    apply_writes([Write(link, None, b"one\n")])
    assert not link.exists() and not link.is_symlink()
    assert real.read_bytes() == b"one\n"


def test_only_the_leftovers_a_writer_provably_made_are_removed(tmp_path: Path) -> None:
    pid = dead_pid()
    stale = tmp_path / temp_name("a.txt", "0badcafe", "tmp", pid)
    parked = tmp_path / temp_name("a.txt", "0badcafe", "old", pid)
    lookalike = tmp_path / f".b.txt.nbedit-{pid}-0badcafe.tmp"  # a user file named like ours
    other_token = tmp_path / temp_name("a.txt", "12345678", "tmp", pid)
    for path in (stale, parked, lookalike, other_token):
        path.write_bytes(b"partial")
    assert sorted(remove_leftovers(tmp_path, ["a.txt"], pid=pid, token="0badcafe")) == sorted(
        [stale.name, parked.name]
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([lookalike.name, other_token.name])


def test_a_write_never_deletes_files_that_look_like_temporary_files(tmp_path: Path) -> None:
    lookalikes = [tmp_path / f".a.txt.nbedit-{dead_pid()}-0badcafe.{suffix}" for suffix in ("tmp", "old")]
    for path in lookalikes:
        path.write_bytes(b"user data")
    apply_writes([Write(tmp_path / "a.txt", b"new", None)])
    assert all(path.read_bytes() == b"user data" for path in lookalikes)
    assert (tmp_path / "a.txt").read_bytes() == b"new"


def test_temporary_names_fit_a_long_file_name(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 250 + ".txt")
    apply_writes([Write(target, b"data", None)])
    assert target.read_bytes() == b"data"
    assert len(temp_name(target.name, "0badcafe").encode()) <= 255


def test_large_file_round_trip(tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024)
    target = tmp_path / "big.bin"
    apply_writes([Write(target, data, None)])
    assert target.read_bytes() == data


@pytest.mark.parametrize("when", ["before", "verify"])
def test_a_chmod_since_the_preview_refuses_a_write_that_sets_the_mode(tmp_path: Path, when: str) -> None:
    from nbedit.errors import StaleFile

    target = tmp_path / "tool.sh"
    target.write_bytes(b"echo one\n")
    target.chmod(0o644)
    other = tmp_path / "other.txt"
    if when == "before":
        target.chmod(0o600)

    def someone_else(point: str, path: Path) -> None:
        if point == "verify" and path == target and when == "verify":
            target.chmod(0o600)  # after the early check, right before the last one

    writes = [
        Write(target, b"echo two\n", b"echo one\n", mode=0o755, original_mode=0o644),
        Write(other, b"x", None),
    ]
    changed = r"had its permissions changed \(from 0644 to 0600\) since the preview; nothing was written"
    with pytest.raises(StaleFile, match=changed):
        apply_writes(writes, fault=someone_else)
    assert target.read_bytes() == b"echo one\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert not other.exists() and temp_files(tmp_path) == []
    target.chmod(0o644)  # as previewed again: written, mode set
    apply_writes(writes)
    assert target.read_bytes() == b"echo two\n" and stat.S_IMODE(target.stat().st_mode) == 0o755
