"""Unified diffs of a plan, built from the located hunks.

Diffing two 100,000-line texts with difflib takes seconds; the plan already
knows exactly which line spans changed, so the diff is assembled from those
spans plus a few context lines, in time proportional to the change. Files
without located hunks (adds, deletes, restores) fall back to difflib.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nbedit.engine.models import FilePlan, Plan
from nbedit.engine.text import line_starts, split_lines

__all__ = ["CONTEXT", "DiffBlock", "common_ends", "file_blocks", "file_diff", "line_stats", "plan_diff"]

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
    """Diff blocks of one file from its located hunks (empty if it has none)."""
    before, _ = _texts(file_plan)
    if before is None or not file_plan.hunks:
        return []
    starts = line_starts(before)
    lines = _Lines(before, starts)
    # per located hunk: the full-line span it touches and what those lines become
    changes = []
    for hunk_index, located in sorted(enumerate(file_plan.hunks), key=lambda pair: pair[1].match.start):
        match = located.match
        first = _line_at(starts, match.start)
        if match.start == len(before) and before and not before.endswith("\n"):
            first = len(lines) - 1  # appending after a last line that has no newline
        if match.end > match.start:
            last = _line_at(starts, match.end - 1) + 1
        elif match.start == starts[first]:
            last = first  # a pure insertion before line ``first``
        else:
            last = first + 1
        new_text = before[starts[first] : match.start] + match.replacement + before[match.end : starts[last]]
        changes.append((first, last, split_lines(new_text), hunk_index))
    blocks: list[DiffBlock] = []
    group: list[tuple[int, int, list[str], int]] = []
    for change in changes:
        if group and change[0] - group[-1][1] > 2 * context:
            blocks.append(_block(lines, group, context, blocks))
            group = []
        group.append(change)
    if group:
        blocks.append(_block(lines, group, context, blocks))
    return blocks


class _Lines:
    """Lines of a text by slicing on demand: a big file is never split whole."""

    def __init__(self, text: str, starts: list[int]) -> None:
        self.text, self.starts = text, starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, window: slice) -> list[str]:
        first, last, _ = window.indices(len(self))
        starts, text = self.starts, self.text
        return [text[starts[n] : starts[n + 1]] for n in range(first, last)]


def _line_at(starts: list[int], offset: int) -> int:
    from bisect import bisect_right

    return max(0, bisect_right(starts, offset) - 1)


def _block(
    lines: _Lines, group: list[tuple[int, int, list[str], int]], context: int, previous: list[DiffBlock]
) -> DiffBlock:
    first = max(0, group[0][0] - context)
    last = min(len(lines), group[-1][1] + context)
    old = lines[first:last]
    new: list[str] = list(lines[first : group[0][0]])
    for number, (_, stop, replacement, _) in enumerate(group):
        new.extend(replacement)
        following = group[number + 1][0] if number + 1 < len(group) else last
        new.extend(lines[stop:following])
    delta = (
        (
            previous[-1].new_start
            - previous[-1].old_start
            + len(previous[-1].new_lines)
            - len(previous[-1].old_lines)
        )
        if previous
        else 0
    )
    return DiffBlock(first, first + delta, tuple(old), tuple(new), tuple(item[3] for item in group))


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


def _block_text(block: DiffBlock, out: list[str]) -> None:
    """Write a block as a unified hunk, with -/+ only where lines really differ."""
    import difflib

    old, new = block.old_lines, block.new_lines
    old_start = block.old_start + 1 if old else block.old_start
    new_start = block.new_start + 1 if new else block.new_start
    out.append(f"@@ -{old_start},{len(old)} +{new_start},{len(new)} @@\n")
    head, tail = common_ends(old, new)  # diff only the middle
    for line in old[:head]:
        _emit(" ", line, out)
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
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


def _rename_only(file_plan: FilePlan, old_name: str, new_name: str) -> str:
    if file_plan.new_path and file_plan.new_path != file_plan.path:
        return f"--- {old_name}\n+++ {new_name}\n"
    return ""


def plan_diff(plan: Plan) -> str:
    return "".join(file_diff(file_plan) for file_plan in plan.files)


def line_stats(file_plan: FilePlan) -> tuple[int, int]:
    """(added, removed) lines of one file's change."""
    added = removed = 0
    for line in file_diff(file_plan).split("\n"):
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return added, removed
