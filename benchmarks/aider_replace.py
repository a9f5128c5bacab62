"""The peer for many SEARCH/REPLACE blocks: Aider's exact block replacement, re-implemented.

Aider (``aider/coders/editblock_coder.py``) applies each SEARCH/REPLACE block to the whole
file's content, one after another: ``replace_most_similar_chunk`` prepares the content, the
SEARCH and the REPLACE text (a missing final newline added, then ``splitlines(keepends=True)``)
and tries ``perfect_replace`` first, which walks every window of the file's lines as long as the
SEARCH text and takes the first whose tuple of lines is equal, splicing the REPLACE lines in.
This module follows that exact step (it is written here, not copied), so the benchmark compares
like with like on blocks that stand exactly in the file. Aider's further steps (leading
whitespace, "..." elisions, fuzzy windows) run only when the exact step finds nothing; the
benchmark's blocks all stand exactly, so they never run. The first window wins: Aider does not
check that a SEARCH text stands only once.
"""

from __future__ import annotations

__all__ = ["apply_blocks", "perfect_replace"]


def _prepared(content: str) -> tuple[str, list[str]]:
    if content and not content.endswith("\n"):
        content += "\n"
    return content, content.splitlines(keepends=True)


def perfect_replace(whole_lines: list[str], part_lines: list[str], replace_lines: list[str]) -> str | None:
    """The content with the first window of lines equal to ``part_lines`` replaced; None if none is."""
    part = tuple(part_lines)
    length = len(part_lines)
    for start in range(len(whole_lines) - length + 1):
        if tuple(whole_lines[start : start + length]) == part:
            return "".join(whole_lines[:start] + replace_lines + whole_lines[start + length :])
    return None


def apply_blocks(content: str, blocks: list[tuple[str, str]]) -> str:
    """Each (search, replace) block applied in order to the content the blocks before it left."""
    for search, replace in blocks:
        _, whole_lines = _prepared(content)
        _, part_lines = _prepared(search)
        _, replace_lines = _prepared(replace)
        replaced = perfect_replace(whole_lines, part_lines, replace_lines)
        if replaced is None:
            raise ValueError(f"SEARCH block not found: {search[:60]!r}")
        content = replaced
    return content
