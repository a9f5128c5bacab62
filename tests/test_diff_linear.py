"""Diffs and counts of close hunks stay linear, and stay correct (issue 27).

A patch whose hunks sit a few lines apart makes diff blocks that join many hunks; one
difflib call over such a block cost its lines times its hunks (2,000 hunks: 10 s). The
preview diff, the history's +/- counts and the review rows now align a block a hunk at
a time once it joins more than ``WHOLE_BLOCK_CHANGES`` hunks, and no difflib call sees
more than ``ALIGN_LINES`` lines. Checked here without a clock:

* the diff a plan shows applies to the file's text and gives exactly the planned text
  (a strict applier below, and the system's ``patch`` on a few cases); its counts are
  ``file_stats``, and the true number of changed lines where the patch makes it plain;
* every ``SequenceMatcher`` built while diffing, counting and drawing a close-hunk patch
  is recorded (the real class, wrapped): none sees more than a hunk's lines, and all
  of them together see a bounded multiple of the file.
"""

from __future__ import annotations

import difflib
import random
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbedit
import nbedit.render.rows as rows
from benchmarks.bench_scale import close_patch as spread_close_patch
from nbedit.engine.diff import WHOLE_BLOCK_CHANGES, diff_stats, file_blocks, file_diff, file_stats
from nbedit.engine.diff_counts import ALIGN_LINES
from nbedit.render.rows import file_view
from tests.test_diff_fast_paths import assert_same_as_reference, udiff

# few distinct lines, so alignments are ambiguous (which blank line was removed?)
LINES = ["", "}", "x = 1", "return y", "\tpass", "same", "“curly” é"]
ENDING_MARKS = ("␍␊", "␊", "(no newline at end)")
_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_unified(before: str, diff: str) -> str:
    """``diff`` (one file) applied to ``before``, strictly: every context and removed line must be
    where its header says, every header count must hold."""
    old = before.splitlines(keepends=True)
    rows_in = diff.splitlines(keepends=True)
    out: list[str] = []
    taken = 0  # old lines copied or consumed so far
    index = 2  # past the --- / +++ lines
    while index < len(rows_in):
        header = _HEADER.match(rows_in[index])
        assert header, rows_in[index]
        old_start, old_count = int(header[1]), int(header[2] or 1)
        new_count = int(header[4] or 1)
        first = old_start - 1 if old_count else old_start
        assert first >= taken, "hunks out of order or overlapping"
        out.extend(old[taken:first])
        taken = first
        index += 1
        seen_old = seen_new = 0
        while index < len(rows_in) and not rows_in[index].startswith("@@"):
            row = rows_in[index]
            index += 1
            line = row[1:]
            if index < len(rows_in) and rows_in[index].startswith("\\ No newline"):
                line = line[:-1]
                index += 1
            if row[0] in " -":
                assert old[taken] == line, (taken, old[taken], line)
                taken += 1
                seen_old += 1
            if row[0] in " +":
                out.append(line)
                seen_new += 1
        assert (seen_old, seen_new) == (old_count, new_count), rows_in
    out.extend(old[taken:])
    return "".join(out)


def close_patch(
    before_lines: list[str], rng: random.Random, apart: tuple[int, int], context: int = 3
) -> tuple[str, str]:
    """(patch, after): hunks of up to 3 removed and 3 added lines, ``apart`` unchanged lines between
    changes (never under ``2 * context``: the hunks' contexts do not overlap), each hunk written
    separately with its own context, as a tool writing one hunk per change would."""
    after: list[str] = []
    parts = ["--- a/file.txt\n+++ b/file.txt\n"]
    position = rng.randint(0, 4)
    delta = 0
    changes = []
    while position < len(before_lines):
        removed = min(rng.randint(0, 3), len(before_lines) - position)
        added = [rng.choice(LINES) + "\n" for _ in range(rng.randint(0 if removed else 1, 3))]
        changes.append((position, removed, added))
        position += removed + rng.randint(max(apart[0], 2 * context), max(apart[1], 2 * context))
    taken = 0
    for position, removed, added in changes:
        after.extend(before_lines[taken:position])
        first = max(0, position - context)
        last = min(len(before_lines), position + removed + context)
        old_count = last - first
        new_count = old_count - removed + len(added)
        old_start = first + 1 if old_count else first
        new_start = first + delta + 1 if new_count else first + delta
        parts.append(f"@@ -{old_start},{old_count} +{new_start},{new_count} @@\n")
        parts.extend(" " + line for line in before_lines[first:position])
        parts.extend("-" + line for line in before_lines[position : position + removed])
        parts.extend("+" + line for line in added)
        parts.extend(" " + line for line in before_lines[position + removed : last])
        after.extend(added)
        taken = position + removed
        delta += len(added) - removed
    after.extend(before_lines[taken:])
    return "".join(parts), "".join(after)


def plan_of(root: Path, before: str, patch: str) -> nbedit.Plan:
    (root / "file.txt").write_bytes(before.encode())
    return nbedit.Workspace(root, history=False, exact=True).plan_patch(patch)


def assert_diff_rebuilds(plan: nbedit.Plan) -> None:
    (file_plan,) = plan.files
    assert file_plan.before is not None and file_plan.after is not None
    diff = file_diff(file_plan)
    assert apply_unified(file_plan.before, diff) == file_plan.after
    assert file_stats(file_plan) == diff_stats(diff)
    assert_rows_rebuild(file_plan.before, file_plan.after, file_view(file_plan))


def assert_rows_rebuild(before: str, after: str, view: rows.FileView) -> None:
    """Every review block's context and removed rows are the old lines they number, in order;
    its context and added rows the new lines."""
    sides = {"old": before.splitlines(), "new": after.splitlines()}
    for block in view.blocks:
        for side, kinds in (("old", ("context", "removed")), ("new", ("context", "added"))):
            shown = [row for row in block.rows if row.kind in kinds]
            numbers = [row.old_line if side == "old" else row.new_line for row in shown]
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers))) if numbers else True
            # a pair differing only in its ending shows the ending (highlight.py)
            for row, number in zip(shown, numbers, strict=True):
                line = sides[side][number - 1]
                assert row.text == line or row.text in (line + mark for mark in ENDING_MARKS)


def few_hunks_a_block(plan: nbedit.Plan) -> bool:
    return all(len(block.hunk_indices) <= WHOLE_BLOCK_CHANGES for block in file_blocks(plan.files[0]))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    size=st.integers(0, 300),
    apart=st.sampled_from([(6, 6), (6, 9), (6, 14), (10, 30)]),
)
def test_close_hunk_patches_diff_back_exactly(
    tmp_path_factory: pytest.TempPathFactory, seed: int, size: int, apart: tuple[int, int]
) -> None:
    rng = random.Random(seed)
    before_lines = [rng.choice(LINES) + "\n" for _ in range(size)]
    patch, after = close_patch(before_lines, rng, apart)
    if patch.count("\n") <= 2:
        return
    before = "".join(before_lines)
    plan = plan_of(tmp_path_factory.mktemp("close"), before, patch)
    assert plan.files[0].after == after
    assert_diff_rebuilds(plan)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(0, 120), context=st.integers(0, 3))
def test_random_pairs_diff_back_exactly(
    tmp_path_factory: pytest.TempPathFactory, seed: int, size: int, context: int
) -> None:
    """Arbitrary before/after texts (CRLF, no final newline), their diff planned back: the plan's
    diff rebuilds the after text, and matches the whole-block reference (few hunks a block)."""
    rng = random.Random(seed)
    ends = ["\n", "\r\n"]
    before = "".join(rng.choice(LINES) + rng.choice(ends) for _ in range(size))
    after_lines = [line for line in before.splitlines(keepends=True) if rng.random() > 0.2]
    for _ in range(rng.randint(0, 10)):
        after_lines.insert(rng.randint(0, len(after_lines)), rng.choice(LINES) + rng.choice(ends))
    after = "".join(after_lines)
    if rng.random() < 0.3:
        after = after.rstrip("\r\n")
    diff = udiff(before, after, "file.txt", context)
    if not diff:
        return
    plan = plan_of(tmp_path_factory.mktemp("pairs"), before, diff)
    assert_diff_rebuilds(plan)
    if few_hunks_a_block(plan):  # aligned whole, as before: the same text as the reference writer
        assert_same_as_reference(plan)


def test_the_system_patch_applies_the_preview_of_close_hunks(tmp_path: Path) -> None:
    rng = random.Random(27)
    for apart in ((6, 6), (6, 12)):
        before_lines = [rng.choice(LINES) + "\n" for _ in range(2_000)]
        patch, after = close_patch(before_lines, rng, apart)
        work = tmp_path / f"work-{apart[1]}"
        work.mkdir()
        plan = plan_of(work, "".join(before_lines), patch)
        assert len(plan.files[0].hunks) > 100
        (work / "file.txt").write_text("".join(before_lines))
        subprocess.run(
            ["patch", "--quiet", "--no-backup-if-mismatch", "file.txt"],
            input=plan.diff.encode(),
            cwd=work,
            check=True,
        )
        assert (work / "file.txt").read_text() == after


def spread(hunks: int, apart: int) -> tuple[str, str, str]:
    """(before, after, patch) of ``file.txt``: one changed line every ``apart`` lines, each its own hunk."""
    before, after, patch = spread_close_patch("file.txt", hunks, apart)
    return before.decode(), after.decode(), patch


class _Recorded(difflib.SequenceMatcher):  # type: ignore[type-arg]
    sizes: list[int] = []

    def set_seqs(self, a, b):  # type: ignore[no-untyped-def]
        _Recorded.sizes.append(len(a) + len(b))
        super().set_seqs(a, b)


@pytest.mark.parametrize("apart", [7, 10])
def test_no_alignment_grows_with_the_number_of_close_hunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, apart: int
) -> None:
    """Diff, counts and review rows of 3,000 hunks 7 and 10 lines apart (one diff block; at 7 one
    review span too): every difflib call sees a hunk's lines, all together a few times the file."""
    before, after, patch = spread(3_000, apart)
    plan = plan_of(tmp_path, before, patch)
    assert plan.files[0].after == after
    monkeypatch.setattr(difflib, "SequenceMatcher", _Recorded)
    monkeypatch.setattr(rows, "SequenceMatcher", _Recorded)
    _Recorded.sizes = []
    rows._aligned_rows.cache_clear()
    diff = plan.diff
    (counts,) = plan.stats().values()  # what the history records
    view = file_view(plan.files[0])
    assert diff_stats(diff) == counts == (view.added, view.removed) == (3_000, 3_000)
    assert apply_unified(before, diff) == after
    assert_rows_rebuild(before, after, view)
    file_lines = 3_000 * apart
    assert max(_Recorded.sizes, default=0) <= 20, max(_Recorded.sizes)
    assert sum(_Recorded.sizes) <= 4 * file_lines


def test_a_huge_single_hunk_is_aligned_in_bounded_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One hunk rewriting 6,000 lines, every fifth changed: no difflib call over ``ALIGN_LINES``
    lines, and the diff still rebuilds the text with every changed line counted once."""
    lines = [f"row {number}\n" for number in range(6_000)]
    new = [line.replace("row", "ROW") if number % 5 == 2 else line for number, line in enumerate(lines)]
    before = "".join(lines)
    (tmp_path / "file.txt").write_text(before)
    monkeypatch.setattr(difflib, "SequenceMatcher", _Recorded)
    _Recorded.sizes = []
    plan = nbedit.Workspace(tmp_path, history=False).plan_edit("file.txt", before[6:], "".join(new)[6:])
    diff = plan.diff
    assert apply_unified(before, diff) == plan.files[0].after == "".join(new)
    assert file_stats(plan.files[0]) == diff_stats(diff) == (1_200, 1_200)
    assert ALIGN_LINES <= 2_000  # the hunk has 12,000 lines, old and new
    assert max(_Recorded.sizes, default=0) <= ALIGN_LINES


@pytest.mark.parametrize("hunks", [WHOLE_BLOCK_CHANGES, WHOLE_BLOCK_CHANGES + 1])
def test_close_exact_hunks_are_counted_from_their_own_texts(tmp_path: Path, hunks: int) -> None:
    """A block of more than ``WHOLE_BLOCK_CHANGES`` exact hunks is counted a hunk at a time from the
    hunks' own texts (no block is built); a block of fewer is counted whole, as its diff aligns it."""
    from nbedit.engine.diff_counts import lone_exact_hunks

    before, after, patch = spread(hunks, 10)
    plan = plan_of(tmp_path, before, patch)
    (file_plan,) = plan.files
    alone = lone_exact_hunks(before, file_plan, 3, WHOLE_BLOCK_CHANGES)
    assert (alone is not None) == (hunks > WHOLE_BLOCK_CHANGES)
    assert lone_exact_hunks(before, file_plan, 3) is None  # without the limit: joined hunks are refused
    assert file_stats(file_plan) == diff_stats(file_diff(file_plan)) == (hunks, hunks)
