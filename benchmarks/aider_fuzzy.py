"""The peer for fuzzy locating: Aider's closest-edit-distance search, re-implemented.

Aider (``aider/coders/editblock_coder.py``, ``replace_closest_edit_distance``)
tries every window of the file whose length is within 10% of the SEARCH block's
line count (``floor(n * 0.9)`` up to, not including, ``ceil(n * 1.1)``), joins
the window's lines and scores it with ``difflib.SequenceMatcher(None, window,
search).ratio()`` over characters; the first window with the strictly highest
ratio wins if that ratio is at least 0.8. This module follows that algorithm
step for step (it is written here, not copied) so the benchmark compares like
with like. Aider's current release leaves this step switched off, we assume
because of the cost this benchmark measures.
"""

from __future__ import annotations

import math
from difflib import SequenceMatcher

__all__ = ["closest_window"]

SIMILARITY_THRESHOLD = 0.8
SCALE = 0.1


def closest_window(file_lines: list[str], search: str) -> tuple[int, int, float] | None:
    """(first line, end line, ratio) of the most similar window, or None below 0.8.

    ``file_lines`` keep their line endings, as ``str.splitlines(keepends=True)`` gives.
    """
    search_lines = search.splitlines(keepends=True)
    shortest = math.floor(len(search_lines) * (1 - SCALE))
    longest = math.ceil(len(search_lines) * (1 + SCALE))
    best_ratio = 0.0
    best: tuple[int, int] = (-1, -1)
    for length in range(shortest, longest):
        for start in range(len(file_lines) - length + 1):
            window = "".join(file_lines[start : start + length])
            ratio = SequenceMatcher(None, window, search).ratio()
            if ratio > best_ratio and ratio:
                best_ratio = ratio
                best = (start, start + length)
    if best_ratio < SIMILARITY_THRESHOLD:
        return None
    return best[0], best[1], best_ratio
