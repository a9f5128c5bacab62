"""A unified diff of two whole texts, for changes that have no located hunks.

A file that is added, deleted, restored from the history or planned as a whole (a
notebook edit that changed its structure) has no hunks to diff from, so its preview is
the diff of the texts themselves. Kept apart from ``diff.py`` (the diff of located
hunks) and from ``plan.py`` (which re-exports it for its callers): it needs neither.
"""

from __future__ import annotations

__all__ = ["text_diff"]


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
    head = _shared_prefix(old, new)
    head = old.rfind("\n", 0, head) + 1  # back to a line start (the same in both)
    tail = _shared_suffix(old, new, head)
    old_end = len(old) - tail
    if old_end > head and old[old_end - 1] != "\n":
        newline = old.find("\n", old_end)
        old_end = newline + 1 if newline != -1 else len(old)
    new_end = len(new) - (len(old) - old_end)
    start = head
    for _ in range(3):
        if start == 0:
            break
        start = old.rfind("\n", 0, start - 1) + 1
    old_stop = old_end
    for _ in range(3):
        if old_stop >= len(old):
            break
        newline = old.find("\n", old_stop)
        old_stop = newline + 1 if newline != -1 else len(old)
    new_stop = new_end + (old_stop - old_end)
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
            old_lines, new_lines = opcodes.lines(a0, a1, b0, b1)
            if tag == "equal":
                out.extend(_diff_line(" ", line) for line in old_lines)
                continue
            out.extend(_diff_line("-", line) for line in old_lines)
            out.extend(_diff_line("+", line) for line in new_lines)
    return "".join(out)


def _range(start: int, stop: int) -> str:
    """A unified-diff range, as difflib writes it (1-based; an empty range names the line before)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _diff_line(prefix: str, line: str) -> str:
    return prefix + line if line.endswith("\n") else prefix + line + "\n\\ No newline at end of file\n"


def _shared_prefix(first: str, second: str) -> int:
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


def _shared_suffix(first: str, second: str, floor: int) -> int:
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
