"""The unified reader of a big text: a line index instead of a list of lines, runs read in pieces.

``unified_runs.LineIndex`` must be the list ``text.split("\\n")`` gives (no last empty line),
and a diff read through it, with runs cut every few lines, must parse to exactly what the list
reader makes, errors included. The memory test is the reason for both: parsing holds little
besides the text and the hunks it made.
"""

from __future__ import annotations

import contextlib
import tracemalloc
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bench_scale import spread_patch
from nbedit.engine.formats import unified, unified_runs
from nbedit.engine.formats.unified_runs import LineIndex
from tests.release_history import release_patch_texts
from tests.test_unified_runs import outcome, patches


@contextlib.contextmanager
def small_pieces(indexed_from: int = 0, run_lines: int = 3, chunk: int = 5) -> Iterator[None]:
    """Every text read through a LineIndex built a few characters at a time, runs cut every few lines."""
    saved = unified_runs.INDEXED_FROM, unified_runs.RUN_LINES, unified_runs._CHUNK
    unified_runs.INDEXED_FROM, unified_runs.RUN_LINES, unified_runs._CHUNK = indexed_from, run_lines, chunk
    try:
        yield
    finally:
        unified_runs.INDEXED_FROM, unified_runs.RUN_LINES, unified_runs._CHUNK = saved


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@settings(max_examples=300)
@given(text=st.text(alphabet="ab\n\r", max_size=40), chunk=st.integers(1, 8))
def test_the_line_index_is_the_list_of_lines(text: str, chunk: int) -> None:
    expected = split_lines(text)
    with small_pieces(chunk=chunk):
        index = LineIndex(text)
    assert len(index) == len(expected)
    assert list(index) == expected
    for number in range(-len(expected), len(expected)):
        assert index[number] == expected[number]
    for first in range(-2, len(expected) + 2):
        for stop in range(-2, len(expected) + 2):
            assert index[first:stop] == expected[first:stop]
    assert index[::2] == expected[::2]


def test_the_line_index_refuses_a_line_it_does_not_have() -> None:
    index = LineIndex("a\nb\n")
    for number in (2, -3):
        with contextlib.suppress(IndexError):
            index[number]
            raise AssertionError(f"line {number} was read")


@settings(max_examples=200)
@given(text=patches(), run_lines=st.integers(2, 12))
def test_generated_patches_parse_the_same_through_the_line_index(text: str, run_lines: int) -> None:
    expected = outcome(unified._Parser, text, None)
    with small_pieces(run_lines=run_lines):
        assert isinstance(unified._Parser(text, None).lines, LineIndex) or not text
        assert outcome(unified._Parser, text, None) == expected


def test_an_empty_line_last_in_a_runs_window_ends_the_run() -> None:
    """A run is read a window of ``RUN_LINES`` lines at a time; an empty line (it ends a run: no
    marker) that is the window's last line must end it there too, not be read as a hunk line (it
    raised IndexError; found by the property test above)."""
    text = (
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n@@ -8,2 +8,3 @@\n+y\n d\n e\n\n"
        "@@ -20 +21 @@\n-f\n+g\n"
    )
    expected = outcome(unified._Parser, text, None)
    for run_lines in range(2, 13):
        with small_pieces(run_lines=run_lines):
            assert outcome(unified._Parser, text, None) == expected, run_lines


def test_release_patches_parse_the_same_through_the_line_index() -> None:
    texts = [text for _, text in release_patch_texts()]
    expected = [outcome(unified._Parser, text, None) for text in texts]
    with small_pieces(run_lines=40, chunk=997):
        assert [outcome(unified._Parser, text, None) for text in texts] == expected


def reader_memory(patch: str) -> tuple[int, int]:
    """(what the parsed change keeps, the peak while parsing ``patch``) besides the patch itself."""
    tracemalloc.start()
    try:
        change = unified.parse(patch)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert change.files
    return kept, peak


def test_a_big_patch_is_read_holding_little_besides_its_text() -> None:
    """4,000 hunks (1.3 MB): the hunks are kept as places in the patch text (a ``HunkTable``, ~0.2x
    the patch; their texts were 2.6x), and reading adds about one run of 4,096 lines to that
    (a list of the lines alone was another 3x; 100,000 hunks peak at 2.8x the patch in all)."""
    _, _, patch = spread_patch("spread.py", 4_000)
    assert len(patch) >= unified_runs.INDEXED_FROM
    kept, peak = reader_memory(patch)
    assert kept < 0.3 * len(patch)
    assert peak < 1.5 * len(patch)
    with small_pieces(indexed_from=len(patch) + 1, run_lines=1 << 30, chunk=1 << 20):
        kept, peak = reader_memory(patch)
        assert peak - kept > 2 * len(patch)  # the list reader: the test can tell them apart
