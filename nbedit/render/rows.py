"""A plan as rows of a side-by-side-numbered diff, built from its located hunks.

Every renderer (terminal, HTML, plain text, widgets) draws the same rows, so this
module decides once what a reviewer sees: for each hunk, the lines its match
covers, the lines that replace them, a few unchanged lines around, and the
unchanged stretches between hunks collapsed to a count.

Design choice: rows come from the *located hunks*, never from a diff of the two
whole files. The matcher already knows where every change is, so the work is
proportional to the size of the change, not of the file: a thousand hunks in a
100,000-line file cost a thousand small line diffs. Only a file without located
hunks (an added or deleted file, a whole-file rewrite) falls back to trimming
the common head and tail of the two texts.

Inside a block, a line-level ``SequenceMatcher`` separates the context lines a
diff hunk carries from the changed ones (capped so a pathological block
degrades to plain -/+ rows instead of quadratic time); paired removed/added
lines get word highlights from ``highlight``.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Literal

from nbedit._dataclass import dataclass
from nbedit.engine.diff import WHOLE_BLOCK_CHANGES, change_pieces, common_ends
from nbedit.engine.models import FilePlan, LocatedHunk, Tier
from nbedit.engine.text import line_starts, split_lines, strip_newline
from nbedit.render.highlight import Segment, highlight_pair
from nbedit.render.labels import offset_note, tier_label

__all__ = [
    "Block",
    "FileView",
    "Gap",
    "Row",
    "Segment",
    "file_view",
    "tier_label",
    "view_counts",
    "offset_note",
]

RowKind = Literal["context", "removed", "added"]

CONTEXT_LINES = 3
# Unchanged stretches shorter than this are shown, not collapsed.
MIN_GAP = 2
# Whole added or deleted files are shown up to this many lines, then counted.
MAX_WHOLE_FILE_LINES = 400
# Line-level alignment only when old x new lines stays below this product.
MAX_ALIGN_PRODUCT = 250_000


@dataclass(frozen=True, slots=True)
class Row:
    kind: RowKind
    old_line: int | None  # 1-based, None on added rows
    new_line: int | None  # 1-based, None on removed rows
    segments: tuple[Segment, ...]

    @property
    def text(self) -> str:
        return "".join(segment.text for segment in self.segments)

    @property
    def marker(self) -> str:
        return {"context": " ", "removed": "-", "added": "+"}[self.kind]


@dataclass(frozen=True, slots=True)
class Gap:
    """Unchanged lines left out between (or around) blocks."""

    count: int
    old_line: int  # first hidden line, 1-based
    new_line: int


@dataclass(frozen=True, slots=True)
class Block:
    """One or more hunks whose lines touch, with their context rows."""

    hunk_indices: tuple[int, ...]
    rows: tuple[Row, ...]
    cell: str | None = None
    tier: Tier = Tier.EXACT
    score: float = 1.0
    offset: int | None = None
    hidden_added: int = 0  # rows of a long whole-file block left out
    hidden_removed: int = 0
    hidden_context: int = 0

    @property
    def truncated(self) -> int:
        return self.hidden_added + self.hidden_removed + self.hidden_context

    @property
    def added(self) -> int:
        return self.hidden_added + sum(1 for row in self.rows if row.kind == "added")

    @property
    def removed(self) -> int:
        return self.hidden_removed + sum(1 for row in self.rows if row.kind == "removed")


@dataclass(frozen=True, slots=True)
class FileView:
    path: str
    new_path: str | None
    operation: str
    added: int
    removed: int
    sections: tuple[Block | Gap, ...]
    notebook: bool = False
    already_applied: bool = False
    notes: tuple[str, ...] = ()

    @property
    def blocks(self) -> tuple[Block, ...]:
        return tuple(section for section in self.sections if isinstance(section, Block))


# --- building -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Span:
    """A hunk widened to whole lines: ``old[first:last]`` lines become ``new_text``."""

    first: int  # 0-based line index, inclusive
    last: int  # 0-based line index, exclusive
    start: int  # character offsets of the widened span
    end: int
    hunks: tuple[tuple[int, LocatedHunk], ...]
    old_lines: tuple[str, ...] = ()
    new_lines: tuple[str, ...] = ()
    # Lines the hunk carries unchanged (a diff's own context) at its head and tail;
    # context is counted from the changed core, not from the widened span.
    head: int = 0
    tail: int = 0
    # A span joining many close hunks: its (old lines, new lines) cut a hunk at a time, so
    # each piece is aligned alone (one alignment of thousands of hunks is quadratic); () if not cut.
    pieces: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()

    @property
    def core_first(self) -> int:
        return self.first + self.head

    @property
    def core_last(self) -> int:
        return self.last - self.tail


def _source_text(file_plan: FilePlan) -> tuple[str | None, str | None]:
    if file_plan.notebook and file_plan.display_before is not None:
        return file_plan.display_before, file_plan.display_after
    return file_plan.before, file_plan.after


def _widen(text: str, starts: list[int], start: int, end: int) -> tuple[int, int]:
    """Line indices [first, last) covering ``text[start:end]``, on line boundaries."""
    first = bisect.bisect_right(starts, start) - 1
    if first == len(starts) - 1 and text and not text.endswith("\n"):
        first -= 1  # appending to a last line that has no newline changes that line
    elif end == start and starts[first] == start:
        return first, first
    return first, max(first + 1, bisect.bisect_left(starts, end))


def _spans(text: str, starts: list[int], hunks: Sequence[tuple[int, LocatedHunk]]) -> list[_Span]:
    """Widen every hunk to whole lines and merge hunks whose lines touch."""
    ordered = sorted(hunks, key=lambda item: (item[1].match.start, item[1].match.end))
    line_count = len(starts) - 1
    spans: list[_Span] = []
    for index, located in ordered:
        first, last = _widen(text, starts, located.match.start, located.match.end)
        if spans and first <= spans[-1].last:
            previous = spans[-1]
            first, last = previous.first, max(previous.last, last)
            members = (*previous.hunks, (index, located))
            spans.pop()
        else:
            members = ((index, located),)
        # A replacement without a final newline joins the next line; show that line too.
        while last < line_count and not _ends_line(text, starts[first], starts[last], members):
            last += 1
        spans.append(_Span(first, last, starts[first], starts[last], members))
    return [_with_lines(text, span) for span in spans]


def _ends_line(text: str, start: int, end: int, hunks: Sequence[tuple[int, LocatedHunk]]) -> bool:
    """Whether ``_replaced(text, start, end, hunks)`` is empty or ends with a newline.

    Read from its end: the text after the last hunk, else that hunk's replacement. A
    span joining thousands of close hunks asks this once a hunk, so it must not make
    the whole replaced text each time (issue 27); ``hunks`` come in the order of their
    starts, and only hunks that overlap or replace with nothing need ``_replaced``.
    """
    position = end
    for _, located in reversed(hunks):
        match = located.match
        if match.end > position:
            break
        if match.end < position:
            return text[position - 1] == "\n"
        if match.replacement:
            return match.replacement[-1] == "\n"
        position = match.start
    new_text = _replaced(text, start, end, hunks)
    return not new_text or new_text.endswith("\n")


def _with_lines(text: str, span: _Span) -> _Span:
    old_lines = tuple(split_lines(text[span.start : span.end]))
    new_text = _replaced(text, span.start, span.end, span.hunks)
    new_lines = tuple(split_lines(new_text))
    head, tail = common_ends(old_lines, new_lines)
    pieces = _pieces(text, span, new_text) if len(span.hunks) > WHOLE_BLOCK_CHANGES else ()
    return _Span(
        span.first, span.last, span.start, span.end, span.hunks, old_lines, new_lines, head, tail, pieces
    )


def _pieces(text: str, span: _Span, new_text: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """A span of many touching hunks cut into (old lines, new lines) pieces aligned alone, as the diff
    cuts its blocks (``change_pieces``); () when the cut does not rebuild the span's texts."""
    changes = []
    for _, located in span.hunks:
        match = located.match
        first_offset = text.rfind("\n", 0, match.start) + 1
        if match.end == match.start == first_offset:
            last_offset = first_offset  # a pure insertion before the line
        else:
            newline = text.find("\n", max(match.start, match.end - 1))
            last_offset = len(text) if newline == -1 else newline + 1
        replaced = text[first_offset : match.start] + match.replacement + text[match.end : last_offset]
        changes.append((first_offset, last_offset, replaced))
    pieces = change_pieces(text, changes, span.start, span.end)
    if (
        pieces is None
        or "".join(old for old, _ in pieces) != text[span.start : span.end]
        or "".join(new for _, new in pieces) != new_text
    ):
        return ()
    return tuple((tuple(split_lines(old)), tuple(split_lines(new))) for old, new in pieces if old or new)


def _replaced(text: str, start: int, end: int, hunks: Sequence[tuple[int, LocatedHunk]]) -> str:
    pieces = []
    position = start
    for _, located in sorted(hunks, key=lambda item: item[1].match.start):
        match = located.match
        if match.start < position:  # overlapping matches cannot both apply; keep the first
            continue
        pieces.append(text[position : match.start])
        pieces.append(match.replacement)
        position = match.end
    pieces.append(text[position:end])
    return "".join(pieces)


def _change_rows(old_lines: list[str], new_lines: list[str], old_line: int, new_line: int) -> list[Row]:
    """Rows for one widened span: equal lines as context, the rest as -/+ with highlights."""
    rows: list[Row] = []
    head, tail = common_ends(old_lines, new_lines)
    old_middle = old_lines[head : len(old_lines) - tail]
    new_middle = new_lines[head : len(new_lines) - tail]
    for offset in range(head):
        rows.append(_context(old_lines[offset], old_line + offset, new_line + offset))
    old_number, new_number = old_line + head, new_line + head
    for tag, i1, i2, j1, j2 in _opcodes(old_middle, new_middle):
        if tag == "equal":
            for index in range(i2 - i1):
                rows.append(
                    _context(old_middle[i1 + index], old_number + i1 + index, new_number + j1 + index)
                )
            continue
        removed = old_middle[i1:i2]
        added = new_middle[j1:j2]
        old_segments: list[tuple[Segment, ...]] = [(Segment(strip_newline(line)),) for line in removed]
        new_segments: list[tuple[Segment, ...]] = [(Segment(strip_newline(line)),) for line in added]
        for pair in range(min(len(removed), len(added))):
            old_segments[pair], new_segments[pair] = highlight_pair(removed[pair], added[pair])
        for index, segments in enumerate(old_segments):
            rows.append(Row("removed", old_number + i1 + index, None, segments))
        for index, segments in enumerate(new_segments):
            rows.append(Row("added", None, new_number + j1 + index, segments))
    start_tail_old = old_line + len(old_lines) - tail
    start_tail_new = new_line + len(new_lines) - tail
    for offset in range(tail):
        rows.append(
            _context(
                old_lines[len(old_lines) - tail + offset], start_tail_old + offset, start_tail_new + offset
            )
        )
    return rows


def _opcodes(old_middle: list[str], new_middle: list[str]) -> list[tuple[str, int, int, int, int]]:
    """How the changed middle of a span aligns (``SequenceMatcher.get_opcodes``).

    The middle starts and ends with a line that differs (``common_ends`` took the rest), so
    when either side is empty or both are one line the answer is known without a matcher:
    most edits are one changed line, and a thousand of them should not build a thousand
    matchers. Beyond ``MAX_ALIGN_PRODUCT`` the whole middle is one replacement.
    """
    old_count, new_count = len(old_middle), len(new_middle)
    if not old_count or not new_count:
        if old_count:
            return [("delete", 0, old_count, 0, 0)]
        return [("insert", 0, 0, 0, new_count)] if new_count else []
    if (old_count == new_count == 1) or old_count * new_count > MAX_ALIGN_PRODUCT:
        return [("replace", 0, old_count, 0, new_count)]
    return SequenceMatcher(None, old_middle, new_middle, autojunk=False).get_opcodes()


def _changed_counts(old_lines: Sequence[str], new_lines: Sequence[str]) -> tuple[int, int]:
    """(added, removed) rows ``_change_rows`` draws for these lines, without drawing them."""
    head, tail = common_ends(old_lines, new_lines)
    old_middle = list(old_lines[head : len(old_lines) - tail])
    new_middle = list(new_lines[head : len(new_lines) - tail])
    added = removed = 0
    for tag, i1, i2, j1, j2 in _opcodes(old_middle, new_middle):
        if tag != "equal":
            added += j2 - j1
            removed += i2 - i1
    return added, removed


def view_counts(file_plan: FilePlan) -> tuple[int, int]:
    """``file_view(file_plan)``'s (added, removed), without building its rows.

    For a header whose file is drawn another way (a notebook, cell by cell): the rows' word
    highlights and row objects are most of a view's cost, and the counts need neither.
    """
    prepared = _prepare(file_plan)
    if prepared is None:
        view = file_view(file_plan)
        return view.added, view.removed
    added = removed = 0
    for span in prepared.spans:
        span_added, span_removed = _changed_counts(span.old_lines, span.new_lines)
        added += span_added
        removed += span_removed
    return added, removed


def _context(line: str, old_line: int, new_line: int) -> Row:
    return Row("context", old_line, new_line, (Segment(strip_newline(line)),))


@dataclass(frozen=True, slots=True)
class _Prepared:
    text: str
    starts: list[int]
    spans: list[_Span]
    deltas: list[int]  # new-minus-old line count before each span


def _newline_delta(text: str, located: LocatedHunk) -> int:
    """How many lines a hunk adds (negative: removes); later lines shift by this much."""
    match = located.match
    return match.replacement.count("\n") - text.count("\n", match.start, match.end)


def _prepare(file_plan: FilePlan) -> _Prepared | None:
    before, _ = _source_text(file_plan)
    if before is None or not file_plan.hunks:
        return None
    starts = line_starts(before)
    spans = _spans(before, starts, list(enumerate(file_plan.hunks)))
    deltas = []
    delta = 0
    for span in spans:
        deltas.append(delta)
        delta += sum(_newline_delta(before, located) for _, located in span.hunks)
    deltas.append(delta)  # after the last span
    return _Prepared(before, starts, spans, deltas)


def _span_rows(
    old_lines: tuple[str, ...], new_lines: tuple[str, ...], old_shift: int, new_shift: int
) -> list[Row]:
    """``_change_rows`` numbered from ``old_shift + 1`` / ``new_shift + 1``, its alignment remembered.

    The review widget draws each hunk alone *and* the whole file for its header,
    and redraws the header whenever a hunk is ticked or unticked; a hunk that
    touches no other is the same span every time, only its new-side numbers
    move. Line alignment and word highlights are the cost, so those are cached
    by the lines alone and renumbered here.
    """
    return [
        Row(row.kind, _plus(row.old_line, old_shift), _plus(row.new_line, new_shift), row.segments)
        for row in _aligned_rows(old_lines, new_lines)
    ]


def _cut_span_rows(span: _Span, old_shift: int, new_shift: int) -> list[Row]:
    """``_span_rows`` of a span, a piece at a time when it is cut (``_Span.pieces``)."""
    if not span.pieces:
        return _span_rows(span.old_lines, span.new_lines, old_shift, new_shift)
    rows: list[Row] = []
    for old_lines, new_lines in span.pieces:
        rows.extend(_span_rows(old_lines, new_lines, old_shift, new_shift))
        old_shift += len(old_lines)
        new_shift += len(new_lines)
    return rows


def _plus(line: int | None, shift: int) -> int | None:
    return None if line is None else line + shift


@functools.lru_cache(maxsize=4096)
def _aligned_rows(old_lines: tuple[str, ...], new_lines: tuple[str, ...]) -> tuple[Row, ...]:
    return tuple(_change_rows(list(old_lines), list(new_lines), 1, 1))


def _span_block(prepared: _Prepared, position: int, shown_first: int, shown_last: int) -> Block:
    """Rows for one span: its changes, and the unchanged lines of [shown_first, shown_last)."""
    span = prepared.spans[position]
    text, starts = prepared.text, prepared.starts
    delta = prepared.deltas[position]
    rows: list[Row] = []
    for line in range(shown_first, span.first):
        rows.append(_context(text[starts[line] : starts[line + 1]], line + 1, line + 1 + delta))
    for row in _cut_span_rows(span, span.first, span.first + delta):
        if row.kind != "context" or shown_first < (row.old_line or 0) <= shown_last:
            rows.append(row)
    after_delta = delta + len(span.new_lines) - len(span.old_lines)
    for line in range(span.last, shown_last):
        rows.append(_context(text[starts[line] : starts[line + 1]], line + 1, line + 1 + after_delta))
    located = [hunk for _, hunk in span.hunks]
    worst = max(located, key=lambda hunk: (_TIER_ORDER[hunk.match.tier], -hunk.match.score))
    offsets = [hunk.match.offset for hunk in located if hunk.match.offset]
    cells = [hunk.cell for hunk in located if hunk.cell]
    return Block(
        hunk_indices=tuple(sorted(index for index, _ in span.hunks)),
        rows=tuple(rows),
        cell=cells[0] if cells else None,
        tier=worst.match.tier,
        score=min(hunk.match.score for hunk in located),
        offset=offsets[0] if offsets else None,
    )


_TIER_ORDER = {tier: order for order, tier in enumerate(Tier)}


def _whole_file_block(before: str | None, after: str | None, limit: int) -> tuple[Block | None, list[Gap]]:
    """Rows for a file without located hunks: trim the common head and tail, diff the middle."""
    old_lines = split_lines(before or "")
    new_lines = split_lines(after or "")
    head, tail = common_ends(old_lines, new_lines)
    if head == len(old_lines) == len(new_lines):
        return None, []
    first = max(0, head - CONTEXT_LINES)
    old_end = min(len(old_lines), len(old_lines) - tail + CONTEXT_LINES)
    new_end = len(new_lines) - (len(old_lines) - old_end)
    rows = _change_rows(old_lines[first:old_end], new_lines[first:new_end], first + 1, first + 1)
    hidden = rows[limit:]
    rows = rows[:limit]
    gaps = []
    if first:
        gaps.append(Gap(first, 1, 1))
    hidden_tail = len(old_lines) - old_end
    if hidden_tail and not hidden:
        gaps.append(Gap(hidden_tail, old_end + 1, new_end + 1))
    block = Block(
        hunk_indices=(),
        rows=tuple(rows),
        hidden_added=sum(1 for row in hidden if row.kind == "added"),
        hidden_removed=sum(1 for row in hidden if row.kind == "removed"),
        hidden_context=sum(1 for row in hidden if row.kind == "context") + (hidden_tail if hidden else 0),
    )
    return block, gaps


def file_view(file_plan: FilePlan, *, context: int = CONTEXT_LINES) -> FileView:
    """Rows for a whole file: blocks with context, unchanged stretches as gaps."""
    before, after = _source_text(file_plan)
    prepared = _prepare(file_plan)
    sections: list[Block | Gap] = []
    if prepared is None:
        block: Block | None = None
        gaps: list[Gap] = []
        if not file_plan.already_applied:
            block, gaps = _whole_file_block(before, after, MAX_WHOLE_FILE_LINES)
        if block is not None:
            if gaps and gaps[0].old_line == 1:
                sections.append(gaps.pop(0))
            sections.append(block)
            sections.extend(gaps)
    else:
        line_total = len(prepared.starts) - 1
        boundary = 0  # first old line (0-based) not yet shown or counted
        for position, span in enumerate(prepared.spans):
            lower = boundary
            upper = (
                prepared.spans[position + 1].core_first if position + 1 < len(prepared.spans) else line_total
            )
            # Split the stretch between spans: this block's trailing context takes up to `context`,
            # the next block's leading context up to `context`, the rest is a gap.
            leading = max(lower, span.core_first - context)
            if leading - lower < MIN_GAP:
                leading = lower  # "1 unchanged line" takes the space of the line itself
            if leading > lower:
                sections.append(Gap(leading - lower, lower + 1, lower + 1 + prepared.deltas[position]))
            following_limit = min(upper, span.core_last + context)
            if position + 1 == len(prepared.spans) and upper - following_limit < MIN_GAP:
                following_limit = upper
            sections.append(_span_block(prepared, position, leading, following_limit))
            boundary = following_limit
        if boundary < line_total:
            sections.append(Gap(line_total - boundary, boundary + 1, boundary + 1 + prepared.deltas[-1]))
    added = sum(section.added for section in sections if isinstance(section, Block))
    removed = sum(section.removed for section in sections if isinstance(section, Block))
    return FileView(
        path=file_plan.path,
        new_path=file_plan.new_path,
        operation=file_plan.operation,
        added=added,
        removed=removed,
        sections=tuple(sections),
        notebook=file_plan.notebook,
        already_applied=file_plan.already_applied,
        notes=file_plan.notes,
    )
