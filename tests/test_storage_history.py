"""The snapshot history: round trips, deltas and keyframes, pruning, crashes, corruption, concurrency."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import random
import sqlite3
from pathlib import Path

import pytest

from nbedit.errors import HistoryError
from nbedit.storage.database import DamagedHistory
from nbedit.storage.history import HistoryStore
from nbedit.storage.records import EntryDraft, FileRecord, default_home
from nbedit.storage.versions import MAX_CHAIN_DEPTH

context = multiprocessing.get_context("fork")


def sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def record(
    store: HistoryStore,
    path: str,
    before: bytes | None,
    after: bytes | None,
    *,
    session: str = "s1",
    new_path: str | None = None,
    commit: bool = True,
    origin: str = "api",
) -> str:
    file = FileRecord(path, new_path, before, after, sha(before), sha(after), 1, 1)
    entry_id = store.begin(EntryDraft(session, origin, 3, (file,), ("exact",), f"edit {path}"))
    if commit:
        store.commit(entry_id)
    return entry_id


def numbered_lines(count: int, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"value", b"result", b"index", b"compute", b"self"]
    return [
        b"    %s_%d = %s(%d, %s)\n"
        % (rng.choice(words), i, rng.choice(words), rng.randrange(10**6), rng.choice(words))
        for i in range(count)
    ]


def raw(store: HistoryStore) -> sqlite3.Connection:
    return sqlite3.connect(store.database)


@pytest.fixture
def store(tmp_path: Path) -> HistoryStore:
    with HistoryStore(tmp_path / "home") as opened:
        yield opened


def test_round_trip_of_every_kind_of_file_change(store: HistoryStore) -> None:
    updated = record(store, "a.py", b"x = 1\n", b"x = 2\n")
    added = record(store, "new.py", None, b"print('hi')\n")
    deleted = record(store, "old.py", b"bye\n", None)
    moved = record(store, "from.py", b"moved\n", b"moved and changed\n", new_path="pkg/to.py")
    versions = {entry_id: store.file_versions(entry_id)[0] for entry_id in (updated, added, deleted, moved)}
    assert (versions[updated].before, versions[updated].after) == (b"x = 1\n", b"x = 2\n")
    assert (versions[added].before, versions[added].after) == (None, b"print('hi')\n")
    assert (versions[deleted].before, versions[deleted].after) == (b"bye\n", None)
    assert versions[moved].target_path == "pkg/to.py"
    assert versions[moved].after == b"moved and changed\n"
    assert versions[updated].after_fingerprint == sha(b"x = 2\n")
    assert versions[added].before_fingerprint is None
    entry = store.entry(moved)
    assert entry.status == "applied"
    assert (entry.session, entry.origin, entry.execution_count, entry.tiers) == ("s1", "api", 3, ("exact",))
    assert entry.files[0].path == "from.py" and entry.files[0].new_path == "pkg/to.py"


def test_entries_are_newest_first_and_filterable(store: HistoryStore) -> None:
    ids = [record(store, f"f{i % 3}.py", b"%d" % i, b"%d" % (i + 1), session=f"s{i % 2}") for i in range(12)]
    assert [entry.id for entry in store.entries()] == ids[::-1]
    assert ids == sorted(ids)
    assert [entry.id for entry in store.entries(session="s0")] == ids[::2][::-1]
    assert [entry.id for entry in store.entries(path="f1.py")] == ids[1::3][::-1]
    assert [entry.id for entry in store.entries(limit=2)] == ids[:-3:-1]
    moved = record(store, "f1.py", b"a", b"a", new_path="g.py")
    assert store.entries(path="g.py")[0].id == moved
    assert store.entries(path="f1.py")[0].id == moved
    assert store.latest("s1").id == moved
    assert store.latest("nobody") is None


def test_entries_list_every_file_in_order_with_one_or_many_files(store: HistoryStore) -> None:
    """Listing joins each entry's first file and fetches the others apart: both must come back,
    in their order, whatever the filter (session, path, limit), with the fields as stored."""
    from nbedit.storage.database import format_id
    from nbedit.storage.records import FileSummary

    single = record(store, "solo.py", b"1", b"2", session="s0")
    names = ["c.py", "a.py", "b.py"]  # stored in this order, not sorted
    files = tuple(
        FileRecord(name, None, b"x%d" % n, b"y%d" % n, sha(b"x%d" % n), sha(b"y%d" % n), n + 1, n)
        for n, name in enumerate(names)
    )
    many = store.begin(EntryDraft("s1", "cli", 7, files, ("exact", "fuzzy 0.91"), "three files", turn="t1"))
    store.commit(many)
    moved = record(store, "old.py", b"m", b"m", new_path="new.py", session="s0")
    expected_many = tuple(FileSummary(name, None, n + 1, n) for n, name in enumerate(names))
    listings = [store.entries(), store.entries(session="s1"), store.entries(path="b.py")]
    listings.append(store.entries(limit=2))
    for listed in listings:
        entry = next(entry for entry in listed if entry.id == many)
        assert entry.files == expected_many
        assert (entry.session, entry.origin, entry.execution_count) == ("s1", "cli", 7)
        assert entry.status == "applied"
        assert (entry.tiers, entry.summary, entry.turn) == (("exact", "fuzzy 0.91"), "three files", "t1")
        assert entry.partial is False and entry.id == format_id(int(many[1:], 16))
    everything = store.entries()
    assert [entry.id for entry in everything] == [moved, many, single]
    assert everything[0].files == (FileSummary("old.py", "new.py", 1, 1),)
    assert everything[2].files == (FileSummary("solo.py", None, 1, 1),)
    assert [entry.id for entry in store.entries(path="a.py")] == [many]
    assert [entry.id for entry in store.entries(session="s0", limit=1)] == [moved]


def test_applied_since_and_the_last_recorded_entry_of_a_root_in_a_long_history(store: HistoryStore) -> None:
    from nbedit.history_ops import _last_recorded

    def at(root: str, before: bytes, after: bytes, *, commit: bool = True) -> str:
        file = FileRecord("f.py", None, before, after, sha(before), sha(after), 1, 1)
        entry_id = store.begin(EntryDraft("s", "api", None, (file,), (), "f.py", root=root))
        if commit:
            store.commit(entry_id)
        return entry_id

    here = at("/here", b"0", b"1")
    elsewhere = [at("/elsewhere", b"%d" % n, b"%d" % (n + 1)) for n in range(1, 12)]  # more than 8
    pending = at("/here", b"x", b"y", commit=False)
    other = record(store, "g.py", b"a", b"b")
    assert store.applied_since(here, "f.py") == elsewhere  # oldest first; not the pending one
    assert store.applied_since(elsewhere[-1], "f.py") == []
    assert store.applied_since(here, "g.py") == [other]
    assert _last_recorded(store, "f.py", "/here") == (here, b"1", sha(b"1"))
    assert _last_recorded(store, "f.py", "/elsewhere")[:2] == (elsewhere[-1], b"12")
    assert _last_recorded(store, "nothing.py", "/here") is None
    assert pending not in [entry.id for entry in store.entries() if entry.status == "applied"]


def test_latest_skips_pending_entries(store: HistoryStore) -> None:
    applied = record(store, "a", b"1", b"2")
    record(store, "a", b"2", b"3", commit=False)
    assert store.latest("s1").id == applied


def test_entry_ids_accept_prefixes_and_short_forms(store: HistoryStore) -> None:
    ids = [record(store, "a", b"%d" % i, b"%d" % (i + 1)) for i in range(16)]
    assert ids[0] == "e00000001" and ids[-1] == "e00000010"
    last = ids[-1]
    assert store.entry(last.upper()).id == last
    assert store.entry(" " + last + " ").id == last
    assert store.entry("e0000001").id == last  # unique prefix
    assert store.entry("00000010").id == last  # without the letter
    assert store.entry("e10").id == last  # the counter without padding
    assert store.entry("e2").id == ids[1]
    with pytest.raises(HistoryError, match="ambiguous"):
        store.entry("e0000000")
    with pytest.raises(HistoryError, match="no history entry"):
        store.entry("e7fffffff")
    with pytest.raises(HistoryError, match="not a history entry id"):
        store.entry("nonsense!")
    with pytest.raises(HistoryError, match="not a history entry id"):
        store.file_versions("")


def test_identical_content_is_stored_once(store: HistoryStore) -> None:
    content = b"".join(numbered_lines(2000))
    record(store, "a.py", None, content)
    size = store.stored_bytes()
    record(store, "copy.py", None, content)
    record(store, "a.py", content, content, new_path="b.py")
    assert store.stored_bytes() == size


def test_one_line_edits_store_only_the_change(store: HistoryStore) -> None:
    lines = numbered_lines(200_000, seed=1)  # about 7 MB
    current = b"".join(lines)
    record(store, "big.py", None, current)
    first = store.stored_bytes()
    rng = random.Random(2)
    for step in range(20):
        lines[rng.randrange(len(lines))] = b"    changed = %d\n" % step
        new = b"".join(lines)
        record(store, "big.py", current, new)
        current = new
    assert store.stored_bytes() - first < 20 * 200


@pytest.mark.slow
def test_hundred_edits_of_a_ten_megabyte_file_add_less_than_five_megabytes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines = numbered_lines(290_000, seed=3)
    current = b"".join(lines)
    assert len(current) > 10_000_000
    rng = random.Random(4)
    snapshots = [current]
    with HistoryStore(home) as store:
        record(store, "big.py", None, current)  # the file is known from here on

    def on_disk() -> int:
        return sum(path.stat().st_size for path in home.iterdir() if path.is_file())

    known = on_disk()
    with HistoryStore(home) as store:
        ids = []
        for step in range(100):
            lines[rng.randrange(len(lines))] = b"    edited_line = %d\n" % step
            new = b"".join(lines)
            ids.append(record(store, "big.py", current, new))
            current = new
            snapshots.append(current)
        for index in (0, 49, 99):
            version = store.file_versions(ids[index])[0]
            assert version.before == snapshots[index]
            assert version.after == snapshots[index + 1]
    assert on_disk() - known < 5_000_000


@pytest.mark.slow
def test_long_chains_get_keyframes_and_every_version_restores(store: HistoryStore) -> None:
    lines = numbered_lines(300, seed=5)
    current = b"".join(lines)
    history = [current]
    ids = []
    rng = random.Random(6)
    for step in range(2 * MAX_CHAIN_DEPTH + 10):
        index = rng.randrange(len(lines))
        if step % 7 == 0:
            lines.insert(index, b"inserted %d\n" % step)
        elif step % 11 == 0:
            del lines[index]
        else:
            lines[index] = b"replaced %d\n" % step
        new = b"".join(lines)
        ids.append(record(store, "f.py", current, new))
        current = new
        history.append(current)
    with raw(store) as connection:
        depths = [row[0] for row in connection.execute("SELECT depth FROM versions")]
        keyframes = connection.execute("SELECT COUNT(*) FROM versions WHERE base IS NULL").fetchone()[0]
    assert max(depths) <= MAX_CHAIN_DEPTH
    assert keyframes >= 3
    for index, entry_id in enumerate(ids):
        version = store.file_versions(entry_id)[0]
        assert version.before == history[index]
        assert version.after == history[index + 1]


def test_a_rewrite_is_stored_whole(store: HistoryStore) -> None:
    first = b"".join(numbered_lines(500, seed=7))
    second = b"".join(numbered_lines(500, seed=8))
    entry_id = record(store, "f.py", first, second)
    with raw(store) as connection:
        bases = [row[0] for row in connection.execute("SELECT base FROM versions")]
    assert bases == [None, None]
    assert store.file_versions(entry_id)[0].after == second


def test_changes_made_outside_nbedit_are_stored_as_deltas(store: HistoryStore) -> None:
    lines = numbered_lines(20_000, seed=9)
    original = b"".join(lines)
    record(store, "f.py", None, original)
    size = store.stored_bytes()
    lines[10] = b"edited in another editor\n"
    outside = b"".join(lines)
    lines[20] = b"edited by nbedit\n"
    entry_id = record(store, "f.py", outside, b"".join(lines))
    assert store.stored_bytes() - size < 500
    assert store.file_versions(entry_id)[0].before == outside


def test_abort_forgets_the_entry_and_its_versions(store: HistoryStore) -> None:
    kept = record(store, "a.py", b"one\n" * 100, b"two\n" * 100)
    size = store.stored_bytes()
    pending = record(store, "a.py", b"two\n" * 100, b"three\n" * 300, commit=False)
    assert store.entry(pending).status == "pending"
    assert store.stored_bytes() > size
    store.abort(pending)
    assert store.stored_bytes() == size
    assert [entry.id for entry in store.entries()] == [kept]
    with pytest.raises(HistoryError, match="already applied"):
        store.abort(kept)
    with pytest.raises(HistoryError, match="no history entry"):
        store.commit(pending)


def begin_and_die(home: Path, path: str, before: bytes, after: bytes) -> None:
    store = HistoryStore(home)
    record(store, path, before, after, commit=False)
    os._exit(0)  # a crash: no commit, no cleanup


def test_pending_entries_of_dead_writers_are_reconciled(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = {"written.py": b"new\n", "untouched.py": b"old\n"}
    for path in files:
        child = context.Process(target=begin_and_die, args=(home, path, b"old\n", b"new\n"))
        child.start()
        child.join(30)
    with HistoryStore(home) as store:
        mine = record(store, "mine.py", b"1", b"2", commit=False)  # a live writer's entry is left alone
        assert len(store.pending()) == 2
        assert [entry.id for entry in store.pending(include_live=True)][-1] == mine
        settled = store.reconcile(lambda path: sha(files.get(path)))
        assert sorted((entry.files[0].path, kept) for entry, kept in settled) == [
            ("untouched.py", False),
            ("written.py", True),
        ]
        assert store.pending() == []
        assert {(entry.files[0].path, entry.status) for entry in store.entries()} == {
            ("written.py", "applied"),
            ("mine.py", "pending"),
        }


def test_prune_per_file_keeps_the_newest_entries_restorable(store: HistoryStore) -> None:
    lines = numbered_lines(2000, seed=10)
    contents = [b"".join(lines)]
    ids = []
    for step in range(30):
        lines[step * 37 % len(lines)] = b"step %d\n" % step
        contents.append(b"".join(lines))
        ids.append(record(store, "f.py", contents[-2], contents[-1]))
    other = record(store, "other.py", b"a\n", b"b\n")
    pending = record(store, "f.py", contents[-1], b"pending\n", commit=False)
    result = store.prune(max_entries_per_file=5)
    assert result.entries_removed == 25
    assert [entry.id for entry in store.entries()] == [pending, other, *ids[:-6:-1]]
    for index in range(25, 30):
        version = store.file_versions(ids[index])[0]
        assert (version.before, version.after) == (contents[index], contents[index + 1])
    assert store.file_versions(pending)[0].after == b"pending\n"
    assert store.integrity_check() == ["ok"]
    with raw(store) as connection:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []


def test_prune_rebases_deltas_whose_base_goes_away(store: HistoryStore) -> None:
    lines = numbered_lines(3000, seed=11)
    contents = [b"".join(lines)]
    ids = []
    for step in range(12):
        lines[step * 101 % len(lines)] = b"step %d\n" % step
        contents.append(b"".join(lines))
        files = [FileRecord("f.py", None, contents[-2], contents[-1], sha(contents[-2]), sha(contents[-1]))]
        if step == 0:  # the first entry also touches g.py, so the per-file limit keeps it
            files.append(FileRecord("g.py", None, None, b"g\n"))
        ids.append(store.begin(EntryDraft("s", "api", None, tuple(files))))
        store.commit(ids[-1])
    # Entries 1..10 go; entry 11's "before" was a delta on entry 10's, so it must be
    # rebased onto the nearest kept ancestor: entry 0's "after".
    store.prune(max_entries_per_file=1)
    assert [entry.id for entry in store.entries()] == [ids[11], ids[0]]
    with raw(store) as connection:
        rows = connection.execute("SELECT fingerprint, base FROM versions").fetchall()
        assert len(rows) == 5  # f.py: contents 0, 1, 11, 12; g.py
        ids_by_fingerprint = dict(connection.execute("SELECT fingerprint, id FROM versions").fetchall())
        bases = dict(rows)
    assert bases[sha(contents[11])] == ids_by_fingerprint[sha(contents[1])]
    assert store.file_versions(ids[11])[0].before == contents[11]
    assert store.file_versions(ids[11])[0].after == contents[12]
    assert store.file_versions(ids[0])[0].after == contents[1]
    assert store.integrity_check() == ["ok"]
    # Now the byte budget drops entry 0 too: entry 11 has no kept ancestor and is stored whole.
    store.prune(max_total_bytes=store.stored_bytes() - 1)
    assert [entry.id for entry in store.entries()] == [ids[11]]
    version = store.file_versions(ids[11])[0]
    assert (version.before, version.after) == (contents[11], contents[12])
    with raw(store) as connection:
        assert connection.execute("SELECT COUNT(*), COUNT(base) FROM versions").fetchone() == (2, 1)
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
    assert store.integrity_check() == ["ok"]


def test_prune_to_a_byte_budget(store: HistoryStore) -> None:
    ids = []
    for step in range(20):
        ids.append(record(store, f"f{step}.py", None, os.urandom(5000)))
    assert store.stored_bytes() == 100_000  # random bytes do not compress
    result = store.prune(max_total_bytes=30_000)
    assert result.bytes_after <= 30_000 < result.bytes_before
    remaining = [entry.id for entry in store.entries()]
    assert remaining == ids[: -len(remaining) - 1 : -1]  # the newest ones survive
    assert 4 <= len(remaining) <= 6
    for entry_id in remaining:
        assert len(store.file_versions(entry_id)[0].after) == 5000
    assert store.prune(max_total_bytes=0).bytes_after == 0
    assert store.entries() == []


def test_a_damaged_version_is_refused_not_returned(store: HistoryStore) -> None:
    entry_id = record(store, "f.py", b"before\n" * 50, b"after\n" * 50)
    with raw(store) as connection:
        connection.execute("UPDATE versions SET data = ?, compressed = 0 WHERE base IS NULL", (b"x" * 350,))
        connection.commit()
    with pytest.raises(HistoryError, match="checksum|inconsistent"):
        store.file_versions(entry_id)


def test_wrong_fingerprint_for_known_content_is_refused(store: HistoryStore) -> None:
    record(store, "f.py", None, b"abc")
    bad = FileRecord("g.py", None, None, b"abcd", None, sha(b"abc"))
    with pytest.raises(HistoryError, match="SHA-256"):
        store.begin(EntryDraft("s", "api", None, (bad,)))


def test_bad_drafts_are_refused(store: HistoryStore) -> None:
    with pytest.raises(HistoryError, match="origin"):
        store.begin(EntryDraft("s", "telepathy", None, (FileRecord("a", None, b"", b"x"),)))
    with pytest.raises(HistoryError, match="at least one file"):
        store.begin(EntryDraft("s", "api", None, ()))
    with pytest.raises(HistoryError, match="before or after"):
        store.begin(EntryDraft("s", "api", None, (FileRecord("a", None, None, None),)))
    assert store.entries() == []


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: path.write_bytes(os.urandom(8192)), id="random-bytes"),
        pytest.param(lambda path: path.write_text("just some text, not a database\n" * 100), id="text"),
        pytest.param(lambda path: path.write_bytes(path.read_bytes()[:100]), id="truncated-header"),
    ],
)
def test_damaged_database_raises_history_error_and_can_be_recreated(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    with HistoryStore(home) as store:
        record(store, "a.py", b"1", b"2")
    damage(home / "history.sqlite3")
    with pytest.raises(DamagedHistory) as raised:
        HistoryStore(home).entries()
    assert isinstance(raised.value, HistoryError)
    assert "open_or_recreate" in str(raised.value)
    store = HistoryStore.open_or_recreate(home)
    assert store.notice is not None and "moved to" in store.notice
    assert store.entries() == []
    record(store, "a.py", b"2", b"3")
    assert len(store.entries()) == 1
    assert len(list(home.glob("history.sqlite3.corrupt-*"))) == 1
    store.close()
    assert HistoryStore.open_or_recreate(home).notice is None


def test_damage_inside_the_file_surfaces_as_history_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with HistoryStore(home) as store:
        for step in range(50):
            record(store, f"f{step}.py", None, os.urandom(3000))
    database = home / "history.sqlite3"
    data = bytearray(database.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    for page in range(2, len(data) // page_size):
        data[page * page_size : page * page_size + 64] = os.urandom(64)
    database.write_bytes(bytes(data))
    store = HistoryStore.open_or_recreate(home)
    try:
        store.entries()
        for entry in store.entries()[:5]:
            store.file_versions(entry.id)
    except HistoryError:
        pass  # any error at all must be a HistoryError; pytest reports anything else


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    HistoryStore(home).close()
    with sqlite3.connect(home / "history.sqlite3") as connection:
        connection.execute("PRAGMA user_version = 99")
    with pytest.raises(HistoryError, match="newer nbedit"):
        HistoryStore(home)


def test_home_that_cannot_be_created_is_a_history_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(HistoryError, match="NBEDIT_HOME"):
        HistoryStore(tmp_path / "file" / "home")


def test_default_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NBEDIT_HOME", str(tmp_path / "custom"))
    assert default_home() == tmp_path / "custom"
    monkeypatch.delenv("NBEDIT_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_home() == tmp_path / ".nbedit"


def write_entries(home: Path, worker: int, count: int) -> None:
    store = HistoryStore(home)
    content = b"worker %d\n" % worker
    for step in range(count):
        new = content + b"step %d\n" % step
        record(store, f"w{worker}.txt", content, new, session=f"worker-{worker}")
        content = new
    store.close()


@pytest.mark.slow
def test_concurrent_writers_from_several_processes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    HistoryStore(home).close()
    workers = [context.Process(target=write_entries, args=(home, worker, 50)) for worker in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    with HistoryStore(home) as store:
        entries = store.entries()
        assert len(entries) == 200
        assert len({entry.id for entry in entries}) == 200
        assert all(entry.status == "applied" for entry in entries)
        for worker in range(4):
            mine = store.entries(session=f"worker-{worker}")
            assert len(mine) == 50
            assert store.file_versions(mine[0].id)[0].after.endswith(b"step 49\n")
        assert store.integrity_check() == ["ok"]


def use_after_fork(store: HistoryStore, queue) -> None:  # type: ignore[no-untyped-def]
    record(store, "child.py", b"a", b"b", session="child")
    queue.put([entry.files[0].path for entry in store.entries()])


def test_store_opened_before_fork_works_in_the_child(store: HistoryStore) -> None:
    record(store, "parent.py", b"a", b"b")
    queue = context.Queue()
    child = context.Process(target=use_after_fork, args=(store, queue))
    child.start()
    assert queue.get(timeout=30) == ["child.py", "parent.py"]
    child.join(30)
    assert [entry.files[0].path for entry in store.entries()] == ["child.py", "parent.py"]


def test_the_in_memory_delta_base_is_dropped_when_another_writer_moved_the_path_on(tmp_path: Path) -> None:
    """Process A remembers the version it wrote; B writes a newer one; A's next record must
    delta against B's version (or a full copy), never against its stale memory."""
    first, second = HistoryStore(tmp_path / "home"), HistoryStore(tmp_path / "home")
    lines = numbered_lines(2_000)
    v1 = b"".join(lines)
    v2 = v1.replace(lines[10], b"changed by A\n")
    v3 = v2.replace(lines[500], b"changed by B\n")
    v4 = v3.replace(lines[900], b"changed outside nbedit\n")
    v5 = v4.replace(lines[1500], b"changed by A again\n")
    record(first, "big.txt", v1, v2)
    record(second, "big.txt", v2, v3)
    entry = record(first, "big.txt", v4, v5)  # A never saw v3 or v4
    for reader in (first, HistoryStore(tmp_path / "home")):
        (version,) = reader.file_versions(entry)
        assert version.before == v4 and version.after == v5


def test_a_reused_version_id_never_serves_stale_bytes_as_a_delta_base(tmp_path: Path) -> None:
    """An aborted entry's version id can be reused by SQLite for other bytes; the
    in-memory base must then be refused by its fingerprint, or history is corrupted."""
    first, second = HistoryStore(tmp_path / "home"), HistoryStore(tmp_path / "home")
    lines = numbered_lines(2_000)
    base = b"".join(lines)
    mine = base.replace(lines[10], b"A's version\n")
    theirs = base.replace(lines[20], b"B's version\n")
    outside = mine.replace(lines[30], b"outside\n")  # e.g. the aborted bytes put back by hand
    final = outside.replace(lines[40], b"final\n")
    pending = record(first, "big.txt", base, mine, commit=False)
    first.abort(pending)  # A still remembers `mine`, under an id that is free again
    record(second, "big.txt", base, theirs)
    entry = record(first, "big.txt", outside, final)
    (version,) = HistoryStore(tmp_path / "home").file_versions(entry)
    assert version.before == outside and version.after == final


def _packings(store: HistoryStore) -> list[tuple[int, int]]:
    with raw(store) as connection:
        return connection.execute("SELECT size, compressed FROM versions ORDER BY id").fetchall()


def test_a_big_keyframe_is_zstd_and_a_small_one_zlib(store: HistoryStore) -> None:
    # in a process that has loaded the zstd bindings (a kernel, a long session); a process that has
    # not packs a keyframe under 1 MiB with zlib instead: tests/test_record_cold_packing.py
    import zstandard  # noqa: F401

    big_before = b"".join(numbered_lines(20_000))  # about 700 KB: over the zstd threshold
    big_after = big_before.replace(b"alpha", b"ALPHA", 1)
    small = b"".join(numbered_lines(200, seed=1))
    big_entry = record(store, "big.py", big_before, big_after)
    small_entry = record(store, "small.py", None, small)
    assert _packings(store) == [
        (len(big_before), 2),  # the keyframe: zstd
        (len(big_after), 0),  # a delta of a few bytes: stored as is
        (len(small), 1),  # zlib: the zstd bindings are not loaded for small files
    ]
    assert store.stored_bytes() < len(big_before) // 2
    assert store.file_versions(big_entry)[0].before == big_before
    assert store.file_versions(big_entry)[0].after == big_after
    assert store.file_versions(small_entry)[0].after == small


def test_entries_packed_with_zlib_by_an_older_nbedit_still_restore(store: HistoryStore) -> None:
    import zlib

    before = b"".join(numbered_lines(20_000))
    after = before + b"tail\n"
    entry_id = record(store, "big.py", before, after)
    with raw(store) as connection:
        connection.execute(
            "UPDATE versions SET data = ?, compressed = 1 WHERE base IS NULL", (zlib.compress(before, 6),)
        )
        connection.commit()
    assert _packings(store)[0] == (len(before), 1)
    versions = store.file_versions(entry_id)[0]
    assert (versions.before, versions.after) == (before, after)


@pytest.mark.parametrize(("packing", "message"), [(2, "bad compressed data"), (7, "newer nbedit")])
def test_a_damaged_or_unknown_packing_is_refused(store: HistoryStore, packing: int, message: str) -> None:
    entry_id = record(store, "big.py", b"".join(numbered_lines(20_000)), b"new\n")
    with raw(store) as connection:
        connection.execute(
            "UPDATE versions SET data = ?, compressed = ? WHERE base IS NULL", (b"\x28\xb5" * 99, packing)
        )
        connection.commit()
    with pytest.raises(HistoryError, match=message):
        store.file_versions(entry_id)


def _home_bytes(store: HistoryStore) -> int:
    return sum(path.stat().st_size for path in store.home.iterdir() if path.is_file())


def test_the_write_ahead_log_is_truncated_after_a_big_change_while_the_store_stays_open(
    store: HistoryStore,
) -> None:
    from nbedit.storage.database import WAL_LIMIT

    wal = Path(f"{store.database}-wal")
    before = os.urandom(3 << 20)  # does not compress: the keyframe fills the log (streamed into its row)
    after = before[:1000] + b"edited" + before[1000:]
    first_before, first_after = before, after
    entry_id = record(store, "big.bin", before, after, commit=False)
    assert wal.stat().st_size > 3 << 20  # the pending entry is in the log, durable
    store.commit(entry_id)
    assert wal.stat().st_size <= WAL_LIMIT
    for step in range(20):
        before, after = after, after[: 2000 + step] + b"x" + after[2000 + step :]
        record(store, "big.bin", before, after)
        assert wal.stat().st_size <= WAL_LIMIT
    assert _home_bytes(store) < (3 << 20) + 2 * WAL_LIMIT
    first = store.file_versions(entry_id)[0]
    assert (first.before, first.after) == (first_before, first_after)
    assert store.integrity_check() == ["ok"]


def test_a_closed_store_leaves_no_write_ahead_log(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "home")
    record(store, "f.py", b"a\n" * 1000, b"b\n" * 1000)
    store.close()
    assert not Path(f"{store.database}-wal").exists()
    with HistoryStore(tmp_path / "home") as reopened:
        assert len(reopened.entries()) == 1


def test_a_keyframe_over_16_mib_round_trips(store: HistoryStore) -> None:
    from nbedit.storage.versions import ZSTD_FAST_FROM

    before = b"".join(numbered_lines(500_000))  # about 17 MB: packed at zstd's fast level
    assert len(before) >= ZSTD_FAST_FROM
    after = before[:5_000_000] + b"edited\n" + before[5_000_000:]
    entry_id = record(store, "big.py", before, after)
    assert _packings(store)[0] == (len(before), 2)
    assert store.stored_bytes() < len(before) // 3
    versions = store.file_versions(entry_id)[0]
    assert (versions.before, versions.after) == (before, after)


def test_the_history_store_does_not_import_the_sqlite3_package(tmp_path: Path) -> None:
    """The C module is enough (see nbedit/storage/sqlite.py): no datetime, no date adapters."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom nbedit.workspace import Workspace\n"
        f"(root := __import__('pathlib').Path({str(tmp_path)!r})).joinpath('f.txt').write_text('a\\n')\n"
        f"workspace = Workspace(root, history=True, home={str(tmp_path / 'home')!r})\n"
        "workspace.apply(workspace.plan_edit('f.txt', 'a\\n', 'b\\n'))\n"
        "assert len(workspace.history()) == 1\n"
        "print(sorted(name for name in ('sqlite3', 'sqlite3.dbapi2', 'datetime') if name in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="needs os.fork")
def test_a_fork_waits_for_another_threads_history_operation_to_end(tmp_path: Path) -> None:
    """A thread inside SQLite when the process forks would leave SQLite's mutexes held in the
    child forever (its first SQLite call hangs): the fork waits for the database's lock, which
    every history operation holds, so the child starts only after that operation ended and
    can use the history itself."""
    import threading
    import time

    store = HistoryStore(tmp_path / "home")
    store.entries()
    database = store._database
    inside, ended = threading.Event(), []

    def operation() -> None:
        with database._lock:  # as a history operation holds it while it is in SQLite
            inside.set()
            time.sleep(0.3)
            ended.append(time.monotonic())

    thread = threading.Thread(target=operation)
    thread.start()
    inside.wait(5)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: when it started, and whether the history still answers
        try:
            started = time.monotonic()
            count = len(HistoryStore(tmp_path / "home").entries())
            os.write(writer, f"{started} {count}".encode())
        finally:
            os._exit(0)
    os.close(writer)
    started, count = os.read(reader, 100).decode().split()
    os.close(reader)
    os.waitpid(pid, 0)
    thread.join()
    assert float(started) >= ended[0]  # the fork waited for the operation to end
    assert count == "0"
    store.close()
