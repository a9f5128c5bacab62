"""Unified diffs read in bulk: a line index for big texts, runs of hunks at C speed, +/- counts.

A ``git diff`` of hundreds of hunks is mostly runs of hunks that follow each
other directly with plain body lines. Such a run is read as a whole
(``read_run``): every side's texts with one join and one split, counts checked
against the headers by C-level maps. Anything unusual in a hunk leaves that
hunk to the line-driven readers of ``unified.py``, so errors and edge cases are
theirs. The run reader also records each hunk's '+' and '-' line counts where a
diff of the hunk provably shows them (``Hunk.changed_lines``): the history
entry's counts then need no second look at the texts.

Memory: a list of a text's lines costs a string object a line (about 90 bytes
for a 40-character line, over twice the text). A text of a mebibyte or more is
read through a ``LineIndex`` instead (where each line starts, 4 bytes a line;
a line's string is made when it is read), and a run is read at most
``RUN_LINES`` lines at a time, so what the reader holds besides the text and the
hunks it made stays the same size however long the patch is. Such a text's hunks are kept as
places (``engine.hunk_table``), so its runs are read for their numbers only (``read_run_places``:
the same checks, no side's text and no ``Hunk`` made).
"""

from __future__ import annotations

import sys
from _operator import (  # the operator module's C functions, without operator.py (start-up)
    add,
    eq,
    itemgetter,
    not_,
    sub,
)
from itertools import accumulate, compress, islice, repeat

from nbedit._dataclass import made_in_bulk
from nbedit.engine.diff_lines import HAND_READ, HUNK_HEADER, RUN_END, header_numbers, run_end
from nbedit.engine.models import Hunk

try:  # bisect's own function, without bisect.py (start-up)
    from _bisect import bisect_right
except ImportError:  # an interpreter without the C module
    from bisect import bisect_right

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import overload

__all__ = [
    "HUNK_HEADER",
    "INDEXED_FROM",
    "RUN_LINES",
    "LineIndex",
    "plain_hunk_body",
    "RunPlaces",
    "read_run",
    "read_run_places",
    "text_lines",
]

# HUNK_HEADER (a pattern's text) and RUN_END are in ``diff_lines``, with their readers by hand: a text of
# up to HAND_READ characters is read without ``re`` (a small command's start-up), a longer one by the
# patterns, compiled (and cached by re) when first needed. The header as a whole line after the newline
# before it: a literal start, which ``re`` finds with a fast scan (a ``^`` under MULTILINE is tried at
# every character).
_HEADER_LINE = r"\n" + HUNK_HEADER + r"[^\n]*"
_AFTER_MARKER = slice(1, None)
# ``compress`` selectors made from a run's markers (one byte a line: ' ', '-', '+' or '@') by one
# C-level ``bytes.translate``; a ``map(ne, markers, repeat("+"))`` made a Python-level call a line
_OLD_SIDE = bytes.maketrans(b" -+@", b"\x01\x01\x00\x01")  # not '+' (a header: its NUL line)
_NEW_SIDE = bytes.maketrans(b" -+@", b"\x01\x00\x01\x01")  # not '-'
_REMOVED = bytes.maketrans(b" -+@", b"\x00\x01\x00\x00")  # '-'
_ADDED = bytes.maketrans(b" -+@", b"\x00\x00\x01\x00")  # '+'

INDEXED_FROM = 1 << 20  # characters: a text this long is read through a LineIndex
RUN_LINES = 1 << 12  # the most lines of a big text one run reads at once
_CHUNK = 1 << 18  # characters split at a time while a LineIndex is built (its line strings: ~1 MB)


class LineIndex:
    """The lines of ``text`` as ``text.split("\\n")`` gives them (without a last empty one), on demand.

    Holds where each line starts (``starts``, one more entry than lines: the end) and
    makes a line's string when it is read; a slice is one ``split`` of the text it
    spans. Built a mebibyte at a time, so the per-line strings of only one piece are
    alive at once. A plain class with the sequence methods the readers use (an ABC subclass
    costs more to create than a diff of a few hunks takes to read).
    """

    __slots__ = ("_size", "starts", "text")

    def __init__(self, text: str) -> None:
        from array import array  # here: a diff read by hand never builds one (start-up: array ~0.3 ms)

        self.text = text
        starts = array("I" if len(text) < 0xFFFFFFFF else "q", [0])  # 4 bytes a line up to 4 GiB
        size = len(text)
        position = 0
        while position < size:
            end = text.find("\n", position + _CHUNK)
            end = size if end == -1 else end + 1
            pieces = text[position:end].split("\n")
            del pieces[-1]  # what follows the piece's last newline: the next piece's, or the last line
            following = accumulate(map(add, map(len, pieces), repeat(1)), initial=position)
            starts.extend(islice(following, 1, None))  # where each line after a newline starts
            position = end
        if text and not text.endswith("\n"):
            starts.append(size + 1)  # the last line has no newline: as if it had one
        self.starts = starts
        self._size = len(starts) - 1

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[str]:
        return iter(self[0 : self._size])

    if TYPE_CHECKING:  # typing costs milliseconds to import: the command line never needs it

        @overload
        def __getitem__(self, index: int) -> str: ...

        @overload
        def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        starts = self.starts
        if isinstance(index, slice):
            first, stop, step = index.indices(self._size)
            if step != 1:
                return [self[number] for number in range(first, stop, step)]
            if first >= stop:
                return []
            return self.text[starts[first] : starts[stop] - 1].split("\n")
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError("line index out of range")
        return self.text[starts[index] : starts[index + 1] - 1]


def text_lines(text: str) -> list[str] | LineIndex:
    """The lines of a change text (no last empty one): a list, or for a big text a ``LineIndex``."""
    if len(text) >= INDEXED_FROM:
        return LineIndex(text)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_run(text: str, lines: list[str] | LineIndex, index: int, start: int) -> tuple[list[Hunk], int]:
    """Hunks that follow each other directly from line ``index`` (which starts at offset ``start``).

    Returns the hunks and the index of the line after them. Every hunk of the run
    but the last is a header followed by plain body lines (' ', '-' or '+') up to
    the next header, in exactly the numbers its header says: the careful reader
    would read the same lines, find no '\\ No newline' marker and no extra line,
    and make the same texts. Each side's texts come from one join of the run's
    lines without their first character (the other side's lines left out, a NUL
    line where each header was) and one split at the NULs: C-level maps, no
    Python step per line. The last hunk of a run, and any hunk that is not exactly
    so, is left to the hunk readers, which give the precise errors; no hunks means
    nothing was consumed.
    """
    read = _read(text, lines, index, start, True)
    if read is None:
        return [], index
    places, olds, news = read
    # each field set for every hunk at once (a call of ``Hunk.__init__`` a hunk was a fifth of the read)
    hunks = made_in_bulk(
        Hunk,
        len(olds),
        olds,
        news,
        repeat(True),
        places.start_lines,
        repeat(()),
        repeat(False),
        repeat(False),
        repeat(False),
        places.source_lines,
        repeat(()),
        places.changed,
    )
    return hunks, places.end


class RunPlaces:
    """What a ``HunkTable`` keeps of a run's hunks (``read_run_places``): for each, its header's
    1-based line (``Hunk.source_line``), its ``start_line`` and its ``changed_lines``; ``end``:
    the index of the line after the run's hunks."""

    __slots__ = ("changed", "end", "source_lines", "start_lines")

    def __init__(
        self, source_lines: list[int], start_lines: list[int], changed: list[tuple[int, int] | None], end: int
    ) -> None:
        self.source_lines = source_lines
        self.start_lines = start_lines
        self.changed = changed
        self.end = end

    def __len__(self) -> int:
        return len(self.source_lines)


def read_run_places(text: str, lines: LineIndex, index: int, start: int) -> RunPlaces | None:
    """``read_run`` for a ``HunkTable``: the same hunks, checked the same way, but only the numbers
    the table keeps (it makes each hunk's texts again from its body when they are read), so
    neither side's texts nor the hunks are made here; None: no hunks, nothing consumed."""
    read = _read(text, lines, index, start, False)
    return None if read is None else read[0]


def _read(
    text: str, lines: list[str] | LineIndex, index: int, start: int, with_texts: bool
) -> tuple[RunPlaces, list[str], list[str]] | None:
    """``read_run``'s reading: the run's places, and with ``with_texts`` each hunk's old and new text."""
    if start == 0:
        return None  # the run's end is found by the newline before each line
    limit = len(text)
    if isinstance(lines, LineIndex) and index + RUN_LINES < len(lines):
        limit = lines.starts[index + RUN_LINES] - 1  # the newline that ends the last line read at once
    # the window's last line is checked too: a line ends the run by its first character, one past the
    # newline before it (an empty last line is that newline's own next one, at ``limit``)
    end = _run_end(text, start - 1, limit + 1 if limit < len(text) else limit)
    stop = limit if end is None else end
    size = text.count("\n", start, stop) + (stop < len(text) or not text.endswith("\n"))
    run = lines[index : index + size]
    markers = "".join(map(itemgetter(0), run))  # no line of a run is empty
    heads = _heads(markers)
    if len(heads) < 2 or heads[0] != 0 or text.find("\x00", start, stop) != -1 or not markers.isascii():
        return None  # not two hunks in a row; or a NUL, which marks the headers below
    marks = markers.encode()  # every line starts with ' ', '-', '+' or '@' (``_RUN_END``): a byte each
    last = heads[-1]  # the last hunk of the run is read by the hunk readers
    numbers = _numbers([run[head] for head in heads[:-1]], stop - start <= _hand_read())
    stripped = list(map(itemgetter(_AFTER_MARKER), run[:last]))
    del run
    for head in heads[:-1]:
        stripped[head] = "\x00"
    if len(numbers) != len(heads) - 1:
        return None  # cannot happen: every header but the last is a hunk's, read by the pattern
    olds: list[str] = []
    news: list[str] = []
    if with_texts:
        olds = ("\n".join(compress(stripped, marks.translate(_OLD_SIDE))) + "\n").split("\x00\n")
        news = ("\n".join(compress(stripped, marks.translate(_NEW_SIDE))) + "\n").split("\x00\n")
        del olds[0], news[0]
        if not (len(olds) == len(news) == len(numbers)):
            return None  # cannot happen: every header starts one hunk and is one NUL line
    # every hunk's line counts against its header's, in C-level maps over each hunk's markers (its
    # lines without '+' are its old text's, each ending in the one newline the join put after it)
    shapes = markers[:last].split("@")[1:]
    added = list(map(str.count, shapes, repeat("+")))
    removed = list(map(str.count, shapes, repeat("-")))
    old_sizes = list(map(sub, map(len, shapes), added))
    new_sizes = list(map(sub, map(len, shapes), removed))
    expected_old = list(map(int, [number[1] or "1" for number in numbers]))
    expected_new = list(map(int, [number[3] or "1" for number in numbers]))
    if old_sizes != expected_old or new_sizes != expected_new:
        fits = 0  # the hunks before the first whose counts do not fit its body
        while old_sizes[fits] == expected_old[fits] and new_sizes[fits] == expected_new[fits]:
            fits += 1
        if not fits:
            return None  # the careful reader says how the counts are off
        del olds[fits:], news[fits:], numbers[fits:], shapes[fits:], added[fits:], removed[fits:]
        del old_sizes[fits:]
    count = len(numbers)
    header_lines = list(map(add, heads[:count], repeat(index + 1)))
    read = heads[count]  # the lines of the hunks read here (up to the next header)
    # a pure insertion's start (no old line: an empty old text) is the line after the one its header names
    starts = list(map(add, map(int, [number[0] for number in numbers]), map(not_, old_sizes)))
    changed = _changed_lines(markers[:read], stripped[:read], heads[:count], shapes, added, removed)
    return RunPlaces(header_lines, starts, changed, index + read), olds, news


def _hand_read() -> int:
    """How much of a run is read by hand: ``HAND_READ`` characters while ``re`` is not loaded (a
    command's start-up), none once it is (in a kernel or a server: the compiled pattern is faster)."""
    return -1 if "re" in sys.modules else HAND_READ


def _run_end(text: str, position: int, end: int) -> int | None:
    """Where ``RUN_END`` first matches in ``text[:end]`` from ``position`` (its newline), or None."""
    stop = position + max(_hand_read(), 0)  # by hand up to here (most runs end sooner), then by the pattern
    found_by_hand = run_end(text, position, end, stop)
    if found_by_hand is not None or stop >= end:
        return found_by_hand
    import re

    found = re.compile(RUN_END).search(text, stop, end)
    return None if found is None else found.start()


def _heads(markers: str) -> list[int]:
    """Where the hunk headers ('@') are among a run's line markers."""
    heads: list[int] = []
    place = markers.find("@")
    while place >= 0:
        heads.append(place)
        place = markers.find("@", place + 1)
    return heads


def _numbers(headers: list[str], by_hand: bool) -> list[tuple[str, str | None, str, str | None]]:
    """The numbers of a run's hunk headers (each a whole line that matches ``HUNK_HEADER``)."""
    if by_hand:
        return header_numbers(headers)
    import re

    return re.compile(_HEADER_LINE).findall("\n" + "\n".join(headers))


def plain_hunk_body(
    lines: list[str] | LineIndex, index: int, old_count: int, new_count: int
) -> tuple[str, str, int] | None:
    """The common hunk's body from line ``index``, read with as little Python per line as possible.

    Only ' ', '-', '+' and empty lines, counts that add up exactly, and no
    '\\ No newline' marker after it; anything else returns None (nothing
    consumed) and the careful reader takes over, with its precise errors.
    Returns the old and new texts and the index of the line after the body.
    """
    start = position = index
    old_left, new_left = old_count, new_count
    total = len(lines)
    plain = True  # no empty line (an editor's stripped context line) in the body
    # Take the body in runs: with L = max(old_left, new_left), the next L lines are all
    # body lines (each fills at most one line of each side), so a run is counted with C
    # calls, and the loop stops exactly where a line-by-line reader would.
    while (old_left > 0 or new_left > 0) and position < total:
        run = lines[position : position + max(old_left, new_left)]
        markers = "".join([line[:1] for line in run])
        removed, added = markers.count("-"), markers.count("+")
        context = markers.count(" ")
        if len(markers) != len(run):
            empty = sum(1 for line in run if not line)
            plain = False
            context += empty
        if removed + added + context != len(run):
            return None  # a '\\', '\r' or other line: the careful reader decides
        old_left -= removed + context
        new_left -= added + context
        position += len(run)
    if old_left or new_left or (position < total and lines[position].startswith("\\")):
        return None
    body = lines[start:position]
    if plain:
        old = "\n".join([line[1:] for line in body if line[0] != "+"]) + "\n" if old_count else ""
        new = "\n".join([line[1:] for line in body if line[0] != "-"]) + "\n" if new_count else ""
    else:
        old = "".join(
            [line[1:] + "\n" if line[:1] in " -" else line + "\n" for line in body if line[:1] != "+"]
        )
        new = "".join(
            [line[1:] + "\n" if line[:1] in " +" else line + "\n" for line in body if line[:1] != "-"]
        )
    return old, new, position


def _changed_lines(
    markers: str, lines: list[str], heads: list[int], shapes: list[str], added: list[int], removed: list[int]
) -> list[tuple[int, int] | None]:
    """Each hunk's ``Hunk.changed_lines`` in a run: its '+' and '-' line counts where they are certain.

    ``markers`` holds the first character of every line of the hunks ('@' at each
    header, at ``heads``), ``lines`` the lines without it; ``shapes`` each hunk's
    markers after its header, ``added`` and ``removed`` how many are '+' and '-'. A hunk
    whose changed lines are one run between its context lines, none of its removed lines
    equal to an added one, has old = context + removed + context and new = context + added + context;
    a unified diff of the two (equal lines trimmed from both ends, the rest aligned)
    trims exactly the context, as the first and last changed lines differ, and the
    rest shares no line, so it shows the removed and the added lines as they are.
    When only one side has changed lines the context alone is equal at the ends, and
    the other side's lines are the difference: the counts hold whatever the lines.
    Which lines are removed and added is found with sets (C level): over the whole
    run first, and only when some line is both, per hunk; the hunks that remove and
    add the same line are left unknown (None).
    """
    # one tuple per distinct pair, shared by the hunks that have it (most change one line: (1, 1))
    alike: dict[tuple[int, int], tuple[int, int]] = {}
    pairs = list(zip(added, removed, strict=True))
    counts: list[tuple[int, int] | None] = list(map(alike.setdefault, pairs, pairs))
    # one run of changes: no context line between the first and the last changed line
    for number in compress(range(len(shapes)), map(str.__contains__, map(str.strip, shapes), repeat(" "))):
        counts[number] = None
    marks = markers.encode()  # ASCII: one byte a line (``read_run`` checked)
    removed_lines = set(compress(lines, marks.translate(_REMOVED)))
    shared = removed_lines.intersection(compress(lines, marks.translate(_ADDED)))
    if not shared:
        return counts
    # some line is removed in one place and added in another: which hunks do both with a line
    places = _places(lines, shared)
    owned = list(zip(map(bisect_right, repeat(heads), places), map(lines.__getitem__, places), strict=True))
    kinds = list(map(markers.__getitem__, places))
    removed_here = set(compress(owned, map(eq, kinds, repeat("-"))))
    for number, _ in removed_here.intersection(compress(owned, map(eq, kinds, repeat("+")))):
        counts[number - 1] = None
    return counts


def _places(lines: list[str], wanted: set[str]) -> list[int]:
    """Where the lines in ``wanted`` are in ``lines``.

    A few wanted lines (the usual case: a blank or a ``return`` moved about) are found
    by ``list.index`` (C comparisons; no line hashed); many, by one set lookup a line.
    """
    if len(wanted) > 4:
        return list(compress(range(len(lines)), map(wanted.__contains__, lines)))
    places: list[int] = []
    for line in wanted:
        place = -1
        try:
            while True:
                place = lines.index(line, place + 1)
                places.append(place)
        except ValueError:
            pass
    return places
