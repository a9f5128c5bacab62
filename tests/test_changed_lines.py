"""The parser's per-hunk +/- counts (``Hunk.changed_lines``) are what a diff of the hunk shows.

The unified parser's run reader knows each hunk's '+' and '-' lines from their
markers; it records them only when it can prove a unified diff of the hunk's old
and new texts shows exactly those (one run of changes, no line both removed and
added), and ``file_stats`` then takes them instead of counting the texts again.
The referee is ``block_counts`` (what ``file_diff`` writes for a block) on every
hunk with counts, and ``diff_stats`` of the line-by-line reference diff for the
entry's counts, on the release patches, the golden cases, the 918-hunk benchmark
diff and generated diffs whose hunks remove and add the same lines.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbedit
from nbedit._dataclass import replace
from nbedit.engine.diff import block_counts, diff_stats, file_stats
from nbedit.engine.formats import unified
from nbedit.engine.models import Change, FilePlan, LocatedHunk
from tests.release_history import release_patch_texts, release_patches
from tests.test_diff_fast_paths import assert_same_as_reference, plan_exactly, reference_diff, udiff
from tests.test_unified_runs import patches

DATA = Path(__file__).parent / "data"


def assert_counts_hold(change: Change) -> int:
    """Every hunk with counts: they are ``block_counts`` of its texts. Returns how many had counts."""
    known = 0
    for file_change in change.files:
        for hunk in file_change.hunks:
            if hunk.changed_lines is not None:
                assert hunk.changed_lines == block_counts(hunk.old, hunk.new), (hunk.old, hunk.new)
                known += 1
    return known


def without_counts(file_plan: FilePlan) -> FilePlan:
    """The same plan with every hunk's counts unknown: ``file_stats`` counts the texts."""
    hunks = tuple(
        LocatedHunk(replace(item.hunk, changed_lines=None), item.match, item.cell) for item in file_plan.hunks
    )
    return replace(file_plan, hunks=hunks)


def test_release_patch_counts_are_block_counts() -> None:
    known = sum(assert_counts_hold(unified.parse(text)) for _, text in release_patch_texts())
    assert known > 200, "the run reader gave counts for most hunks of the release patches"


@pytest.mark.parametrize("case", sorted(p.name for p in (DATA / "cases").iterdir()), ids=str)
def test_golden_case_counts_are_block_counts(case: str) -> None:
    change = (DATA / "cases" / case / "change.txt").read_bytes().decode("utf-8")
    if unified.looks_like(change):
        try:
            parsed = unified.parse(change)
        except nbedit.NbeditError:
            return  # a refused diff has no hunks to count
        assert_counts_hold(parsed)


def test_the_918_hunk_diff_counts_all_but_its_last_hunk(tmp_path: Path) -> None:
    from benchmarks.bench_patch import make_inputs

    before, _, patch = make_inputs(tmp_path)
    change = unified.parse(patch)
    # all the run reader reads (the last hunk is the hunk reader's), though some lines are
    # removed in one hunk and added in another
    assert assert_counts_hold(change) == 917
    (tmp_path / "big.py").write_text(before)
    file_plan = nbedit.Workspace(tmp_path, history=False).plan_patch(patch).files[0]
    expected = diff_stats(reference_diff(file_plan))
    assert file_stats(file_plan) == expected == file_stats(without_counts(file_plan))


def test_a_hunk_that_removes_and_adds_the_same_line_has_no_counts() -> None:
    patch = (
        "--- a/f\n+++ b/f\n"
        "@@ -1,3 +1,3 @@\n a\n-b\n+b\n c\n"  # the diff of it shows nothing changed
        "@@ -10,3 +10,3 @@\n a\n-x\n+y\n c\n"
        "@@ -20,4 +20,4 @@\n a\n-x\n b\n+y\n c\n"  # two runs of changes
        "@@ -30,3 +30,3 @@\n a\n-b\n+z\n c\n"  # 'b' removed here and above, added above only
        "@@ -40,2 +40,3 @@\n a\n+b\n c\n"
        "@@ -50,3 +50,3 @@\n a\n-q\n+r\n c\n"
    )
    hunks = unified.parse(patch).files[0].hunks
    assert [hunk.changed_lines for hunk in hunks] == [None, (1, 1), None, (1, 1), (1, 0), None]
    assert block_counts(hunks[0].old, hunks[0].new) == (0, 0)
    assert block_counts(hunks[2].old, hunks[2].new) == (1, 1)


def test_release_patches_are_counted_as_the_reference_with_and_without_counts(tmp_path: Path) -> None:
    compared = 0
    for tree, patch in release_patches(tmp_path):
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(tree, work)
        plan = nbedit.Workspace(work, history=False).plan_patch(patch.read_text(encoding="utf-8"))
        for file_plan in plan.files:
            if file_plan.hunks and file_plan.before is not None:
                assert file_stats(file_plan) == file_stats(without_counts(file_plan)), file_plan.path
                compared += 1
        assert_same_as_reference(plan)
    assert compared > 100


@settings(max_examples=300)
@given(text=patches())
def test_generated_patch_counts_are_block_counts(text: str) -> None:
    try:
        change = unified.parse(text)
    except nbedit.NbeditError:
        return  # refused: no hunks
    assert_counts_hold(change)


WORDS = ["a\n", "b\n", "return x\n", "\n", "    pass\n", "é\n", "a\r\n"]


@st.composite
def edited_files(draw: st.DrawFn) -> tuple[str, str]:
    """A file and an edit of it whose hunks move, repeat and swap a few kinds of lines."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    lines = [rng.choice(WORDS) if rng.random() < 0.3 else f"line {n}\n" for n in range(rng.randrange(5, 120))]
    after = list(lines)
    for _ in range(rng.randrange(1, 12)):
        position = rng.randrange(len(after) + 1)
        kind = rng.randrange(4)
        if kind == 0 and position < len(after):
            after[position] = rng.choice(WORDS)
        elif kind == 1:
            after[position:position] = rng.sample(WORDS, rng.randrange(1, 3))
        elif kind == 2:
            del after[position : position + rng.randrange(1, 3)]
        elif position + 1 < len(after):
            after[position], after[position + 1] = after[position + 1], after[position]
    return "".join(lines), "".join(after)


@settings(max_examples=200)
@given(pair=edited_files(), context=st.integers(0, 3))
def test_generated_diffs_count_as_the_reference(
    tmp_path_factory: pytest.TempPathFactory, pair: tuple[str, str], context: int
) -> None:
    before, after = pair
    diff = udiff(before, after, "file.txt", context)
    if not diff:
        return
    assert_counts_hold(unified.parse(diff))
    plan = plan_exactly(tmp_path_factory.mktemp("counts"), before, diff)
    assert_same_as_reference(plan)
    assert file_stats(plan.files[0]) == file_stats(without_counts(plan.files[0]))
