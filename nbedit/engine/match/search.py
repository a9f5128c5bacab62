"""Where a hunk's old text occurs at one tier: every place, or the nearest to a line number.

A hit in a tier's normalised text is mapped back to the original offsets and lines
(``_hit_at``): a whole-line hunk must start and end at line boundaries, and the indentation
tier takes a place only when every line moved by one uniform offset. With a line number the
search walks outward from it, so a patch of many hunks against a large file costs time near
each hunk, not a scan each. Without one, when many hunks are located in the same text, the
exact and line-endings tiers read a whole-line hunk's places from an index of the text's lines
(``FileIndex.line_table``, ``line_table.py``): the same places, without a scan per hunk. A place
is a ``_Hit`` (offsets and lines); which of several places wins is the cascade's decision, not
this module's.
"""

from __future__ import annotations

from nbedit._dataclass import dataclass
from nbedit.engine.match.tiers import FileIndex, _normalise
from nbedit.engine.models import Hunk, Tier
from nbedit.engine.text import strip_newline

try:  # bisect's own function, without bisect.py (start-up)
    from _bisect import bisect_right
except ImportError:  # an interpreter without the C module
    from bisect import bisect_right

MAX_LOCATIONS = 50

# a line number decides between identical places only when it points at one of them or next to
# it (after the offset earlier hunks of the diff were found at): model-written line numbers are
# often far off, and "the nearest" of two far places is a guess (issue 21: 79 wrong results)
TRUSTED_DISTANCE = 1


@dataclass(frozen=True, slots=True)
class _Hit:
    """A place a hunk's old text was found: character offsets and the lines they span."""

    start: int  # offsets into the original text
    end: int
    first_line: int  # 0-based
    line_count: int


def _find(
    index: FileIndex, hunk: Hunk, tier: Tier, low: int, high: int, near_line: int | None = None
) -> list[_Hit]:
    """Places the hunk's old text occurs at this tier, within [low, high).

    Without a locator: every place (up to MAX_LOCATIONS + 1). With one: only the
    nearest place on each side of it, found by searching outward, so a patch of
    many hunks against a large file costs time near each hunk, not a scan each.
    """
    text = index.normalised(tier)
    old = _normalise(hunk.old, tier)
    if tier is not Tier.EXACT and not old.strip("\n"):
        return []  # a block of blank lines is never a safe anchor in a lenient tier
    if tier is Tier.EXACT:
        search_low, search_high = low, high
    elif low == 0 and high == len(index.text):
        search_low, search_high = 0, len(text)
    else:
        starts = index.normalised_starts(tier)
        # normalised text has other offsets: search the whole lines of the region
        first = index.line_of(low)
        last = index.line_of(max(low, high - 1)) if high > low else first
        search_low, search_high = starts[first], starts[min(last + 1, len(starts) - 1)]

    def valid(position: int, length: int) -> _Hit | None:
        hit = _hit_at(index, hunk, tier, text, position, length)
        return hit if hit is not None and low <= hit.start and hit.end <= high else None

    hits: list[_Hit] = []
    if near_line is not None and not hunk.replace_all:
        starts = index.normalised_starts(tier)
        origin = starts[min(max(near_line - 1, 0), len(starts) - 1)]
        origin = min(max(origin, search_low), search_high)
        position = text.find(old, origin, search_high)
        while position != -1:
            hit = valid(position, len(old))
            if hit is not None:
                hits.append(hit)
                break
            position = text.find(old, position + 1, search_high)
        backward_low = search_low
        if hits:
            # only a place strictly nearer than the forward one can matter
            distance = hits[0].first_line + 1 - near_line
            if distance <= 0:
                return hits
            backward_low = max(search_low, starts[max(near_line - 1 - distance, 0)])
        position = text.rfind(old, backward_low, min(origin + len(old) - 1, search_high))
        while position != -1:
            hit = valid(position, len(old))
            if hit is not None:
                if not hits or hits[0].start != hit.start:
                    hits.append(hit)
                break
            position = text.rfind(old, backward_low, position + len(old) - 1)
    else:
        table = index.line_table if hunk.whole_lines else None
        found = None
        if table is not None and tier is Tier.EXACT:
            found = table.hits(old, low, high, MAX_LOCATIONS + 1)
            if found is not None:
                # the same places the search below finds, from the lines they start with (``line_table``)
                count = old.count("\n")
                hits = [_Hit(start, start + len(old), line, count) for start, line in found]
        elif table is not None and tier is Tier.LINE_ENDINGS and low == 0 and high == len(index.text):
            found = table.without_line_endings(text).hits(old, search_low, search_high, MAX_LOCATIONS + 1)
            if found is not None:  # places in the normalised text, mapped back as the search maps them
                hits = [hit for hit in (valid(start, len(old)) for start, _ in found) if hit is not None]
        position = -1 if found is not None else text.find(old, search_low, search_high)
        while position != -1 and len(hits) <= MAX_LOCATIONS:
            hit = valid(position, len(old))
            if hit is not None:
                hits.append(hit)
            position = text.find(old, position + 1, search_high)
    if (
        not hits
        and hunk.whole_lines
        and len(old) > 1
        and old.endswith("\n")
        and text
        and not text.endswith("\n")
    ):
        # a whole-line hunk ending in "\n" may match a last line that has none
        trimmed = old[:-1]
        position = len(text) - len(trimmed)
        if text.endswith(trimmed) and position >= search_low:
            hit = valid(position, len(trimmed))
            if hit is not None:
                hits.append(hit)
    return hits


def _hit_at(index: FileIndex, hunk: Hunk, tier: Tier, text: str, position: int, length: int) -> _Hit | None:
    """Map a hit in (normalised) text back to original offsets; None if not aligned."""
    at_line_start = position == 0 or text[position - 1] == "\n"
    end = position + length
    if hunk.whole_lines and not at_line_start:
        return None
    if hunk.whole_lines and not (end == len(text) or (end > position and text[end - 1] == "\n")):
        return None
    if tier is Tier.EXACT:
        # line numbers by counting newlines (C speed, on from the previous hit), not from a table
        # of every line start
        first = index.newlines_before(position)
        return _Hit(position, end, first, text.count("\n", position, max(position, end - 1)) + 1)
    normalised_starts = index.normalised_starts(tier)
    first = bisect_right(normalised_starts, position) - 1
    ends_with_newline = end > position and text[end - 1] == "\n"
    last = bisect_right(normalised_starts, end - 1) - 1 if end > position else first
    line_count = last - first + 1
    starts = index.starts
    line_count_total = index.line_count
    if hunk.whole_lines:
        start = starts[first]
        stop = starts[min(last + 1, len(starts) - 1)]
        if not ends_with_newline and last < line_count_total:
            # hunk text lacks the final newline: the match ends at the line's content end
            stop = starts[last] + len(strip_newline(index.line(last)))
            if stop != len(index.text) and last + 1 < line_count_total:
                return None
        if tier is Tier.INDENTATION and not _uniform_indent(index, hunk, first, line_count, True):
            return None
        return _Hit(start, stop, first, line_count)
    # substring hunk: map columns in the first and last line
    column = position - normalised_starts[first]
    if tier is Tier.INDENTATION and column != 0 and hunk.old[:1] in (" ", "\t"):
        # the old text starts with indentation, so with a line's text: it never starts inside a
        # token ("    slots__" is not the tail of "    __slots__", whatever the depth)
        return None
    start = starts[first] + _original_column(index.line(first), column, tier)
    if tier is Tier.INDENTATION and column == 0 and hunk.old[:1] in (" ", "\t"):
        # the old text starts with (other) indentation: it starts at the line start, not after it
        start = starts[first]
    if ends_with_newline:
        stop = starts[last + 1]
    else:
        stop = starts[last] + _original_column(index.line(last), end - normalised_starts[last], tier)
        line_end = normalised_starts[last + 1] if last + 1 < len(normalised_starts) else len(text)
        if line_end > normalised_starts[last] and text[line_end - 1] == "\n":
            line_end -= 1
        if tier is not Tier.LINE_ENDINGS and end == line_end:
            # the old text ends where the line's text ends: its trailing blanks (which this tier
            # ignores) belong to it, as they do for a whole-line hunk
            stop = starts[last] + len(strip_newline(index.line(last)))
    if tier is Tier.INDENTATION and not _uniform_indent(index, hunk, first, line_count, column == 0):
        return None
    return _Hit(start, stop, first, line_count)


def _original_column(line: str, column: int, tier: Tier) -> int:
    """Column in the original line for a column in its normalised form."""
    if tier is Tier.INDENTATION:
        body = strip_newline(line)
        return column + (len(body) - len(body.lstrip(" \t")))
    return column


def _uniform_indent(index: FileIndex, hunk: Hunk, first: int, count: int, from_line_start: bool) -> bool:
    """Every non-blank old line sits at the same indentation offset from its file line (or the
    same tabs-for-spaces mapping)."""
    from nbedit.engine.transport import IndentUnit, indent_levels, split_change_lines, uniform_offset

    old_lines, _ = split_change_lines(hunk.old)
    file_lines = [strip_newline(line) for line in index.line_range(first, count)]
    if uniform_offset(old_lines, file_lines, skip_first=not from_line_start) is not None:
        return True
    # tabs for spaces (or the reverse), one width and one shift for every line
    if IndentUnit.between(old_lines, file_lines, skip_first=not from_line_start) is not None:
        return True
    # mixed tabs and spaces mapped level by level, unambiguously (Python 2, Go, a reply mixing widths)
    levels = indent_levels(old_lines, file_lines, skip_first=not from_line_start)
    return levels is not None and not isinstance(levels, str)


def _ends_file(index: FileIndex, hit: _Hit) -> bool:
    text = index.text
    return hit.end == len(text) or not text[hit.end :].strip("\r\n")


def _overlaps(a: _Hit, b: _Hit) -> bool:
    return a.first_line < b.first_line + b.line_count and b.first_line < a.first_line + a.line_count
