"""Offset-and-drift cases: one multi-hunk patch, four targets that moved and drifted.

The patch is made against a base file; every target is that file with 50 lines
inserted at the top (so every hunk is 50 lines off) and, in three of the four
cases, some *context* lines changed after the patch was made:

(a) ``as-is``        nothing else changed;
(b) ``outer``        the outermost context line of three hunks edited (GNU patch's
                     default fuzz 2 may drop those);
(c) ``inner``        one context line right next to a change edited (no fuzz factor
                     can drop it);
(d) ``whitespace``   whitespace edits in three context lines next to changes
                     (trailing blanks, a doubled inner space, a trailing tab).

The intended result keeps the target's drifted context and makes the patch's
changes, so it is the drift applied to the patched base, shifted the same way.
Changes replace lines one for one, which keeps line numbers aligned between
base, patched base and intended result. Pure: the cases are built in memory.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from benchmarks.corpus import code_lines, join_lines

__all__ = ["PATH", "SHIFT", "DriftCase", "drift_cases"]

PATH = "drift.py"
SHIFT = 50
_CONTEXT = 3


@dataclass(frozen=True, slots=True)
class DriftCase:
    name: str
    description: str
    patch: str  # unified diff with a/ and b/ prefixes
    target: str  # the file the patch is applied to
    intended: str  # what the file must become
    drifted: bool  # True when some context no longer matches the patch exactly


def _distinctive_positions(lines: list[str], count: int) -> list[int]:
    """Change positions whose 7-line neighbourhood is made of unique, non-blank lines."""
    seen: dict[str, int] = {}
    for line in lines:
        seen[line] = seen.get(line, 0) + 1
    stride = len(lines) // (count + 1)
    positions: list[int] = []
    for number in range(1, count + 1):
        position = max(number * stride, positions[-1] + 4 * _CONTEXT if positions else 0)
        while not all(
            lines[n].strip() and seen[lines[n]] == 1 and not lines[n].rstrip().endswith(":")
            for n in range(position - _CONTEXT, position + _CONTEXT + 1)
        ):
            position += 1
        positions.append(position)
    if positions[-1] + _CONTEXT >= len(lines):
        raise ValueError("file too short for that many distinctive hunks")
    return positions


def _rename_first_word(line: str) -> str:
    body = line.lstrip()
    indent = line[: len(line) - len(body)]
    word_end = 0
    while word_end < len(body) and (body[word_end].isalnum() or body[word_end] == "_"):
        word_end += 1
    return indent + body[:word_end] + "_old" + body[word_end:]


def _double_inner_space(line: str) -> str:
    body = line.lstrip()
    indent = line[: len(line) - len(body)]
    return indent + body.replace(" ", "  ", 1)


def _changed(line: str) -> str:
    return line + "  # changed by the patch"


def drift_cases(file_lines: int = 1000, hunks: int = 5) -> list[DriftCase]:
    base = code_lines(file_lines, seed=7)
    positions = _distinctive_positions(base, hunks)
    patched = list(base)
    for position in positions:
        patched[position] = _changed(base[position])
    patch = "".join(
        difflib.unified_diff(
            join_lines(base).splitlines(keepends=True),
            join_lines(patched).splitlines(keepends=True),
            f"a/{PATH}",
            f"b/{PATH}",
            n=_CONTEXT,
        )
    )
    header = [f"# moved: line {n + 1} of a block added after the patch was made" for n in range(SHIFT)]
    first, second, third, _, fifth = positions

    def case(name: str, description: str, drift: dict[int, str] | None = None) -> DriftCase:
        drift = drift or {}
        target = [drift.get(n, line) for n, line in enumerate(base)]
        intended = [drift.get(n, line) if n not in positions else line for n, line in enumerate(patched)]
        return DriftCase(
            name, description, patch, join_lines(header + target), join_lines(header + intended), bool(drift)
        )

    return [
        case("as-is", f"target shifted by {SHIFT} lines"),
        case(
            "outer",
            "shifted, and the outermost context line of 3 hunks edited",
            {
                first - _CONTEXT: _rename_first_word(base[first - _CONTEXT]),
                second + _CONTEXT: _rename_first_word(base[second + _CONTEXT]),
                third - _CONTEXT: _rename_first_word(base[third - _CONTEXT]),
            },
        ),
        case(
            "inner",
            "shifted, and the context line next to one change edited",
            {second - 1: _rename_first_word(base[second - 1])},
        ),
        case(
            "whitespace",
            "shifted, and whitespace edited in 3 context lines next to changes",
            {
                first - 1: base[first - 1] + "   ",
                third + 1: _double_inner_space(base[third + 1]),
                fifth - 1: base[fifth - 1] + "\t",
            },
        ),
    ]
