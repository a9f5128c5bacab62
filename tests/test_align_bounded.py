"""No difflib call grows with the input in the three aligners issue 27 left quadratic.

A raw-JSON notebook diff's cell pairing (``raw_check._pairing``), an undo refusal's
"it wrote line N" (``history_reverse._what_it_did``) and the whole-text diff
(``whole_diff.text_diff``, where nothing agrees nearby) each gave one
``difflib.SequenceMatcher`` the whole input. Not timed: every ``SequenceMatcher`` built is
recorded (the real class, wrapped) and its input must stay under ``ALIGN_LINES`` and sum to a
few times the input, at two sizes; the results are checked too (pairs, message, diff applied back).
"""

from __future__ import annotations

import difflib
import random

import pytest

from nbedit.engine.diff_counts import ALIGN_LINES
from nbedit.engine.notebook.raw_check import _pairing
from nbedit.engine.resync import aligned_opcodes, bounded_opcodes
from nbedit.engine.whole_diff import text_diff, whole_stats
from nbedit.history_reverse import _what_it_did
from nbedit.storage.records import FileVersion
from tests.test_diff_linear import apply_unified


class _Recorded(difflib.SequenceMatcher):  # type: ignore[type-arg]
    sizes: list[int] = []

    def set_seqs(self, a, b):  # type: ignore[no-untyped-def]
        _Recorded.sizes.append(len(a) + len(b))
        super().set_seqs(a, b)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    monkeypatch.setattr(difflib, "SequenceMatcher", _Recorded)
    _Recorded.sizes = []
    return _Recorded.sizes


def _lines(count: int, every: int) -> tuple[list[str], list[str]]:
    old = [f"line {number}\n" for number in range(count)]
    new = [line.replace("line", "LINE") if number % every == 0 else line for number, line in enumerate(old)]
    return old, new


@pytest.mark.parametrize("cells", [2_000, 8_000])
def test_the_cell_pairing_of_a_raw_notebook_diff_stays_bounded(recorded: list[int], cells: int) -> None:
    """Every 5th of 2,000 / 8,000 cells (no ids) edited in place: each cell keeps its pair."""
    before = [{"cell_type": "code", "source": f"x{number} = {number}\n"} for number in range(cells)]
    after = [
        dict(cell, source=cell["source"] + "# edited\n") if number % 5 == 0 else cell
        for number, cell in enumerate(before)
    ]
    assert _pairing(before, after) == {number: number for number in range(cells)}
    assert max(recorded, default=0) <= ALIGN_LINES
    assert sum(recorded) <= 2 * cells * 2


@pytest.mark.parametrize("count", [4_000, 16_000])
def test_an_undo_refusal_names_the_first_change_in_bounded_work(recorded: list[int], count: int) -> None:
    old, new = _lines(count, 2)
    version = FileVersion("f.py", None, "".join(old).encode(), "".join(new).encode(), None, None)
    message = _what_it_did(version, "f.py")
    assert message == f"it wrote line 1: 'LINE 0' (and {count // 2 - 1} more changed lines)"
    assert max(recorded, default=0) <= ALIGN_LINES
    assert sum(recorded) <= 2 * count


@pytest.mark.parametrize("count", [4_000, 16_000])
def test_a_whole_text_diff_with_no_resync_nearby_stays_bounded(recorded: list[int], count: int) -> None:
    """Every 2nd line changed: no three equal lines in a row to resynchronise on."""
    old, new = _lines(count, 2)
    diff = text_diff("".join(old), "".join(new), "f.py")
    assert apply_unified("".join(old), diff) == "".join(new)
    assert whole_stats("".join(old), "".join(new)) == (count // 2, count // 2)
    assert max(recorded, default=0) <= ALIGN_LINES
    assert sum(recorded) <= 2 * count


def test_far_apart_inserts_past_the_resync_window_still_diff_as_inserts() -> None:
    """A rest over the cap is cut at unique lines, not written as one replace of everything."""
    old = [f"l{number}\n" for number in range(6_000)]
    inserted, more = [f"n{k}\n" for k in range(300)], [f"m{k}\n" for k in range(300)]
    new = [*old[:100], *inserted, *old[100:5_000], *more, *old[5_000:]]
    changed = [code for code in bounded_opcodes(old, new, ALIGN_LINES) if code[0] != "equal"]
    assert changed == [("insert", 100, 100, 100, 400), ("insert", 5_000, 5_000, 5_300, 5_600)]
    assert whole_stats("".join(old), "".join(new)) == (600, 0)


def _valid(old: list[str], new: list[str], opcodes: list[tuple[str, int, int, int, int]]) -> None:
    at_old = at_new = 0
    for tag, i1, i2, j1, j2 in opcodes:
        assert (i1, j1) == (at_old, at_new)
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
        at_old, at_new = i2, j2
    assert (at_old, at_new) == (len(old), len(new))


def test_capped_aligners_give_correct_edit_scripts_and_difflib_s_under_the_cap() -> None:
    rng = random.Random(27)
    for _ in range(1_500):
        alphabet = rng.choice([3, 10, 1_000])
        old = [str(rng.randrange(alphabet)) for _ in range(rng.randrange(120))]
        new = list(old)
        for _ in range(rng.randrange(10)):
            at = rng.randrange(len(new) + 1)
            if rng.random() < 0.4:
                new.insert(at, str(rng.randrange(alphabet)))
            elif at < len(new):
                new[at : at + rng.randrange(1, 4)] = ["x" + new[at]] if rng.random() < 0.5 else []
        limit = rng.choice([4, 10, 30, ALIGN_LINES])
        _valid(old, new, bounded_opcodes(old, new, limit))
        aligned = aligned_opcodes(old, new, limit)
        _valid(old, new, aligned)
        if len(old) + len(new) <= limit:
            assert aligned == difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
