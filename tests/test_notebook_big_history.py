"""Big notebooks, history on: the entries of first and later edits restore byte for byte.

An edit of a notebook of several MB hashes its "after" on another thread while the
file is checked, locked and its old copy linked (``nbedit.engine.digest``); the entry
names the new version only once that hash is in. These tests run real edits on a
real notebook above the size hashed in the background, and check what the entry
recorded against the files: undo and restore of the first and later edits, a stale
file refused, and crashes on either side of the replace settled by the next process.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

from nbedit.engine.digest import IN_BACKGROUND, fingerprint_meanwhile
from nbedit.engine.text import fingerprint
from nbedit.errors import StaleFile
from nbedit.storage.history import FileRecord, HistoryStore
from nbedit.storage.records import EntryDraft
from nbedit.workspace import Workspace

context = multiprocessing.get_context("fork")
CELLS = 240
NAME = "big.ipynb"


def big_notebook() -> bytes:
    """A notebook of about 6 MB in nbformat's own layout (indent 1, sorted keys, final newline)."""
    cells = []
    for number in range(CELLS):
        printed = [f"cell {number} line {line} ünïcode {'x' * 40}\n" for line in range(360)]
        cells.append(
            {
                "cell_type": "code",
                "execution_count": number,
                "id": f"cell-{number}",
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": printed}],
                "source": [f"total_{number} = frame_{number}.sum()\n", f"plot(total_{number})"],
            }
        )
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    data = (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    assert len(data) > IN_BACKGROUND  # the path under test: the "after" is hashed on another thread
    return data


def make_workspace(base: Path) -> Workspace:
    root = base / "root"
    root.mkdir(exist_ok=True)
    return Workspace(root, home=base / "home", session="test")


def edit(workspace: Workspace, number: int, old: str = ".sum()", new: str = ".mean()") -> bytes:
    workspace.apply(
        workspace.plan_edit(
            NAME, f"total_{number} = frame_{number}{old}", f"total_{number} = frame_{number}{new}"
        )
    )
    return (workspace.root / NAME).read_bytes()


def after_fingerprints(home: Path) -> list[str]:
    with sqlite3.connect(home / "history.sqlite3") as connection:
        return [
            row[0]
            for row in connection.execute(
                "SELECT v.fingerprint FROM files AS f JOIN versions AS v ON v.id = f.after_version ORDER BY f.entry"
            )
        ]


def test_the_background_fingerprint_is_the_fingerprint() -> None:
    small = b"x" * 100
    large = os.urandom(IN_BACKGROUND + 1)
    assert fingerprint_meanwhile(small)() == hashlib.sha256(small).hexdigest()
    digest = fingerprint_meanwhile(large)
    assert digest() == hashlib.sha256(large).hexdigest() == digest()  # asked twice: the same answer


def test_without_a_thread_the_fingerprint_is_hashed_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from nbedit.engine import digest as hashing

    def refuse(*arguments: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(hashing._thread, "start_new_thread", refuse)  # a process at its thread limit
    large = os.urandom(IN_BACKGROUND + 1)
    assert fingerprint_meanwhile(large)() == hashlib.sha256(large).hexdigest()


def test_first_and_later_edits_of_a_big_notebook_undo_and_restore_byte_for_byte(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / NAME
    original = big_notebook()
    target.write_bytes(original)
    versions = [original, edit(workspace, 7), edit(workspace, 150), edit(workspace, 7, ".mean()", ".max()")]
    assert versions[1] == original.replace(b"total_7 = frame_7.sum()", b"total_7 = frame_7.mean()", 1)
    # every entry names the SHA-256 of the bytes it wrote (hashed meanwhile on another thread)
    assert after_fingerprints(workspace.home) == [fingerprint(version) for version in versions[1:]]
    entries = list(reversed(workspace.history()))  # oldest first
    assert len(entries) == 3
    for index, entry in enumerate(entries):
        workspace.restore(entry.id, which="before", force=True)
        assert target.read_bytes() == versions[index]
        workspace.restore(entry.id, which="after", force=True)
        assert target.read_bytes() == versions[index + 1]
    # undo of the latest change, then of the first edit's entry through restore: the original
    workspace.undo(workspace.history()[0].id)
    assert target.read_bytes() == versions[2]
    workspace.restore(entries[0].id, which="before", force=True)
    assert target.read_bytes() == original
    # a new process (a new store, no bases in memory) rebuilds every version from disk alone
    workspace.close()
    again = make_workspace(tmp_path)
    for index, entry in enumerate(entries):
        again.restore(entry.id, which="after", force=True)
        assert target.read_bytes() == versions[index + 1]


def test_a_notebook_changed_after_the_plan_is_refused_and_nothing_is_recorded(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    target = workspace.root / NAME
    original = big_notebook()
    target.write_bytes(original)
    plan = workspace.plan_edit(NAME, "total_3 = frame_3.sum()", "total_3 = frame_3.mean()")
    changed = original.replace(b"plot(total_9)", b"plot(total_99)", 1)
    target.write_bytes(changed)
    with pytest.raises(StaleFile):
        workspace.apply(plan)
    assert target.read_bytes() == changed
    assert workspace.history(all_sessions=True) == []


def test_the_after_digest_is_asked_once_inside_the_entrys_transaction(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "home")
    before, after = b"a" * 1000, b"b" * 1000
    asked: list[int] = []

    def digest() -> str:
        with sqlite3.connect(
            tmp_path / "home" / "history.sqlite3"
        ) as connection:  # the write is not committed yet
            asked.append(len(connection.execute("SELECT id FROM versions").fetchall()))
        return fingerprint(after)

    record = FileRecord(path="a.txt", new_path=None, before=before, after=after, after_digest=digest)
    entry = store.begin(
        EntryDraft(root=str(tmp_path), session="s", origin="api", execution_count=None, files=(record,))
    )
    store.commit(entry)
    assert asked == [0]  # asked once, before the transaction that stores both versions commits
    (version,) = [item for item in store.file_versions(entry) if item.path == "a.txt"]
    assert version.after == after and version.after_fingerprint == fingerprint(after)
    store.close()


def _die_at(base: Path, where: str) -> None:
    """Edit cell 11 and die (no clean-up) just before the replace or just after it."""
    import nbedit.storage.atomic as atomic
    from nbedit.storage.history import HistoryStore as Store

    if where == "before replace":
        real = atomic.apply_writes

        def die(point: str, path: Path) -> None:
            if point == "replace":  # the entry is recorded and the temporary copy flushed
                os._exit(0)

        atomic.apply_writes = lambda *arguments, **options: real(*arguments, **options, fault=die)  # type: ignore
    else:
        Store.commit = lambda self, entry_id: os._exit(0)  # type: ignore[assignment]
    edit(make_workspace(base), 11)


@pytest.mark.parametrize("where", ["before replace", "after replace"])
def test_a_crash_around_the_replace_of_a_big_notebook_is_settled(tmp_path: Path, where: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    target = root / NAME
    original = big_notebook()
    target.write_bytes(original)
    edited = original.replace(b"total_11 = frame_11.sum()", b"total_11 = frame_11.mean()", 1)
    child = context.Process(target=_die_at, args=(tmp_path, where))
    child.start()
    child.join(120)
    assert child.exitcode == 0
    workspace = make_workspace(tmp_path)  # its store settles the entry the crash left pending
    if where == "before replace":
        assert target.read_bytes() == original
        assert workspace.history(all_sessions=True) == []  # nothing was written: the entry is dropped
        return
    assert target.read_bytes() == edited
    # the file holds the entry's "after" (its background fingerprint was right): kept as applied
    (entry,) = workspace.history(all_sessions=True)
    workspace.undo(entry.id)
    assert target.read_bytes() == original
    workspace.restore(entry.id, which="after", force=True)
    assert target.read_bytes() == edited
