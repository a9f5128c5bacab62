"""Line opcodes of two long texts read in place: the equal stretches are never split into lines.

``resync.ResyncMatcher`` aligns two lists of lines; a restore of a 10 MB file whose
versions differ in a dozen places spread over it has a "middle" (from the first
difference to the last) of nearly the whole file, and splitting both sides into
250,000 lines each, then walking the lists, cost more than everything else the restore
does. Here the same algorithm runs on the texts themselves: an equal run is found by
comparing characters (``startswith`` at an offset, a C ``memcmp``, in windows that
double, then halve), and its lines are counted, not made (``str.count``); only at a
difference are the next ``RESYNC_WINDOW + RESYNC_RUN`` lines of each side split, and
``resync``'s own ``_resync`` and difflib align them. The opcodes are the ones
``ResyncMatcher`` gives for the split texts (``tests/test_text_opcodes.py`` compares them),
so diffs and counts do not change, except that no difflib call gets more than
``diff_counts.ALIGN_LINES`` lines (``resync.bounded_opcodes``'s cap: where nothing agrees
nearby, a longer rest is cut at unique lines first, issue 27); each opcode also carries its
character offsets, so a diff writer fetches only the lines it shows (``TextOpcodes.lines``).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from nbedit.engine.resync import RESYNC_RUN, RESYNC_WINDOW, _resync

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from nbedit.engine.resync import _Opcode

__all__ = ["TextOpcodes", "grouped"]

_FIRST_PROBE = 512  # characters compared first when galloping over an equal run
_DENSE_AFTER = 64  # resyncs after which texts that differ every _DENSE_CHARS or less go to lists
_DENSE_CHARS = 8192
_SMALL_WINDOW = 32  # lines of the first, cheaper resync window (see _build)
_GUESSED_LINE = 48  # characters per line guessed when cutting a resync window out of a text


class TextOpcodes:
    """The opcodes of ``old`` against ``new`` by lines (split on ``"\\n"`` only, as
    ``text.split_lines``), with the lines of any opcode's range fetched on demand.

    ``old_span``/``new_span``: (start, stop) of the parts compared, each starting at a line
    start (line numbers count from there), so a caller need not copy them out first.
    ``old``/``new`` may both be UTF-8 bytes instead: the lines and so the opcodes are the
    same as for the decoded texts (a newline byte never occurs inside a longer character),
    which lets the history count a restore's lines without decoding the file.
    """

    def __init__(
        self,
        old: str,
        new: str,
        old_span: tuple[int, int] | None = None,
        new_span: tuple[int, int] | None = None,
    ) -> None:
        self.old, self.new = old, new
        self._old_span = old_span or (0, len(old))
        self._new_span = new_span or (0, len(new))
        self.opcodes: list[_Opcode] = []
        # per opcode: character offsets (old start, old end, new start, new end)
        self._offsets: list[tuple[int, int, int, int]] = []
        self._starts: list[int] = []  # old start line of each opcode, for bisect
        self._listed: tuple[int, list[Any], int, list[Any]] | None = None
        self._build()

    # -- building ------------------------------------------------------------------------

    def _add(self, tag: str, i1: int, i2: int, j1: int, j2: int, offsets: tuple[int, int, int, int]) -> None:
        if tag == "equal" and self.opcodes and self.opcodes[-1][0] == "equal":
            _, last_i1, _, last_j1, _ = self.opcodes.pop()
            first = self._offsets.pop()
            self._starts.pop()
            i1, j1, offsets = last_i1, last_j1, (first[0], offsets[1], first[2], offsets[3])
        self.opcodes.append((tag, i1, i2, j1, j2))  # type: ignore[arg-type]
        self._offsets.append(offsets)
        self._starts.append(i1)

    def _build(self) -> None:
        old, new = self.old, self.new
        (at_old, old_end), (at_new, new_end) = self._old_span, self._new_span  # offsets of lines i, j
        i = j = 0  # line numbers
        first, resyncs = at_old, 0
        while at_old < old_end or at_new < new_end:  # a line is never empty: offsets stand for counts
            if resyncs >= _DENSE_AFTER and at_old - first < resyncs * _DENSE_CHARS:
                self._as_lists(i, j, at_old, at_new)  # differences every few lines: lists are cheaper
                return
            run, chars = _equal_lines(old, new, at_old, at_new, old_end, new_end)
            if run:
                self._add("equal", i, i + run, j, j + run, (at_old, at_old + chars, at_new, at_new + chars))
                i, j, at_old, at_new = i + run, j + run, at_old + chars, at_new + chars
                continue
            found = None
            if at_old < old_end and at_new < new_end:
                # a small window first: a place found there nearer than its size is the one the
                # full window gives too (every nearer candidate lies inside both, confirmed alike)
                for size in (_SMALL_WINDOW, RESYNC_WINDOW):
                    old_window = _lines_from(old, at_old, old_end, size + RESYNC_RUN)
                    new_window = _lines_from(new, at_new, new_end, size + RESYNC_RUN)
                    found = _resync(old_window, new_window, 0, 0)
                    if found is not None and sum(found) < size:
                        break
            if found is None:  # nothing agrees nearby: difflib takes the rest, unless it is long
                rest_old, rest_new = _split(old[at_old:old_end]), _split(new[at_new:new_end])
                if len(rest_old) + len(rest_new) > _align_lines():
                    self._as_lists(i, j, at_old, at_new)  # cut at unique lines first (issue 27)
                else:
                    self._differ(rest_old, rest_new, i, j, at_old, at_new)
                break
            skip_old, skip_new = found
            resyncs += 1
            self._differ(old_window[:skip_old], new_window[:skip_new], i, j, at_old, at_new)
            i, j = i + skip_old, j + skip_new
            at_old += sum(map(len, old_window[:skip_old]))
            at_new += sum(map(len, new_window[:skip_new]))

    def _as_lists(self, i: int, j: int, at_old: int, at_new: int) -> None:
        """The rest by ``resync``'s own walk over split lines (the same opcodes: the walk keeps no
        state but where it is), for texts that differ every few lines; capped as
        ``resync.bounded_opcodes`` (no difflib call over ``ALIGN_LINES`` lines), which is also
        how a rest too long for one difflib call is aligned."""
        from nbedit.engine.resync import _resync_opcodes

        old_lines = _split(self.old[at_old : self._old_span[1]])
        new_lines = _split(self.new[at_new : self._new_span[1]])
        self._listed = (i, old_lines, j, new_lines)  # read back by ``lines`` from here on
        old_starts = list(accumulate(map(len, old_lines), initial=at_old))
        new_starts = list(accumulate(map(len, new_lines), initial=at_new))
        for tag, a0, a1, b0, b1 in _resync_opcodes(old_lines, new_lines, _align_lines()):
            offsets = (old_starts[a0], old_starts[a1], new_starts[b0], new_starts[b1])
            self._add(tag, i + a0, i + a1, j + b0, j + b1, offsets)

    def _differ(
        self, old_lines: list[str], new_lines: list[str], i: int, j: int, at_old: int, at_new: int
    ) -> None:
        """``resync._resync_opcodes``'s ``differ`` on lines that start at line ``i``/``j``."""
        if not old_lines and not new_lines:
            return
        old_starts = list(accumulate(map(len, old_lines), initial=at_old))  # and where the last ends
        new_starts = list(accumulate(map(len, new_lines), initial=at_new))
        if not old_lines or not new_lines:
            tag = "insert" if not old_lines else "delete"
            offsets = (at_old, old_starts[-1], at_new, new_starts[-1])
            self._add(tag, i, i + len(old_lines), j, j + len(new_lines), offsets)
            return
        import difflib

        inner = difflib.SequenceMatcher(
            None, old_lines, new_lines, autojunk=len(old_lines) + len(new_lines) > 4000
        )
        for tag, a0, a1, b0, b1 in inner.get_opcodes():
            offsets = (old_starts[a0], old_starts[a1], new_starts[b0], new_starts[b1])
            self._add(tag, i + a0, i + a1, j + b0, j + b1, offsets)

    # -- reading lines back ------------------------------------------------------------

    def lines(self, a0: int, a1: int, b0: int, b1: int, *, new: bool = True) -> tuple[list[str], list[str]]:
        """(old lines ``a0:a1``, new lines ``b0:b1``) of one opcode, whole or cut at one end
        (as ``get_grouped_opcodes`` gives them), read from the texts without splitting the rest.
        ``new=False``: the old lines only (an equal opcode's new lines are the same)."""
        if self._listed is not None and a0 >= self._listed[0] and b0 >= self._listed[2]:
            old_base, old_lines, new_base, new_lines = self._listed
            return (
                old_lines[a0 - old_base : a1 - old_base],
                new_lines[b0 - new_base : b1 - new_base] if new else [],
            )
        index = self._holding(a0, a1, b0, b1)
        _, i1, i2, j1, j2 = self.opcodes[index]
        old_begin, old_end, new_begin, new_end = self._offsets[index]
        return (
            _lines_between(self.old, old_begin, old_end, i1, i2, a0, a1),
            _lines_between(self.new, new_begin, new_end, j1, j2, b0, b1) if new else [],
        )

    def _holding(self, a0: int, a1: int, b0: int, b1: int) -> int:
        index = max(bisect_right(self._starts, a0) - 1, 0)
        while index > 0 and self._starts[index - 1] == self._starts[index]:
            index -= 1  # several opcodes may start at one old line (an insert, then what follows)
        for candidate in range(index, len(self.opcodes)):
            _, i1, i2, j1, j2 = self.opcodes[candidate]
            if i1 <= a0 and a1 <= i2 and j1 <= b0 and b1 <= j2:
                return candidate
            if i1 > a0:
                break
        raise ValueError(f"lines {a0}:{a1} / {b0}:{b1} are not inside one opcode")


def _lines_between(
    text: str, begin: int, end: int, first: int, last: int, start: int, stop: int
) -> list[str]:
    """Lines ``start:stop`` of ``text``, inside lines ``first:last`` that span ``text[begin:end]``;
    walked to from the nearer end of that span, one ``find`` per line."""
    if start >= stop:
        return []
    mark = _newline(text)
    if start == first and stop == last:
        return _split(text[begin:end])
    if start - first <= last - stop:
        for _ in range(start - first):
            begin = text.index(mark, begin, end) + 1
        at = begin
        for _ in range(stop - start):
            newline = text.find(mark, at, end)
            at = end if newline == -1 else newline + 1
        return _split(text[begin:at])
    for _ in range(last - stop):
        newline = text.rfind(mark, begin, end - 1)
        end = begin if newline == -1 else newline + 1
    at = end
    for _ in range(stop - start):
        newline = text.rfind(mark, begin, at - 1)
        at = begin if newline == -1 else newline + 1
    return _split(text[at:end])


def _newline(text: str | bytes) -> Any:
    return "\n" if isinstance(text, str) else b"\n"


def _split(text: Any) -> list[Any]:
    """``text.split_lines`` (split on ``"\\n"`` only, endings kept), for UTF-8 bytes too, without
    its look for other line breaks: these pieces are split thousands of times."""
    newline = _newline(text)
    lines = text.split(newline)
    last = lines.pop()
    result = [line + newline for line in lines]
    if last:
        result.append(last)
    return result


def _equal_lines(old: str, new: str, at_old: int, at_new: int, old_end: int, new_end: int) -> tuple[int, int]:
    """(lines, characters) equal from ``old[at_old]`` and ``new[at_new]`` on (both at line starts)."""
    same = _common_run(old, new, at_old, at_new, old_end, new_end)
    if same and at_old + same == old_end and at_new + same == new_end:  # equal to the end
        newline = _newline(old)
        ends_with_newline = old.endswith(newline, at_old, old_end)
        return old.count(newline, at_old, old_end) + (0 if ends_with_newline else 1), same
    newline = _newline(old)
    last_newline = old.rfind(newline, at_old, at_old + same)
    if last_newline == -1:
        return 0, 0
    chars = last_newline + 1 - at_old
    return old.count(newline, at_old, at_old + chars), chars


def _common_run(old: str, new: str, at_old: int, at_new: int, old_end: int, new_end: int) -> int:
    """Characters equal from the two offsets on: probes that double until one differs, then a
    binary search inside the last window (each probe compares only what is still in doubt)."""
    limit = min(old_end - at_old, new_end - at_new)
    low, step = 0, _FIRST_PROBE
    while low < limit:
        high = min(low + step, limit)
        if new.startswith(old[at_old + low : at_old + high], at_new + low, new_end):
            low, step = high, step * 2
            continue
        high -= 1  # it differs before high: the run ends in [low, high]
        while low < high:
            middle = (low + high + 1) // 2
            if new.startswith(old[at_old + low : at_old + middle], at_new + low, new_end):
                low = middle
            else:
                high = middle - 1
        return low
    return low


def _lines_from(text: Any, start: int, stop: int, count: int) -> list[Any]:
    """Up to ``count`` lines of ``text[start:stop]`` from its start (a line start).

    A piece of a guessed length is split (in C) and grown until it holds ``count`` whole lines:
    a text that differs every few lines is resynchronised thousands of times, and walking each
    window line by line in Python cost more than splitting the whole text once.
    """
    size = _GUESSED_LINE * count
    while True:
        end = min(stop, start + size)
        lines = _split(text[start:end])
        if len(lines) > count or end == stop:  # the first ``count`` are whole lines
            return lines[:count]
        size *= 4


def _align_lines() -> int:
    from nbedit.engine.diff_counts import ALIGN_LINES

    return ALIGN_LINES


def grouped(opcodes: list[_Opcode], context: int) -> list[list[_Opcode]]:
    """``difflib.SequenceMatcher.get_grouped_opcodes`` of these opcodes (it reads nothing else)."""
    import difflib

    holder = difflib.SequenceMatcher.__new__(difflib.SequenceMatcher)
    holder.get_opcodes = lambda: list(opcodes)  # type: ignore[method-assign]
    return list(holder.get_grouped_opcodes(context))
