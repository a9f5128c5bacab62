"""Undo, restore, show and history through a real Workspace, real files and real processes."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbedit import history_ops
from nbedit.engine.diff_counts import diff_stats
from nbedit.engine.whole_diff import text_diff
from nbedit.errors import HistoryError, NothingToUndo, StaleFile
from nbedit.storage.atomic import is_temp_file
from nbedit.storage.history import HistoryStore
from nbedit.workspace import Workspace

context = multiprocessing.get_context("fork")


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


def make_workspace(base: Path, session: str = "test") -> Workspace:
    root = base / "root"
    root.mkdir(exist_ok=True)
    return Workspace(root, home=base / "home", session=session)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    ws = make_workspace(tmp_path)
    (ws.root / "a.py").write_bytes(b"x = 1\ny = 2\nz = 3\n")
    (ws.root / "b.txt").write_bytes(b"alpha\r\nbeta\r\n")
    return ws


def add_patch(path: str, text: str) -> str:
    body = "".join("+" + line + "\n" for line in text.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def test_undo_reverts_the_latest_edit_and_walks_back(workspace: Workspace) -> None:
    original = tree(workspace.root)
    first = workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 10"))
    workspace.apply(workspace.plan_edit("b.txt", "beta", "BETA"))
    workspace.apply(workspace.plan_patch(add_patch("new/c.py", "print('c')")))
    assert len(workspace.history()) == 3
    undone = workspace.undo()
    assert undone.entry_id is not None
    assert not (workspace.root / "new" / "c.py").exists()
    workspace.undo()
    assert (workspace.root / "b.txt").read_bytes() == b"alpha\r\nbeta\r\n"
    workspace.undo()
    assert tree(workspace.root) == original
    with pytest.raises(NothingToUndo):
        workspace.undo()
    entries = workspace.history()
    assert [entry.origin for entry in entries] == ["undo", "undo", "undo", "api", "api", "api"]
    assert entries[0].undoes == first.entry_id  # the last undo reverted the first edit


def test_undo_of_an_undo_reapplies_the_edit(workspace: Workspace) -> None:
    workspace.apply(workspace.plan_edit("a.py", "y = 2", "y = 20"))
    edited = tree(workspace.root)
    undo = workspace.undo()
    assert (workspace.root / "a.py").read_bytes() == b"x = 1\ny = 2\nz = 3\n"
    redo = workspace.undo(undo.entry_id)
    assert tree(workspace.root) == edited
    assert workspace.history()[0].undoes == undo.entry_id
    workspace.undo(redo.entry_id)
    assert (workspace.root / "a.py").read_bytes() == b"x = 1\ny = 2\nz = 3\n"


def test_undo_brings_back_deleted_and_moved_files(workspace: Workspace) -> None:
    original = tree(workspace.root)
    workspace.apply(workspace.plan_patch("*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n"))
    workspace.apply(
        workspace.plan_patch(
            "*** Begin Patch\n*** Update File: a.py\n*** Move to: pkg/a2.py\n@@\n x = 1\n-y = 2\n+y = 22\n"
            "*** End Patch\n"
        )
    )
    assert set(tree(workspace.root)) == {"pkg/a2.py"}
    workspace.undo()
    workspace.undo()
    assert tree(workspace.root) == original


def test_stale_undo_is_refused_and_changes_nothing(workspace: Workspace) -> None:
    workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 10"))
    (workspace.root / "a.py").write_bytes(b"x = 10\ny = 2\nz = 3\nmanual = True\n")
    before = tree(workspace.root)
    entries = len(workspace.history())
    with pytest.raises(StaleFile) as raised:
        workspace.undo()
    assert raised.value.path == "a.py"
    assert "+manual = True" in raised.value.diff
    assert "force" in str(raised.value)
    assert tree(workspace.root) == before
    assert len(workspace.history()) == entries
    workspace.undo(force=True)
    assert (workspace.root / "a.py").read_bytes() == b"x = 1\ny = 2\nz = 3\n"
    # forcing kept the manual edit in the history: undoing the undo brings it back
    workspace.undo(workspace.history()[0].id)
    assert (workspace.root / "a.py").read_bytes() == b"x = 10\ny = 2\nz = 3\nmanual = True\n"


def test_undo_refuses_a_file_created_where_a_deleted_one_was(workspace: Workspace) -> None:
    workspace.apply(workspace.plan_patch("*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n"))
    (workspace.root / "b.txt").write_bytes(b"someone else's file\n")
    with pytest.raises(StaleFile, match="created since"):
        workspace.undo()
    assert (workspace.root / "b.txt").read_bytes() == b"someone else's file\n"


def test_restore_before_and_after(workspace: Workspace) -> None:
    first = workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 10"))
    second = workspace.apply(workspace.plan_edit("a.py", "z = 3", "z = 30"))
    restored = workspace.restore(first.entry_id)
    assert (workspace.root / "a.py").read_bytes() == b"x = 1\ny = 2\nz = 3\n"
    assert workspace.history()[0].origin == "restore"
    assert restored.entry_id == workspace.history()[0].id
    workspace.restore(second.entry_id, which="after")
    assert (workspace.root / "a.py").read_bytes() == b"x = 10\ny = 2\nz = 30\n"
    workspace.restore(first.entry_id, after=True)  # the CLI's spelling
    assert (workspace.root / "a.py").read_bytes() == b"x = 10\ny = 2\nz = 3\n"
    with pytest.raises(HistoryError, match="which"):
        workspace.restore(first.entry_id, which="sideways")
    with pytest.raises(HistoryError, match="no history entry"):
        workspace.restore("e7fffffff")


def test_stale_restore_is_refused_and_changes_nothing(workspace: Workspace) -> None:
    first = workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 10"))
    (workspace.root / "a.py").write_bytes(b"rewritten by hand\n")
    before = tree(workspace.root)
    with pytest.raises(StaleFile, match="last recorded"):
        workspace.restore(first.entry_id)
    assert tree(workspace.root) == before
    workspace.restore(first.entry_id, force=True)
    assert (workspace.root / "a.py").read_bytes() == b"x = 1\ny = 2\nz = 3\n"


def _recorded_matches_disk(workspace: Workspace, entry_id: str, before: bytes, after: bytes) -> None:
    import hashlib

    store = workspace._store()
    ((_, _, before_fingerprint, after_fingerprint),) = store.file_fingerprints(entry_id)
    assert before_fingerprint == hashlib.sha256(before).hexdigest()
    assert after_fingerprint == hashlib.sha256(after).hexdigest()
    (version,) = store.file_versions(entry_id)
    assert (version.before, version.after) == (before, after)


def test_restore_and_undo_record_the_fingerprints_of_the_bytes_they_replace_and_write(tmp_path: Path) -> None:
    """Undo and restore take the fingerprints the history checked instead of hashing again, and
    hash a file changed by hand (on another thread when big): every entry names its true bytes."""
    ws = make_workspace(tmp_path)
    big = ws.root / "big.py"
    original = b"".join(b"line_%d = %d\n" % (number, number * 7) for number in range(150_000))  # 2.5 MB
    big.write_bytes(original)
    first = ws.apply(ws.plan_edit("big.py", "line_10 = 70\n", "line_10 = 71\n"))
    edited = big.read_bytes()
    second = ws.apply(ws.plan_edit("big.py", "line_149990 = ", "line_149990 = -"))
    latest = big.read_bytes()
    planned = history_ops.plan_restore(ws, first.entry_id)
    assert planned.plan.files[0].notes  # later entries named, the texts still not decoded
    restored = planned.apply(ws)  # the file holds what was last recorded: vouched for
    assert big.read_bytes() == original
    _recorded_matches_disk(ws, restored.entry_id, latest, original)
    (summary,) = ws.history()[0].files  # counted in the bytes: the counts of the diff of the texts
    counted = diff_stats(text_diff(latest.decode(), original.decode(), "big.py"))
    assert (summary.added, summary.removed) == counted == (2, 2)
    assert planned.plan.files[0].before == latest.decode()
    assert planned.plan.files[0].after == original.decode()
    by_hand = original.replace(b"line_5 = 35\n", b"line_5 = 'by hand'\n")
    big.write_bytes(by_hand)
    forced = ws.restore(second.entry_id, force=True)  # changed by hand: hashed
    assert big.read_bytes() == edited
    _recorded_matches_disk(ws, forced.entry_id, by_hand, edited)
    undone = ws.undo(forced.entry_id)
    assert big.read_bytes() == by_hand
    _recorded_matches_disk(ws, undone.entry_id, edited, by_hand)


@pytest.mark.parametrize("which", ["before", "after"])
def test_a_restore_from_a_damaged_version_is_refused_and_changes_nothing(
    workspace: Workspace, which: str
) -> None:
    import sqlite3

    first = workspace.apply(workspace.plan_edit("a.py", "x = 1", "x = 10"))
    workspace.apply(workspace.plan_edit("a.py", "z = 3", "z = 30"))
    store = workspace._store()
    goal = {"before": b"x = 1\ny = 2\nz = 3\n", "after": b"x = 10\ny = 2\nz = 3\n"}[which]
    import hashlib

    with sqlite3.connect(store.database) as connection:
        version, packing, data = connection.execute(
            "SELECT id, compressed, data FROM versions WHERE fingerprint = ?",
            (hashlib.sha256(goal).hexdigest(),),
        ).fetchone()
        assert packing == 0  # stored raw: a changed byte is only caught by the checksum
        damaged = bytes(data[:-2]) + (b"9" if data[-2:-1] != b"9" else b"8") + bytes(data[-1:])
        connection.execute("UPDATE versions SET data = ? WHERE id = ?", (damaged, version))
    store.close()
    before = tree(workspace.root)
    count = len(workspace.history())
    for force in (False, True):
        with pytest.raises(HistoryError, match="checksum|inconsistent"):
            workspace.restore(first.entry_id, which=which, force=force)
        assert tree(workspace.root) == before
    assert len(workspace.history()) == count


def test_show_is_the_diff_of_the_entry(workspace: Workspace) -> None:
    result = workspace.apply(workspace.plan_edit("a.py", "y = 2", "y = 20"))
    assert workspace.show(result.entry_id) == (
        "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 20\n z = 3\n"
    )
    added = workspace.apply(workspace.plan_patch(add_patch("n.py", "n = 1")))
    assert workspace.show(added.entry_id) == "--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+n = 1\n"


def test_history_filters_by_session_and_path(tmp_path: Path) -> None:
    mine = make_workspace(tmp_path, "mine")
    theirs = make_workspace(tmp_path, "theirs")
    (mine.root / "a.py").write_text("a\n")
    mine.apply(mine.plan_edit("a.py", "a", "b"))
    theirs.apply(theirs.plan_patch(add_patch("t.py", "t")))
    assert [entry.files[0].path for entry in mine.history()] == ["a.py"]
    assert [entry.files[0].path for entry in mine.history(all_sessions=True)] == ["t.py", "a.py"]
    assert [entry.files[0].path for entry in mine.history(all_sessions=True, path="./t.py")] == ["t.py"]
    with pytest.raises(NothingToUndo):
        make_workspace(tmp_path, "nobody").undo()
    theirs.undo()
    assert not (theirs.root / "t.py").exists()
    assert (mine.root / "a.py").read_text() == "b\n"


def test_history_off_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a\n")
    workspace = Workspace(tmp_path, history=False, home=tmp_path / "home")
    workspace.apply(workspace.plan_edit("a.py", "a", "b"))
    with pytest.raises(HistoryError, match="turned off"):
        workspace.undo()
    with pytest.raises(HistoryError, match="turned off"):
        workspace.history()


def test_notebook_undo_round_trip(workspace: Workspace) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1\nprint(x)"), nbformat.v4.new_markdown_cell("# Title")]
    path = workspace.root / "n.ipynb"
    nbformat.write(notebook, path)
    original = path.read_bytes()
    result = workspace.apply(workspace.plan_edit("n.ipynb", "x = 1", "x = 2"))
    assert b"x = 2" in path.read_bytes()
    assert "-x = 1\n+x = 2\n" in workspace.show(result.entry_id)
    workspace.undo()
    assert path.read_bytes() == original


operations = st.lists(
    st.tuples(st.sampled_from(["edit", "add", "delete", "move"]), st.integers(0, 10**6)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_any_sequence_of_edits_undone_gives_the_original_bytes(steps: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        workspace = make_workspace(Path(directory))
        root = workspace.root
        (root / "keep.py").write_bytes(b"first\r\nsecond\nthird")
        (root / "other.txt").write_bytes("unicode \u2019 text\n".encode())
        original = tree(root)
        applied = 0
        for counter, (kind, seed) in enumerate(steps):
            files = sorted(tree(root))
            name = files[seed % len(files)] if files else None
            if kind == "add" or name is None:
                plan = workspace.plan_patch(add_patch(f"added{counter}/f{seed}.txt", f"line {seed}"))
            elif kind == "delete":
                plan = workspace.plan_patch(f"*** Begin Patch\n*** Delete File: {name}\n*** End Patch\n")
            elif kind == "move":
                target = f"moved{counter}/{seed}.txt"
                plan = workspace.plan_patch(
                    f"diff --git a/{name} b/{target}\nsimilarity index 100%\nrename from {name}\nrename to {target}\n"
                )
            else:
                content = (root / name).read_text()
                plan = workspace.plan_edit(name, content, content + f"unique edit {counter} {seed}\n")
            workspace.apply(plan)
            applied += 1
        for _ in range(applied):
            workspace.undo()
        assert tree(root) == original
        with pytest.raises(NothingToUndo):
            workspace.undo()


# -- several processes editing one file ---------------------------------------------------


def append_lines(base: Path, worker: int, count: int, results) -> None:  # type: ignore[no-untyped-def]
    workspace = make_workspace(base, session=f"worker-{worker}")
    applied = stale = 0
    for step in range(count):
        text = (workspace.root / "shared.txt").read_text()
        last = text.splitlines(True)[-1]
        plan = workspace.plan_edit("shared.txt", last, last + f"w{worker} s{step}\n")
        try:
            workspace.apply(plan)
            applied += 1
        except StaleFile:
            stale += 1
    results.put((worker, applied, stale))


@pytest.mark.slow
def test_concurrent_read_plan_apply_never_loses_an_edit(
    tmp_path: Path, property_examples: Callable[[int], int]
) -> None:
    workspace = make_workspace(tmp_path, session="setup")
    shared = workspace.root / "shared.txt"
    shared.write_text("header\n")
    results = context.Queue()
    count = property_examples(200)  # edits per writer: CI-sized, NBEDIT_PROPERTY_EXAMPLES for more
    workers = [
        context.Process(target=append_lines, args=(tmp_path, worker, count, results)) for worker in range(4)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert all(applied + stale == count for _, applied, stale in outcomes)
    lines = shared.read_text().splitlines()
    assert lines[0] == "header"
    assert len(lines) == 1 + sum(applied for _, applied, _ in outcomes)
    assert len(set(lines)) == len(lines)  # no edit applied twice
    for worker, applied, _ in outcomes:  # each worker's applied lines, in its own order
        mine = [line for line in lines if line.startswith(f"w{worker} ")]
        assert len(mine) == applied
        assert mine == sorted(mine, key=lambda line: int(line.split(" s")[1]))
    # The history replays exactly: each entry starts where the previous one ended.
    store = HistoryStore(tmp_path / "home")
    entries = store.entries(path="shared.txt")[::-1]
    assert all(entry.status == "applied" for entry in entries)
    assert len(entries) == len(lines) - 1
    current = b"header\n"
    for entry in entries:
        version = store.file_versions(entry.id)[0]
        assert version.before == current
        current = version.after
    assert current == shared.read_bytes()
    assert store.integrity_check() == ["ok"]


# -- crash safety --------------------------------------------------------------------------


def keep_applying(base: Path, start: int, ready: Any = None) -> None:
    workspace = make_workspace(base, session="crasher")
    step = start
    while True:
        path = workspace.root / "target.txt"
        current = path.read_bytes()
        marker = current.split(b"\n", 1)[0].decode()
        plan = workspace.plan_edit("target.txt", marker + "\n", f"version {step}\n")
        if ready is not None:
            ready.set()  # the killer's random moment starts now, however loaded the machine is
        workspace.apply(plan)
        step += 1


@pytest.mark.slow
def test_killing_a_writer_at_random_moments_never_leaves_a_mixed_file(
    tmp_path: Path, property_examples: Callable[[int], int]
) -> None:
    workspace = make_workspace(tmp_path, session="checker")
    target = workspace.root / "target.txt"
    body = b"".join(b"body line %d of a file big enough to take a while to write\n" % i for i in range(20000))
    target.write_bytes(b"version 0\n" + body)
    rng = random.Random(1234)
    rounds = property_examples(200)  # kills: CI-sized, NBEDIT_PROPERTY_EXAMPLES for more
    deadline = time.monotonic() + 45 * max(1.0, rounds / 200)
    kills = 0
    leftovers_seen = 0
    seen_versions: set[bytes] = set()
    while kills < rounds:
        ready = context.Event()
        child = context.Process(target=keep_applying, args=(tmp_path, kills * 1000 + 1, ready))
        child.start()
        ready.wait(20)  # under load a child may take long to import and plan: kill it while it writes
        time.sleep(rng.uniform(0.0, 0.12))
        os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        child.join(10)
        kills += 1
        data = target.read_bytes()
        header, rest = data.split(b"\n", 1)
        assert rest == body, "the file is a mix of two versions"
        assert header.startswith(b"version ")
        seen_versions.add(header)
        leftovers_seen += sum(1 for path in workspace.root.iterdir() if is_temp_file(path.name))
        if kills % 25 == 0:
            with HistoryStore(tmp_path / "home") as store:
                assert store.integrity_check() == ["ok"]
        assert time.monotonic() < deadline + 30, "crash test is taking too long"
    assert kills >= rounds
    assert len(seen_versions) > 10  # the children really were writing when killed
    # The next run cleans what the killed writers left behind, and history is sound.
    current = target.read_bytes().split(b"\n", 1)[0].decode()
    workspace.apply(workspace.plan_edit("target.txt", current + "\n", "final\n"))
    assert [path.name for path in workspace.root.iterdir() if is_temp_file(path.name)] == []
    with HistoryStore(tmp_path / "home") as store:
        assert store.integrity_check() == ["ok"]
        applied = [entry for entry in store.entries(session="crasher") if entry.status == "applied"]
        assert applied
        for entry in applied[:20]:
            version = store.file_versions(entry.id)[0]
            assert version.after is not None and version.after.endswith(body)


def begin_for_workspace_and_die(base: Path, path: str, before: bytes, after: bytes) -> None:
    from nbedit.engine.text import fingerprint
    from nbedit.storage.records import EntryDraft, FileRecord

    workspace = make_workspace(base, session="dead")
    record = FileRecord(path, None, before, after, fingerprint(before), fingerprint(after))
    root = str(workspace.root.resolve())
    workspace._store().begin(EntryDraft("dead", "api", None, (record,), root=root))
    os._exit(0)


def test_entries_interrupted_by_a_crash_are_settled_when_the_history_is_next_read(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    (workspace.root / "written.py").write_bytes(b"after\n")
    (workspace.root / "untouched.py").write_bytes(b"before\n")
    for path in ("written.py", "untouched.py"):
        child = context.Process(
            target=begin_for_workspace_and_die, args=(tmp_path, path, b"before\n", b"after\n")
        )
        child.start()
        child.join(30)
    (tmp_path / "elsewhere").mkdir()
    other = Workspace(tmp_path / "elsewhere", home=tmp_path / "home")  # another root: not its files
    # a workspace on another root never settles these files; the second child, on the same
    # root, already settled the first child's entry when it opened the history to record its own
    by_path = {entry.files[0].path: entry.status for entry in other.history(all_sessions=True)}
    assert by_path["untouched.py"] == "pending"
    entries = workspace.history(all_sessions=True)
    assert [(entry.files[0].path, entry.status) for entry in entries] == [("written.py", "applied")]
