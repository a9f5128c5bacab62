"""The planner's run of hunks found exactly in place gives what the hunk-by-hunk loop gives.

``exact_run.exact_in_place`` locates the leading hunks of a diff that sit exactly at
the lines they claim in one tight loop and splices them on the way. The
reference is ``edit_text`` with that loop switched off (every hunk through the
general loop, which tries the same quick check, then the full search, then
sorts, checks overlaps and splices): the same located hunks, text, notes and
errors on real release patches, a 918-hunk git diff and generated diffs whose
hunks are offset, duplicated, already applied or not there at all.
"""

from __future__ import annotations

import difflib
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit.engine import digest, exact_run, locate_hunks, plan
from nbedit.engine.formats import unified
from nbedit.engine.locate_hunks import edit_text
from nbedit.engine.models import Hunk
from nbedit.engine.text import split_lines
from nbedit.engine.text_edit import PlanOptions, TextEdit
from nbedit.errors import NbeditError
from tests.release_history import release_patches


def hunk_by_hunk(text: str, hunks: object) -> tuple[list[object], tuple[int, int]]:
    return [], (0, 0)


def outcome(text: str, hunks: tuple[Hunk, ...], options: PlanOptions) -> TextEdit | str:
    try:
        return edit_text(text, hunks, options, path="f")
    except NbeditError as error:
        return f"{type(error).__name__}: {error}"


def assert_same(
    monkeypatch: pytest.MonkeyPatch, text: str, hunks: tuple[Hunk, ...], exact: bool = False
) -> object:
    options = PlanOptions(exact=exact)
    fast = outcome(text, hunks, options)
    with monkeypatch.context() as patched:
        patched.setattr(locate_hunks, "exact_in_place", hunk_by_hunk)
        reference = outcome(text, hunks, options)
    assert fast == reference
    return fast


def test_release_patches_edit_as_hunk_by_hunk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    edited = 0
    for tree, patch in release_patches(tmp_path):
        for file_change in unified.parse(patch.read_text(encoding="utf-8")).files:
            source = tree / file_change.path
            if file_change.operation != "update" or not source.is_file():
                continue
            result = assert_same(monkeypatch, source.read_bytes().decode("utf-8"), file_change.hunks)
            edited += isinstance(result, TextEdit)
    assert edited > 100


def test_a_918_hunk_diff_is_found_in_one_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from benchmarks.bench_patch import make_inputs

    before, after, patch = make_inputs(tmp_path)
    hunks = unified.parse(patch).files[0].hunks
    located, _ = exact_run.exact_in_place(before, hunks)
    assert len(located) == 918
    result = assert_same(monkeypatch, before, hunks)
    assert isinstance(result, TextEdit) and result.after == after


LINES = ["a = 1\n", "b = 2\n", "same\n", "same\n", "\n", "x\r\n", "é\n", "def f():\n", "    pass\n"]


@st.composite
def diffs(draw: st.DrawFn) -> tuple[str, str, int, str]:
    """A text, a diff of it, how many lines the file moved down before the diff lands, the edited text."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    lines = [rng.choice(LINES) for _ in range(draw(st.integers(0, 60)))]
    after = list(lines)
    for _ in range(draw(st.integers(1, 8))):
        position = rng.randrange(len(after) + 1)
        kind = rng.choice(["change", "insert", "delete"])
        if kind == "insert" or not after:
            after.insert(position, rng.choice(LINES))
        elif kind == "delete":
            del after[min(position, len(after) - 1)]
        else:
            index = min(position, len(after) - 1)
            after[index] = after[index].rstrip("\r\n") + "!\n"
    diff = "".join(difflib.unified_diff(lines, after, "a/f", "b/f", n=draw(st.integers(0, 3))))
    return "".join(lines), diff, draw(st.integers(0, 4)), "".join(after)


@settings(max_examples=300)
@given(case=diffs(), exact=st.booleans())
def test_generated_diffs_edit_as_hunk_by_hunk(case: tuple[str, str, int, str], exact: bool) -> None:
    text, diff, drift, after = case
    if "@@" not in diff or "\\ No newline" in diff:
        return
    hunks = unified.parse(diff).files[0].hunks
    lines = split_lines(text)
    rng = random.Random(len(text) + drift)
    # as is, offset (every hunk some lines further down), and already applied
    variants = [text, "".join(["# new\n"] * drift) + text, after]
    if lines:  # a copy of a stretch above: the first exact occurrence is not at the claimed line
        start = rng.randrange(len(lines))
        variants.append("".join(lines[start : start + 5]) + text)
        variants.append("".join(lines[: len(lines) // 2] + ["changed\n"] + lines[len(lines) // 2 + 1 :]))
    with pytest.MonkeyPatch.context() as monkeypatch:
        for variant in variants:
            assert_same(monkeypatch, variant, hunks, exact)


def test_a_big_file_is_fingerprinted_meanwhile_and_the_thread_joined(tmp_path: Path) -> None:
    """Files of 256 KiB or more are hashed on another thread while the hunks are located."""
    import hashlib

    from nbedit.workspace import Workspace

    lines = [f"value_{number} = {number}\n" for number in range(60_000)]
    data = "".join(lines).encode()
    assert len(data) >= plan.HASH_MEANWHILE
    (tmp_path / "big.py").write_bytes(data)
    changed = list(lines)
    changed[30_000] = "value_30000 = 'changed'\n"
    diff = "".join(difflib.unified_diff(lines, changed, "a/big.py", "b/big.py"))
    workspace = Workspace(tmp_path, history=False)
    planned = workspace.plan_patch(diff)
    assert planned.files[0].fingerprint == hashlib.sha256(data).hexdigest()
    missing = diff.replace("-value_30000 = 30000", "-value_30000 = 'absent'")
    with pytest.raises(NbeditError):
        workspace.plan_patch(missing)
    assert not digest._running  # every hashing thread ended (engine.digest)
    assert (tmp_path / "big.py").read_bytes() == data


def plan_outcome(root: Path, patch: str) -> object:
    from nbedit.workspace import Workspace

    try:
        return Workspace(root, history=False).plan_patch(patch)
    except NbeditError as error:
        return f"{type(error).__name__}: {error}"


def assert_same_plan(monkeypatch: pytest.MonkeyPatch, root: Path, patch: str) -> object:
    """The plan with the hunks spliced in the file's bytes equals the plan spliced in its text."""
    fast = plan_outcome(root, patch)
    with monkeypatch.context() as patched:
        patched.setattr(plan, "edit_bytes", lambda *arguments, **keywords: None)
        reference = plan_outcome(root, patch)
    assert fast == reference
    return fast


def test_release_patches_plan_alike_in_bytes_and_in_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    planned = 0
    for tree, patch in release_patches(tmp_path):
        result = assert_same_plan(monkeypatch, tree, patch.read_text(encoding="utf-8"))
        planned += not isinstance(result, str)
    assert planned > 10


NEW_TEXTS = ["x = 2\n", "é = 'ü'\n", "\udcff\n", "tab\there\n", ""]


@settings(max_examples=100)
@given(
    case=diffs(),
    new_text=st.sampled_from(NEW_TEXTS),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "cp1252"]),
)
def test_generated_plans_alike_in_bytes_and_in_text(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str, int, str], new_text: str, encoding: str
) -> None:
    """ASCII or not, BOM or not, a new text that UTF-8 cannot hold: the same plan or the same error."""
    text, diff, _, _ = case
    if "@@" not in diff or "\\ No newline" in diff:
        return
    diff = diff.replace("\n+", "\n+" + new_text.rstrip("\n") + " ", 1) if new_text else diff
    root = tmp_path_factory.mktemp("bytes")
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        return
    (root / "f").write_bytes(data)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_same_plan(monkeypatch, root, diff)
    assert (root / "f").read_bytes() == data


def test_a_new_text_utf8_cannot_hold_is_left_to_the_text_path() -> None:
    """A lone surrogate in a new text: no bytes are spliced; ``encode`` refuses it with its message."""
    from nbedit.engine.text import UTF8

    text = "a = 1\nb = 2\n"
    hunks = unified.parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a = 1\n+a = '\ud800'\n").files[0].hunks
    assert exact_run.edit_bytes(text, text.encode(), UTF8, hunks) is None
    fine = unified.parse("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a = 1\n+a = 'é'\n").files[0].hunks
    spliced = exact_run.edit_bytes(text, text.encode(), UTF8, fine)
    assert spliced is not None
    assert spliced[1] == "a = 'é'\nb = 2\n".encode() and len(spliced[0]) == 1


@settings(max_examples=200)
@given(case=diffs())
def test_hunks_found_or_counted_in_the_bytes_are_the_same(case: tuple[str, str, int, str]) -> None:
    """``exact_in_place(text, hunks, data)`` of an ASCII text counts lines in its bytes: the same result."""
    text, diff, drift, _ = case
    if "@@" not in diff or "\\ No newline" in diff:
        return
    hunks = unified.parse(diff).files[0].hunks
    for variant in (text, "".join(["# new\n"] * drift) + text):
        if variant.isascii():
            reference = exact_run.exact_in_place(variant, hunks)
            assert exact_run.exact_in_place(variant, hunks, variant.encode()) == reference
            assert exact_run.exact_in_place(variant.encode(), hunks) == reference  # found in the bytes


@pytest.mark.parametrize("in_bytes", [False, True])
def test_a_hunk_expected_near_but_past_the_short_window_is_still_found(in_bytes: bool) -> None:
    """A hunk whose lines before it are far longer than its own is looked for in a short window
    first (it seems near); not there, the whole rest of the text is searched, and the first
    occurrence is the one taken, as without the window."""
    long_lines = [f"{number:04d} " + "x" * 300 + "\n" for number in range(30)]
    short = ["a = 1\n", "b = 2\n", "c = 3\n"]
    text = "".join(["head\n", *short, *long_lines, *short, "tail\n"])
    hunks = [
        Hunk(old="head\n", new="HEAD\n", start_line=1),
        Hunk(old="".join(short), new="a = 9\n", start_line=2),  # the near copy: in the window
        Hunk(old="".join(short), new="b = 9\n", start_line=35),  # past the window (~9,000 bytes on)
    ]
    assert (35 - 5) * len("".join(short)) < exact_run._NEAR * 3  # it does look near
    assert len("".join(long_lines)) > exact_run._WINDOW
    haystack = text.encode() if in_bytes else text
    located, _ = exact_run.exact_in_place(haystack, hunks)
    assert [item.match.line for item in located] == [1, 2, 35]
    assert [item.match.start for item in located] == [0, 5, text.rindex("a = 1\n")]


def test_located_table_looks_in_the_short_window_first_and_finds_what_the_exact_run_finds() -> None:
    """``located_table`` (a big file's, or a big patch's hunks) tries the same short window first: a
    hunk that seems near but lies past it is still found, at the same place as ``exact_in_place``."""
    long_lines = [f"{number:04d} " + "x" * 300 + "\n" for number in range(30)]
    short = ["a = 1\n", "b = 2\n", "c = 3\n"]
    text = "".join(["head\n", *short, *long_lines, *short, "tail\n"]).encode()
    hunks = [
        Hunk(old="head\n", new="HEAD\n", start_line=1),
        Hunk(old="".join(short), new="a = 9\n", start_line=2),
        Hunk(old="".join(short), new="b = 9\n", start_line=35),  # past the window
    ]
    table, spliced = exact_run.located_table(text, hunks)
    located, _ = exact_run.exact_in_place(text, hunks)
    assert list(table) == located
    assert spliced.join() == "".join(["HEAD\n", "a = 9\n", *long_lines, "b = 9\n", "tail\n"]).encode()
