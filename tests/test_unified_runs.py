"""The run reader of the unified parser gives what the hunk-by-hunk reader gives.

``unified._Parser._hunk_run`` reads a whole run of hunks with a few C-level passes;
every hunk it cannot vouch for is left to the hunk readers (``_hunk``, with its
quick body reader and the careful line-by-line one). The reference here is the
parser with the run reader switched off: on real release patches, the golden
cases, a 918-hunk git diff and generated patches full of the lines that must
stop a run (blank lines, '\\ No newline', CRLF, '@@@', bad counts, a next file's
'--- ' header, NUL), both give the same ``Change`` or the same error, message and
line included.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbedit.engine.formats import unified
from nbedit.engine.models import Change
from nbedit.errors import PatchSyntaxError
from tests.release_history import release_patch_texts

DATA = Path(__file__).parent / "data"


class HunkByHunk(unified._Parser):
    """The parser as it was before the run reader: every hunk read on its own."""

    def _hunk_run(self) -> list[unified.Hunk]:
        return []


def outcome(
    parser: type[unified._Parser], text: str, default_path: str | None
) -> Change | tuple[str, int | None]:
    try:
        return parser(text, default_path).run()
    except PatchSyntaxError as error:
        return (str(error), error.line)


def assert_same(text: str, default_path: str | None = None) -> Change | tuple[str, int | None]:
    fast = outcome(unified._Parser, text, default_path)
    assert fast == outcome(HunkByHunk, text, default_path)
    return fast


class CountingRuns(unified._Parser):
    runs: list[int] = []

    def _hunk_run(self) -> list[unified.Hunk]:
        hunks = super()._hunk_run()
        CountingRuns.runs.append(len(hunks))
        return hunks


def test_release_patches_parse_as_hunk_by_hunk() -> None:
    CountingRuns.runs = []
    patches = 0
    for _, text in release_patch_texts():
        assert isinstance(assert_same(text), Change)
        CountingRuns(text, None).run()
        patches += 1
    assert patches > 10
    assert sum(CountingRuns.runs) > 200, "the run reader read most hunks of the release patches"


@pytest.mark.parametrize("case", sorted(p.name for p in (DATA / "cases").iterdir()), ids=str)
def test_golden_cases_parse_as_hunk_by_hunk(case: str) -> None:
    change = (DATA / "cases" / case / "change.txt").read_bytes().decode("utf-8")
    if unified.looks_like(change):
        assert_same(change)


def test_a_918_hunk_git_diff_is_read_in_one_run(tmp_path: Path) -> None:
    from benchmarks.bench_patch import make_inputs

    _, _, patch = make_inputs(tmp_path)
    CountingRuns.runs = []
    change = CountingRuns(patch, None).run()
    assert len(change.files[0].hunks) == 918
    assert CountingRuns.runs[0] == 917  # all but the last, which the hunk reader reads
    assert change == HunkByHunk(patch, None).run()
    crlf = patch.replace("\n", "\r\n")
    assert assert_same(crlf) == HunkByHunk(crlf, None).run()


LINE_TEXTS = ["", "a", "b", "\r", "a\r", "-- ", "@@ -1 +1 @@", " x", "-y", "+z", "\x00", "é"]
ODD_LINES = [
    "",
    "\r",
    "\\ No newline at end of file",
    "@@@ -1,2 -1,2 +1,2 @@@",
    "@@ -1,2 +1,2",
    "@@ -1234567890 +1 @@",
    "--- a/g",
    "+++ b/g",
    "diff --git a/g b/g",
    "Binary files a/g and b/g differ",
    "x",
]


@st.composite
def patches(draw: st.DrawFn) -> str:
    """A diff of one or two files, each with runs of hunks, counts right or off, odd lines anywhere."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    out: list[str] = []
    for number in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            out.append(f"diff --git a/f{number} b/f{number}")
        out += [f"--- a/f{number}", f"+++ b/f{number}"]
        line = 1
        for _ in range(draw(st.integers(1, 8))):
            body = [rng.choice(" -+") + rng.choice(LINE_TEXTS) for _ in range(rng.randrange(0, 7))]
            old_count = sum(row[:1] in (" ", "-") for row in body)
            new_count = sum(row[:1] in (" ", "+") for row in body)
            if rng.random() < 0.04:
                old_count += rng.choice((-1, 1))
            if rng.random() < 0.04:
                new_count = max(0, new_count + rng.choice((-1, 1)))
            old_part = f"{line},{old_count}" if old_count != 1 or rng.random() < 0.5 else str(line)
            new_part = f"{line},{new_count}" if new_count != 1 or rng.random() < 0.5 else str(line)
            out.append(f"@@ -{old_part} +{new_part} @@" + rng.choice(["", " def f():", "\r"]))
            for row in body:
                out.append(row)
                if rng.random() < 0.02:
                    out.append(rng.choice(ODD_LINES))
            if rng.random() < 0.05:
                out.append(rng.choice(ODD_LINES))
            line += max(old_count, 0) + rng.randrange(1, 5)
    text = "\n".join(out)
    ending = draw(st.sampled_from(["\n", "", "\n\n", "\n-- \n2.40.0\n"]))
    text += ending
    return text.replace("\n", "\r\n") if draw(st.booleans()) and rng.random() < 0.2 else text


@settings(max_examples=300)
@given(text=patches())
def test_generated_patches_parse_as_hunk_by_hunk(text: str) -> None:
    assert_same(text)


@given(text=patches())
def test_headerless_hunks_parse_as_hunk_by_hunk(text: str) -> None:
    """With a default path, hunks may start the text (no newline before the first header)."""
    body = "\n".join(line for line in text.split("\n") if not line.startswith(("---", "+++", "diff")))
    assert_same(body, default_path="f")


def marker_line_by_lines(text: str) -> int | None:
    """``unified.marker_line`` as it was: every line looked at in turn."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith("diff --git "):
            return index
        if line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            return index
        if line.startswith("@@ -") and re.match(unified._HUNK_HEADER, line):
            return index
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if re.fullmatch(r"@@ [^@]*@@[^@]*", line) and following[:1] in (" ", "+", "-"):
            return index  # aider's '@@ ... @@' with a body line under it
    return None


MARKER_PIECES = [
    "diff --git a/x b/x",
    "diff --git",
    "--- a/x",
    "+++ b/x",
    "---",
    "+++",
    "@@ -1 +1 @@",
    "@@ -1,2 +1 @@@",
    "@@ -x +1 @@",
    "@@ ... @@",
    "@@",
    "-x",
    " @@ -1 +1 @@",
    "text",
    "",
    "\r",
    "*** Begin Patch",
    "<<<<<<< SEARCH",
]


@settings(max_examples=300)
@given(pieces=st.lists(st.sampled_from(MARKER_PIECES), max_size=8), crlf=st.booleans())
def test_marker_line_finds_the_line_the_line_by_line_scan_finds(pieces: list[str], crlf: bool) -> None:
    text = ("\r\n" if crlf else "\n").join(pieces)
    assert unified.marker_line(text) == marker_line_by_lines(text)


def test_marker_line_on_real_patches() -> None:
    for case in sorted((DATA / "cases").iterdir()):
        text = (case / "change.txt").read_bytes().decode("utf-8")
        assert unified.marker_line(text) == marker_line_by_lines(text)
    for _, text in release_patch_texts():
        assert unified.marker_line(text) == marker_line_by_lines(text)
        tail = text[len(text) // 2 :]  # from the middle of a line: not at the first line
        assert unified.marker_line(tail) == marker_line_by_lines(tail)
