"""The history entry's fast paths: byte spans read in C-level maps, a digest joined late, zlib
before zstd's import.

``byte_spans`` maps a big patch's hunks without a sort key a hunk (they are in file order
already; when they are not they are sorted as before). ``store_version`` may be handed the
"after" digest as a function (still hashing on another thread): the region delta is packed
first, and a digest that fails leaves nothing recorded and every file as it was. A delta of a
few hundred kilobytes is packed with zlib in a process that has not loaded zstd.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import nbedit
from nbedit import background
from nbedit._dataclass import replace
from nbedit.engine.models import FilePlan
from nbedit.engine.spans import byte_spans
from nbedit.errors import HistoryError
from nbedit.storage.delta import region_delta
from nbedit.storage.history import HistoryStore
from nbedit.storage.records import EntryDraft, FileRecord


def _plan(tmp_path: Path, hunks: int = 40) -> tuple[bytes, FilePlan]:
    lines = [f"value_{number} = compute({number})\n" for number in range(hunks * 20)]
    before = "".join(lines).encode()
    parts = ["--- a/f.py\n+++ b/f.py\n"]
    for hunk in range(hunks):
        changed = hunk * 20 + 10
        first = changed - 3
        parts.append(f"@@ -{first + 1},7 +{first + 1},7 @@\n")
        parts += [" " + line for line in lines[first:changed]]
        parts += ["-" + lines[changed], f"+value_{changed} = compute({changed}) + 1\n"]
        parts += [" " + line for line in lines[changed + 1 : changed + 4]]
    (tmp_path / "f.py").write_bytes(before)
    plan = nbedit.Workspace(tmp_path, history=False).plan_patch("".join(parts))
    return before, plan.files[0]


def test_byte_spans_are_in_file_order_whatever_the_hunks_order(tmp_path: Path) -> None:
    before, file_plan = _plan(tmp_path)
    spans = byte_spans(file_plan)
    assert spans is not None
    assert spans == tuple(
        (located.match.start, located.match.end, located.match.replacement.encode())
        for located in file_plan.hunks
    )
    assert byte_spans(replace(file_plan, hunks=file_plan.hunks[::-1])) == spans
    after = file_plan.after_bytes
    assert after is not None and region_delta(before, after, spans) is not None


Spans = tuple[tuple[int, int, bytes], ...]


def _store_with_before(tmp_path: Path) -> tuple[HistoryStore, bytes, bytes, Spans]:
    before = b"".join(b"line %d of the file\n" % number for number in range(40_000))
    spans = tuple((start, start + 4, b"LINE") for start in range(0, len(before), 20 * 20))
    pieces, cursor = [], 0
    for start, end, replacement in spans:
        pieces += [before[cursor:start], replacement]
        cursor = end
    after = b"".join([*pieces, before[cursor:]])
    return HistoryStore(tmp_path / "home"), before, after, spans


def _entry(before: bytes, after: bytes, spans: Spans, digest: object) -> EntryDraft:
    file = FileRecord(
        "f.txt", None, before, after, hashlib.sha256(before).hexdigest(), None, 1, 1,
        spans=spans, after_digest=digest,  # type: ignore[arg-type]
    )  # fmt: skip
    return EntryDraft("s1", "api", None, (file,), ("exact",), "edit f.txt")


def test_a_new_after_is_stored_as_its_region_delta_with_its_digest_joined_late(tmp_path: Path) -> None:
    store, before, after, spans = _store_with_before(tmp_path)
    joined: list[bool] = []

    def digest() -> str:
        joined.append(True)
        return hashlib.sha256(after).hexdigest()

    with store:
        entry_id = store.begin(_entry(before, after, spans, digest))
        store.commit(entry_id)
        assert joined  # asked for
        versions = store.file_versions(entry_id)[0]
        assert (versions.before, versions.after) == (before, after)
    with HistoryStore(tmp_path / "home") as again:  # and so it reads back in a new process's store
        assert again.file_versions(entry_id)[0].after == after


def test_a_new_after_without_spans_is_compared_with_its_before_before_its_digest_is_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook's edit has no byte spans: the common prefix and suffix are found while the
    "after" is still being hashed, and the version is that delta; a digest that fails still
    records nothing."""
    from nbedit.storage import delta as delta_module  # the storage modules import it when they make one

    store, before, after, _spans = _store_with_before(tmp_path)
    order: list[str] = []
    real_delta = delta_module.make_delta
    monkeypatch.setattr(delta_module, "make_delta", lambda *args: order.append("delta") or real_delta(*args))

    def digest() -> str:
        order.append("digest")
        return hashlib.sha256(after).hexdigest()

    def failing() -> str:
        order.append("digest")
        raise OSError("the hashing thread failed")

    with store:
        with pytest.raises(OSError, match="hashing thread"):
            store.begin(_entry(before, after, None, failing))  # type: ignore[arg-type]
        assert store.entries() == [] and order == ["delta", "digest"]
        order.clear()
        entry_id = store.begin(_entry(before, after, None, digest))  # type: ignore[arg-type]
        store.commit(entry_id)
        assert order == ["delta", "digest"]  # compared once, before the digest was asked for
        assert store.file_versions(entry_id)[0].after == after
    with HistoryStore(tmp_path / "home") as again:
        assert again.file_versions(entry_id)[0].after == after


def test_a_digest_that_fails_records_nothing(tmp_path: Path) -> None:
    store, before, after, spans = _store_with_before(tmp_path)

    def digest() -> str:
        raise OSError("the hashing thread failed")

    with store:
        with pytest.raises(OSError, match="hashing thread"):
            store.begin(_entry(before, after, spans, digest))
        assert store.entries() == []
        entry_id = store.begin(_entry(before, after, spans, lambda: hashlib.sha256(after).hexdigest()))
        store.commit(entry_id)  # the store still works: nothing was half-written
        assert store.file_versions(entry_id)[0].after == after


def test_a_digest_that_fails_in_apply_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """Through ``Workspace.apply``: the history entry cannot be made, so the file is not written."""
    _plan(tmp_path)
    original = (tmp_path / "f.py").read_bytes()
    workspace = nbedit.Workspace(tmp_path, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(
        "--- a/f.py\n+++ b/f.py\n@@ -6 +6 @@\n-value_5 = compute(5)\n+value_5 = compute(5) + 2\n"
    )

    def digest() -> str:
        raise OSError("the hashing thread failed")

    # the "after" digests apply hashes meanwhile: here one that fails when joined
    workspace._digests_meanwhile = lambda files, verified: {  # type: ignore[method-assign]
        file_plan.path: (file_plan.after_bytes, digest) for file_plan in files
    }
    with pytest.raises(HistoryError, match="could not record this change"):
        workspace.apply(plan)
    assert (tmp_path / "f.py").read_bytes() == original
    assert sorted(path.name for path in tmp_path.iterdir()) == ["f.py", "home"]  # no temporary copy left
    assert workspace.history() == []
    del workspace._digests_meanwhile  # the class's own again
    workspace.apply(workspace.plan_patch(plan.diff))  # and the next apply records and writes
    assert (tmp_path / "f.py").read_bytes() != original


def test_a_mid_size_delta_is_packed_with_zlib_in_a_process_without_zstd(tmp_path: Path) -> None:
    """A one-entry process (the command line's) does not import zstd to pack a few hundred kB (the
    old file itself is linked into the history, as ``apply`` does, so nothing else is packed)."""
    before = b"".join(b"line %d of the file\n" % number for number in range(40_000))
    spans = tuple((start, start + 20, b"x" * 60) for start in range(0, len(before) - 20, 200))
    pieces, cursor = [], 0
    for start, end, replacement in spans:
        pieces += [before[cursor:start], replacement]
        cursor = end
    after = b"".join([*pieces, before[cursor:]])
    assert (256 << 10) <= 84 * len(spans) < (1 << 20)  # the encoded region delta: over zstd's threshold
    (tmp_path / "before").write_bytes(before)
    (tmp_path / "after").write_bytes(after)
    script = (
        "import hashlib, sys\n"
        "from nbedit.storage.history import HistoryStore\n"
        "from nbedit.storage.records import EntryDraft, FileRecord\n"
        "before, after = open(sys.argv[2], 'rb').read(), open(sys.argv[3], 'rb').read()\n"
        "spans = tuple((start, start + 20, b'x' * 60) for start in range(0, len(before) - 20, 200))\n"
        "sha = lambda data: hashlib.sha256(data).hexdigest()\n"
        "file = FileRecord(\n"
        "    'f.txt', None, before, after, sha(before), sha(after), 1, 1,\n"
        "    before_file=sys.argv[2], spans=spans,\n"
        ")\n"
        "with HistoryStore(sys.argv[1]) as store:\n"
        "    store.commit(store.begin(EntryDraft('s', 'api', None, (file,), ('exact',), 'f')))\n"
        "print('zstandard' in sys.modules)\n"
    )
    home = tmp_path / "home"
    finished = subprocess.run(
        [sys.executable, "-c", script, str(home), *(str(tmp_path / name) for name in ("before", "after"))],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert finished.stdout.strip() == "False"
    import sqlite3

    with sqlite3.connect(home / "history.sqlite3") as connection:
        packings = connection.execute("SELECT regions, compressed FROM versions ORDER BY id").fetchall()
    assert packings[-1] == (1, 1)  # the "after": a region delta, zlib
    with HistoryStore(home) as again:
        entry = again.entries()[0]
        assert again.file_versions(entry.id)[0].after == after


def _spread_diff(lines: list[str], step: int = 40) -> str:
    hunks = [
        f"@@ -{number + 1} +{number + 1} @@\n-{lines[number]}+{lines[number].replace('compute', 'measure')}"
        for number in range(5, len(lines), step)
    ]
    return "--- a/big.py\n+++ b/big.py\n" + "".join(hunks)


def _versions(home: Path) -> list[tuple[int, int, int | None]]:
    import sqlite3

    with sqlite3.connect(home / "history.sqlite3") as connection:
        return connection.execute("SELECT compressed, regions, base FROM versions ORDER BY id").fetchall()


def test_an_old_file_that_cannot_be_linked_is_packed_the_after_still_a_region_delta(tmp_path: Path) -> None:
    """The link is made on another thread while the "after" is packed; when it cannot be made
    (here: the old file has another name) the "before" is packed instead and the "after"'s
    region delta, made of the bytes, is stored on it."""
    root = tmp_path / "root"
    root.mkdir()
    lines = [f"value_{number} = compute({number})\n" for number in range(8000)]
    original = "".join(lines).encode()
    (root / "big.py").write_bytes(original)
    (root / "alias.py").hardlink_to(root / "big.py")
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    workspace.apply(workspace.plan_patch(_spread_diff(lines)))
    edited = (root / "big.py").read_bytes()
    before_row, after_row = _versions(tmp_path / "home")
    assert before_row[0] in (1, 2) and after_row[1:] == (1, 1)  # packed, not linked; regions on it
    assert not (tmp_path / "home" / "blobs").exists() or not list((tmp_path / "home" / "blobs").iterdir())
    workspace.undo()
    assert (root / "big.py").read_bytes() == original
    workspace.restore(workspace.history()[-1].id, which="after")
    assert (root / "big.py").read_bytes() == edited


def test_a_link_that_fails_unexpectedly_records_nothing_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error on the linking thread is raised where the entry is recorded: the entry is rolled
    back, no file is written, and the next apply works."""
    from nbedit.storage import blobs

    root = tmp_path / "root"
    root.mkdir()
    lines = [f"value_{number} = compute({number})\n" for number in range(8000)]
    original = "".join(lines).encode()
    (root / "big.py").write_bytes(original)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(_spread_diff(lines))

    def broken(source: object, destination: Path, expected: bytes) -> bool:
        raise MemoryError("no memory for the link")

    with monkeypatch.context() as patched:
        patched.setattr(blobs, "link_copy", broken)  # history_record imports it when it links
        with pytest.raises(HistoryError, match="could not record this change"):
            workspace.apply(plan)
    assert (root / "big.py").read_bytes() == original
    assert sorted(path.name for path in root.iterdir()) == ["big.py"]
    assert workspace.history() == [] and _versions(tmp_path / "home") == []
    workspace.apply(workspace.plan_patch(_spread_diff(lines)))
    assert (root / "big.py").read_bytes() != original
    assert _versions(tmp_path / "home")[0][0] == 3  # linked this time


def _seeded(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    seeding = nbedit.Workspace(root, history=True, home=home)
    seeding.apply(seeding.plan_edit("a.py", "x = 1", "x = 2"))
    seeding.close()
    return root, home


def test_an_existing_store_is_opened_while_the_change_is_planned(tmp_path: Path) -> None:
    root, home = _seeded(tmp_path)
    workspace = nbedit.Workspace(root, history=True, home=home)
    plan = workspace.plan_edit("a.py", "x = 2", "x = 3")
    opening = workspace._opening
    assert opening is not None and opening[0] == str(home) and opening[2] is True
    workspace.apply(plan)
    assert workspace._opening is None
    assert not [call for call in background._running if call.name == "nbedit-history-open"]
    assert [entry.summary for entry in workspace.history(all_sessions=True)][:2] == ["a.py", "a.py"]
    workspace.close()


@pytest.mark.parametrize("given", ["as a path", "from ~"])
def test_a_preview_never_sets_a_damaged_history_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """The store opened while planning is only opened: a damaged one is left as it is until a
    write needs the history, which sets it aside and warns, as it did before. A home named from
    ``~`` (expanded by the store) is found as existing too, not opened as a new one."""
    from nbedit.warnings import NbeditWarning

    root, home = _seeded(tmp_path)
    database = home / "history.sqlite3"
    database.write_text("just some text, not a database\n" * 100)
    damaged = database.read_bytes()
    monkeypatch.setenv("HOME", str(tmp_path))
    workspace = nbedit.Workspace(root, history=True, home=home if given == "as a path" else "~/home")
    workspace.plan_edit("a.py", "x = 2", "x = 3")  # a preview alone
    workspace._opening[1].wait()  # type: ignore[index]  # the opening thread is done
    assert database.read_bytes() == damaged and not list(home.glob("history.sqlite3.corrupt-*"))
    with pytest.warns(NbeditWarning, match="damaged"):  # said by the write, and by the history's reader
        workspace.apply(workspace.plan_edit("a.py", "x = 2", "x = 3"))
        assert len(workspace.history()) == 1
    assert len(list(home.glob("history.sqlite3.corrupt-*"))) == 1
    assert (root / "a.py").read_text() == "x = 3\n"
    workspace.close()


def test_a_notebooks_after_is_compared_with_its_linked_before_while_the_link_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook's edit has no byte spans: its prefix/suffix delta is made once, while the old file
    is linked as the keyframe on another thread; the "after" is stored as that delta on the link."""
    import json
    import sys

    from nbedit.storage import delta, history_record, versions

    made: list[str] = []
    real = delta.make_delta
    monkeypatch.setattr(  # the storage modules import it when they make a delta: the caller is named
        delta, "make_delta", lambda base, data: made.append(sys._getframe(1).f_globals["__name__"]) or real(base, data)
    )
    root = tmp_path / "root"
    root.mkdir()
    cells = [{"cell_type": "code", "execution_count": n, "id": f"c{n}", "metadata": {}, "outputs": [],
              "source": [f"value_{n} = compute({n})"]} for n in range(3_000)]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    original = (json.dumps(notebook, indent=1) + "\n").encode()
    (root / "big.ipynb").write_bytes(original)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    workspace.apply(workspace.plan_edit("big.ipynb", "value_2000 = compute(2000)", "value_2000 = 1"))
    edited = (root / "big.ipynb").read_bytes()
    assert edited == original.replace(b'"value_2000 = compute(2000)"', b'"value_2000 = 1"')
    assert made == [history_record.__name__]  # once, beside the link
    before_row, after_row = _versions(tmp_path / "home")
    assert before_row[0] == versions.LINKED and after_row[1:] == (0, 1)  # linked; a delta on it
    workspace.undo()
    assert (root / "big.ipynb").read_bytes() == original
    workspace.restore(workspace.history()[-1].id, which="after")
    assert (root / "big.ipynb").read_bytes() == edited
