"""The fast diff paths write and count exactly what the line-by-line writer does.

``file_diff`` writes whole runs of lines with one ``replace`` and finds the equal
lines at a block's ends from where two texts first and last differ; ``file_stats``
counts a history entry's +/- lines the same way, without writing the diff. The
reference is the line-by-line writer (``file_blocks`` then ``_block_text``, one
``_emit`` a line) and ``diff_stats`` of its text. They are compared on real release
patches (every file of every step of tests/data/real-history), the golden cases,
generated multi-hunk diffs with CRLF, non-ASCII, tabs and missing final newlines,
and drifted files located by lenient tiers.
"""

from __future__ import annotations

import difflib
import hashlib
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbedit
from nbedit.engine.diff import (
    WHOLE_BLOCK_CHANGES,
    DiffBlock,
    _emit,
    _texts,
    common_ends,
    diff_stats,
    file_blocks,
    file_diff,
    file_stats,
)
from nbedit.engine.diff_counts import _equal_ends_by_line, equal_ends, middle_opcodes
from nbedit.engine.models import FilePlan, Plan
from nbedit.engine.text import split_lines
from tests.release_history import release_patches

DATA = Path(__file__).parent / "data"


def _block_text(block: DiffBlock, out: list[str]) -> None:
    """Write a block as a unified hunk, with -/+ only where lines really differ."""

    old, new = block.old_lines, block.new_lines
    old_start = block.old_start + 1 if old else block.old_start
    new_start = block.new_start + 1 if new else block.new_start
    out.append(f"@@ -{old_start},{len(old)} +{new_start},{len(new)} @@\n")
    head, tail = common_ends(old, new)  # diff only the middle
    for line in old[:head]:
        _emit(" ", line, out)
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    for tag, a0, a1, b0, b1 in middle_opcodes(middle_old, middle_new):
        if tag == "equal":
            for line in middle_old[a0:a1]:
                _emit(" ", line, out)
            continue
        for line in middle_old[a0:a1]:
            _emit("-", line, out)
        for line in middle_new[b0:b1]:
            _emit("+", line, out)
    for line in old[len(old) - tail :]:
        _emit(" ", line, out)


def reference_diff(file_plan: FilePlan) -> str:
    """The line-by-line writer: ``file_diff`` as it was before the fast path."""
    old_name = "/dev/null" if file_plan.operation == "add" else f"a/{file_plan.path}"
    new_name = "/dev/null" if file_plan.operation == "delete" else f"b/{file_plan.target_path}"
    out = [f"--- {old_name}\n", f"+++ {new_name}\n"]
    for block in file_blocks(file_plan):
        _block_text(block, out)
    return "".join(out)


def assert_same_as_reference(plan: Plan) -> int:
    """Every file with located hunks: same diff text and same counts. Returns how many were compared.

    A block of more than ``WHOLE_BLOCK_CHANGES`` hunks is written a hunk at a time (``change_pieces``):
    where lines repeat across a hunk's edge, that alignment can differ from the whole block's and be as
    right (an insertion after a line equal to its last inserted one). There the text may differ, but
    the diff shown must replay the before into the after line by line, with the reference's counts."""
    compared = 0
    for file_plan in plan.files:
        if not file_plan.hunks or file_plan.before is None:
            continue
        expected = reference_diff(file_plan)
        if expected.count("\n") > 2:
            shown = file_diff(file_plan)
            if shown != expected:
                before, after = _texts(file_plan)
                assert len(file_plan.hunks) > WHOLE_BLOCK_CHANGES, file_plan.path
                assert before is not None and replayed(shown, before) == after, file_plan.path
        assert file_stats(file_plan) == diff_stats(expected), file_plan.path
        compared += 1
    return compared


def replayed(diff: str, before: str) -> str:
    """``before`` with a unified diff of it applied strictly: each hunk at the line it names, each
    context and removed line equal to the file's (an independent reader of what ``file_diff`` writes)."""
    old, out, position = split_lines(before), [], 0
    lines = split_lines(diff)[2:]  # past the --- and +++ lines
    index = 0
    while index < len(lines):
        ranges = lines[index].split()[1].removeprefix("-").split(",")
        index += 1
        first = int(ranges[0]) - (1 if int(ranges[1]) else 0)  # -N,0: after line N
        assert position <= first, "hunks out of order"
        out.extend(old[position:first])
        position = first
        while index < len(lines) and not lines[index].startswith("@@"):
            line = lines[index]
            index += 1
            if index < len(lines) and lines[index].startswith("\\"):  # no newline at end of file
                line = line.removesuffix("\n")
                index += 1
            mark, body = line[0], line[1:]
            if mark in " -":
                assert old[position] == body, (position, body)
                position += 1
            if mark in " +":
                out.append(body)
    return "".join([*out, *old[position:]])


def udiff(a: str, b: str, path: str, context: int) -> str:
    """A unified diff of ``a`` to ``b`` as git writes it, ``index`` line included: with it a
    context-free (``context=0``) hunk's line number is evidence that ``a`` is the base."""
    blobs = [
        hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:9] for data in (a.encode(), b.encode())
    ]
    out = [f"diff --git a/{path} b/{path}\nindex {blobs[0]}..{blobs[1]} 100644\n"]
    for row in difflib.unified_diff(split_lines(a), split_lines(b), f"a/{path}", f"b/{path}", n=context):
        out.append(row if row.endswith("\n") else row + "\n\\ No newline at end of file\n")
    return "".join(out) if len(out) > 1 else ""  # no change: no diff


def test_release_patches_diff_and_count_as_the_reference(tmp_path: Path) -> None:
    compared = 0
    for tree, patch in release_patches(tmp_path):
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(tree, work)
        plan = nbedit.Workspace(work, history=False).plan_patch(patch.read_text(encoding="utf-8"))
        compared += assert_same_as_reference(plan)
    assert compared > 100, "the release patches hold hundreds of changed files"


@pytest.mark.parametrize("case", sorted(p.name for p in (DATA / "cases").iterdir()), ids=str)
def test_golden_cases_diff_and_count_as_the_reference(case: str, tmp_path: Path) -> None:
    folder = DATA / "cases" / case
    if (folder / "error.txt").exists():
        return  # refused: there is no plan to diff
    work = tmp_path / "work"
    shutil.copytree(folder / "before", work)
    change = (folder / "change.txt").read_bytes().decode("utf-8")
    plan = nbedit.Workspace(work, history=False).plan_patch(change)
    assert_same_as_reference(plan)


LINES = ["x = 1", "return y", "", "\tpass", "  indented", "“curly” é", "same", "same", "end"]
line_lists = st.lists(st.tuples(st.sampled_from(LINES), st.sampled_from(["\n", "\r\n"])), max_size=40)


def joined(lines: list[tuple[str, str]], final_newline: bool) -> str:
    text = "".join(body + end for body, end in lines)
    return text if final_newline or not lines else text[: -len(lines[-1][1])]


@given(a=line_lists, b=line_lists, a_final=st.booleans(), b_final=st.booleans())
def test_equal_ends_are_common_ends(
    a: list[tuple[str, str]], b: list[tuple[str, str]], a_final: bool, b_final: bool
) -> None:
    old, new = joined(a, a_final), joined(b, b_final)
    old_lines, new_lines = split_lines(old), split_lines(new)
    head_lines, tail_lines = common_ends(old_lines, new_lines)
    for found in (equal_ends(old, new), _equal_ends_by_line(old, new)):
        head, old_end, new_end = found
        assert old[:head] == "".join(old_lines[:head_lines]) == new[:head]
        assert old[old_end:] == "".join(old_lines[len(old_lines) - tail_lines :]) == new[new_end:]
    ascii_old, ascii_new = old.replace("“", '"').replace("”", '"'), new.replace("é", "e")
    assert equal_ends(ascii_old, ascii_new) == _equal_ends_by_line(ascii_old, ascii_new)


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, str]:
    """A text of up to 80 lines and a copy with scattered edits (changes, inserts, deletes)."""
    lines = draw(st.lists(st.tuples(st.sampled_from(LINES), st.sampled_from(["\n", "\r\n"])), max_size=80))
    seed = draw(st.integers(0, 2**32))
    rng = random.Random(seed)
    after = list(lines)
    for _ in range(draw(st.integers(0, 12))):
        position = rng.randrange(len(after) + 1)
        kind = rng.choice(["change", "insert", "delete"])
        if kind == "insert" or not after:
            after.insert(position, (rng.choice(LINES) + str(rng.randrange(3)), rng.choice(["\n", "\r\n"])))
        elif kind == "delete":
            del after[min(position, len(after) - 1)]
        else:
            index = min(position, len(after) - 1)
            after[index] = (after[index][0] + "!", after[index][1])
    return joined(lines, draw(st.booleans())), joined(after, draw(st.booleans()))


def plan_exactly(root: Path, before: str, diff: str) -> nbedit.Plan:
    """``diff`` planned on a new ``file.txt`` holding ``before`` in ``root``, exact tier only."""
    (root / "file.txt").write_bytes(before.encode())
    return nbedit.Workspace(root, history=False, exact=True).plan_patch(diff)


@given(pair=edited(), context=st.integers(0, 3))
def test_generated_diffs_diff_and_count_as_the_reference(
    tmp_path_factory: pytest.TempPathFactory, pair: tuple[str, str], context: int
) -> None:
    before, after = pair
    diff = udiff(before, after, "file.txt", context)
    if not diff:
        return
    plan = plan_exactly(tmp_path_factory.mktemp("fast"), before, diff)
    assert assert_same_as_reference(plan) == 1


@given(pair=edited())
def test_lenient_tiers_diff_and_count_as_the_reference(
    tmp_path_factory: pytest.TempPathFactory, pair: tuple[str, str]
) -> None:
    """The file drifted (trailing blanks, other indentation): hunks land by a lenient tier."""
    before, after = pair
    diff = udiff(before, after, "file.txt", 3)
    if not diff:
        return
    drifted = "".join(
        "  " + line.rstrip("\r\n") + "  " + line[len(line.rstrip("\r\n")) :] for line in split_lines(before)
    )
    root = tmp_path_factory.mktemp("lenient")
    (root / "file.txt").write_bytes(drifted.encode())
    try:
        plan = nbedit.Workspace(root, history=False).plan_patch(diff)
    except nbedit.NbeditError:
        return  # refused (ambiguous, unsafe): nothing to compare
    assert_same_as_reference(plan)


def test_a_large_patch_diffs_and_counts_as_the_reference(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = [f"value_{n} = compute({rng.randrange(1000)})\n" for n in range(5000)]
    after = list(lines)
    for position in sorted(rng.sample(range(5000), 300), reverse=True):
        kind = rng.choice(["change", "insert", "delete", "change"])
        if kind == "change":
            after[position] = after[position].replace("compute", "compute_v2")
        elif kind == "insert":
            after.insert(position, f"# note {position}\n")
        else:
            del after[position]
    before_text, after_text = "".join(lines), "".join(after)
    (tmp_path / "big.py").write_text(before_text)
    plan = nbedit.Workspace(tmp_path, history=False, exact=True).plan_patch(
        udiff(before_text, after_text, "big.py", 3)
    )
    assert len(plan.files[0].hunks) > 150
    assert assert_same_as_reference(plan) == 1
    assert plan.stats() == {"big.py": diff_stats(reference_diff(plan.files[0]))}


body_lines = st.lists(
    st.tuples(
        st.sampled_from([" ", "-", "+", "", "\\"]), st.sampled_from(["", "a", "b", "\r", "a\r", "-- "])
    ),
    max_size=12,
)


@given(
    rows=body_lines,
    old_count=st.integers(0, 8),
    new_count=st.integers(0, 8),
    tail=st.sampled_from(["", "@@ -1 +1 @@", "-x", "\\ No newline at end of file"]),
    consistent=st.booleans(),
)
def test_the_quick_hunk_reader_agrees_with_the_careful_one(
    rows: list[tuple[str, str]], old_count: int, new_count: int, tail: str, consistent: bool
) -> None:
    """A hunk body read in runs of lines gives what the line-by-line reader gives, or defers to it."""
    from nbedit.engine.formats import unified

    body = [marker + text if marker != "" else "" for marker, text in rows] + [tail]
    if consistent:  # the counts the body really has (up to its first '\\' line)
        markers = [line[:1] for line in body[:-1]]
        old_count = sum(marker in (" ", "-", "") for marker in markers)
        new_count = sum(marker in (" ", "+", "") for marker in markers)
    parser = unified._Parser(
        "\n".join(["--- a/f", "+++ b/f", f"@@ -1,{old_count} +1,{new_count} @@", *body]), None
    )
    parser.index = 3
    quick = parser._plain_hunk_body(old_count, new_count)
    if quick is None:
        assert parser.index == 3, "a deferred body consumes nothing"
        return
    position = parser.index

    class Careful(unified._Parser):
        def _plain_hunk_body(self, old_count: int, new_count: int) -> tuple[str, str] | None:
            return None  # always the line-by-line reader

    careful = Careful("", None)
    careful.lines, careful.index = list(parser.lines), 2
    try:  # the reader of counted hunks (a miscounted one is then read again from its body alone)
        hunk = careful._counted_hunk(3, unified.hunk_numbers(careful.lines[2]))
    except nbedit.NbeditError:
        # only the overflow check may refuse after a body both readers accept
        assert careful.index == position
        return
    assert (hunk.old, hunk.new) == quick
    assert careful.index == position


@given(
    text=st.text(alphabet="ab\n\r", max_size=30),
    start=st.integers(0, 32),
    end=st.integers(0, 32),
    count=st.integers(0, 8),
)
def test_holds_newlines_is_counting_them(text: str, start: int, end: int, count: int) -> None:
    """How the entry's counter tells two hunks' blocks apart (more than 2 * context lines between)."""
    from nbedit.engine.diff_counts import holds_newlines

    assert holds_newlines(text, start, end, count) == (text.count("\n", start, end) >= count)


block_texts = st.lists(
    st.sampled_from(["a\n", "b\n", "ab\n", "ba\n", "\n", "same\n", "x = 1\n", "a\r\n", "é\n"]), max_size=8
)


@settings(max_examples=500)
@given(
    old_lines=block_texts.filter(bool), new_lines=block_texts, edit=st.integers(0, 3), seed=st.integers(0, 99)
)
def test_lone_block_counts_are_block_counts(
    old_lines: list[str], new_lines: list[str], edit: int, seed: int
) -> None:
    """The shortcut for one changed line, or lines only inserted or only removed, counts as ``block_counts``."""
    from nbedit.engine.diff_counts import block_counts, lone_block_counts

    rng = random.Random(seed)
    if edit:  # mostly a small edit of the old lines (the shapes the shortcut takes), else any pair
        new_lines = list(old_lines)
        position = rng.randrange(len(old_lines))
        if edit == 1:
            new_lines[position] = rng.choice(["b\n", "ab\n", "same\n", "x = 2\n"])
        elif edit == 2:
            new_lines[position:position] = rng.choice([["a\n"], ["b\n", "b\n"], ["\n"]])
        else:
            del new_lines[position : position + rng.randrange(1, 3)]
    old, new = "".join(old_lines), "".join(new_lines)
    assert lone_block_counts(old, new) == block_counts(old, new)


def test_the_918_hunk_plan_is_counted_from_its_lone_hunks(tmp_path: Path) -> None:
    from benchmarks.bench_patch import make_inputs
    from nbedit.engine.diff_counts import lone_exact_hunks

    before, _, patch = make_inputs(tmp_path)
    (tmp_path / "big.py").write_text(before)
    file_plan = nbedit.Workspace(tmp_path, history=False).plan_patch(patch).files[0]
    assert lone_exact_hunks(before, file_plan, 3) is not None
    assert file_stats(file_plan) == diff_stats(reference_diff(file_plan))
