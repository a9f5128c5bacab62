"""The fuzzy tier: rapidfuzz over windows of lines, and the rules that keep it from guessing.

Candidate windows are those the hunk's most telling lines vote for (lines too common to
tell, ``COMMON_LINE_LIMIT``, do not vote), each scored line by line, a line whose relative
indentation differs losing ``INDENT_PENALTY``. A window wins only when its context is
similar enough (``threshold``; with a line number and lines to change, the lower
``LOCATOR_CONTEXT_FLOOR``), the exact change can be carried onto it (every line the change
removes is really there), and it leads every other acceptable place by ``FUZZY_MARGIN`` or a
line number decides: drifted context is tolerated, deleting the wrong line is not. A hunk
with fewer than ``FUZZY_MIN_LINES`` non-blank old lines is never matched fuzzily.

rapidfuzz is imported by the functions that use it: an exact change never loads it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from nbedit.engine.match.replacement import _replacement
from nbedit.engine.match.search import TRUSTED_DISTANCE, _Hit, _overlaps
from nbedit.engine.match.tiers import FileIndex, _fuzzy_line
from nbedit.engine.models import Hunk, Tier
from nbedit.engine.text import strip_newline
from nbedit.errors import AmbiguousMatch

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from nbedit.engine.transport import Refusal

FUZZY_MIN_LINES = 2  # fewer non-blank lines than this are never matched fuzzily
FUZZY_SHORT_LINES = 3  # a shorter old text needs one of its lines in the file exactly (up to spelling)
FUZZY_MARGIN = 0.05  # the best fuzzy window must beat any other place by this much

# with a line number, drifted context may score this low; real drift needs 0.62 at the lowest
# (benchmarks/locator_floor.py); below 0.6 nearly half of the context differs
LOCATOR_CONTEXT_FLOOR = 0.6

COMMON_LINE_LIMIT = 40  # lines seen more often than this do not vote for windows
INDENT_PENALTY = 0.2  # a line whose relative indentation differs loses this much similarity
FUZZY_MAX_LINE = 1_000  # longer lines are compared for equality only (similarity is quadratic in length)


def _enough_for_fuzzy(hunk: Hunk) -> bool:
    """A fuzzy match needs context to vouch for it: at least FUZZY_MIN_LINES non-blank lines.

    A single line that is merely similar (``alpha = 1`` against ``alpha = 100``)
    is a different line, not drift; it gets a NoMatch with the near miss shown.
    A short old text (fewer than FUZZY_SHORT_LINES non-blank lines) must also
    have a line in the file exactly, up to spelling (see ``_fuzzy_winner``).
    """
    return _non_blank(hunk) >= FUZZY_MIN_LINES


def _non_blank(hunk: Hunk) -> int:
    return sum(1 for line in _query_lines(hunk) if line.strip())


def _query_lines(hunk: Hunk) -> list[str]:
    lines = hunk.old.split("\n")
    if hunk.old.endswith("\n"):
        lines.pop()
    return lines


def _context_floor(hunk: Hunk, near_line: int | None, threshold: float) -> float:
    """The lowest window score the fuzzy tier accepts: lower with a line number, when lines change."""
    return LOCATOR_CONTEXT_FLOOR if (near_line is not None and _changes_lines(hunk)) else threshold


def _changes_lines(hunk: Hunk) -> bool:
    """True when the hunk removes or rewrites at least one old line (exact comparison)."""
    import difflib

    from nbedit.engine.transport import split_change_lines

    old_lines, _ = split_change_lines(hunk.old)
    new_lines, _ = split_change_lines(hunk.new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return any(tag in ("replace", "delete") for tag, *_ in matcher.get_opcodes())


def _similarity(first: str, second: str) -> float:
    """Line similarity in [0, 1]; long lines count only when equal (keeps the tier linear)."""
    from rapidfuzz import fuzz

    if first == second:
        return 1.0
    if len(first) > FUZZY_MAX_LINE or len(second) > FUZZY_MAX_LINE:
        return 0.0
    return fuzz.ratio(first, second) / 100.0


def _fuzzy_candidates(
    index: FileIndex, hunk: Hunk, low: int, high: int, near_line: int | None
) -> list[tuple[_Hit, float, list[float]]]:
    """Line windows the size of the hunk, scored; best first."""
    from rapidfuzz import fuzz, process  # only the fuzzy tier needs it: keep it off the import path

    query = [_fuzzy_line(line) for line in _query_lines(hunk)]
    size = len(query)
    file_lines = index.fuzzy_lines
    first_line = index.line_of(low)
    last_start = min(index.line_of(max(low, high - 1)), index.line_count - 1) - size + 1
    if size == 0 or last_start < first_line:
        return []
    votes: dict[int, int] = defaultdict(int)
    # the longest lines are the most telling; each costs one scan of the text
    voters = sorted((n for n, line in enumerate(query) if len(line) >= 3), key=lambda n: -len(query[n]))[:8]
    for offset in voters:
        line = query[offset]
        found = index.positions_of(line, COMMON_LINE_LIMIT)
        for number in found or ():
            start = number - offset
            if first_line <= start <= last_start:
                votes[start] += 1
    starts = set(sorted(votes, key=votes.__getitem__, reverse=True)[:40])
    if not votes or max(votes.values()) < 2:
        # every line drifted: let the most distinctive lines find their look-alikes
        distinctive = sorted(
            (n for n, line in enumerate(query) if line and len(line) <= FUZZY_MAX_LINE),
            key=lambda n: -len(query[n]),
        )[:3]
        region_lines = file_lines[first_line : last_start + size]
        for offset in distinctive:
            for _, _, number in process.extract(
                query[offset], region_lines, scorer=fuzz.ratio, limit=10, score_cutoff=60
            ):
                start = first_line + number - offset
                if first_line <= start <= last_start:
                    starts.add(start)
    if near_line is not None:
        centre = near_line - 1
        starts.update(range(max(first_line, centre - 3), min(last_start, centre + 3) + 1))
    partial = _starts_mid_line(hunk)
    skip = 1 if partial else 0  # a first line that starts mid-line says nothing about indentation
    query_indents = [None] * skip + _relative_indents(_query_lines(hunk)[skip:])
    scored = []
    for start in starts:
        window = file_lines[start : start + size]
        line_scores = [_similarity(a, b) for a, b in zip(query, window, strict=True)]
        window_indents = [None] * skip + _relative_indents(index.line_range(start + skip, size - skip))
        for number, (wanted, seen) in enumerate(zip(query_indents, window_indents, strict=True)):
            if wanted is not None and seen is not None and wanted != seen:
                # structure differs (in Python, meaning does): never a perfect line
                line_scores[number] = max(0.0, line_scores[number] - INDENT_PENALTY)
        score = sum(line_scores) / size
        hit = _fit_hit(index, hunk, start, size)
        scored.append((hit, score, line_scores))
    scored.sort(key=lambda item: (-item[1], item[0].first_line))
    return scored


def _fit_hit(index: FileIndex, hunk: Hunk, start: int, size: int) -> _Hit:
    """A fuzzy window of whole lines, ending where the old text ends.

    An old text without a final newline (an agent's ``old_string`` ending
    mid-file) ends before the last line's ending, so the line after it is never
    joined to the replacement.
    """
    end = index.starts[start + size]
    if not hunk.old.endswith("\n"):
        end = index.starts[start + size - 1] + len(strip_newline(index.line(start + size - 1)))
    begin = index.starts[start]
    if _starts_mid_line(hunk):
        # an old text that starts at a token (an agent's old_string) starts after the indentation
        first = index.line(start)
        begin += len(first) - len(first.lstrip(" \t"))
    return _Hit(begin, end, start, size)


def _starts_mid_line(hunk: Hunk) -> bool:
    """An old/new pair whose old text starts at a token rather than at a line's indentation."""
    return not hunk.whole_lines and hunk.old[:1] not in ("", " ", "\t", "\n", "\r")


def _relative_indents(lines: Sequence[str]) -> list[int | None]:
    """Indent width of each line relative to the first non-blank line (None: blank)."""
    widths: list[int | None] = []
    for line in lines:
        body = strip_newline(line).expandtabs(4)
        widths.append(len(body) - len(body.lstrip()) if body.strip() else None)
    base = next((width for width in widths if width is not None), 0)
    return [None if width is None else width - base for width in widths]


_Scored = tuple[_Hit, float, list[float]]


def _fuzzy_winner(
    candidates: list[_Scored],
    hunk: Hunk,
    threshold: float,
    near_line: int | None,
    index: FileIndex,
    path: str | None,
) -> tuple[_Hit, float, str] | None:
    """Apply the fuzzy rules; the winning window, its score and its replacement, or None.

    A window is acceptable when its context is similar enough (``threshold``;
    with a locator and lines to change, ``LOCATOR_CONTEXT_FLOOR``) *and* the
    exact change can be carried onto it: every line the change removes or
    rewrites is really there (see ``transport``). The winner must beat every
    other acceptable place by ``FUZZY_MARGIN``, or a locator must decide.
    """
    if not candidates:
        return None
    floor = _context_floor(hunk, near_line, threshold)
    replacements: dict[int, str | Refusal] = {}

    def carried(item: _Scored) -> str | Refusal:
        key = item[0].first_line
        if key not in replacements:
            replacements[key] = _replacement(
                index, hunk, item[0], Tier.FUZZY, strict_context=near_line is None
            )
        return replacements[key]

    short = _non_blank(hunk) < FUZZY_SHORT_LINES

    def acceptable(item: _Scored) -> bool:
        if item[1] < floor or (short and 1.0 not in item[2]):
            return False
        return isinstance(carried(item), str)

    passing = [item for item in candidates if acceptable(item)]
    if not passing:
        return None
    best = passing[0]
    for item in candidates:
        if item is best or item[1] < floor:
            break
        refused = carried(item)
        if not isinstance(refused, str) and refused.kind in ("conflict", "indentation"):
            # the closest place contradicts the change, or its indentation cannot be mapped (old
            # lines mixing 4 and 8 spaces to the file's tab: no uniform mapping, issue 21): a lower
            # place is not where it was meant, only a place where the drift happens to look uniform
            return None
    rivals = [
        item for item in passing[1:] if not _overlaps(item[0], best[0]) and item[1] > best[1] - FUZZY_MARGIN
    ]
    if rivals:
        if near_line is not None:
            contenders = [best, *rivals]
            contenders.sort(key=lambda item: abs(item[0].first_line + 1 - near_line))
            if abs(contenders[0][0].first_line + 1 - near_line) < abs(
                contenders[1][0].first_line + 1 - near_line
            ) and abs(contenders[0][0].first_line + 1 - near_line) <= TRUSTED_DISTANCE:
                chosen = contenders[0]
                return chosen[0], chosen[1], _as_text(carried(chosen))
        locations = [(item[0].first_line + 1, 1) for item in [best, *rivals]]
        raise AmbiguousMatch(
            f"{path or 'file'}: no exact match, and {len(locations)} places are about equally similar "
            f"(best {best[1]:.2f}, next {rivals[0][1]:.2f}: a clear winner must lead by {FUZZY_MARGIN:.2f}); "
            "nbedit will not guess",
            path=path,
            locations=locations,
            tier=Tier.FUZZY.value,
        )
    return best[0], best[1], _as_text(carried(best))


def _as_text(value: str | Refusal) -> str:
    assert isinstance(value, str)
    return value
