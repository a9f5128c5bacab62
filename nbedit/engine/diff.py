"""Unified diffs of a plan, built from the located hunks.

Diffing two 100,000-line texts with difflib takes seconds; the plan already
knows exactly which line spans changed, so the diff is assembled from those
spans plus a few context lines, in time proportional to the change. Files
without located hunks (adds, deletes, restores) fall back to difflib.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from nbedit._dataclass import dataclass
from nbedit.engine.models import FilePlan, Plan
from nbedit.engine.text import split_lines

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

__all__ = [
    "CONTEXT",
    "DiffBlock",
    "common_ends",
    "diff_stats",
    "file_blocks",
    "file_diff",
    "file_stats",
    "plan_diff",
]

CONTEXT = 3


@dataclass(frozen=True, slots=True)
class DiffBlock:
    """One unified-diff hunk: old lines [old_start, old_start+len(old)) become new."""

    old_start: int  # 0-based line index in the before text
    new_start: int  # 0-based line index in the after text
    old_lines: tuple[str, ...]  # with their endings
    new_lines: tuple[str, ...]
    hunk_indices: tuple[int, ...]  # which located hunks of the FilePlan it shows


def _texts(file_plan: FilePlan) -> tuple[str | None, str | None]:
    if file_plan.notebook:
        return file_plan.display_before, file_plan.display_after
    return file_plan.before, file_plan.after


def file_blocks(file_plan: FilePlan, context: int = CONTEXT) -> list[DiffBlock]:
    """Diff blocks of one file from its located hunks (empty if it has none).

    Line numbers come from counting newlines between consecutive hunks and
    context lines from a few ``find``/``rfind`` calls, so the cost follows the
    size of the change: a one-line edit of a 10 MB file never splits the file.
    """
    before, _ = _texts(file_plan)
    if before is None or not file_plan.hunks:
        return []
    walker = _Walker(before)
    changes: list[_Change] = []
    for hunk_index, located in sorted(enumerate(file_plan.hunks), key=lambda pair: pair[1].match.start):
        match = located.match
        first_line, first_offset = walker.line_containing(match.start)
        if match.end > match.start:
            last_offset = walker.end_of_line(match.end - 1)
        elif match.start == first_offset:
            last_offset = first_offset  # a pure insertion before the line
        else:
            last_offset = walker.end_of_line(match.start)
        new_text = before[first_offset : match.start] + match.replacement + before[match.end : last_offset]
        last_line = first_line + walker.lines_between(first_offset, last_offset)
        changes.append(_Change(first_line, first_offset, last_line, last_offset, new_text, hunk_index))
    blocks: list[DiffBlock] = []
    group: list[_Change] = []
    for change in changes:
        if group and change.first_line - group[-1].last_line > 2 * context:
            blocks.append(_block(walker, group, context, blocks))
            group = []
        group.append(change)
    if group:
        blocks.append(_block(walker, group, context, blocks))
    return blocks


@dataclass(frozen=True, slots=True)
class _Change:
    """The whole lines one located hunk touches, and what they become."""

    first_line: int
    first_offset: int
    last_line: int  # exclusive
    last_offset: int
    new_text: str
    hunk_index: int


class _Walker:
    """Line numbers and offsets of a text, found by counting from the last place asked."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0  # a line start
        self.line = 0  # its 0-based number

    def line_containing(self, offset: int) -> tuple[int, int]:
        """(0-based line, offset of its start) for the line holding ``offset``."""
        start = self.text.rfind("\n", 0, offset) + 1
        if start < self.offset:
            self.offset, self.line = 0, 0
        self.line += self.text.count("\n", self.offset, start)
        self.offset = start
        return self.line, start

    def end_of_line(self, offset: int) -> int:
        newline = self.text.find("\n", offset)
        return newline + 1 if newline != -1 else len(self.text)

    def lines_between(self, start: int, end: int) -> int:
        count = self.text.count("\n", start, end)
        if end == len(self.text) and end > start and not self.text.endswith("\n"):
            count += 1  # the last line, without a newline
        return count

    def back(self, offset: int, lines: int) -> tuple[int, int]:
        """Offset of the line ``lines`` above the line starting at ``offset``, and how many it went."""
        walked = 0
        while walked < lines and offset > 0:
            offset = self.text.rfind("\n", 0, offset - 1) + 1
            walked += 1
        return offset, walked

    def forward(self, offset: int, lines: int) -> int:
        walked = 0
        while walked < lines and offset < len(self.text):
            offset = self.end_of_line(offset)
            walked += 1
        return offset


def _block(walker: _Walker, group: list[_Change], context: int, previous: list[DiffBlock]) -> DiffBlock:
    text = walker.text
    start, walked = walker.back(group[0].first_offset, context)
    stop = walker.forward(group[-1].last_offset, context)
    pieces = [text[start : group[0].first_offset]]
    for number, change in enumerate(group):
        following = group[number + 1].first_offset if number + 1 < len(group) else stop
        pieces.append(change.new_text)
        pieces.append(text[change.last_offset : following])
    old = split_lines(text[start:stop])
    new = split_lines("".join(pieces))
    first = group[0].first_line - walked
    delta = 0
    if previous:
        last = previous[-1]
        delta = last.new_start - last.old_start + len(last.new_lines) - len(last.old_lines)
    return DiffBlock(
        first, first + delta, tuple(old), tuple(new), tuple(change.hunk_index for change in group)
    )


def common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """How many leading and trailing lines two sequences share (not overlapping)."""
    shortest = min(len(old), len(new))
    head = 0
    while head < shortest and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shortest - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return head, tail


def _emit(prefix: str, line: str, out: list[str]) -> None:
    if line.endswith("\n"):
        out.append(prefix + line)
    else:
        out.append(prefix + line + "\n\\ No newline at end of file\n")


def _middle_opcodes(
    middle_old: Sequence[str], middle_new: Sequence[str]
) -> Sequence[tuple[str, int, int, int, int]]:
    if not middle_old or not middle_new or set(middle_old).isdisjoint(middle_new):
        # nothing to align (the usual edited line): SequenceMatcher would say "replace" whole
        return [("replace", 0, len(middle_old), 0, len(middle_new))]
    return difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False).get_opcodes()


def _block_text(block: DiffBlock, out: list[str]) -> None:
    """Write a block as a unified hunk, with -/+ only where lines really differ."""

    old, new = block.old_lines, block.new_lines
    old_start = block.old_start + 1 if old else block.old_start
    new_start = block.new_start + 1 if new else block.new_start
    out.append(f"@@ -{old_start},{len(old)} +{new_start},{len(new)} @@\n")
    head, tail = common_ends(old, new)  # diff only the middle
    for line in old[:head]:
        _emit(" ", line, out)
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    for tag, a0, a1, b0, b1 in _middle_opcodes(middle_old, middle_new):
        if tag == "equal":
            for line in middle_old[a0:a1]:
                _emit(" ", line, out)
            continue
        for line in middle_old[a0:a1]:
            _emit("-", line, out)
        for line in middle_new[b0:b1]:
            _emit("+", line, out)
    for line in old[len(old) - tail :]:
        _emit(" ", line, out)


def file_diff(file_plan: FilePlan) -> str:
    before, after = _texts(file_plan)
    old_name = "/dev/null" if file_plan.operation == "add" else f"a/{file_plan.path}"
    new_name = "/dev/null" if file_plan.operation == "delete" else f"b/{file_plan.target_path}"
    if file_plan.hunks and before is not None:
        out = [f"--- {old_name}\n", f"+++ {new_name}\n"]
        for block in file_blocks(file_plan):
            _block_text(block, out)
        return "".join(out) if len(out) > 2 else _rename_only(file_plan, old_name, new_name)
    if before == after:
        return _rename_only(file_plan, old_name, new_name)
    from nbedit.engine.plan import text_diff

    return text_diff(
        None if file_plan.operation == "add" else before,
        None if file_plan.operation == "delete" else after,
        file_plan.path,
        file_plan.new_path,
    )


def file_stats(file_plan: FilePlan) -> tuple[int, int]:
    """(added, removed) lines of ``file_diff(file_plan)``, counted without writing the diff.

    Recording an entry needs only the counts; for a 900-hunk patch, writing and
    re-reading the diff text cost as much as planning it. The counts come from the
    changed lines of each diff block alone: context lines are equal on both sides, and
    trimming equal lines from the ends of a block (what the diff does before it aligns
    the rest) removes them again, so they cannot change a count. A block whose new
    text would run into its trailing context (a change that drops a line's newline)
    is counted with its context, as the diff shows it.
    """
    before, _ = _texts(file_plan)
    if not file_plan.hunks or before is None:
        return diff_stats(file_diff(file_plan))
    added = removed = 0
    for old, new in _changed_spans(before, file_plan, CONTEXT):
        head, tail = common_ends(old, new)
        middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
        for tag, a0, a1, b0, b1 in _middle_opcodes(middle_old, middle_new):
            if tag != "equal":
                removed += a1 - a0
                added += b1 - b0
    return added, removed


def _changed_spans(
    before: str, file_plan: FilePlan, context: int
) -> list[tuple[Sequence[str], Sequence[str]]]:
    """Per diff block: its old and new lines without the context (see ``file_stats``)."""
    walker = _Walker(before)
    changes: list[tuple[int, int, str]] = []  # (first_offset, last_offset, new_text) per located hunk
    for located in sorted(file_plan.hunks, key=lambda item: item.match.start):
        match = located.match
        first_offset = before.rfind("\n", 0, match.start) + 1
        if match.end > match.start:
            last_offset = walker.end_of_line(match.end - 1)
        elif match.start == first_offset:
            last_offset = first_offset
        else:
            last_offset = walker.end_of_line(match.start)
        changes.append(
            (first_offset, last_offset, before[first_offset : match.start] + match.replacement + before[match.end : last_offset])
        )
    spans: list[tuple[Sequence[str], Sequence[str]]] = []
    group: list[tuple[int, int, str]] = []

    def close() -> None:
        pieces = []
        for number, (_, last_offset, new_text) in enumerate(group):
            following = group[number + 1][0] if number + 1 < len(group) else last_offset
            pieces.append(new_text)
            pieces.append(before[last_offset:following])
        new = "".join(pieces)
        end = group[-1][1]
        if new and not new.endswith("\n") and end < len(before):
            blocks = file_blocks(file_plan, context)  # rare: count this file the long way
            raise _CountWithContext(blocks)
        spans.append((split_lines(before[group[0][0] : end]), split_lines(new)))

    try:
        for change in changes:
            # the diff joins hunks whose changed lines are at most 2 * context lines apart
            if group and before.count("\n", group[-1][1], change[0]) > 2 * context:
                close()
                group = []
            group.append(change)
        if group:
            close()
    except _CountWithContext as fallback:
        return [(block.old_lines, block.new_lines) for block in fallback.blocks]
    return spans


class _CountWithContext(Exception):
    def __init__(self, blocks: list[DiffBlock]) -> None:
        super().__init__()
        self.blocks = blocks


def _rename_only(file_plan: FilePlan, old_name: str, new_name: str) -> str:
    if file_plan.new_path and file_plan.new_path != file_plan.path:
        return f"--- {old_name}\n+++ {new_name}\n"
    return ""


def plan_diff(plan: Plan) -> str:
    return "".join(file_diff(file_plan) for file_plan in plan.files)


def diff_stats(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff.

    Counted inside hunks by their headers' line counts, so a removed line that
    itself starts with ``-- `` (an SQL comment) is not mistaken for a file header.
    """
    added = removed = 0
    old_left = new_left = 0
    for line in diff.split("\n"):
        if old_left or new_left:
            marker = line[:1]
            if marker == "-":
                removed += 1
                old_left -= 1
            elif marker == "+":
                added += 1
                new_left -= 1
            elif marker == " ":
                old_left -= 1
                new_left -= 1
            continue
        header = _HUNK_COUNTS.match(line)
        if header:
            old_left = 1 if header.group(1) is None else int(header.group(1))
            new_left = 1 if header.group(2) is None else int(header.group(2))
    return added, removed


_HUNK_COUNTS = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


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


def _resync_opcodes(old: list[str], new: list[str]) -> list[_Opcode]:
    opcodes: list[_Opcode] = []

    def differ(i0: int, i1: int, j0: int, j1: int) -> None:
        if i0 == i1 and j0 == j1:
            return
        if i0 == i1 or j0 == j1:
            opcodes.append(("insert" if i0 == i1 else "delete", i0, i1, j0, j1))
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
