"""Line opcodes for long texts that mostly agree: difflib with a resync shortcut.

Split from ``nbedit.engine.diff`` so that importing the diff writer does not import
difflib: the CLI's exact path never aligns lines (start-up, issue 12).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

__all__ = ["RESYNC_RUN", "RESYNC_WINDOW", "ResyncMatcher", "aligned_opcodes", "bounded_opcodes"]

if TYPE_CHECKING:
    _Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


class ResyncMatcher(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """A ``SequenceMatcher`` for long sequences that mostly agree.

    Equal runs are skipped with galloping slice comparisons (C speed); at a
    mismatch the two sides are resynchronised by looking for the next few lines
    of each side in a bounded window of the other (``list.index``, C speed),
    confirmed by ``RESYNC_RUN`` equal lines. Only the small differing windows go
    to difflib. The Python work grows with the number of edits, not of lines, so
    a restore of a 10 MB file with scattered edits diffs in milliseconds. The
    result is always a correct edit script, if not always the shortest; when no
    resync is found nearby, difflib takes the rest. ``get_grouped_opcodes``
    works unchanged on top.

    ``limit``: the most lines (both sides) one difflib call may see, as ``bounded_opcodes``
    (a rest with no resync nearby that is longer is cut at anchors first: linear instead of
    quadratic, issue 27); None, difflib takes any rest whole. The opcodes are the same as
    without it whenever no such rest is longer than the limit.
    """

    def __init__(self, old: Sequence[str], new: Sequence[str], limit: int | None = None) -> None:
        # deliberately not SequenceMatcher.__init__: it indexes every line of ``new``,
        # which these opcodes never use; get_grouped_opcodes needs only a, b, get_opcodes
        self.isjunk, self.autojunk = None, False
        self.a, self.b = old, new
        self.matching_blocks = self.opcodes = None
        self._limit = limit
        self._resynced: list[_Opcode] | None = None

    def get_opcodes(self) -> list[_Opcode]:
        if self._resynced is None:
            self._resynced = _resync_opcodes(list(self.a), list(self.b), self._limit)
        return self._resynced


RESYNC_WINDOW = 256  # lines looked ahead on each side for a place where the texts agree again
RESYNC_RUN = 3  # equal lines that confirm such a place


def _equal_run(old: list[str], new: list[str], i: int, j: int) -> int:
    """How many lines are equal from ``old[i]`` and ``new[j]`` on (galloping, slice compares)."""
    limit = min(len(old) - i, len(new) - j)
    run, step = 0, 1
    while run < limit:
        size = min(step, limit - run)
        if old[i + run : i + run + size] == new[j + run : j + run + size]:
            run += size
            step *= 2
        elif size == 1:
            break
        else:
            step = max(1, size // 2)
    return run


def _resync(old: list[str], new: list[str], i: int, j: int) -> tuple[int, int] | None:
    """The nearest (skip_old, skip_new) after which both sides agree for a few lines."""
    best: tuple[int, int] | None = None
    for skip in range(min(RESYNC_WINDOW, len(old) - i)):
        if best is not None and skip >= sum(best):
            break
        line = old[i + skip]
        try:
            position = new.index(line, j, min(len(new), j + RESYNC_WINDOW))
        except ValueError:
            continue
        if _confirmed(old, new, i + skip, position) and (best is None or skip + position - j < sum(best)):
            best = (skip, position - j)
    for skip in range(min(RESYNC_WINDOW, len(new) - j)):
        if best is not None and skip >= sum(best):
            break
        line = new[j + skip]
        try:
            position = old.index(line, i, min(len(old), i + RESYNC_WINDOW))
        except ValueError:
            continue
        if _confirmed(old, new, position, j + skip) and (best is None or position - i + skip < sum(best)):
            best = (position - i, skip)
    return best


def _confirmed(old: list[str], new: list[str], i: int, j: int) -> bool:
    run = min(RESYNC_RUN, len(old) - i, len(new) - j)
    at_both_ends = i + run == len(old) and j + run == len(new)
    return old[i : i + run] == new[j : j + run] and (run == RESYNC_RUN or at_both_ends)


def bounded_opcodes(old: Sequence[str], new: Sequence[str], limit: int) -> list[_Opcode]:
    """``ResyncMatcher``'s opcodes, where no window longer than ``limit`` lines (both sides) goes to difflib.

    Where no resync is found nearby and the rest is over the limit, the rest is first cut
    at anchors (lines that occur once in each side's rest, in the same order: patience
    diff's anchors, ``_anchors``) and the gaps between them are aligned the same way; a
    gap still over the limit is one ``replace``: still a correct edit script, and the
    cost stays linear in the lines (times a log) however the two sides differ (a diff of
    a single huge hunk whose lines change every few lines, issue 27).
    """
    return _resync_opcodes(list(old), list(new), limit)


def _anchors(old: Sequence[object], new: Sequence[object]) -> list[tuple[int, int]]:
    """(old, new) positions of lines that occur once in ``old`` and once in ``new``, the longest
    run of them in the same order on both sides (patience sorting: n log n)."""
    from bisect import bisect_left

    seen: dict[object, int] = {}
    for index, line in enumerate(old):
        seen[line] = -1 if line in seen else index
    in_new: dict[object, int] = {}
    for index, line in enumerate(new):
        if seen.get(line, -1) >= 0:
            in_new[line] = -1 if line in in_new else index
    pairs = [(seen[line], index) for line, index in in_new.items() if index >= 0]
    pairs.sort()
    tops: list[int] = []  # smallest new position ending an increasing run of each length
    top_at: list[int] = []  # the pair holding it
    before: list[int] = []  # each pair's predecessor in its run
    for number, (_, position) in enumerate(pairs):
        length = bisect_left(tops, position)
        before.append(top_at[length - 1] if length else -1)
        if length == len(tops):
            tops.append(position)
            top_at.append(number)
        else:
            tops[length], top_at[length] = position, number
    chain: list[tuple[int, int]] = []
    at = top_at[-1] if top_at else -1
    while at >= 0:
        chain.append(pairs[at])
        at = before[at]
    chain.reverse()
    return chain


def _cut_at_anchors(
    old: list[Any], new: list[Any], align: Callable[[list[Any], list[Any]], list[_Opcode]]
) -> list[_Opcode]:
    """Opcodes of ``old`` against ``new``: equal at ``_anchors``, ``align`` on each gap between."""
    opcodes: list[_Opcode] = []

    def add(tag: str, i0: int, i1: int, j0: int, j1: int) -> None:
        if tag == "equal" and opcodes and opcodes[-1][0] == "equal":
            last = opcodes.pop()
            opcodes.append(("equal", last[1], i1, last[3], j1))
        elif i0 != i1 or j0 != j1:
            opcodes.append((tag, i0, i1, j0, j1))  # type: ignore[arg-type]

    old_at = new_at = 0
    for anchor_old, anchor_new in [*_anchors(old, new), (len(old), len(new))]:
        if anchor_old > old_at or anchor_new > new_at:
            for tag, a0, a1, b0, b1 in align(old[old_at:anchor_old], new[new_at:anchor_new]):
                add(tag, old_at + a0, old_at + a1, new_at + b0, new_at + b1)
        if anchor_old < len(old):
            add("equal", anchor_old, anchor_old + 1, anchor_new, anchor_new + 1)
        old_at, new_at = anchor_old + 1, anchor_new + 1
    return opcodes


def aligned_opcodes(old: Sequence[Any], new: Sequence[Any], limit: int) -> list[_Opcode]:
    """difflib's opcodes for sequences up to ``limit`` items (both sides); longer ones cut first at
    ``_anchors`` (items once in each side, in the same order), each gap by difflib if it is within
    the limit, else as ``bounded_opcodes``. Close to difflib's alignment (for lines of code or
    cells, difflib's longest matching blocks hold such anchors), at a cost linear in the items
    times the limit instead of quadratic: for an alignment read by people (a refusal message,
    which cells a notebook diff kept), where ``ResyncMatcher``'s nearest-resync can pair distant
    blank lines (issue 27)."""
    old, new = list(old), list(new)

    def align(a: list[Any], b: list[Any]) -> list[_Opcode]:
        if len(a) + len(b) > limit:
            return _resync_opcodes(a, b, limit, anchored=True)
        if not a or not b:
            return [("insert" if not a else "delete", 0, len(a), 0, len(b))] if a or b else []
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()  # type: ignore[return-value]

    if len(old) + len(new) <= limit:
        return align(old, new)
    return _cut_at_anchors(old, new, align)


def _resync_opcodes(
    old: list[str], new: list[str], limit: int | None = None, *, anchored: bool = False
) -> list[_Opcode]:
    opcodes: list[_Opcode] = []

    def rest_by_anchors(i0: int, j0: int) -> None:
        """The rest, over the limit, cut at unique lines; each gap aligned on its own."""
        gaps = _cut_at_anchors(old[i0:], new[j0:], lambda a, b: _resync_opcodes(a, b, limit, anchored=True))
        for tag, a0, a1, b0, b1 in gaps:
            if tag == "equal" and opcodes and opcodes[-1][0] == "equal":
                last = opcodes.pop()
                opcodes.append(("equal", last[1], i0 + a1, last[3], j0 + b1))
            else:
                opcodes.append((tag, i0 + a0, i0 + a1, j0 + b0, j0 + b1))

    def differ(i0: int, i1: int, j0: int, j1: int) -> None:
        if i0 == i1 and j0 == j1:
            return
        if i0 == i1 or j0 == j1:
            opcodes.append(("insert" if i0 == i1 else "delete", i0, i1, j0, j1))
            return
        if limit is not None and (i1 - i0) + (j1 - j0) > limit:
            opcodes.append(("replace", i0, i1, j0, j1))
            return
        inner = difflib.SequenceMatcher(None, old[i0:i1], new[j0:j1], autojunk=(i1 - i0) + (j1 - j0) > 4000)
        for tag, a0, a1, b0, b1 in inner.get_opcodes():
            if tag == "equal" and opcodes and opcodes[-1][0] == "equal":
                last = opcodes.pop()
                opcodes.append(("equal", last[1], i0 + a1, last[3], j0 + b1))
            else:
                opcodes.append((tag, i0 + a0, i0 + a1, j0 + b0, j0 + b1))

    i = j = 0
    while i < len(old) or j < len(new):
        run = _equal_run(old, new, i, j)
        if run:
            if opcodes and opcodes[-1][0] == "equal":
                last = opcodes.pop()
                opcodes.append(("equal", last[1], i + run, last[3], j + run))
            else:
                opcodes.append(("equal", i, i + run, j, j + run))
            i, j = i + run, j + run
            continue
        found = _resync(old, new, i, j) if i < len(old) and j < len(new) else None
        if found is None:
            if limit is not None and not anchored and (len(old) - i) + (len(new) - j) > limit:
                rest_by_anchors(i, j)  # nothing agrees nearby, and the rest is too long for difflib
            else:
                differ(i, len(old), j, len(new))  # nothing agrees nearby: difflib takes the rest
            break
        differ(i, i + found[0], j, j + found[1])
        i, j = i + found[0], j + found[1]
    return opcodes
