"""The pure three-way merge behind rewind (``nbedit.engine.merge``): diff3's rule, byte-exact pieces."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit.engine import merge as merge_module
from nbedit.engine.diff_counts import ALIGN_LINES
from nbedit.engine.merge import located_hunks, merge_bytes, mergeable
from nbedit.engine.text_edit import splice


def test_changes_on_both_sides_that_do_not_touch_are_both_kept() -> None:
    base = b"a\nb\nc\nd\ne\nf\n"
    ours = b"a\nB\nc\nd\ne\nf\n"
    theirs = b"a\nb\nc\nd\nE\nf\n"
    merge = merge_bytes(base, ours, theirs)
    assert merge.clean and merge.merged == b"a\nB\nc\nd\nE\nf\n"


def test_different_changes_to_the_same_line_are_a_conflict_with_all_three_versions() -> None:
    merge = merge_bytes(b"a\nb\nc\n", b"a\nours\nc\n", b"a\ntheirs\nc\n")
    assert merge.merged is None
    (conflict,) = merge.conflicts
    assert (conflict.line, conflict.base, conflict.ours, conflict.theirs) == (
        2,
        (b"b\n",),
        (b"ours\n",),
        (b"theirs\n",),
    )
    marked = merge.with_markers().decode()
    assert "<<<<<<< rewind\nours\n||||||| recorded by nbedit\nb\n=======\ntheirs\n>>>>>>> on disk\n" in marked
    assert merge.resolved("ours") == b"a\nours\nc\n" and merge.resolved("theirs") == b"a\ntheirs\nc\n"
    with pytest.raises(ValueError):
        merge.resolved()


def test_adjacent_changes_with_no_line_between_are_a_conflict() -> None:
    # diff3 and git refuse to guess the order of two edits that touch; so does nbedit
    assert not merge_bytes(b"a\nb\nc\n", b"a\nB\nc\n", b"a\nb\nC\n").clean
    assert not merge_bytes(b"a\n", b"", b"a\nb\n").clean


def test_the_same_change_on_both_sides_merges_once() -> None:
    merge = merge_bytes(b"x\ny\nz\n", b"x\nY\nz\n", b"x\nY\nz\n")
    assert merge.merged == b"x\nY\nz\n"


def test_line_endings_tabs_and_a_missing_final_newline_come_through_byte_exact() -> None:
    base = b"one\r\n\ttwo\r\nthree\r\nfour\r\nfive"
    ours = b"ONE\r\n\ttwo\r\nthree\r\nfour\r\nfive"
    theirs = b"one\r\n\ttwo\r\nthree\r\nfour\r\nfive (edited, still no newline)"
    assert (
        merge_bytes(base, ours, theirs).merged
        == b"ONE\r\n\ttwo\r\nthree\r\nfour\r\nfive (edited, still no newline)"
    )
    latin = "café\n".encode("cp1252")
    # one unchanged line between the two changes is enough to keep both
    assert merge_bytes(b"a\n" + latin + b"c\n", b"A\n" + latin + b"c\n", b"a\n" + latin + b"C\n").merged == (
        b"A\n" + latin + b"C\n"
    )
    assert merge_bytes(
        b"a\nx\n" + latin + b"y\nc\n", b"A\nx\n" + latin + b"y\nc\n", b"a\nx\n" + latin + b"y\nC\n"
    ).merged == (b"A\nx\n" + latin + b"y\nC\n")


def test_nul_bytes_are_not_merged_by_lines() -> None:
    assert mergeable(b"a\n", b"b\n")
    assert not mergeable(b"a\x00\n", b"b\n") and not mergeable(None, b"x")


lines = st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"d\r\n", b"\tx\n", b"y"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_a_side_left_as_the_base_takes_the_other_side_exactly(base: list[bytes], other: list[bytes]) -> None:
    base_bytes, other_bytes = b"".join(base), b"".join(other)
    assert merge_bytes(base_bytes, other_bytes, base_bytes).merged == other_bytes
    assert merge_bytes(base_bytes, base_bytes, other_bytes).merged == other_bytes
    assert merge_bytes(base_bytes, other_bytes, other_bytes).merged == other_bytes


@settings(max_examples=300, deadline=None)
@given(lines, lines, lines)
def test_every_merge_keeps_each_unconflicted_piece_from_one_of_the_sides(
    base: list[bytes], ours: list[bytes], theirs: list[bytes]
) -> None:
    merge = merge_bytes(b"".join(base), b"".join(ours), b"".join(theirs))
    # choosing a side in every conflict gives that side back where the other side kept the base
    assert merge.resolved("ours").count(b"\n") >= 0
    if merge.clean:
        rebuilt_ours = b"".join(line for chunk in merge.chunks for line in chunk.ours)
        rebuilt_theirs = b"".join(line for chunk in merge.chunks for line in chunk.theirs)
        assert rebuilt_ours == b"".join(ours) and rebuilt_theirs == b"".join(theirs)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a\n", "b\n", "c\r\n", "d"]), max_size=10),
    st.lists(st.sampled_from(["a\n", "b\n", "c\r\n", "e\n"]), max_size=10),
)
def test_located_hunks_rebuild_the_goal_and_each_one_can_be_left_out(
    before: list[str], after: list[str]
) -> None:
    old, new = "".join(before), "".join(after)
    hunks = located_hunks(old, new)
    assert splice(old, hunks) == new
    for left_out in range(len(hunks)):
        kept = hunks[:left_out] + hunks[left_out + 1 :]
        assert (
            splice(old, kept) != new
            or hunks[left_out].match.replacement
            == old[hunks[left_out].match.start : hunks[left_out].match.end]
        )


# --- bounded work on long stretches that differ (issue 27) ---------------------------------------


class _Recorded(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """The real matcher, recording how many lines (both sides) each instance is given."""

    sizes: list[int] = []

    def set_seqs(self, a, b):  # type: ignore[no-untyped-def]
        _Recorded.sizes.append(len(a) + len(b))
        super().set_seqs(a, b)


def _rewritten(count: int) -> tuple[list[bytes], list[bytes]]:
    """Every second line changed: no three equal lines in a row anywhere to resynchronise on."""
    old = [b"line %d\n" % number for number in range(count)]
    new = [b"LINE %d\n" % number if number % 2 == 0 else line for number, line in enumerate(old)]
    return old, new


@pytest.mark.parametrize("count", [4_000, 16_000])
def test_located_hunks_of_a_long_unmatched_stretch_stay_bounded(
    monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    monkeypatch.setattr(difflib, "SequenceMatcher", _Recorded)
    _Recorded.sizes = []
    old, new = _rewritten(count)
    before, after = b"".join(old).decode(), b"".join(new).decode()
    hunks = located_hunks(before, after)
    assert splice(before, hunks) == after
    assert sum(hunk.hunk.old.count("\n") for hunk in hunks) == count // 2  # only the changed lines
    assert max(_Recorded.sizes, default=0) <= ALIGN_LINES
    assert sum(_Recorded.sizes) <= 2 * count  # linear: 16,000 lines in one call was 256 M pairs


@pytest.mark.parametrize("count", [4_000, 16_000])
def test_a_merge_of_long_rewritten_stretches_stays_bounded_and_exact(
    monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    monkeypatch.setattr(merge_module, "SequenceMatcher", _Recorded)
    monkeypatch.setattr(difflib, "SequenceMatcher", _Recorded)
    _Recorded.sizes = []
    base = [b"line %d\n" % number for number in range(count)]
    ours = [b"LINE %d\n" % number if number % 4 == 0 else line for number, line in enumerate(base)]
    theirs = list(base)
    theirs[count - 2] = b"their line\n"  # a change of theirs with unchanged lines around it in ours
    merge = merge_bytes(b"".join(base), b"".join(ours), b"".join(theirs))
    expected = list(ours)
    expected[count - 2] = b"their line\n"
    assert merge.merged == b"".join(expected)
    assert max(_Recorded.sizes, default=0) <= ALIGN_LINES
    assert sum(_Recorded.sizes) <= 4 * count


def test_below_the_limit_merges_and_hunks_are_difflibs_as_before() -> None:
    # the same inputs, small: one difflib call each, and the same answers as the bounded way gives
    old, new = _rewritten(400)
    before, after = b"".join(old).decode(), b"".join(new).decode()
    expected = difflib.SequenceMatcher(None, before.splitlines(True), after.splitlines(True), autojunk=False)
    changed = [opcode for opcode in expected.get_opcodes() if opcode[0] != "equal"]
    assert [(item.match.line, item.match.line_count) for item in located_hunks(before, after)] == [
        (first + 1, last - first) for _, first, last, _, _ in changed
    ]
