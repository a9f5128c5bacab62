"""Unified diffs of a plan, built from the located hunks.

Diffing two 100,000-line texts with difflib takes seconds; the plan already
knows exactly which line spans changed, so the diff is assembled from those
spans plus a few context lines, in time proportional to the change. Files
without located hunks (adds, deletes, restores) fall back to difflib. How many
lines a block adds and removes is counted in ``diff_counts.py`` (a history entry
needs the counts, never the text).

Hunks a few lines apart join into one block; aligning such a block whole costs its
lines times its hunks (2,000 close hunks: 10 s), so a block of many hunks is aligned
a hunk at a time (``change_pieces``): the lines between two hunks are the same on
both sides, so each hunk's own diff, with those lines as context, is the block's.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.diff_counts import (
    CONTEXT,
    WHOLE_BLOCK_CHANGES,
    block_counts,
    diff_stats,
    equal_ends,
    holds_newlines,
    lone_exact_stats,
    middle_opcodes,
)
from nbedit.engine.models import FilePlan, Plan, undecoded_after, undecoded_before
from nbedit.engine.text import common_ends, split_lines

__all__ = [
    "CONTEXT",
    "WHOLE_BLOCK_CHANGES",
    "DiffBlock",
    "block_counts",
    "change_pieces",
    "common_ends",
    "diff_stats",
    "file_blocks",
    "file_diff",
    "file_stats",
    "plan_diff",
    "text_diff",  # noqa: F822 - given by the module __getattr__ (nbedit.engine.whole_diff)
]

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


def _before(file_plan: FilePlan) -> str | None:
    """The text the hunks were located in (the located hunks need no other: the new text may not be decoded yet)."""
    return file_plan.display_before if file_plan.notebook else file_plan.before


def file_blocks(file_plan: FilePlan, context: int = CONTEXT) -> list[DiffBlock]:
    """Diff blocks of one file from its located hunks (empty if it has none).

    Line numbers come from counting newlines between consecutive hunks and
    context lines from a few ``find``/``rfind`` calls, so the cost follows the
    size of the change: a one-line edit of a 10 MB file never splits the file.
    """
    before = _before(file_plan)
    if before is None or not file_plan.hunks:
        return []
    blocks: list[DiffBlock] = []
    delta = 0  # new line number minus old line number after the previous block
    for first, old_text, new_text, hunk_indices in _raw_blocks(before, file_plan, context):
        old, new = split_lines(old_text), split_lines(new_text)
        blocks.append(DiffBlock(first, first + delta, tuple(old), tuple(new), hunk_indices))
        delta += len(new) - len(old)
    return blocks


def _changes(before: str, file_plan: FilePlan, context: int) -> tuple[_Walker, list[list[_Change]]]:
    """The whole lines each located hunk touches, grouped by diff block."""
    walker = _Walker(before)
    changes: list[_Change] = []
    for hunk_index, located in sorted(enumerate(file_plan.hunks), key=lambda pair: pair[1].match.start):
        match = located.match
        start, end = match.start, match.end
        first_line, first_offset = walker.line_containing(start)
        if end > start and first_offset == start and before[end - 1] == "\n":
            # whole lines (every exactly located hunk of a diff): the span is the change
            changes.append(
                (
                    first_line,
                    start,
                    first_line + before.count("\n", start, end),
                    end,
                    match.replacement,
                    hunk_index,
                )
            )
            continue
        if end > start:
            last_offset = walker.end_of_line(end - 1)
        elif start == first_offset:
            last_offset = first_offset  # a pure insertion before the line
        else:
            last_offset = walker.end_of_line(start)
        new_text = before[first_offset:start] + match.replacement + before[end:last_offset]
        last_line = first_line + walker.lines_between(first_offset, last_offset)
        changes.append((first_line, first_offset, last_line, last_offset, new_text, hunk_index))
    return walker, _grouped(changes, context)


def _grouped(changes: list[_Change], context: int) -> list[list[_Change]]:
    """The changes of each diff block: the diff joins changes at most ``2 * context`` lines apart."""
    groups: list[list[_Change]] = []
    group: list[_Change] = []
    for change in changes:
        if group and change[0] - group[-1][2] > 2 * context:
            groups.append(group)
            group = []
        group.append(change)
    if group:
        groups.append(group)
    return groups


def _raw_blocks(
    before: str, file_plan: FilePlan, context: int
) -> list[tuple[int, str, str, tuple[int, ...]]]:
    """Per diff block: its first 0-based old line, its old and new text, the hunks it shows."""
    walker, groups = _changes(before, file_plan, context)
    return [_block(walker, group, context) for group in groups]


# The whole lines one located hunk touches, and what they become: (first_line, first_offset,
# last_line (exclusive), last_offset, new_text, hunk_index). A tuple: a patch makes 900 of them.
_Change = tuple[int, int, int, int, str, int]


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


def _block(walker: _Walker, group: list[_Change], context: int) -> tuple[int, str, str, tuple[int, ...]]:
    text = walker.text
    start, walked = walker.back(group[0][1], context)
    stop = walker.forward(group[-1][3], context)
    if len(group) == 1:
        _, first_offset, _, last_offset, new_text, hunk_index = group[0]
        new = text[start:first_offset] + new_text + text[last_offset:stop]
        return group[0][0] - walked, text[start:stop], new, (hunk_index,)
    pieces = [text[start : group[0][1]]]
    for number, change in enumerate(group):
        following = group[number + 1][1] if number + 1 < len(group) else stop
        pieces.append(change[4])
        pieces.append(text[change[3] : following])
    first = group[0][0] - walked
    return first, text[start:stop], "".join(pieces), tuple(change[5] for change in group)


def change_pieces(
    text: str, changes: list[tuple[int, int, str]], start: int, stop: int
) -> list[tuple[str, str]] | None:
    """A diff block's old and new text ``text[start:stop]`` cut into (old, new) pieces that align alone.

    ``changes`` are the block's (first_offset, last_offset, new_text) in order. Between
    two changes the lines are the same on both sides, and each change's old lines
    become its new ones: so the block's diff is the diff of each change on its own,
    with the lines between them as context. One difflib call over a block that joins
    thousands of close hunks costs the block's lines times its hunks (issue 27); a
    change at a time costs each hunk's own lines. A change whose new text does not end
    with a newline joins the lines after it (the diff shows them run together), up to
    the next change that ends a line. None when changes share a line (the block is
    then aligned whole, as before).
    """
    segments: list[tuple[str, str]] = [(text[start : changes[0][0]],) * 2]
    pieces: list[str] = []
    unit_from = start
    open_line = False  # the unit's new text so far does not end a line
    for number, (first_offset, last_offset, new_text) in enumerate(changes):
        following = changes[number + 1][0] if number + 1 < len(changes) else stop
        if following < last_offset or first_offset < unit_from:
            return None
        if not pieces:
            unit_from = first_offset
        pieces.append(new_text)
        if new_text:
            open_line = new_text[-1] != "\n"
        gap = text[last_offset:following]
        if open_line:
            pieces.append(gap)  # the next line runs on from the new text: one unit with it
            if gap:
                open_line = gap[-1] != "\n"
            continue
        segments.append((text[unit_from:last_offset], "".join(pieces)))
        segments.append((gap, gap))
        pieces = []
    if pieces:
        segments.append((text[unit_from:stop], "".join(pieces)))
    return segments


def _block_segments(walker: _Walker, group: list[_Change], context: int) -> tuple[int, list[tuple[str, str]]]:
    """(first 0-based old line, the block's (old, new) pieces): ``_block`` cut by ``change_pieces``."""
    text = walker.text
    start, walked = walker.back(group[0][1], context)
    stop = walker.forward(group[-1][3], context)
    first = group[0][0] - walked
    segments = None
    if len(group) > WHOLE_BLOCK_CHANGES:
        segments = change_pieces(text, [(change[1], change[3], change[4]) for change in group], start, stop)
    if segments is None:
        _, old, new, _ = _block(walker, group, context)
        segments = [(old, new)]
    return first, segments


def _emit(prefix: str, line: str, out: list[str]) -> None:
    if line.endswith("\n"):
        out.append(prefix + line)
    else:
        out.append(prefix + line + "\n\\ No newline at end of file\n")


def _write_block(old_first: int, new_first: int, segments: list[tuple[str, str]], out: list[str]) -> int:
    """Append a block, given as (old, new) pieces (``change_pieces``), as a unified hunk.

    Returns its new minus old line count.

    Whole runs of lines get their markers with one ``replace`` (a context run, the
    removed run, the added run); only a middle whose lines overlap is split and aligned
    line by line. Same text as writing every line on its own (the reference writer in
    tests/test_diff_fast_paths.py), in a fraction of the Python steps; a block of more
    than ``WHOLE_BLOCK_CHANGES`` hunks comes in pieces aligned a hunk at a time.
    """
    last_old = next((old for old, _ in reversed(segments) if old), "")
    last_new = next((new for _, new in reversed(segments) if new), "")
    old_count = sum(old.count("\n") for old, _ in segments) + (last_old[-1:] not in ("\n", ""))
    new_count = sum(new.count("\n") for _, new in segments) + (last_new[-1:] not in ("\n", ""))
    old_start = old_first + 1 if old_count else old_first
    new_start = new_first + 1 if new_count else new_first
    out.append(f"@@ -{old_start},{old_count} +{new_start},{new_count} @@\n")
    for old, new in segments:
        if old == new:
            out.append(_marked(" ", old))
        else:
            _write_pair(old, new, out)
    return new_count - old_count


def _write_pair(old: str, new: str, out: list[str]) -> None:
    """The lines of one piece of a block: equal ends as context, the middle aligned."""
    head, old_end, new_end = equal_ends(old, new)
    middle_old, middle_new = old[head:old_end], new[head:new_end]
    out.append(_marked(" ", old[:head]))
    if (
        not middle_old
        or not middle_new
        or (
            middle_old[-1] == middle_new[-1] == "\n"
            and set(middle_old.split("\n")[:-1]).isdisjoint(middle_new.split("\n")[:-1])
        )
    ):
        out.append(_marked("-", middle_old))
        out.append(_marked("+", middle_new))
    else:
        old_lines, new_lines = split_lines(middle_old), split_lines(middle_new)
        for tag, a0, a1, b0, b1 in middle_opcodes(old_lines, new_lines):
            if tag == "equal":
                for line in old_lines[a0:a1]:
                    _emit(" ", line, out)
                continue
            for line in old_lines[a0:a1]:
                _emit("-", line, out)
            for line in new_lines[b0:b1]:
                _emit("+", line, out)
    out.append(_marked(" ", old[old_end:]))


def _marked(prefix: str, text: str) -> str:
    """Every line of ``text`` with ``prefix`` before it, as ``_emit`` writes each one."""
    if not text:
        return ""
    marked = prefix + text.replace("\n", "\n" + prefix)
    if text[-1] == "\n":
        return marked[: -len(prefix)]
    return marked + "\n\\ No newline at end of file\n"


def file_diff(file_plan: FilePlan) -> str:
    before = _before(file_plan)
    old_name = "/dev/null" if file_plan.operation == "add" else f"a/{file_plan.path}"
    new_name = "/dev/null" if file_plan.operation == "delete" else f"b/{file_plan.target_path}"
    if file_plan.hunks and before is not None:
        out = [f"--- {old_name}\n", f"+++ {new_name}\n"]
        delta = 0  # new line number minus old line number after the previous block
        walker, groups = _changes(before, file_plan, CONTEXT)
        for group in groups:
            first, segments = _block_segments(walker, group, CONTEXT)
            delta += _write_block(first, first + delta, segments, out)
        return "".join(out) if len(out) > 2 else _rename_only(file_plan, old_name, new_name)
    before, after = _texts(file_plan)
    if before == after:
        return _rename_only(file_plan, old_name, new_name)
    from nbedit.engine.whole_diff import text_diff

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
    if not file_plan.hunks and not file_plan.notebook and file_plan.operation == "update":
        # a whole-file change (a restore) whose texts are not decoded yet is counted in its
        # UTF-8 bytes: the same lines, and no 10 MB text made for two numbers
        old_bytes, new_bytes = undecoded_before(file_plan), undecoded_after(file_plan)
        if old_bytes is not None and new_bytes is not None:
            from nbedit.engine.whole_diff import whole_stats

            return whole_stats(old_bytes, new_bytes)
    alone = lone_exact_stats(file_plan)
    if alone is not None:  # each hunk is a block of its own (``diff_counts``)
        return alone
    before = _before(file_plan)
    if not file_plan.hunks or before is None:
        return diff_stats(file_diff(file_plan))
    added = removed = 0
    for old, new in _changed_spans(before, file_plan, CONTEXT):
        block_added, block_removed = block_counts(old, new)
        added += block_added
        removed += block_removed
    return added, removed


def _changed_spans(before: str, file_plan: FilePlan, context: int) -> list[tuple[str, str]]:
    """The (old, new) pieces of the diff blocks without context (see ``file_stats``), equal ones left out."""
    walker = _Walker(before)
    changes: list[tuple[int, int, str]] = []  # (first_offset, last_offset, new_text) per located hunk
    for located in sorted(file_plan.hunks, key=lambda item: item.match.start):
        match = located.match
        start, end = match.start, match.end
        first_offset = before.rfind("\n", 0, start) + 1
        if end > start:
            if before[end - 1] == "\n":
                if first_offset == start:  # whole lines (every exactly located hunk of a diff)
                    changes.append((start, end, match.replacement))
                    continue
                last_offset = end
            else:
                last_offset = walker.end_of_line(end - 1)
        elif start == first_offset:
            last_offset = first_offset
        else:
            last_offset = walker.end_of_line(start)
        changes.append(
            (
                first_offset,
                last_offset,
                before[first_offset:start] + match.replacement + before[end:last_offset],
            )
        )
    spans: list[tuple[str, str]] = []
    group: list[tuple[int, int, str]] = []

    def closed() -> bool:
        # the group's pieces added to ``spans``; False (nothing added): count this file the long way
        end = group[-1][1]
        pieces = change_pieces(before, group, group[0][0], end) if len(group) > WHOLE_BLOCK_CHANGES else None
        if pieces is None:  # changes sharing a line: the block's texts whole, as the diff aligns them
            pieces = [(before[group[0][0] : end], _joined(before, group))]
        new = next((new for _, new in reversed(pieces) if new), "")
        if new and not new.endswith("\n") and end < len(before):
            return False  # rare: a block whose new text runs into its trailing context
        spans.extend(piece for piece in pieces if piece[0] != piece[1])
        return True

    counted = True
    for change in changes:
        # the diff joins hunks whose changed lines are at most 2 * context lines apart
        if group and holds_newlines(before, group[-1][1], change[0], 2 * context + 1):
            counted = closed()
            if not counted:
                break
            group = []
        group.append(change)
    else:
        counted = closed() if group else True
    if not counted:  # counted with the context, as the diff does
        walker, groups = _changes(before, file_plan, context)
        return [piece for group in groups for piece in _block_segments(walker, group, context)[1]]
    return spans


def _joined(before: str, group: list[tuple[int, int, str]]) -> str:
    pieces = []
    for number, (_, last_offset, new_text) in enumerate(group):
        following = group[number + 1][0] if number + 1 < len(group) else last_offset
        pieces.append(new_text)
        pieces.append(before[last_offset:following])
    return "".join(pieces)


def _rename_only(file_plan: FilePlan, old_name: str, new_name: str) -> str:
    if file_plan.new_path and file_plan.new_path != file_plan.path:
        return f"--- {old_name}\n+++ {new_name}\n"
    return ""


def plan_diff(plan: Plan) -> str:
    return "".join(file_diff(file_plan) for file_plan in plan.files)


def __getattr__(name: str) -> object:
    if name == "text_diff":  # lives in nbedit.engine.whole_diff (a whole-file diff: restores, moves)
        from nbedit.engine.whole_diff import text_diff

        return text_diff
    # ResyncMatcher lives in nbedit.engine.resync (it brings difflib, which the CLI's exact path never needs)
    if name == "ResyncMatcher":
        from nbedit.engine.resync import ResyncMatcher

        return ResyncMatcher
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
