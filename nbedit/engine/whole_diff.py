"""A unified diff of two whole texts, for changes that have no located hunks.

A file that is added, deleted, restored from the history or planned as a whole (a
notebook edit that changed its structure) has no hunks to diff from, so its preview is
the diff of the texts themselves. Kept apart from ``diff.py`` (the diff of located
hunks) and from ``plan.py`` (which re-exports it for its callers): it needs neither.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["text_diff", "whole_stats"]


def text_diff(before: str | None, after: str | None, path: str, new_path: str | None = None) -> str:
    """A unified diff of two whole texts (used when there are no located hunks).

    The shared head and tail are found with slice comparisons (memcmp, binary
    search) and only the differing middle, plus context, is aligned
    (``text_opcodes``: its equal stretches are compared in place, never split into
    lines): a restore across a dozen edits spread over a 10 MB file splits a few
    hundred lines, not all of them.
    """
    old, new = before or "", after or ""
    if old == new:
        return ""
    start, old_stop, new_stop = _aligned_span(old, new)
    first_line = old.count("\n", 0, start)
    out = [
        "--- " + ("/dev/null" if before is None else f"a/{path}") + "\n",
        "+++ " + ("/dev/null" if after is None else f"b/{new_path or path}") + "\n",
    ]
    from nbedit.engine.text_opcodes import TextOpcodes, grouped

    opcodes = TextOpcodes(old, new, (start, old_stop), (start, new_stop))
    for group in grouped(opcodes.opcodes, 3):
        first, last = group[0], group[-1]
        out.append(
            f"@@ -{_range(first[1] + first_line, last[2] + first_line)} "
            f"+{_range(first[3] + first_line, last[4] + first_line)} @@\n"
        )
        for tag, a0, a1, b0, b1 in group:
            old_lines, new_lines = opcodes.lines(a0, a1, b0, b1, new=tag != "equal")
            if tag == "equal":
                out.extend(_diff_line(" ", line) for line in old_lines)
                continue
            out.extend(_diff_line("-", line) for line in old_lines)
            out.extend(_diff_line("+", line) for line in new_lines)
    return "".join(out)


def whole_stats(before: str | bytes | None, after: str | bytes | None) -> tuple[int, int]:
    """(added, removed) lines of ``text_diff(before, after, ...)``, counted without writing it.

    Both sides may be UTF-8 bytes instead of texts (the same lines, see ``text_opcodes``):
    a restore's entry counts its lines without decoding the file. Every changed line is
    in some hunk of the diff, so the counts are the changed opcodes' lengths.
    """
    empty = b"" if isinstance(before, bytes) or isinstance(after, bytes) else ""
    old, new = before or empty, after or empty
    if old == new:
        return 0, 0
    start, old_stop, new_stop = _aligned_span(old, new)
    from nbedit.engine.text_opcodes import TextOpcodes

    added = removed = 0
    opcodes = TextOpcodes(old, new, (start, old_stop), (start, new_stop))  # type: ignore[arg-type]
    for tag, i1, i2, j1, j2 in opcodes.opcodes:
        if tag != "equal":
            added += j2 - j1
            removed += i2 - i1
    return added, removed


def _aligned_span(old: Any, new: Any) -> tuple[int, int, int]:
    """(start, old stop, new stop): the lines of two different texts (or UTF-8 byte strings) a
    diff aligns: from the first differing line to the last, with up to three equal lines around
    them. Found with slice comparisons; the rest is the same in both and never looked at."""
    newline = "\n" if isinstance(old, str) else b"\n"
    head = _shared_prefix(old, new)
    head = old.rfind(newline, 0, head) + 1  # back to a line start (the same in both)
    tail = _shared_suffix(old, new, head)
    old_end = len(old) - tail
    if old_end > head and old[old_end - 1 : old_end] != newline:
        found = old.find(newline, old_end)
        old_end = found + 1 if found != -1 else len(old)
    new_end = len(new) - (len(old) - old_end)
    start = head
    for _ in range(3):
        if start == 0:
            break
        start = old.rfind(newline, 0, start - 1) + 1
    old_stop = old_end
    for _ in range(3):
        if old_stop >= len(old):
            break
        found = old.find(newline, old_stop)
        old_stop = found + 1 if found != -1 else len(old)
    return start, old_stop, new_end + (old_stop - old_end)


def _range(start: int, stop: int) -> str:
    """A unified-diff range, as difflib writes it (1-based; an empty range names the line before)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _diff_line(prefix: str, line: str) -> str:
    return prefix + line if line.endswith("\n") else prefix + line + "\n\\ No newline at end of file\n"


def _shared_prefix(first: Any, second: Any) -> int:
    """Length of the common prefix, by binary search.

    Each probe compares only the window still in doubt (``second.startswith(first[low:middle],
    low)``): copying and comparing whole prefixes at every probe cost some twenty passes over a
    10 MB text; the windows halve, so this is about one.
    """
    low, high = 0, min(len(first), len(second))
    # Invariant: first[:low] == second[:low], and they differ somewhere before high + 1.
    while low < high:
        middle = (low + high + 1) // 2
        if second.startswith(first[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def _shared_suffix(first: Any, second: Any, floor: int) -> int:
    """Length of the common suffix that does not reach back past ``floor`` (windows as above)."""
    low, high = 0, min(len(first), len(second)) - floor
    first_end, second_end = len(first), len(second)
    while low < high:
        middle = (low + high + 1) // 2
        if second.endswith(first[first_end - middle : first_end - low], 0, second_end - low):
            low = middle
        else:
            high = middle - 1
    return low
