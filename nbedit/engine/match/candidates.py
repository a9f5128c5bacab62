"""What the matcher says about the places it weighed, in words.

A match found by a lenient tier carries its explanation (tiers tried, the runner-up and why
it lost, the offset from the line named, expected against what the file holds: the rows of
``plan.explain()`` and "Why here?"); a ``NoMatch`` lists its near misses as ``Candidate``
values, each with the real reason it was not taken, not just a score. Kept apart from the
search: the words are built only when a match is lenient or a hunk is refused, and difflib
is imported only then.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.match.fuzzy import (
    FUZZY_MARGIN,
    FUZZY_MIN_LINES,
    FUZZY_SHORT_LINES,
    _enough_for_fuzzy,
    _non_blank,
    _query_lines,
    _relative_indents,
    _Scored,
)
from nbedit.engine.match.replacement import _replacement
from nbedit.engine.match.search import _Hit, _overlaps
from nbedit.engine.match.tiers import FileIndex, MatchOptions
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.engine.text import strip_newline
from nbedit.errors import Candidate


def _places(hits: Sequence[_Hit]) -> str:
    shown = ", ".join(str(hit.first_line + 1) for hit in hits[:5])
    return f"{len(hits)} place{'s' if len(hits) != 1 else ''} (line{'s' if len(hits) != 1 else ''} {shown})"


def _span(hit: _Hit) -> str:
    last = hit.first_line + max(hit.line_count, 1)
    return (
        f"line {hit.first_line + 1}" if last == hit.first_line + 1 else f"lines {hit.first_line + 1}-{last}"
    )


def _runner_up(
    candidates: list[_Scored], winner: _Hit, index: FileIndex, hunk: Hunk, options: MatchOptions
) -> str:
    """The best other place the fuzzy tier scored, and why it lost (or that there was none)."""
    for hit, score, _ in candidates:
        if _overlaps(hit, winner):
            continue
        carried = _replacement(index, hunk, hit, Tier.FUZZY, strict_context=hunk.start_line is None)
        why = carried.reason if not isinstance(carried, str) else "lower score"
        return f"{score:.2f} at {_span(hit)} ({why})"
    return "no other candidate"


def _explained(
    index: FileIndex, hunk: Hunk, match: Match, tried: list[str], runner_up: str | None = None
) -> Match:
    """``match`` with the matcher's decision attached as (label, text) rows."""
    rows = [("tiers tried", "; ".join(tried))]
    if runner_up is not None:
        rows.append(("runner-up", runner_up))
    if match.offset:
        rows.append(
            ("offset", f"{match.offset:+d} lines from line {match.line - match.offset} named by the change")
        )
    expected = [_shortened(line) for line in _query_lines(hunk)]
    actual = [_shortened(strip_newline(line)) for line in index.line_range(match.line - 1, match.line_count)]
    if expected != actual:
        import difflib  # explanations only: the exact path never loads it

        diff = list(
            difflib.unified_diff(expected, actual, "expected", "in file", n=len(expected), lineterm="")
        )[3:]
        rows.append(("expected (-) vs in the file (+)", "\n".join(diff[:40])))
    return replace(match, explanation=tuple(rows))


def _rejection_reason(
    index: FileIndex, hunk: Hunk, item: _Scored, floor: float, strict_context: bool = False
) -> str:
    """Why a near miss was not taken, in words (the real reason, not just a score)."""
    refusal = _replacement(index, hunk, item[0], Tier.FUZZY, strict_context=strict_context)
    if not isinstance(refusal, str):
        return refusal.reason
    if item[1] < floor:
        wanted = _relative_indents(_query_lines(hunk))
        seen = _relative_indents(index.line_range(item[0].first_line, item[0].line_count))
        shifted = [
            number + 1
            for number, (a, b) in enumerate(zip(wanted, seen, strict=False))
            if None not in (a, b) and a != b
        ]
        if shifted:
            lines = ", ".join(str(number) for number in shifted[:5])
            return (
                f"the lines are similar (needs {floor:.2f}), but the indentation of old line{'s' if len(shifted) > 1 else ''} "
                f"{lines} relative to the others differs from the file's (in Python that changes meaning)"
            )
        return f"the surrounding lines differ too much (needs {floor:.2f})"
    if not _enough_for_fuzzy(hunk):
        return f"a fuzzy match needs at least {FUZZY_MIN_LINES} non-blank old lines to vouch for it"
    if _non_blank(hunk) < FUZZY_SHORT_LINES and 1.0 not in item[2]:
        return "with so few lines, one of them must be in the file exactly"
    return f"another place is about as similar (a fuzzy match must lead the next place by {FUZZY_MARGIN:.2f})"


def _candidate(index: FileIndex, hunk: Hunk, hit: _Hit, score: float, reason: str | None = None) -> Candidate:
    expected = [_shortened(line) for line in _query_lines(hunk)]
    actual = [_shortened(strip_newline(line)) for line in index.line_range(hit.first_line, hit.line_count)]
    import difflib

    diff = "\n".join(
        list(difflib.unified_diff(expected, actual, "expected", "in file", n=1, lineterm=""))[2:][:30]
    )
    return Candidate(
        hit.first_line + 1, hit.first_line + hit.line_count, round(score, 3), diff, reason=reason
    )


def _shortened(line: str, limit: int = 200) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def _no_match_message(hunk: Hunk, path: str | None, options: MatchOptions) -> str:
    first = next((line for line in _query_lines(hunk) if line.strip()), "")
    shown = first if len(first) < 70 else first[:67] + "..."
    where = f" (the hunk at line {hunk.source_line} of the change text)" if hunk.source_line else ""
    mode = " (exact matching only)" if options.exact else ""
    return f"{path or 'file'}: could not find the old text{where} starting {shown!r}{mode}"
