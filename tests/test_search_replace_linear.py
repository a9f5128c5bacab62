"""Many SEARCH/REPLACE blocks cost the text once plus each block's own lines, not the text per block.

Blocks apply in order, each to the text the blocks before it left. With more than
``INDEXED_HUNKS`` of them, a block whose old text stands exactly once is placed from an index
of the text's lines (``match.line_table.LinesInOrder``), and the final "every block located in
the original" pass reads exact places from a ``LineTable``; every other block is located on the
text as a string, as before. These tests hold the indexed way to the string way on generated
blocks that build on each other, drift in whitespace, repeat, are ambiguous or absent (same text,
same places, same notes, same refusal and words), and check the work: blocks placed from the
index search no text, so a work limit the size of the text refuses nothing.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from nbedit._dataclass import replace
from nbedit.engine import locate_hunks
from nbedit.engine.locate_hunks import INDEXED_HUNKS, edit_text
from nbedit.engine.match.line_table import LinesInOrder, LineTable
from nbedit.engine.models import Hunk
from nbedit.engine.text_edit import PlanOptions
from nbedit.errors import FileTooLarge, NbeditError
from nbedit.workspace import Workspace

_LINES = ["a = 1", "b = 2", "c = 3", "", "    return a", "x = 1  ", "def f():", "pass", "print(a)"]


def _outcome(text: str, blocks: list[Hunk], options: PlanOptions) -> tuple[object, ...]:
    try:
        edit = edit_text(text, blocks, options, path="f.py", sequential=True)
    except NbeditError as error:
        fields = sorted((name, repr(value)) for name, value in getattr(error, "__dict__", {}).items())
        return (type(error).__name__, str(error), tuple(fields))
    return (
        edit.after,
        tuple(
            (item.match.start, item.match.end, item.match.replacement, item.tier, item.match.line)
            for item in edit.hunks
        ),
        edit.notes,
        edit.already_applied,
        edit.lenient,
    )


def _by_string(
    text: str, blocks: list[Hunk], options: PlanOptions, monkeypatch: pytest.MonkeyPatch
) -> tuple[object, ...]:
    """The outcome when every block is located on the text as a string (the way before the index)."""
    with monkeypatch.context() as patched:
        patched.setattr(locate_hunks, "INDEXED_HUNKS", 10**9)
        return _outcome(text, blocks, options)


def _case(seed: int) -> tuple[str, list[Hunk]]:
    """A text of numbered and repeated lines, and blocks: most exact and unique, some that build on an
    earlier block's new text or drift in trailing blanks; in one case of three (``risky``) also blocks
    that repeat, stand twice or nowhere."""
    rng = random.Random(seed)
    risky = seed % 3 == 0
    size = rng.randint(200, 600)
    lines = [f"line_{n} = {n}" if rng.random() < 0.7 else rng.choice(_LINES) for n in range(size)]
    # one case in four has CRLF lines (all of them, or some) for the blocks' LF lines: the line-endings tier
    crlf = (seed // 2) % 4 == 1 and rng.choice(["all", "some", "blocks"])
    endings = ["\r\n" if crlf == "all" or (crlf == "some" and rng.random() < 0.5) else "\n" for _ in lines]
    text = "".join(line + ending for line, ending in zip(lines, endings, strict=True))
    if rng.random() < 0.1:
        text = text.removesuffix("\n").removesuffix("\r")  # no newline at the end
    blocks: list[Hunk] = []
    written: list[str] = []
    taken: set[int] = set()
    for number in range(rng.randint(3 * INDEXED_HUNKS, 6 * INDEXED_HUNKS)):
        kind = rng.random()
        first = rng.randrange(size)
        span = lines[first : first + rng.randint(1, 3)]
        if not risky and (
            taken & set(range(first - 3, first + 4)) or not any(line.startswith("line_") for line in span)
        ):
            continue  # one place, untouched by the blocks before
        taken.add(first)
        old = "".join(line + "\n" for line in span)
        if kind < 0.02 and written:
            old = rng.choice(written)  # builds on what an earlier block wrote
        elif kind < 0.05:
            old = old.replace("\n", "   \n", 1)  # trailing blanks the file does not have
        elif risky and kind < 0.15:
            old = "not in the file\n"
        elif risky and kind < 0.18 and blocks:
            blocks.append(blocks[-1])  # one block given twice
            continue
        new = "".join(f"{line}  # edit {number}\n" for line in old.rstrip("\n").split("\n"))
        if rng.random() < 0.1:
            new = ""  # a deletion
        else:
            written.append(new)
        if crlf == "blocks":  # CRLF blocks for an LF file
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        blocks.append(Hunk(old=old, new=new, whole_lines=True))
    return text, blocks


@pytest.mark.parametrize("seed", range(300))
def test_indexed_blocks_give_what_the_string_search_gives(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text, blocks = _case(seed)
    options = PlanOptions()
    assert _outcome(text, blocks, options) == _by_string(text, blocks, options, monkeypatch)


@pytest.mark.parametrize("seed", range(60))
def test_exact_only_options_too(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text, blocks = _case(1000 + seed)
    options = PlanOptions(exact=True)
    assert _outcome(text, blocks, options) == _by_string(text, blocks, options, monkeypatch)


def _located(
    text: str, hunks: list[Hunk], monkeypatch: pytest.MonkeyPatch | None = None
) -> tuple[object, ...]:
    def outcome() -> tuple[object, ...]:
        try:
            edit = edit_text(text, hunks, PlanOptions(), path="f.py")
        except NbeditError as error:
            return (type(error).__name__, str(error))
        return (edit.after, tuple((item.match, item.hunk) for item in edit.hunks), edit.notes)

    if monkeypatch is None:
        return outcome()
    with monkeypatch.context() as patched:
        patched.setattr(locate_hunks, "INDEXED_HUNKS", 10**9)
        return outcome()


@pytest.mark.parametrize("seed", range(80))
def test_hunks_located_in_the_original_read_the_same_places_from_the_table(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # apply_patch chunks (each after the one before) and hunks without line numbers, located against
    # the original text: the table gives the places the search gave, errors included
    text, blocks = _case(seed)
    after_previous = seed % 2 == 0
    hunks = [replace(block, search_from_previous=after_previous) for block in blocks]
    assert _located(text, hunks) == _located(text, hunks, monkeypatch)


def _numbered(lines: int) -> str:
    return "".join(f"value_{n} = compute({n})\nprint(value_{n})\n" for n in range(lines))


def _blocks(count: int, every: int, *, drift: frozenset[int] = frozenset()) -> list[Hunk]:
    blocks = []
    for number in range(count):
        n = number * every
        old = f"value_{n} = compute({n})\nprint(value_{n})" + ("  " if number in drift else "") + "\n"
        blocks.append(Hunk(old=old, new=f"value_{n} = compute({n}) + 1\nprint(value_{n})\n"))
    return blocks


def test_blocks_placed_from_the_index_search_no_text() -> None:
    # 2,000 blocks in a 1.5 MB text: one search of the whole text per block would be 3 * 10^9
    # characters; a work limit of the text's size refuses nothing, so none was searched
    text = _numbered(40_000)
    blocks = _blocks(2_000, 20)
    edit = edit_text(text, blocks, PlanOptions(max_sequential_work=len(text)), path="f.py", sequential=True)
    assert len(edit.hunks) == 2_000 and all(item.tier.value == "exact" for item in edit.hunks)
    expected = text.split("\n")
    for number in range(2_000):
        expected[2 * 20 * number] += " + 1"
    assert edit.after == "\n".join(expected)


def test_blocks_the_index_cannot_place_are_searched_and_counted_against_the_limit() -> None:
    # blocks whose old text has trailing blanks the file lacks are found by a lenient tier, on the
    # text as a string: each is a search of the whole text, counted against max_sequential_work;
    # the blocks after them are placed from the index again
    text = _numbered(2_000)
    blocks = _blocks(40, 20, drift=frozenset({5, 20}))
    fits = edit_text(
        text, blocks, PlanOptions(max_sequential_work=3 * len(text)), path="f.py", sequential=True
    )
    assert [item.match.tier.value for item in fits.hunks].count("trailing-whitespace") == 2
    assert len(fits.hunks) == 40
    with pytest.raises(FileTooLarge) as caught:
        edit_text(
            text, blocks, PlanOptions(max_sequential_work=len(text) + 100), path="f.py", sequential=True
        )
    error = caught.value
    assert error.unit == "block-characters" and error.limit == len(text) + 100
    assert "2 SEARCH/REPLACE blocks that could not be placed from an index" in str(error)
    assert "nothing was written" in str(error) and "max_sequential_work" in str(error)


def test_a_refusal_of_many_blocks_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(_numbered(500))
    before = (tmp_path / "f.py").read_bytes()
    blocks = _blocks(30, 10)
    blocks[29] = Hunk(old="nowhere in the file\n", new="x\n")
    body = "".join(f"<<<<<<< SEARCH\n{block.old}=======\n{block.new}>>>>>>> REPLACE\n" for block in blocks)
    workspace = Workspace(tmp_path, history=False)
    with pytest.raises(NbeditError) as caught:
        workspace.plan_patch(f"f.py\n```python\n{body}```\n")
    assert type(caught.value).__name__ == "NoMatch"
    assert (tmp_path / "f.py").read_bytes() == before


def test_line_table_places_are_the_searched_places() -> None:
    rng = random.Random(7)
    answered = 0
    for _ in range(100):
        lines = [
            f"n{n % 2_000}" if rng.random() < 0.8 else rng.choice(_LINES)
            for n in range(rng.randint(0, 3_000))
        ]
        text = "\n".join(lines) + rng.choice(["", "\n"])
        olds = [
            "".join(line + "\n" for line in lines[n : n + rng.randint(1, 3)])
            for n in range(0, len(lines), 97)
        ]
        olds = [old for old in olds if old]
        table = LineTable.for_hunks(text, [Hunk(old=old, new="") for old in olds])
        for old in olds:
            low = rng.choice([0, rng.randint(0, len(text))])
            high = rng.choice([len(text), rng.randint(low, len(text))])
            found = table.hits(old, low, high, 51)
            expected = []
            position = text.find(old, low, high)
            while position != -1:
                if position == 0 or text[position - 1] == "\n":
                    expected.append((position, text.count("\n", 0, position)))
                position = text.find(old, position + 1, high)
            if found is not None:  # None: the lines stand too often, the search is cheaper
                answered += 1
                assert found == expected[:51]
    assert answered > 100


def test_lines_in_order_keeps_the_text() -> None:
    text = "a\nb\nc\nd"  # no final newline: the last line is never taken in
    lines = LinesInOrder(
        text, [Hunk(old="b\nc\n", new="B\n"), Hunk(old="B\n", new=""), Hunk(old="a\n", new="z\ny\n")]
    )
    assert lines.text() == text
    assert lines.apply(Hunk(old="b\nc\n", new="B\n")) and lines.text() == "a\nB\nd"
    assert lines.apply(Hunk(old="B\n", new="")) and lines.text() == "a\nd"
    assert lines.apply(Hunk(old="a\n", new="z\ny\n")) and lines.text() == "z\ny\nd"
    assert not lines.apply(Hunk(old="d\n", new="e\n"))  # "d" has no newline: not a whole line here
    assert not lines.apply(Hunk(old="q\n", new="e\n"))  # not a line it indexes


def test_the_benchmark_peer_applies_blocks_in_order_as_nbedit_does() -> None:
    # the scale benchmark's peer (Aider's exact step) must do the same work on its blocks
    from benchmarks.aider_replace import apply_blocks
    from benchmarks.bench_blocks import python_blocks

    before, after, pairs = python_blocks(40)
    assert apply_blocks(before, pairs) == after
    blocks = [Hunk(old=old, new=new) for old, new in pairs]
    assert edit_text(before, blocks, PlanOptions(), path="f.py", sequential=True).after == after
    assert apply_blocks("a\nb\na\n", [("a\n", "A\n"), ("a\n", "c\n")]) == "A\nb\nc\n"  # first window wins
