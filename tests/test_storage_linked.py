"""Linked keyframes and region deltas: the history's cheap first snapshot, on real files.

The "before" of a file the history has not seen is kept as a hard link to the old
inode the atomic writer renames away; a multi-hunk edit's "after" is a region delta
built from the plan's hunks. Every test checks the bytes undo and restore give back,
and the failure paths: links that cannot be made, links that go wrong, crashes
between the link and the commit, copies changed behind nbedit's back.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit.errors import HistoryError
from nbedit.storage import blobs as blobs_module
from nbedit.storage import history as history_module
from nbedit.storage.delta import Delta, Regions, apply_deltas, decode_regions, region_delta
from nbedit.storage.history import HistoryStore
from nbedit.workspace import Workspace

context = multiprocessing.get_context("fork")
LINKED, LOST = 3, 4


def big_text(lines: int = 6000, marker: str = "") -> bytes:
    return "".join(
        f"value_{number} = compute({number}, '{marker}')  # ünïcode\n" for number in range(lines)
    ).encode()


def make_workspace(base: Path, **options: object) -> Workspace:
    root = base / "root"
    root.mkdir(exist_ok=True)
    return Workspace(root, home=base / "home", session="test", **options)  # type: ignore[arg-type]


def versions(home: Path) -> list[tuple[int, int, int, int]]:
    """(id, packing, regions, stored bytes) of every version row."""
    with sqlite3.connect(home / "history.sqlite3") as connection:
        return connection.execute(
            "SELECT id, compressed, regions, LENGTH(data) FROM versions ORDER BY id"
        ).fetchall()


def blobs(home: Path) -> list[str]:
    folder = home / "blobs"
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def edit_line(workspace: Workspace, path: str, number: int, suffix: str = "  # edited") -> None:
    old = f"value_{number} = compute({number}, '')"
    workspace.apply(workspace.plan_edit(path, old, old + suffix))


def test_a_first_edit_links_the_old_file_instead_of_packing_it(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / "big.py"
    original = big_text()
    target.write_bytes(original)
    old_inode = target.stat().st_ino
    edit_line(workspace, "big.py", 100)
    edited = target.read_bytes()
    before_row = versions(workspace.home)[0]
    assert before_row[1] == LINKED and before_row[3] == 0  # nothing packed into the database
    linked = workspace.home / "blobs" / str(before_row[0])
    assert linked.stat().st_ino == old_inode  # the very inode the write renamed away
    assert linked.read_bytes() == original and target.stat().st_ino != old_inode
    assert target.stat().st_nlink == 1 and linked.stat().st_nlink == 1
    # undo and restore give the bytes back exactly, from the link
    workspace.undo()
    assert target.read_bytes() == original
    workspace.restore(workspace.history()[-1].id, which="after")
    assert target.read_bytes() == edited


def test_compaction_packs_links_into_the_database_and_removes_them(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / "big.py"
    original = big_text()
    target.write_bytes(original)
    edit_line(workspace, "big.py", 10)
    store = workspace._store()
    assert store.linked_bytes() == len(original)
    assert store.compact() == 1
    assert store.linked_bytes() == 0 and blobs(workspace.home) == []
    assert versions(workspace.home)[0][1] in (1, 2)  # zlib or zstd, as before links existed
    workspace.undo()
    assert target.read_bytes() == original


def test_an_idle_process_packs_its_links_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_module, "IDLE_SECONDS", 0.2)
    workspace = make_workspace(tmp_path)
    (workspace.root / "big.py").write_bytes(big_text())
    edit_line(workspace, "big.py", 10)
    assert blobs(workspace.home) != []
    deadline = time.monotonic() + 20
    while blobs(workspace.home) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert blobs(workspace.home) == []
    assert versions(workspace.home)[0][1] in (1, 2)


def test_links_are_packed_once_overdue_so_the_home_stays_bounded(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    (workspace.root / "big.py").write_bytes(big_text())
    edit_line(workspace, "big.py", 1)
    for number in range(2, history_module.LINKED_ENTRIES + 2):
        assert blobs(workspace.home) != []
        edit_line(workspace, "big.py", number)
    assert blobs(workspace.home) == []  # packed by the begin LINKED_ENTRIES entries later
    for _ in range(history_module.LINKED_ENTRIES + 1):
        workspace.undo()
    assert (workspace.root / "big.py").read_bytes() == big_text()


def test_a_home_on_another_file_system_packs_the_copy(tmp_path: Path) -> None:
    other = Path("/dev/shm")
    if not other.is_dir() or os.stat(other).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs a second file system (/dev/shm) to put the home on")
    home = Path(os.path.join(other, f"nbedit-test-{os.getpid()}"))
    try:
        root = tmp_path / "root"
        root.mkdir()
        workspace = Workspace(root, home=home)
        original = big_text()
        (root / "big.py").write_bytes(original)
        edit_line(workspace, "big.py", 5)
        assert versions(home)[0][1] in (1, 2) and blobs(home) == []  # EXDEV: packed as before
        workspace.undo()
        assert (root / "big.py").read_bytes() == original
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_file_with_another_hard_link_is_packed_not_linked(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / "big.py"
    original = big_text()
    target.write_bytes(original)
    os.link(target, workspace.root / "alias.py")  # someone could write into the old inode through it
    edit_line(workspace, "big.py", 7)
    assert versions(workspace.home)[0][1] in (1, 2) and blobs(workspace.home) == []
    assert (workspace.root / "alias.py").read_bytes() == original
    workspace.undo()
    assert target.read_bytes() == original


def test_a_symbolic_link_is_never_linked(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    original = big_text()
    (workspace.root / "real.py").write_bytes(original)
    (workspace.root / "link.py").symlink_to("real.py")
    workspace.apply(workspace.plan_patch("*** Begin Patch\n*** Delete File: link.py\n*** End Patch\n"))
    assert (workspace.root / "real.py").read_bytes() == original  # the target stays, unlinked by nbedit
    assert blobs(workspace.home) == []
    assert (workspace.root / "real.py").stat().st_nlink == 1


def test_a_linked_copy_written_behind_nbedits_back_is_refused_not_restored(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / "big.py"
    target.write_bytes(big_text())
    edit_line(workspace, "big.py", 3)
    entry = workspace.history()[0]
    (link,) = blobs(workspace.home)
    with open(workspace.home / "blobs" / link, "r+b") as handle:  # a program that kept the old file open
        handle.write(b"X")
    edited = target.read_bytes()
    with pytest.raises(HistoryError, match="checksum"):
        workspace.undo()
    assert target.read_bytes() == edited  # nothing written
    assert workspace._store().compact() == 1
    assert versions(workspace.home)[0][1] == LOST and blobs(workspace.home) == []
    for which in ("before", "after"):  # the "after" is a delta on it: refused too, never guessed
        with pytest.raises(HistoryError, match="changed outside nbedit"):
            workspace.restore(entry.id, which=which, force=True)
    assert target.read_bytes() == edited
    edit_line(workspace, "big.py", 4)  # the file itself is untouched and still editable


def link_then_die(base: Path) -> None:
    """Record an entry and die after the link, before the transaction commits."""
    real_link = blobs_module.link_copy  # the recording step links the old file (imported when it links)

    def link_and_crash(source: object, destination: Path, expected: bytes) -> bool:
        assert real_link(source, destination, expected)  # type: ignore[arg-type]
        os._exit(0)  # a crash: no commit, no clean-up

    blobs_module.link_copy = link_and_crash  # type: ignore[assignment]
    workspace = make_workspace(base)
    edit_line(workspace, "big.py", 9)


def test_a_crash_between_the_link_and_the_commit_leaves_a_link_that_is_swept(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    original = big_text()
    (root / "big.py").write_bytes(original)
    child = context.Process(target=link_then_die, args=(tmp_path,))
    child.start()
    child.join(60)
    assert blobs(tmp_path / "home") != []  # the link survived the crash, no row names it
    assert (root / "big.py").read_bytes() == original
    workspace = make_workspace(tmp_path)
    assert workspace.history(all_sessions=True) == []
    edit_line(workspace, "big.py", 9)
    store = workspace._store()
    store.compact()
    assert blobs(workspace.home) == []  # the orphan went with the sweep, the new link was packed
    assert (root / "big.py").stat().st_nlink == 1
    workspace.undo()
    assert (root / "big.py").read_bytes() == original


def commit_then_die(base: Path) -> None:
    """Record the entry (link made, entry durable) and die before any file is replaced."""
    import nbedit.storage.atomic as atomic

    real = atomic.apply_writes

    def crash(*arguments: object, **options: object) -> None:
        def die(point: str, path: Path) -> None:
            if point == "replace":  # the entry is recorded and the temporary copy flushed
                os._exit(0)

        real(*arguments, **options, fault=die)  # type: ignore[arg-type]

    atomic.apply_writes = crash  # type: ignore[assignment]
    workspace = make_workspace(base)
    edit_line(workspace, "big.py", 11)


def test_a_crash_before_the_replace_is_settled_and_its_link_removed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    original = big_text()
    target = root / "big.py"
    target.write_bytes(original)
    child = context.Process(target=commit_then_die, args=(tmp_path,))
    child.start()
    child.join(60)
    (link,) = blobs(tmp_path / "home")
    assert (tmp_path / "home" / "blobs" / link).stat().st_ino == target.stat().st_ino  # still the live file
    workspace = make_workspace(tmp_path)
    assert workspace.history(all_sessions=True) == []  # recovery dropped the entry: nothing was written
    assert blobs(tmp_path / "home") == [] and target.stat().st_nlink == 1
    assert target.read_bytes() == original
    edit_line(workspace, "big.py", 11)
    workspace.undo()
    assert target.read_bytes() == original


def test_a_write_that_fails_drops_its_link(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / "big.py"
    original = big_text()
    target.write_bytes(original)
    plan = workspace.plan_patch(
        "*** Begin Patch\n*** Update File: big.py\n@@\n-value_4 = compute(4, '')  # ünïcode\n"
        "+value_4 = 4\n*** Add File: sub\n+x\n*** End Patch\n"
    )
    (workspace.root / "sub").mkdir()  # the add now fails at write time, after the link was made
    with pytest.raises(Exception, match="sub"):
        workspace.apply(plan)
    assert target.read_bytes() == original and target.stat().st_nlink == 1
    assert blobs(workspace.home) == [] and workspace.history(all_sessions=True) == []


@pytest.mark.parametrize("prefix", [b"", b"\xef\xbb\xbf"])
def test_a_multi_hunk_patch_is_stored_as_a_region_delta(tmp_path: Path, prefix: bytes) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / "big.py"
    original = prefix + big_text().replace(b"\n", b"\r\n")
    target.write_bytes(original)
    lines = original.decode("utf-8-sig").splitlines(keepends=True)
    hunks = []
    for number in range(50, 6000, 400):
        hunks.append(
            f"@@ -{number + 1},1 +{number + 1},1 @@\n-{lines[number]}+{lines[number].replace('compute', 'calculé')}"
        )
    diff = "--- a/big.py\n+++ b/big.py\n" + "".join(hunks)
    workspace.apply(workspace.plan_patch(diff))
    edited = target.read_bytes()
    assert edited.count("calculé".encode()) == len(hunks)
    after_row = versions(workspace.home)[1]
    assert after_row[2] == 1 and after_row[3] < 4000  # a region table, not the file
    workspace._store().compact()
    workspace.undo()
    assert target.read_bytes() == original
    workspace.restore(workspace.history()[-1].id, which="after")
    assert target.read_bytes() == edited


def test_the_storage_layer_refuses_spans_that_do_not_give_the_target(tmp_path: Path) -> None:
    base = b"one\ntwo\nthree\n"
    assert region_delta(base, b"one\n2\nthree\n", [(4, 7, b"2")]) is not None
    assert region_delta(base, b"one\n2\nthree\n", [(4, 8, b"2")]) is None  # wrong span
    assert region_delta(base, b"one\n2\nthree\n", [(8, 7, b"2")]) is None  # backwards
    with pytest.raises(ValueError):
        decode_regions(b"\x05" + b"\x00" * 7)
    with pytest.raises(ValueError):
        apply_deltas(base, [Regions(((4, 99, b"x"),))])


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300),
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 20), st.binary(max_size=12)), max_size=8),
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300), st.binary(max_size=20)), max_size=3),
)
def test_region_and_prefix_deltas_replay_in_any_chain(
    base: bytes, edits: list[tuple[int, int, bytes]], second: list[tuple[int, int, bytes]]
) -> None:
    spans, cursor = [], 0
    for start, length, replacement in sorted(edits):
        start = max(start, cursor)
        if start > len(base):
            break
        end = min(start + length, len(base))
        spans.append((start, end, replacement))
        cursor = end
    target = bytearray()
    cursor = 0
    for start, end, replacement in spans:
        target += base[cursor:start] + replacement
        cursor = end
    target += base[cursor:]
    regions = region_delta(base, bytes(target), spans)
    assert regions is not None
    stored = decode_regions(regions.encode())
    assert apply_deltas(base, [stored]) == bytes(target)
    chain: list[Delta | Regions] = [stored]
    expected = bytes(target)
    for prefix, suffix, middle in second:  # mixed chains: prefix/suffix deltas on top of region deltas
        prefix = min(prefix, len(expected))
        suffix = min(suffix, len(expected) - prefix)
        expected = expected[:prefix] + middle + expected[len(expected) - suffix :]
        chain.append(Delta(prefix, suffix, middle))
    assert apply_deltas(base, chain) == expected


def test_a_long_chain_of_many_region_deltas_restores_every_version(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "home") as store:
        from nbedit.storage.records import EntryDraft, FileRecord

        data = big_text(3000)
        contents = [data]
        for step in range(40):
            spans = [(start, start + 5, b"<%d>" % step) for start in range(step * 7, len(data) - 10, 9000)]
            pieces, cursor = [], 0
            for start, end, replacement in spans:
                pieces += [data[cursor:start], replacement]
                cursor = end
            after = b"".join([*pieces, data[cursor:]])
            record = FileRecord("f.py", None, data, after, spans=tuple(spans))
            store.commit(store.begin(EntryDraft("s", "api", None, (record,))))
            contents.append(after)
            data = after
        for number, entry in enumerate(reversed(store.entries())):
            version = store.file_versions(entry.id)[0]
            assert (version.before, version.after) == (contents[number], contents[number + 1])


FIXTURE = Path(__file__).parent / "data" / "history-schema2"


def fixture_contents() -> dict[str, list[bytes | None]]:
    """What the schema-2 store in tests/data/history-schema2 holds, rebuilt the way it was made
    (with the schema-2 code: a zstd keyframe and two prefix/suffix deltas of big.py, a zlib
    keyframe and a zlib delta of small.py, a raw tiny.py deleted, small.py moved to moved.py)."""
    from tests.test_storage_history import numbered_lines

    big = b"".join(numbered_lines(400)) * 25
    big2 = big.replace(b"alpha", b"ALPHA", 1)
    small = b"".join(numbered_lines(200, seed=1))
    small2 = small.replace(b"beta", b"BETA", 3)
    return {
        "e00000001": [big, big2],
        "e00000002": [big2, big2 + b"tail\n"],
        "e00000003": [None, small],
        "e00000004": [small, small2],
        "e00000005": [b"x = 1\n", None],
        "e00000006": [small2, small],
    }


def test_a_store_written_by_the_schema_2_code_opens_restores_and_records(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home)
    with sqlite3.connect(home / "history.sqlite3") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 2
        assert {row[0] for row in connection.execute("SELECT compressed FROM versions")} == {0, 1, 2}
    with HistoryStore(home) as store:
        expected = fixture_contents()
        assert [entry.id for entry in reversed(store.entries())] == list(expected)
        for entry_id, (before, after) in expected.items():
            version = store.file_versions(entry_id)[0]
            assert (version.before, version.after) == (before, after)
        new_after = expected["e00000002"][1] + b"more\n"  # type: ignore[operator]
        from tests.test_storage_history import record

        entry_id = record(store, "big.py", expected["e00000002"][1], new_after)
        assert store.file_versions(entry_id)[0].after == new_after
        assert store.integrity_check() == ["ok"]
    with sqlite3.connect(home / "history.sqlite3") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 3


def test_a_damaged_database_is_set_aside_with_its_linked_copies(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    original = big_text()
    (workspace.root / "big.py").write_bytes(original)
    edit_line(workspace, "big.py", 2)
    workspace._store().close()
    (link,) = blobs(workspace.home)
    (workspace.home / "history.sqlite3").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (workspace.home / f"history.sqlite3{suffix}").unlink(missing_ok=True)
    with pytest.warns(Warning, match="damaged"):
        fresh = make_workspace(tmp_path)
        edit_line(fresh, "big.py", 3)
    (kept,) = tmp_path.joinpath("home").glob("history.sqlite3.corrupt-*-blobs")
    assert (kept / link).read_bytes() == original  # the old store's copy is kept, not swept
    fresh._store().compact()
    assert (kept / link).read_bytes() == original


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=200), st.binary(max_size=40))
def test_prefix_suffix_deltas_rebuild_the_target(head: bytes, tail: bytes, middle: bytes) -> None:
    from nbedit.storage.delta import common_prefix_length, common_suffix_length, make_delta

    base = head + b"x" + tail
    target = head + middle + tail
    delta = make_delta(base, target)
    assert apply_deltas(base, [delta]) == target
    assert base[: common_prefix_length(base, target)] == target[: common_prefix_length(base, target)]
    suffix = common_suffix_length(base, target)
    assert (
        suffix <= min(len(base), len(target)) and base[len(base) - suffix :] == target[len(target) - suffix :]
    )


def write_then_die(base: Path) -> None:
    """Replace the file and die before the entry is marked applied."""

    def crash(*arguments: object, **options: object) -> None:
        os._exit(0)

    HistoryStore.commit = crash  # type: ignore[method-assign]
    workspace = make_workspace(base)
    edit_line(workspace, "big.py", 12)


def test_an_entry_whose_mark_was_lost_is_kept_with_its_line_counts(tmp_path: Path) -> None:
    """The mark "applied" is not fsynced on its own: losing it (here, the writer dies before it)
    leaves a pending entry that recovery keeps, counts and all, because the file was written."""
    root = tmp_path / "root"
    root.mkdir()
    original = big_text()
    (root / "big.py").write_bytes(original)
    child = context.Process(target=write_then_die, args=(tmp_path,))
    child.start()
    child.join(60)
    assert (root / "big.py").read_bytes() != original  # the write happened
    workspace = make_workspace(tmp_path)
    (entry,) = workspace.history(all_sessions=True)
    assert entry.status == "applied"
    assert (entry.files[0].added, entry.files[0].removed) == (1, 1)
    workspace.undo(entry.id)
    assert (root / "big.py").read_bytes() == original


def test_doctor_reports_the_bytes_waiting_as_links(tmp_path: Path) -> None:
    from nbedit.storage.doctor import check

    workspace = make_workspace(tmp_path)
    original = big_text()
    (workspace.root / "big.py").write_bytes(original)
    edit_line(workspace, "big.py", 6)
    checkup = check(workspace.home)
    assert checkup.healthy
    assert any(
        f"{len(original):,} bytes of first snapshots are kept as links" in line for line in checkup.findings
    )
    workspace._store().compact()
    assert not any("links" in line for line in check(workspace.home).findings)
