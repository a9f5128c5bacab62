"""A big file's plan is handed back while its fingerprint is still being hashed.

``FilePlan.fingerprint`` of a file of a mebibyte or more holds the join of the hashing
thread until the field is first read (``models.digested_when_read``); whoever reads it
(the history entry, equality, ``replace``, ``pickle``, ``repr`` of the fields) gets the
SHA-256 of the bytes, the same string an eager plan holds. Applying such a plan records
the same entry and writes the same bytes; a refused plan leaves no hashing thread behind.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import hashlib
import pickle
from pathlib import Path

import pytest

import nbedit
from nbedit._dataclass import replace
from nbedit.engine import digest
from nbedit.engine import plan as planner
from nbedit.engine.models import FilePlan, _DigestWhenRead
from nbedit.engine.text import fingerprint

_SLOT = FilePlan.__dict__["fingerprint"].slot


def stored(file_plan: FilePlan) -> object:
    """What the ``fingerprint`` slot holds now, without joining it."""
    return _SLOT.__get__(file_plan, FilePlan)


def big_change(root: Path) -> tuple[bytes, bytes, str]:
    lines = [f"value_{number} = {number}\n" for number in range(70_000)]
    data = "".join(lines).encode()
    assert len(data) >= planner.HASH_MEANWHILE
    (root / "big.py").write_bytes(data)
    changed = list(lines)
    for number in (10, 35_000, 69_990):
        changed[number] = f"value_{number} = 'changed'\n"
    diff = "".join(difflib.unified_diff(lines, changed, "a/big.py", "b/big.py"))
    return data, "".join(changed).encode(), diff


def test_the_fingerprint_is_joined_when_first_read_and_is_the_sha256(tmp_path: Path) -> None:
    data, _, diff = big_change(tmp_path)
    planned = nbedit.Workspace(tmp_path, history=False).plan_patch(diff)
    file_plan = planned.files[0]
    assert stored(file_plan).__class__ is _DigestWhenRead
    assert file_plan.fingerprint == hashlib.sha256(data).hexdigest()
    assert stored(file_plan) == fingerprint(data)  # a plain string from then on
    assert not digest._running  # every hashing thread ended (engine.digest)


@pytest.mark.parametrize(
    "read",
    [
        lambda file_plan: file_plan.fingerprint,
        lambda file_plan: replace(file_plan, notes=("x",)).fingerprint,
        lambda file_plan: copy.copy(file_plan).fingerprint,
        lambda file_plan: pickle.loads(pickle.dumps(file_plan)).fingerprint,
        lambda file_plan: dataclasses.asdict(file_plan)["fingerprint"],
        lambda file_plan: getattr(file_plan, "fingerprint"),  # noqa: B009
    ],
)
def test_every_way_of_reading_the_field_sees_the_digest(tmp_path: Path, read) -> None:  # type: ignore[no-untyped-def]
    data, _, diff = big_change(tmp_path)
    file_plan = nbedit.Workspace(tmp_path, history=False).plan_patch(diff).files[0]
    assert stored(file_plan).__class__ is _DigestWhenRead
    assert read(file_plan) == fingerprint(data)


def test_a_lazy_plan_equals_the_eager_one_and_applies_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lazy_root, eager_root = tmp_path / "lazy", tmp_path / "eager"
    lazy_root.mkdir()
    eager_root.mkdir()
    data, after, diff = big_change(lazy_root)
    big_change(eager_root)
    lazy = nbedit.Workspace(lazy_root, history=True, home=tmp_path / "home-lazy")
    lazy_plan = lazy.plan_patch(diff)
    with monkeypatch.context() as patched:
        patched.setattr(planner, "digested_when_read", lambda join: join())
        eager = nbedit.Workspace(eager_root, history=True, home=tmp_path / "home-eager")
        eager_plan = eager.plan_patch(diff)
    assert stored(eager_plan.files[0]) == fingerprint(data)
    assert stored(lazy_plan.files[0]).__class__ is _DigestWhenRead
    lazy_result = lazy.apply(lazy_plan)  # the entry reads the field first
    eager_result = eager.apply(eager_plan)
    assert lazy_plan.files == eager_plan.files  # the roots differ
    assert (lazy_root / "big.py").read_bytes() == (eager_root / "big.py").read_bytes() == after
    for workspace, result in ((lazy, lazy_result), (eager, eager_result)):
        assert result.entry_id is not None
        assert workspace.undo() is not None
    assert (lazy_root / "big.py").read_bytes() == (eager_root / "big.py").read_bytes() == data


def test_a_refused_plan_and_a_stale_file_leave_no_thread_and_no_change(tmp_path: Path) -> None:
    data, _, diff = big_change(tmp_path)
    workspace = nbedit.Workspace(tmp_path, history=True, home=tmp_path / "home")
    with pytest.raises(nbedit.NbeditError):
        workspace.plan_patch(diff.replace("-value_35000 = 35000", "-value_35000 = 'absent'"))
    assert not digest._running  # every hashing thread ended (engine.digest)
    planned = workspace.plan_patch(diff)
    assert stored(planned.files[0]).__class__ is _DigestWhenRead
    edited = data.replace(b"value_50000 = 50000\n", b"value_50000 = 'typed meanwhile'\n")
    (tmp_path / "big.py").write_bytes(edited)  # changed on disk after the preview
    with pytest.raises(nbedit.StaleFile) as refused:
        workspace.apply(planned)
    assert refused.value.expected == fingerprint(data)
    assert refused.value.actual == fingerprint(edited)
    assert (tmp_path / "big.py").read_bytes() == edited


def test_an_ascii_files_old_text_is_not_kept_and_its_counts_and_spans_come_from_the_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The byte splice lets the old text go: ``before`` is decoded when read, and the history's
    counts and spans (read in the bytes) are what the decoded text gives."""
    from nbedit.engine.diff import file_stats
    from nbedit.engine.models import undecoded_before
    from nbedit.engine.spans import byte_spans

    data, _, diff = big_change(tmp_path)
    file_plan = nbedit.Workspace(tmp_path, history=False).plan_patch(diff).files[0]
    assert undecoded_before(file_plan) is file_plan.before_bytes and file_plan.before_bytes == data
    from_bytes = (file_stats(file_plan), byte_spans(file_plan))
    assert undecoded_before(file_plan) is file_plan.before_bytes  # neither decoded the text
    assert from_bytes[0] == (3, 3)
    assert file_plan.before == data.decode()  # read: decoded, and kept
    assert undecoded_before(file_plan) is None
    assert (file_stats(file_plan), byte_spans(file_plan)) == from_bytes
    (tmp_path / "small.py").write_bytes(b"a = 1\nb = 2\n\xc3\xa9 = 3\n")  # not ASCII: the text is kept
    small = nbedit.Workspace(tmp_path, history=False).plan_edit("small.py", "b = 2", "b = 4").files[0]
    assert undecoded_before(small) is None and small.before == "a = 1\nb = 2\né = 3\n"


@pytest.mark.parametrize("encoding", [None, "cp1252", "latin-1"])
def test_ascii_bytes_are_read_as_decode_reads_them(tmp_path: Path, encoding: str | None) -> None:
    """ASCII bytes are not decoded up front, yet the plan is what ``decode`` makes of them: NUL bytes
    are still refused as binary, a declared encoding is still the plan's, the text is the same."""
    from nbedit.engine.text import decode

    data = b"a = 1\nb = 2\nc = 3\n"
    (tmp_path / "f.py").write_bytes(data)
    diff = "--- a/f.py\n+++ b/f.py\n@@ -2 +2 @@\n-b = 2\n+b = 4\n"
    workspace = nbedit.Workspace(tmp_path, history=False, encoding=encoding)
    file_plan = workspace.plan_patch(diff).files[0]
    text, codec = decode(data, "f.py", encoding)
    assert file_plan.before == text and file_plan.after_bytes == data.replace(b"b = 2", b"b = 4")
    assert file_plan.encoding == (None if codec.encoding == "utf-8" else codec.encoding)
    (tmp_path / "f.py").write_bytes(b"a = 1\nb = 2\x00\nc = 3\n")
    with pytest.raises(nbedit.BinaryFile):
        workspace.plan_patch(diff)
