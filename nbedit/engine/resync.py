"""Line opcodes for long texts that mostly agree: difflib with a resync shortcut.

Split from ``nbedit.engine.diff`` so that importing the diff writer does not import
difflib: the CLI's exact path never aligns lines (start-up, issue 12).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

__all__ = ["RESYNC_RUN", "RESYNC_WINDOW", "ResyncMatcher", "bounded_opcodes"]

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
    """

    def __init__(self, old: Sequence[str], new: Sequence[str]) -> None:
        # deliberately not SequenceMatcher.__init__: it indexes every line of ``new``,
        # which these opcodes never use; get_grouped_opcodes needs only a, b, get_opcodes
        self.isjunk, self.autojunk = None, False
        self.a, self.b = old, new
        self.matching_blocks = self.opcodes = None
        self._resynced: list[_Opcode] | None = None

    def get_opcodes(self) -> list[_Opcode]:
        if self._resynced is None:
            self._resynced = _resync_opcodes(list(self.a), list(self.b))
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

    A window over the limit is one ``replace``: still a correct edit script, and the
    cost stays linear in the lines however the two sides differ (a diff of a single
    huge hunk whose lines change every few lines, issue 27).
    """
    return _resync_opcodes(list(old), list(new), limit)


def _resync_opcodes(old: list[str], new: list[str], limit: int | None = None) -> list[_Opcode]:
    opcodes: list[_Opcode] = []

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
            differ(i, len(old), j, len(new))  # nothing agrees nearby: difflib takes the rest
            break
        differ(i, i + found[0], j, j + found[1])
        i, j = i + found[0], j + found[1]
    return opcodes
