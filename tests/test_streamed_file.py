"""A big file planned without being held: read in chunks, proved unchanged by its SHA-256.

From ``plan.STREAMED_FILE_FROM`` bytes, a patch of a file whose hunks are all exactly in place in
ASCII bytes is planned from one pass over the file in chunks (``engine.streamed_splice``); the
plan keeps the file's size and SHA-256 (``storage.streamed_file.StreamedFile``), and the writer,
the history and the stale checks read it again. These tests lower the threshold and the chunk
size, so small files take that path with hunks across chunk ends, and check: the same bytes as
the ordinary path (CRLF, no final newline, the mode kept), the same located hunks as
``located_table``, undo/restore give the exact bytes back; a file changed between plan and apply
(before the write, while the copy is written, right before the rename) is refused and left as it
is, with no temporary file and no history entry; a rollback after a rename copies the old bytes
back from the old inode; what is not so (a hunk elsewhere, non-ASCII bytes) takes the ordinary path.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import nbedit
from nbedit.apply_pipeline import ApplyPipeline
from nbedit.engine import exact_run
from nbedit.engine import plan as plan_module
from nbedit.engine.formats import parse
from nbedit.engine.models import unjoined_after, unjoined_before
from nbedit.engine.spliced import Spliced
from nbedit.engine.streamed_splice import located_in_chunks
from nbedit.errors import StaleFile, WriteError
from nbedit.storage import atomic, streamed_file
from nbedit.storage.streamed_file import StreamedFile


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_module, "STREAMED_FILE_FROM", 1)
    monkeypatch.setattr(streamed_file, "CHUNK", 97)  # chunk ends fall inside hunks, lines and spans


def lines_of(count: int, newline: str = "\n", last_newline: bool = True) -> list[str]:
    lines = [f"value_{number} = compute({number}, scale=2){newline}" for number in range(count)]
    if not last_newline:
        lines[-1] = lines[-1].rstrip("\r\n")
    return lines


def patch_of(lines: list[str], every: int = 37, name: str = "big.py") -> tuple[bytes, bytes, str]:
    changed = list(lines)
    for number in range(3, len(lines), every):
        changed[number] = changed[number].replace("scale=2", "scale=3")
    if lines[-1].endswith("\n"):  # a hunk of a last line without its newline takes the text path
        changed[-1] = changed[-1].replace("scale=2", "scale=4")
    changed.insert(len(lines) // 2, "inserted = True" + ("\r\n" if lines[0].endswith("\r\n") else "\n"))
    del changed[len(lines) // 3]
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(lines, changed, f"a/{name}", f"b/{name}")
    )
    return "".join(lines).encode(), "".join(changed).encode(), diff


def chunked(data: bytes, size: int) -> Iterator[bytes]:
    return (data[start : start + size] for start in range(0, len(data), size))


@pytest.mark.parametrize(("newline", "last_newline"), [("\n", True), ("\r\n", True), ("\n", False)])
def test_a_streamed_plan_writes_the_ordinary_bytes_and_undo_gives_them_back(
    tmp_path: Path, streamed: None, newline: str, last_newline: bool
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    data, after, diff = patch_of(lines_of(600, newline, last_newline))
    (root / "big.py").write_bytes(data)
    os.chmod(root / "big.py", 0o751)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    file_plan = plan.files[0]
    stand_in = unjoined_before(file_plan)
    assert isinstance(stand_in, StreamedFile) and len(stand_in) == len(data)
    spliced = unjoined_after(file_plan)
    assert isinstance(spliced, Spliced) and file_plan.changed
    assert spliced.known_fingerprint == hashlib.sha256(after).hexdigest()  # hashed while planned
    result = workspace.apply(plan)
    assert (root / "big.py").read_bytes() == after
    assert os.stat(root / "big.py").st_mode & 0o7777 == 0o751
    assert sorted(path.name for path in root.iterdir()) == ["big.py"]
    assert isinstance(unjoined_before(file_plan), StreamedFile)  # never read whole by the apply
    workspace.undo()
    assert (root / "big.py").read_bytes() == data
    workspace.restore(result.entry_id or "", which="after")
    assert (root / "big.py").read_bytes() == after


def test_the_fields_read_the_file_and_refuse_it_once_replaced(tmp_path: Path, streamed: None) -> None:
    data, after, diff = patch_of(lines_of(300))
    (tmp_path / "big.py").write_bytes(data)
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert plan.files[0].after_bytes == after  # the new bytes, cut from the file read again
    assert plan.files[0].before == data.decode()
    again = workspace.plan_patch(diff)
    workspace.apply(again)
    with pytest.raises(StaleFile):
        _ = again.files[0].before_bytes  # the file was replaced: its old bytes are gone from it


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 97, 4096, 1 << 20])
def test_located_in_chunks_finds_what_located_table_finds(chunk: int) -> None:
    data, _, diff = patch_of(lines_of(500, "\r\n"))
    hunks = parse(diff).files[0].hunks
    table, spliced = exact_run.located_table(data, hunks)  # type: ignore[misc]
    after = hashlib.sha256()
    found = located_in_chunks(chunked(data, chunk), hunks, after)
    assert found is not None
    assert after.hexdigest() == hashlib.sha256(spliced.join()).hexdigest()  # the new bytes, fed in order
    located, (starts, ends, inserted, cuts) = found
    assert list(located) == list(table)
    assert (list(starts), list(ends), inserted, list(cuts)) == (
        list(spliced.starts), list(spliced.ends), spliced.inserted, list(spliced.cuts)
    )  # fmt: skip


def test_located_in_chunks_refuses_what_is_not_in_place() -> None:
    data, _, diff = patch_of(lines_of(200))
    hunks = parse(diff).files[0].hunks
    assert located_in_chunks(chunked(b"# one more line\n" + data, 50), hunks) is None  # every line moved
    assert located_in_chunks(chunked(data.replace(b"value_150 ", b"valu\xc3\xa9_150 "), 50), hunks) is None
    assert located_in_chunks(chunked(data[:1000], 50), hunks) is None  # a hunk past the end


@pytest.mark.parametrize("change", ["a line moved", "not ASCII"])
def test_what_cannot_stream_takes_the_ordinary_path(tmp_path: Path, streamed: None, change: str) -> None:
    data, after, diff = patch_of(lines_of(300))
    if change == "a line moved":
        data, after = b"# new first line\n" + data, b"# new first line\n" + after
    else:
        data, after = data + "# é\n".encode(), after + "# é\n".encode()
    (tmp_path / "big.py").write_bytes(data)
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert isinstance(unjoined_before(plan.files[0]), bytes)
    workspace.apply(plan)
    assert (tmp_path / "big.py").read_bytes() == after


def changed_in_place(path: Path) -> bytes:
    """One byte of ``path`` changed, same size: what a quick edit elsewhere does."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2 + 3] ^= 0x01
    path.write_bytes(bytes(data))
    return bytes(data)


def refused_as_is(workspace: nbedit.Workspace, root: Path, plan: nbedit.Plan, now: bytes) -> None:
    with pytest.raises(StaleFile):
        workspace.apply(plan)
    assert (root / "big.py").read_bytes() == now
    assert sorted(path.name for path in root.iterdir()) == ["big.py"]
    assert len(workspace.history()) == 0


def test_a_file_changed_between_plan_and_apply_is_refused(tmp_path: Path, streamed: None) -> None:
    root = tmp_path / "root"
    root.mkdir()
    data, _, diff = patch_of(lines_of(400))
    (root / "big.py").write_bytes(data)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    refused_as_is(workspace, root, plan, changed_in_place(root / "big.py"))


@pytest.mark.parametrize(
    "when", ["after the early check", "while the copy is written", "while written beside", "before the rename"]
)
def test_a_file_changed_during_the_apply_is_refused(
    tmp_path: Path, streamed: None, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    data, _, diff = patch_of(lines_of(400))
    (root / "big.py").write_bytes(data)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    now: list[bytes] = []

    def change_first(original, *arguments, **keywords):  # type: ignore[no-untyped-def]
        if not now:
            now.append(changed_in_place(root / "big.py"))
        return original(*arguments, **keywords)

    if when == "after the early check":
        check = ApplyPipeline._check_fresh
        monkeypatch.setattr(
            ApplyPipeline, "_check_fresh", lambda self, *a: (check(self, *a), change_first(lambda: None))[0]
        )
    elif when.startswith("while"):
        if when == "while written beside":  # on the writer's other thread, while the entry is recorded
            monkeypatch.setattr(atomic, "WRITTEN_BESIDE", 1)
        monkeypatch.setattr(atomic, "fill", functools.partial(change_first, atomic.fill))
    else:
        monkeypatch.setattr(atomic, "_verify", functools.partial(change_first, atomic._verify))
    with pytest.raises(StaleFile):
        workspace.apply(plan)
    assert now and (root / "big.py").read_bytes() == now[0]
    assert sorted(path.name for path in root.iterdir()) == ["big.py"]
    assert len(workspace.history()) == 0


@pytest.mark.parametrize("history", [True, False])
def test_a_rollback_copies_the_old_bytes_back_from_the_old_inode(
    tmp_path: Path, streamed: None, monkeypatch: pytest.MonkeyPatch, history: bool
) -> None:
    """Two files: the big one is replaced first, then the second's rename fails."""
    root = tmp_path / "root"
    root.mkdir()
    data, _, diff = patch_of(lines_of(400))
    (root / "big.py").write_bytes(data)
    (root / "zz.txt").write_text("old\n")
    diff += "--- a/zz.txt\n+++ b/zz.txt\n@@ -1 +1 @@\n-old\n+new\n"
    workspace = nbedit.Workspace(root, history=history, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    assert isinstance(unjoined_before(plan.files[0]), StreamedFile)
    inode = os.stat(root / "big.py").st_ino

    def fault(step: str, path: object) -> None:
        if step == "replace" and str(path).endswith("zz.txt"):
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic, "apply_writes", functools.partial(atomic.apply_writes, fault=fault))
    with pytest.raises(WriteError, match="rolled back"):
        workspace.apply(plan)
    assert (root / "big.py").read_bytes() == data and os.stat(root / "big.py").st_ino != inode
    assert (root / "zz.txt").read_text() == "old\n"
    assert sorted(path.name for path in root.iterdir()) == ["big.py", "zz.txt"]
    assert not history or len(workspace.history()) == 0


def test_held_by_and_the_chunks_prove_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"abc\n" * 100)
    opener = functools.partial(os.open, path, os.O_RDONLY)
    content = StreamedFile(opener, "file")
    assert b"".join(content.first_pass(opener(), 33)) == b"abc\n" * 100
    with open(path, "rb") as handle:
        assert content.held_by(handle.fileno())
    assert content.join() == b"abc\n" * 100
    path.write_bytes(b"abd\n" + b"abc\n" * 99)  # same size, one byte
    with open(path, "rb") as handle:
        assert not content.held_by(handle.fileno())
    with pytest.raises(StaleFile):
        content.join()
    path.write_bytes(b"abc\n" * 101)
    with pytest.raises(StaleFile):
        next(content.chunks())  # the size tells at once


def test_a_plan_that_cannot_stream_leaves_no_descriptor_open(tmp_path: Path, streamed: None) -> None:
    """The last line without its newline changes: the first hunk cannot stream, before any read."""
    lines = lines_of(200, last_newline=False)
    changed = [*lines[:-1], lines[-1].replace("scale=2", "scale=9")]
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(lines, changed, "a/big.py", "b/big.py")
    )
    (tmp_path / "big.py").write_text("".join(lines))
    workspace = nbedit.Workspace(tmp_path, history=False)
    opened = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(5):
        plan = workspace.plan_patch(diff)
        assert isinstance(unjoined_before(plan.files[0]), bytes)
    if opened is not None:
        assert len(os.listdir("/proc/self/fd")) == opened
    workspace.apply(plan)
    assert (tmp_path / "big.py").read_text() == "".join(changed)


def test_a_history_on_another_file_system_stores_the_old_bytes_read_and_checked(
    tmp_path: Path, streamed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No hard link to be had (EXDEV): the "before" is read whole (checked) and stored; undo is exact."""
    from nbedit.storage import blobs

    monkeypatch.setattr(blobs, "link_copy", lambda *arguments: False)
    root = tmp_path / "root"
    root.mkdir()
    data, after, diff = patch_of(lines_of(500))
    (root / "big.py").write_bytes(data)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    assert isinstance(unjoined_before(plan.files[0]), StreamedFile)
    workspace.apply(plan)
    assert (root / "big.py").read_bytes() == after
    workspace.undo()
    assert (root / "big.py").read_bytes() == data


def test_a_rewrite_of_every_line_is_recorded_and_undone_exactly(tmp_path: Path, streamed: None) -> None:
    """The spans cover the whole file, so no region delta pays: the history reads the old bytes."""
    root = tmp_path / "root"
    root.mkdir()
    lines = lines_of(300)
    data, after, diff = patch_of(lines, every=1)
    (root / "big.py").write_bytes(data)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    assert isinstance(unjoined_before(plan.files[0]), StreamedFile)
    result = workspace.apply(plan)
    assert (root / "big.py").read_bytes() == after
    workspace.undo()
    assert (root / "big.py").read_bytes() == data
    workspace.restore(result.entry_id or "", which="after")
    assert (root / "big.py").read_bytes() == after


def test_a_stale_big_file_is_not_replanned_without_its_old_bytes(
    tmp_path: Path, streamed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The three-way re-plan needs the previewed bytes, which a streamed plan does not hold: it
    gives up (None) for a file that changed, and keeps the plan of one that did not."""
    from nbedit.replan import replan_stale

    monkeypatch.setattr(plan_module, "STREAMED_FILE_FROM", 1024)  # the small file is held as usual

    data, _, diff = patch_of(lines_of(300))
    (tmp_path / "big.py").write_bytes(data)
    (tmp_path / "zz.txt").write_text("old\n2\n3\n4\n5\n6\n")
    diff += "--- a/zz.txt\n+++ b/zz.txt\n@@ -1,2 +1,2 @@\n-old\n+new\n 2\n"
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    (tmp_path / "zz.txt").write_text("old\n2\n3\n4\n5\nsix\n")  # the small file changed: merged as before
    replanned = replan_stale(workspace, plan)
    assert replanned is not None and replanned.paths == ("zz.txt",)
    assert replanned.plan.files[0] is plan.files[0]
    changed_in_place(tmp_path / "big.py")
    assert replan_stale(workspace, plan) is None


def test_offsets_past_what_the_arrays_hold_give_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that grew past its opened size's offset width while read: None (the caller reads it whole)."""
    from nbedit.engine import hunk_table

    data, _, diff = patch_of(lines_of(200))
    hunks = parse(diff).files[0].hunks
    assert located_in_chunks(chunked(data, 64), hunks, None, len(data)) is not None
    monkeypatch.setattr(hunk_table, "offset_type", lambda size: "B")  # one byte: offsets up to 255
    assert located_in_chunks(chunked(data, 64), hunks, None, len(data)) is None


@pytest.mark.parametrize("thread", [True, False])
def test_the_first_pass_hashes_beside_or_inline_and_can_be_left_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, thread: bool
) -> None:
    """Its digests are hashed on a thread of their own (or inline when no thread can start); a pass
    left after a few chunks stops that thread and closes the file."""
    import _thread

    if not thread:

        def refused(*arguments: object) -> None:
            raise RuntimeError("can't start new thread")

        monkeypatch.setattr(_thread, "start_new_thread", refused)
    data = os.urandom(5000)
    path = tmp_path / "file"
    path.write_bytes(data)
    opener = functools.partial(os.open, path, os.O_RDONLY)
    opened = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(20):
        left = StreamedFile(opener, "file")
        passing = left.first_pass(opener(), 7)
        next(passing), next(passing)
        passing.close()
        assert left.fingerprint is None
    if opened is not None:
        assert len(os.listdir("/proc/self/fd")) == opened
    content = StreamedFile(opener, "file")
    assert b"".join(content.first_pass(opener(), 7)) == data
    assert content.fingerprint == hashlib.sha256(data).hexdigest() and content.join() == data


def git_diff_of(lines: list[str], changed: list[str], base: bytes, context: int) -> str:
    """A git diff with its ``index`` line naming ``base``'s blob."""
    blob = hashlib.sha1(b"blob %d\0" % len(base) + base).hexdigest()[:12]
    body = "".join(difflib.unified_diff(lines, changed, "a/big.py", "b/big.py", n=context))
    return f"diff --git a/big.py b/big.py\nindex {blob}..0123456789ab 100644\n" + body


@pytest.mark.parametrize("context", [3, 0])
@pytest.mark.parametrize("base", ["this file", "another file"])
def test_a_git_diff_with_its_index_line_streams_as_the_ordinary_path_decides(
    tmp_path: Path, streamed: None, monkeypatch: pytest.MonkeyPatch, context: int, base: str
) -> None:
    """The ``index`` line matters only for context-free hunks (``-U0``): in a file that is not the
    diff's base their line numbers are no evidence, so such a plan is made from the file read whole."""
    lines = lines_of(400)
    changed = [line.replace("scale=2", "scale=5") if number % 50 == 7 else line for number, line in enumerate(lines)]
    data = "".join(lines).encode()
    diff = git_diff_of(lines, changed, data if base == "this file" else b"other\n", context)
    (tmp_path / "big.py").write_bytes(data)
    plan = nbedit.Workspace(tmp_path, history=False).plan_patch(diff)
    streams = base == "this file" or context == 3
    assert isinstance(unjoined_before(plan.files[0]), StreamedFile) is streams
    monkeypatch.setattr(plan_module, "STREAMED_FILE_FROM", 1 << 40)  # the ordinary path, for reference
    ordinary = nbedit.Workspace(tmp_path, history=False).plan_patch(diff)
    assert plan.files[0].after_bytes == ordinary.files[0].after_bytes == "".join(changed).encode()
