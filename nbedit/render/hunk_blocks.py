"""The rows of each hunk on its own (the review widget shows a toggle beside each), in one pass.

Split from ``rows`` (the file's whole view): a hunk shown alone still numbers its new-side lines
after every hunk above it, and its context stops where a neighbour's lines begin; ``_HunkNeighbours``
works that out for all hunks at once, so each hunk is a couple of bisections.
"""

from __future__ import annotations

import bisect

from nbedit.engine.models import FilePlan
from nbedit.engine.text import line_starts
from nbedit.render.rows import (
    CONTEXT_LINES,
    Block,
    _newline_delta,
    _Prepared,
    _source_text,
    _span_block,
    _spans,
    _widen,
)

__all__ = ["block_for_hunk", "blocks_for_hunks"]


def block_for_hunk(file_plan: FilePlan, index: int, *, context: int = CONTEXT_LINES) -> Block:
    """The rows of one hunk on its own (the widget shows a toggle beside each)."""
    if not 0 <= index < len(file_plan.hunks):
        raise IndexError(f"{file_plan.path} has {len(file_plan.hunks)} hunks; there is no hunk {index}")
    return _HunkNeighbours(file_plan).block(index, context)


def blocks_for_hunks(file_plan: FilePlan, *, context: int = CONTEXT_LINES) -> tuple[Block, ...]:
    """``block_for_hunk`` for every hunk of the file, in hunk order, sharing one pass over the file."""
    if not file_plan.hunks:
        return ()
    neighbours = _HunkNeighbours(file_plan)
    return tuple(neighbours.block(index, context) for index in range(len(file_plan.hunks)))


class _HunkNeighbours:
    """What every single-hunk block needs to know about the other hunks, computed once per file.

    A hunk shown alone still numbers its new-side lines after every hunk above
    it, and its context stops where a neighbour's lines begin. Asked hunk by
    hunk, that is a scan of all hunks (and of the file's line starts) per hunk:
    a thousand hunks in a 100,000-line file took 20 s. Here the hunks are sorted
    once by end and by start, with running sums of their line deltas, running
    maxima of where the hunks above end and running minima of where the hunks
    below begin, so each hunk is a couple of bisections.

    "Above" is every other hunk whose match ends at or before this one starts;
    "below" is every other hunk that starts at or after this one ends and is not
    above it. Only empty matches (pure insertions) can be both or be in their own
    "above" set, which is why the maxima keep a runner-up.
    """

    def __init__(self, file_plan: FilePlan) -> None:
        before, _ = _source_text(file_plan)
        if before is None:
            raise ValueError(f"{file_plan.path}: a hunk needs the file's current text")
        self.text = before
        self.starts = line_starts(before)
        self.hunks = file_plan.hunks
        matches = [located.match for located in self.hunks]
        self.widened = [_widen(before, self.starts, match.start, match.end) for match in matches]
        self.deltas = [_newline_delta(before, located) for located in self.hunks]
        count = len(matches)

        by_end = sorted(range(count), key=lambda index: matches[index].end)
        self.ends = [matches[index].end for index in by_end]
        self.delta_sums = [0]
        # For each prefix of by_end: the largest widened last line, its hunk, and the largest of the others.
        self.best_last = [-1]
        self.best_index = [-1]
        self.runner_up_last = [-1]
        for index in by_end:
            self.delta_sums.append(self.delta_sums[-1] + self.deltas[index])
            last = self.widened[index][1]
            best, runner_up = self.best_last[-1], self.runner_up_last[-1]
            if last > best:
                self.best_last.append(last)
                self.best_index.append(index)
                self.runner_up_last.append(best)
            else:
                self.best_last.append(best)
                self.best_index.append(self.best_index[-1])
                self.runner_up_last.append(max(runner_up, last))

        by_start = sorted(range(count), key=lambda index: (matches[index].start, matches[index].end))
        self.start_keys = [(matches[index].start, matches[index].end) for index in by_start]
        line_total = len(self.starts) - 1
        # For each suffix of by_start: the smallest widened first line (past the file's end when empty).
        self.first_minima = [line_total + 1] * (count + 1)
        for position in range(count - 1, -1, -1):
            first = self.widened[by_start[position]][0]
            self.first_minima[position] = min(self.first_minima[position + 1], first)

    def block(self, index: int, context: int) -> Block:
        located = self.hunks[index]
        start, end = located.match.start, located.match.end
        (span,) = _spans(self.text, self.starts, [(index, located)])

        above = bisect.bisect_right(self.ends, start)
        delta = self.delta_sums[above]
        nearest_above = self.best_last[above]
        if start == end:  # an insertion ends where it starts: it is in its own "above" prefix
            delta -= self.deltas[index]
            if self.best_index[above] == index:
                nearest_above = self.runner_up_last[above]
            below = bisect.bisect_right(self.start_keys, (start, start))
        else:
            below = bisect.bisect_left(self.start_keys, (end, -1))
        nearest_below = self.first_minima[below]

        # Context stops where a neighbouring hunk begins: its lines are not unchanged.
        lower = max(0, min(nearest_above, span.core_first))
        upper = min(len(self.starts) - 1, max(nearest_below, span.core_last))
        prepared = _Prepared(self.text, self.starts, [span], [delta, delta + self.deltas[index]])
        return _span_block(
            prepared, 0, max(lower, span.core_first - context), min(upper, span.core_last + context)
        )
