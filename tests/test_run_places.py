"""``read_run_places``: what a ``HunkTable`` keeps of a run, read without making the hunks.

A big patch's hunks are kept as places in its text (``engine.hunk_table``): the table keeps
each hunk's header line, start line and ``changed_lines`` and makes the texts again when they
are read. ``read_run_places`` reads those numbers as ``read_run`` does, with the same checks,
but never makes a side's text or a ``Hunk``. Here: the numbers are the ones ``read_run``'s hunks
carry, the run ends at the same line, and a big patch is parsed without making its hunks.
"""

from __future__ import annotations

import random

import pytest

from nbedit.engine.formats import parse, unified_runs
from nbedit.engine.formats.unified_runs import LineIndex, read_run, read_run_places


def _run_text(seed: int) -> str:
    """A section of hunks: changed lines, pure insertions and removals, a line both removed and
    added elsewhere (``changed_lines`` None), context on both sides or on one, a hunk whose counts
    stop fitting its body (the run stops before it)."""
    generator = random.Random(seed)
    parts = ["--- a/f.py\n+++ b/f.py\n"]
    line = 1
    for number in range(generator.randint(3, 40)):
        before = [f" ctx {number} {index}\n" for index in range(generator.randint(0, 3))]
        after = [f" tail {number} {index}\n" for index in range(generator.randint(0, 3))]
        kind = generator.choice(["change", "insert", "remove", "shared", "multi"])
        body = {
            "change": [f"-old {number}\n", f"+new {number}\n"],
            "insert": [f"+added {number}\n"],
            "remove": [f"-gone {number}\n"],
            "shared": ["-return value\n", f"+x = {number}\n", "+return value\n"],
            "multi": [f"-a {number}\n", " between\n", f"+b {number}\n"],
        }[kind]
        lines = [*before, *body, *after]
        old = sum(1 for item in lines if item[0] in " -")
        new = sum(1 for item in lines if item[0] in " +")
        if generator.random() < 0.05:
            new += 1  # a header whose counts do not fit its body
        parts.append(f"@@ -{line},{old} +{line},{new} @@\n")
        parts += lines
        line += old + 5
    return "".join(parts)


@pytest.mark.parametrize("seed", range(60))
def test_places_are_the_numbers_of_the_run_s_hunks(seed: int) -> None:
    text = _run_text(seed)
    start = text.index("@@")
    index = text.count("\n", 0, start)
    listed = text.split("\n")[:-1]
    hunks, end = read_run(text, listed, index, start)
    places = read_run_places(text, LineIndex(text), index, start)
    if not hunks:
        assert places is None
        return
    assert places is not None
    assert places.end == end
    assert len(places) == len(hunks)
    assert places.source_lines == [hunk.source_line for hunk in hunks]
    assert places.start_lines == [hunk.start_line for hunk in hunks]
    assert places.changed == [hunk.changed_lines for hunk in hunks]


def test_a_big_patch_is_parsed_without_making_its_run_hunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's hunks are made when read, not while the patch is parsed (the run reader made
    them, and the table let them go)."""
    text = _run_text(7) * 1  # one section
    made: list[int] = []
    real = unified_runs.made_in_bulk

    def counting(cls, count, *columns):  # type: ignore[no-untyped-def]
        made.append(count)
        return real(cls, count, *columns)

    monkeypatch.setattr(unified_runs, "made_in_bulk", counting)
    monkeypatch.setattr(unified_runs, "INDEXED_FROM", 1)  # every patch through the line index
    change = parse(text)
    assert made == []
    monkeypatch.setattr(unified_runs, "INDEXED_FROM", 1 << 40)
    again = parse(text)
    assert made  # the list reader does make them
    assert change == again
    assert [hunk.changed_lines for hunk in change.files[0].hunks] == [
        hunk.changed_lines for hunk in again.files[0].hunks
    ]
