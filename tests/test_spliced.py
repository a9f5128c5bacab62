"""A big file's new bytes are kept unjoined, written and recorded piece by piece.

From ``exact_run.STREAMED_FROM`` bytes, a patch whose hunks are all exactly in place on an
ASCII UTF-8 file is planned as a ``Spliced`` (the old bytes and the matches), held in
``FilePlan.after_bytes`` until something reads the field. The writer fills the temporary copy
from its chunks, the history hashes it in pieces and stores it as the region delta it is.
These tests lower the threshold so small files take that path, and check it against the
joined bytes: the same bytes written (CRLF, no final newline, a BOM file that takes the text
path instead), the same history, the joined field when read, and a failure while the pieces
are written leaves the file byte-identical and no temporary file behind.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbedit
from nbedit.engine import exact_run
from nbedit.engine.models import Match, Tier, unjoined_after
from nbedit.engine.spans import EncodedSpans
from nbedit.engine.spliced import Spliced
from nbedit.errors import WriteError
from nbedit.storage import atomic, versions
from nbedit.storage.atomic import Write, apply_writes
from nbedit.storage.delta import Regions, apply_deltas, decode_regions, region_delta


def matches_of(data: bytes, cuts: list[tuple[int, int, str]]) -> list[Match]:
    return [Match(start, end, new, Tier.EXACT, 1.0, 1, 1) for start, end, new in cuts]


def reference(data: bytes, cuts: list[tuple[int, int, str]]) -> bytes:
    out, cursor = [], 0
    for start, end, new in cuts:
        out += [data[cursor:start], new.encode()]
        cursor = end
    return b"".join([*out, data[cursor:]])


@st.composite
def spliced_cases(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, int, str]]]:
    data = draw(st.binary(max_size=300))
    points = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    cuts = []
    for start, end in zip(points[0::2], points[1::2], strict=False):
        cuts.append((start, end, draw(st.text(max_size=20))))  # no lone surrogates: UTF-8 encodes them
    return data, cuts


@settings(max_examples=150, deadline=None)
@given(spliced_cases(), st.integers(1, 64))
def test_the_pieces_are_the_joined_bytes(case: tuple[bytes, list[tuple[int, int, str]]], chunk: int) -> None:
    data, cuts = case
    expected = reference(data, cuts)
    spliced = Spliced(data, matches_of(data, cuts))
    assert len(spliced) == len(expected)
    assert b"".join(bytes(piece) for piece in spliced.chunks(chunk)) == expected
    assert spliced.fingerprint() == hashlib.sha256(expected).hexdigest()
    assert spliced.same_as(expected) and spliced.same_as(data) == (data == expected)
    assert spliced.join() == expected and spliced.join() is spliced.join()  # joined once
    assert spliced.fingerprint() == hashlib.sha256(expected).hexdigest()  # from the joined bytes now


def test_a_replacement_utf8_cannot_encode_is_refused_when_made() -> None:
    with pytest.raises(UnicodeEncodeError):
        Spliced(b"abc\n", matches_of(b"abc\n", [(0, 1, "\ud800")]))


def test_the_spans_are_recognised_only_when_they_are_the_matches_own() -> None:
    data = b"one\ntwo\nthree\n"
    spliced = Spliced(data, matches_of(data, [(4, 8, "2\n")]))
    assert spliced.replays(data, [(4, 8, b"2\n")])
    assert not spliced.replays(bytes(data[:-1]) + b"\n", [(4, 8, b"2\n")])  # another base object
    assert not spliced.replays(data, [(4, 7, b"2")])
    regions = region_delta(data, spliced, [(4, 8, b"2\n")])  # type: ignore[arg-type]
    assert regions is not None and apply_deltas(data, [decode_regions(regions.encode())]) == spliced.join()
    assert region_delta(data, spliced, [(4, 7, b"2")]) is None  # type: ignore[arg-type]


def test_region_chunks_are_the_encoding_and_pack_as_one_piece_does() -> None:
    data = b"".join(b"line %d\n" % number for number in range(60_000))
    spans = [(8 * n, 8 * n + 3, b"LINE-%d" % n) for n in range(0, 50_000, 5)]
    target = reference(data, [(s, e, r.decode()) for s, e, r in spans])
    regions = region_delta(data, target, spans)
    assert regions is not None and regions.table is not None
    whole = b"".join([*Regions(tuple(spans)).chunks(size=10)])
    assert regions.encode() == whole == b"".join(regions.chunks(size=1 << 20))
    assert regions.size == len(whole) and regions.payload == sum(len(r) for _, _, r in spans)
    assert decode_regions(whole) == Regions(tuple(spans))
    method, packed = versions._pack_pieces(regions.chunks, regions.size)
    assert len(whole) >= versions.ZSTD_FROM and method == versions.ZSTD
    assert versions._unpack(method, packed) == whole
    small = Regions(((0, 1, b"x"),))
    assert versions._pack_pieces(small.chunks, small.size) == versions._pack(small.encode())
    noise = os.urandom(versions.ZSTD_FROM + 10)  # does not pack: stored as it is
    assert versions._pack_pieces(lambda: iter([noise[:5], noise[5:]]), len(noise)) == (versions.RAW, noise)


def test_encoded_spans_equal_the_tuples_they_make() -> None:
    data = b"a\nb\nc\n"
    spans = EncodedSpans(matches_of(data, [(2, 4, "B\n"), (4, 6, "C\n")]), "utf-8", 3)
    assert spans == ((5, 7, b"B\n"), (7, 9, b"C\n")) and len(spans) == 2 and spans[1] == (7, 9, b"C\n")
    assert spans != ((5, 7, b"B\n"),)


def big_patch(root: Path, newline: str = "\n", last_newline: bool = True) -> tuple[bytes, bytes, str]:
    lines = [f"value_{number} = {number}{newline}" for number in range(3_000)]
    if not last_newline:
        lines[-1] = lines[-1].rstrip("\r\n")
    changed = list(lines)
    for number in range(5, 3_000, 40):
        changed[number] = f"value_{number} = 'changed'{newline}"
    diff = "".join(difflib.unified_diff(lines, changed, "a/big.py", "b/big.py"))
    data, after = "".join(lines).encode(), "".join(changed).encode()
    (root / "big.py").write_bytes(data)
    return data, after, diff


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exact_run, "STREAMED_FROM", 1)


@pytest.mark.parametrize(("newline", "last_newline"), [("\n", True), ("\r\n", True), ("\n", False)])
def test_an_unjoined_plan_writes_and_records_the_same_bytes(
    tmp_path: Path, streamed: None, newline: str, last_newline: bool
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    data, after, diff = big_patch(root, newline, last_newline)
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    file_plan = plan.files[0]
    assert isinstance(unjoined_after(file_plan), Spliced) and file_plan.changed
    result = workspace.apply(plan)
    assert (root / "big.py").read_bytes() == after
    assert isinstance(unjoined_after(file_plan), Spliced)  # written and recorded unjoined
    copied = pickle.loads(pickle.dumps(plan)).files[0]  # pickling reads the field: joined, and kept
    assert unjoined_after(copied) == after and unjoined_after(file_plan) is file_plan.after_bytes
    assert file_plan.after_bytes == after and file_plan.after == after.decode()
    assert sorted(path.name for path in root.iterdir()) == ["big.py"]
    workspace.undo()
    assert (root / "big.py").read_bytes() == data
    workspace.restore(result.entry_id or "", which="after")  # the "after" as the history stored it
    assert (root / "big.py").read_bytes() == after


def test_a_bom_file_takes_the_text_path_and_keeps_its_bom(tmp_path: Path, streamed: None) -> None:
    data, after, diff = big_patch(tmp_path)
    (tmp_path / "big.py").write_bytes(b"\xef\xbb\xbf" + data)
    workspace = nbedit.Workspace(tmp_path, history=False)
    plan = workspace.plan_patch(diff)
    assert isinstance(unjoined_after(plan.files[0]), bytes)  # not ASCII: planned in the text
    workspace.apply(plan)
    assert (tmp_path / "big.py").read_bytes() == b"\xef\xbb\xbf" + after


def test_hunks_that_change_nothing_leave_the_old_bytes(tmp_path: Path, streamed: None) -> None:
    data, _, _ = big_patch(tmp_path)
    lines = data.decode().splitlines(keepends=True)
    same = "--- a/big.py\n+++ b/big.py\n@@ -2,2 +2,2 @@\n-" + lines[1] + "+" + lines[1] + " " + lines[2]
    file_plan = nbedit.Workspace(tmp_path, history=False).plan_patch(same).files[0]
    assert unjoined_after(file_plan) is file_plan.before_bytes and not file_plan.changed


def failing_after_first(chunks: Iterator[bytes | memoryview]) -> Iterator[bytes | memoryview]:
    """The first chunk, then the error of a disk filled up mid-write."""
    yield next(chunks)
    raise OSError(errno.ENOSPC, "No space left on device")


class FailingPieces(Spliced):
    """A ``Spliced`` whose writing fails after its first chunk."""

    def chunks(self, size: int = 1 << 20) -> Iterator[bytes | memoryview]:
        return failing_after_first(super().chunks(16))


@pytest.mark.parametrize(("meanwhile", "beside"), [(False, False), (True, False), (True, True)])
def test_a_failure_while_the_pieces_are_written_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, meanwhile: bool, beside: bool
) -> None:
    """Written here, or (``beside``: a big file) on the writer's other thread while the caller records."""
    if beside:
        monkeypatch.setattr(atomic, "WRITTEN_BESIDE", 1)
    data = b"".join(b"line %d\r\n" % number for number in range(500))
    path = tmp_path / "file.txt"
    path.write_bytes(data)
    pieces = FailingPieces(data, matches_of(data, [(0, 8, "first\r\n"), (100, 108, "x\r\n")]))
    called: list[bool] = []
    with pytest.raises(WriteError, match="No space left"):
        apply_writes(
            [Write(path, pieces, data)],  # type: ignore[arg-type]
            root=tmp_path,
            meanwhile=(lambda: called.append(True)) if meanwhile else None,
        )
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]
    assert called == ([True] if beside else [])  # a small copy fails before the caller's step runs


def test_a_failure_while_writing_an_unjoined_plan_records_nothing(
    tmp_path: Path, streamed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    data, _, diff = big_patch(root, "\r\n")
    workspace = nbedit.Workspace(root, history=True, home=tmp_path / "home")
    plan = workspace.plan_patch(diff)
    original = Spliced.chunks

    def chunks(self: Spliced, size: int = 1 << 20) -> Iterator[bytes | memoryview]:
        if sys._getframe(1).f_code.co_name != "fill":  # hashed as usual; the writer's pieces fail
            return original(self, size)
        return failing_after_first(original(self, 16))

    monkeypatch.setattr(Spliced, "chunks", chunks)
    with pytest.raises(WriteError):
        workspace.apply(plan)
    assert (root / "big.py").read_bytes() == data
    assert sorted(path.name for path in root.iterdir()) == ["big.py"]
    assert len(workspace.history()) == 0  # the entry was aborted
