"""The matcher: find where a hunk's old text is, or refuse.

One cascade serves every dialect. Tiers run from strict to lenient and the first
tier that finds the hunk decides::

    exact -> line endings -> trailing whitespace -> unicode punctuation
          -> indentation (uniform offset) -> fuzzy (rapidfuzz over line windows)

Each normalised tier transforms the *whole* file text and the hunk with C-speed
string operations (``replace``, ``translate``, ``re.sub``) that never add or
remove a ``"\\n"``; a hit in normalised text is mapped back to original lines by
counting newlines. That keeps a 100,000-line file fast without a Python loop
over characters.

Uniqueness is checked at every tier. With no locator, two hits are an
``AmbiguousMatch``; with a locator (a unified diff's line number, carried by the
offset the diff's earlier hunks were found at) the nearest hit wins only when it is
at or next to the line named (``TRUSTED_DISTANCE``); a far-off line number, or a
tie, is ambiguous (GNU patch takes the nearest: model-written line numbers are
often garbage). In the fuzzy tier the winner must also beat the runner-up by a clear
margin, and every line the hunk *removes* must really be there (similarity at
least ``threshold``): drifted context is tolerated, deleting the wrong line is
not.

"Already applied" (an empty list from ``locate``) needs strong evidence: the new text
standing exactly where the old text was, with nothing of the old text left there. A
lenient place where the new text already stands is the change's own result (applied,
never applied twice); a lenient place with the new text exactly elsewhere, or a fuzzy
place holding the change while another window is as close to the old text, is refused
naming both (issue 21, rule 2).

The replacement is built so that bytes outside what the hunk really changes stay
as they are: lines the hunk keeps come from the file (not from the patch), new
lines take the file's newline style, are re-indented by the indentation tier's
offset, and keep the file's curly quotes when a quote-normalised match found them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from itertools import accumulate
from operator import methodcaller

from nbedit._dataclass import dataclass, field, replace
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.engine.text import dominant_newline, line_starts, newline_of, split_lines, strip_newline
from nbedit.errors import AmbiguousMatch, Candidate, MatchError, NoMatch, OverlappingHunks, UnsafeChange

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from nbedit.engine.transport import Refusal

# ``transport`` (what is written at a leniently found place) is imported by the functions that
# need it: a change found exactly, as most are, never loads it.

__all__ = [
    "DEFAULT_THRESHOLD",
    "FileIndex",
    "MatchOptions",
    "context_free",
    "locate",
    "new_text_present",
    "removed_lines_unique",
]

DEFAULT_THRESHOLD = 0.9
FUZZY_MIN_LINES = 2  # fewer non-blank lines than this are never matched fuzzily
FUZZY_SHORT_LINES = 3  # a shorter old text needs one of its lines in the file exactly (up to spelling)
FUZZY_MARGIN = 0.05  # the best fuzzy window must beat any other place by this much
# with a line number, drifted context may score this low; real drift needs 0.62 at the lowest
# (benchmarks/locator_floor.py); below 0.6 nearly half of the context differs
LOCATOR_CONTEXT_FLOOR = 0.6
COMMON_LINE_LIMIT = 40  # lines seen more often than this do not vote for windows
MAX_LOCATIONS = 50
INDENT_PENALTY = 0.2  # a line whose relative indentation differs loses this much similarity
LEFT_BEHIND = 0.8  # a line this similar to one the change removes means the old text is still there
FUZZY_MAX_LINE = 1_000
# a line number decides between identical places only when it points at one of them or next to
# it (after the offset earlier hunks of the diff were found at): model-written line numbers are
# often far off, and "the nearest" of two far places is a guess (issue 21: 79 wrong results)
TRUSTED_DISTANCE = 1
# "already applied" with a line number: the new text must stand about where the old text was (after
# the offset the diff's earlier hunks carried, applied ones included); farther is not evidence
APPLIED_DISTANCE = 3  # longer lines are compared for equality only (similarity is quadratic in length)


@dataclass(frozen=True, slots=True)
class MatchOptions:
    """How lenient the matcher may be: the exact tier only, or down to the fuzzy ``threshold``."""

    exact: bool = False  # only the exact tier
    threshold: float = DEFAULT_THRESHOLD


_SPACES = (" ", "\t", "\r", "\f", "\v")
_LEADING_SPACE = re.compile(r"\n[ \t]+")
_RSTRIP = methodcaller("rstrip", " \t\r\f\v")


def _normalise(text: str, tier: Tier) -> str:
    """Text as seen by a tier; each tier includes the ones before it.

    Every transformation keeps the number of ``"\\n"`` characters, and each runs
    at C speed (``replace``, ``translate``, a literal-led regex, ``map`` of a str
    method): a 100,000-line file costs milliseconds per tier.
    """
    for step in (Tier.LINE_ENDINGS, Tier.TRAILING_WHITESPACE, Tier.UNICODE, Tier.INDENTATION):
        if _ORDER.index(step) > _ORDER.index(tier):
            break
        text = _normalise_step(text, step)
    return text


def _normalise_step(text: str, tier: Tier) -> str:
    """One tier's own transformation, applied to the previous tier's text."""
    if tier is Tier.LINE_ENDINGS:
        return text.replace("\r\n", "\n")
    if tier is Tier.TRAILING_WHITESPACE:
        rare = "\r" in text or "\f" in text or "\v" in text  # single characters: memchr-fast
        if not text.endswith(_SPACES) and " \n" not in text and "\t\n" not in text and not rare:
            return text  # nothing to strip: skip the split/join of every line
        return "\n".join(map(_RSTRIP, text.split("\n")))
    if tier is Tier.UNICODE:
        from nbedit.engine.transport import UNICODE_TABLE

        return text.translate(UNICODE_TABLE)
    if tier is Tier.INDENTATION:
        return _LEADING_SPACE.sub("\n", text).lstrip(" \t")
    return text


def _fuzzy_line(line: str) -> str:
    """A line as the fuzzy tier compares it: the indentation tier's normalisation."""
    return _normalise(line, Tier.INDENTATION)


# then the blank-lines tier (``_locate_blank_lines``) and the fuzzy tier
_NORMALISED_TIERS = (Tier.LINE_ENDINGS, Tier.TRAILING_WHITESPACE, Tier.UNICODE, Tier.INDENTATION)
_ORDER = (Tier.EXACT, *_NORMALISED_TIERS)
_TIER_RANK = {tier: rank for rank, tier in enumerate(Tier)}


@dataclass
class FileIndex:
    """Per-file caches shared by every hunk located in the same text."""

    text: str
    _starts: list[int] | None = None
    _normalised: dict[Tier, str] = field(default_factory=dict)
    _normalised_starts: dict[str, list[int]] = field(default_factory=dict)
    _fuzzy_lines: list[str] | None = None
    _line_positions: dict[str, list[int]] | None = None

    @property
    def starts(self) -> list[int]:
        """Offset of each line start, plus one entry for the end of the text."""
        if self._starts is None:
            self._starts = line_starts(self.text)
        return self._starts

    def line(self, number: int) -> str:
        """One line with its ending, without splitting the whole text."""
        starts = self.starts
        return self.text[starts[number] : starts[number + 1]]

    def line_range(self, first: int, count: int) -> list[str]:
        starts = self.starts
        return [
            self.text[starts[n] : starts[n + 1]] for n in range(first, min(first + count, len(starts) - 1))
        ]

    @property
    def line_count(self) -> int:
        return len(self.starts) - 1

    def line_of(self, offset: int) -> int:
        """0-based line index containing a character offset."""
        return max(0, bisect_right(self.starts, offset) - 1)

    def normalised_starts(self, tier: Tier) -> list[int]:
        """Line starts in the tier's normalised text (same line count as the original)."""
        if tier is Tier.EXACT:
            return self.starts
        key = f"starts-{tier.value}"
        if key not in self._normalised_starts:
            if tier is Tier.INDENTATION:
                parts = self.fuzzy_lines  # already split: only the sums remain
                starts = list(accumulate(map((1).__add__, map(len, parts[:-1])), initial=0))
                if parts[-1]:
                    starts.append(len(self.normalised(tier)))
                self._normalised_starts[key] = starts
            else:
                self._normalised_starts[key] = line_starts(self.normalised(tier))
        return self._normalised_starts[key]

    def same_as(self, tier: Tier, other: Tier) -> bool:
        first, second = self.normalised(tier), self.normalised(other)
        return first is second or first == second

    def normalised(self, tier: Tier) -> str:
        """The text as ``tier`` sees it, built from the previous tier's (cached) text."""
        if tier is Tier.EXACT:
            return self.text
        if tier not in self._normalised:
            order = (Tier.EXACT, *_NORMALISED_TIERS)
            previous = self.normalised(order[order.index(tier) - 1])
            self._normalised[tier] = _normalise_step(previous, tier)
        return self._normalised[tier]

    @property
    def fuzzy_lines(self) -> list[str]:
        """Every line as the most lenient normalised tier sees it (one C-level split)."""
        if self._fuzzy_lines is None:
            self._fuzzy_lines = self.normalised(Tier.INDENTATION).split("\n")
        return self._fuzzy_lines

    def positions_of(self, line: str, limit: int) -> list[int] | None:
        """0-based numbers of the lines equal to ``line`` (fuzzy-normalised).

        None when it occurs more than ``limit`` times (too common to vote).
        Found with ``str.find`` over the normalised text, not a dict of all lines.
        """
        cached = self._line_positions.get(line) if self._line_positions is not None else None
        if cached is not None:
            return cached if len(cached) <= limit else None
        text = self.normalised(Tier.INDENTATION)
        starts = self.normalised_starts(Tier.INDENTATION)
        needle = "\n" + line + "\n"
        found: list[int] = []
        if text.startswith(line + "\n") or text == line:
            found.append(0)
        position = text.find(needle)
        while position != -1 and len(found) <= limit:
            found.append(bisect_right(starts, position + 1) - 1)
            position = text.find(needle, position + 1)
        if len(found) <= limit and text.endswith("\n" + line) and line:
            last = bisect_right(starts, len(text) - len(line)) - 1
            if last not in found:
                found.append(last)
        if self._line_positions is None:
            self._line_positions = {}
        self._line_positions[line] = found
        return found if len(found) <= limit else None


@dataclass(frozen=True, slots=True)
class _Hit:
    """A place a hunk's old text was found: character offsets and the lines they span."""

    start: int  # offsets into the original text
    end: int
    first_line: int  # 0-based
    line_count: int


# --------------------------------------------------------------------------- public


def locate(
    index: FileIndex,
    hunk: Hunk,
    *,
    options: MatchOptions = MatchOptions(),
    region: tuple[int, int] | None = None,
    near_line: int | None = None,
    path: str | None = None,
    cursor: tuple[int, int] | None = None,
) -> list[Match]:
    """Locate ``hunk`` in the indexed text; a list of one match unless replace_all.

    An empty list means the hunk is already applied: its old text is not there
    at any tier, and its exact new text is, once, with no old line left beside
    it (``new_text_present``); or the fuzzy tier's place already holds exactly
    what the change would write there.
    ``region`` limits the search to ``[start, end)`` character offsets (a notebook
    cell, or "after the previous apply_patch chunk"). ``near_line`` is a 1-based
    locator: the nearest hit wins. ``cursor`` is a known ``(offset, line)`` pair
    (offset of the start of that 0-based line) at or before the hunk, which lets
    a hunk that sits exactly where its locator says be confirmed without a table
    of every line start. Raises ``NoMatch`` or ``AmbiguousMatch``.
    """
    text = index.text
    low, high = region if region is not None else (0, len(text))

    if hunk.anchors:
        return _locate_after_anchor(index, hunk, options, low, high, path)

    if not hunk.old:
        return [_insertion(index, hunk, low, high, near_line)]
    if not options.exact and not hunk.old.strip() and not text[low:high].strip() and not hunk.replace_all:
        # blank old text, blank (or empty) file or cell: a reply's empty SEARCH with the blank
        # line a chat keeps in it; there is one place, and the blank text there is replaced
        replacement = hunk.new if low == high else _adapt_newlines(hunk.new, dominant_newline(text))
        tier = Tier.EXACT if text[low:high] == hunk.old else Tier.BLANK_LINES
        return [Match(low, high, replacement, tier, 1.0, index.line_of(low) + 1, text.count("\n", low, high))]

    if cursor is not None and near_line is not None:
        quick = _exact_at_expected_line(index, hunk, cursor, near_line, low, high)
        if quick is not None:
            return [quick]

    tiers: Sequence[Tier] = (Tier.EXACT,) if options.exact else (Tier.EXACT, *_NORMALISED_TIERS)
    previous: Tier | None = None
    tried: list[str] = []  # what each tier found, for the explanation
    for tier in tiers:
        if (
            previous is not None
            and index.same_as(tier, previous)
            and _normalise(hunk.old, tier) == _normalise(hunk.old, previous)
        ):
            continue  # this tier sees exactly what the last one saw: it cannot find more
        previous = tier
        hits = _find(index, hunk, tier, low, high, near_line)
        if (
            near_line is not None
            and len(hits) == 1
            and not hunk.replace_all
            and abs(hits[0].first_line + 1 - near_line) > TRUSTED_DISTANCE
        ):
            # the line number does not point at this place: it decides nothing if there are others
            everywhere = _find(index, hunk, tier, low, high)
            if len(everywhere) > 1:
                hits = everywhere
        if hunk.at_end:
            hits = [hit for hit in hits if _ends_file(index, hit)]
        if not hits:
            tried.append(f"{tier.value}: not found")
            continue
        tried.append(f"{tier.value}: {_places(hits)}")
        if tier in (Tier.TRAILING_WHITESPACE, Tier.UNICODE) and not hunk.replace_all and not options.exact:
            wider = _other_places(index, hunk, hits, low, high, near_line)
            if wider:
                chosen_tier, chosen = _choose_across(index, hunk, tier, hits, wider, near_line, path)
                if _applied_instead(index, hunk, chosen, chosen_tier, low, high, near_line, path):
                    return []
                tried.append(f"{Tier.INDENTATION.value}: also {_places(wider)}; the line number decided")
                return [
                    _explained(index, hunk, _build(index, hunk, hit, chosen_tier, 1.0, near_line), tried)
                    for hit in chosen
                ]
        chosen = _choose(index, hunk, hits, tier, near_line, path)
        if _applied_instead(index, hunk, chosen, tier, low, high, near_line, path):
            return []
        if tier is Tier.EXACT and len(hits) == 1:
            return [_build(index, hunk, hit, tier, 1.0, near_line) for hit in chosen]
        return [
            _explained(index, hunk, _build(index, hunk, hit, tier, 1.0, near_line), tried) for hit in chosen
        ]

    if not options.exact and not hunk.replace_all:
        spaced = _locate_blank_lines(index, hunk, options, low, high, near_line, path, tried)
        if spaced is not None:
            return spaced
    candidates = _fuzzy_candidates(index, hunk, low, high, near_line)
    if not options.exact and _enough_for_fuzzy(hunk):
        winner = _fuzzy_winner(candidates, hunk, options.threshold, near_line, index, path)
        if winner is not None:
            hit, score, replacement = winner
            if replacement == text[hit.start : hit.end]:
                _refuse_if_old_text_elsewhere(index, hunk, candidates, hit, options, near_line, path)
                if near_line is None or abs(hit.first_line + 1 - near_line) <= APPLIED_DISTANCE:
                    return []  # the file already holds the change there (it was applied before)
                raise NoMatch(
                    f"{_no_match_message(hunk, path, options)}\nthe new text stands at line "
                    f"{hit.first_line + 1}, far from line {near_line} where the change puts the old "
                    "text, so it is not taken as already applied; check the line numbers",
                    path=path,
                )
            if _applied_instead(index, hunk, [hit], Tier.FUZZY, low, high, near_line, path):
                return []
            offset = None
            if near_line is not None and hunk.start_line is not None:
                offset = hit.first_line + 1 - hunk.start_line
            found = Match(
                hit.start,
                hit.end,
                replacement,
                Tier.FUZZY,
                round(score, 4),
                hit.first_line + 1,
                hit.line_count,
                offset,
            )
            tried.append(
                f"fuzzy: {len(candidates)} window{'s' if len(candidates) != 1 else ''} scored, best {score:.2f} at {_span(hit)}"
            )
            return [_explained(index, hunk, found, tried, _runner_up(candidates, hit, index, hunk, options))]
    elsewhere = [item[0] for item in candidates if item[1] >= options.threshold]
    if new_text_present(index, hunk, (low, high), near_misses=elsewhere, near_line=near_line):
        return []
    floor = _context_floor(hunk, near_line, options.threshold)
    raise NoMatch(
        _no_match_message(hunk, path, options),
        path=path,
        candidates=[
            _candidate(
                index,
                hunk,
                item[0],
                item[1],
                None if options.exact else _rejection_reason(index, hunk, item, floor, near_line is None),
            )
            for item in candidates[:3]
        ],
    )


def context_free(hunk: Hunk) -> bool:
    """A diff hunk with a line number and no context lines (``git diff -U0``, or a model's bare hunk).

    Its old text is only the lines it removes (none for a pure insertion), so nothing but
    those lines and the line number says where it goes. The number is the diff's base's:
    in any other file it is evidence only where the removed lines confirm it (issue 21,
    rule 5; see ``removed_lines_unique`` and the planner's use of git's ``index`` line).
    """
    if hunk.start_line is None or hunk.anchors or hunk.replace_all:
        return False
    if not hunk.old or not hunk.new:
        return True
    if hunk.old.partition("\n")[0] == hunk.new.partition("\n")[0]:
        return False  # leading context (the common case, decided without splitting the texts)
    old_lines, new_lines = _query_lines(hunk), hunk.new.removesuffix("\n").split("\n")
    # context lines are shared at an edge (a blank one too)
    return old_lines[0] != new_lines[0] and old_lines[-1] != new_lines[-1]


def removed_lines_unique(index: FileIndex, hunk: Hunk, match: Match) -> bool:
    """The hunk's old text (its removed lines) stands once in the file, at the tier that found it.

    Then the removed lines alone place the hunk, whatever its line number says. The fuzzy and
    blank-lines tiers decide uniqueness themselves (a margin; an ambiguity), so they count.
    """
    if not hunk.old:
        return False
    if match.tier in (Tier.FUZZY, Tier.BLANK_LINES):
        return True
    return len(_find(index, hunk, match.tier, 0, len(index.text))) == 1


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


def _exact_at_expected_line(
    index: FileIndex, hunk: Hunk, cursor: tuple[int, int], near_line: int, low: int, high: int
) -> Match | None:
    """The common case of a patch: the old text is exactly at the line it claims.

    The first exact occurrence after ``cursor`` is checked; if it starts on line
    ``near_line`` it is at distance 0 from the locator, so it is the nearest
    place and no other can tie. Costs a ``find`` and a ``count`` from the cursor:
    a whole patch walks the file once. Anything else returns None and the full
    search runs.
    """
    if not hunk.whole_lines or hunk.replace_all or hunk.anchors or hunk.at_end or hunk.start_line is None:
        return None
    text, old = index.text, hunk.old
    if not old.endswith("\n"):
        return None  # ends without a newline: the end-of-file rules of the full search apply
    start_offset, start_line = cursor
    position = text.find(old, max(start_offset, low), high)
    if position == -1 or (position and text[position - 1] != "\n"):
        return None
    line = start_line + text.count("\n", start_offset, position)
    if line + 1 != near_line:
        return None
    # the span is the old text itself, line endings included, so the new text goes in as written
    end = position + len(old)
    return Match(
        position, end, hunk.new, Tier.EXACT, 1.0, line + 1, old.count("\n"), line + 1 - hunk.start_line
    )


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


def new_text_present(
    index: FileIndex,
    hunk: Hunk,
    region: tuple[int, int] | None = None,
    *,
    near_misses: Sequence[_Hit] = (),
    near_line: int | None = None,
) -> bool:
    """True when the hunk is applied already: its exact new text is in the region, once, and no old text is left.

    "Exact" allows only what a write would have adapted: the file's line endings
    and a uniform indentation offset. "No old text left": no line just outside
    where the new text stands is (nearly) a line the change removes or
    rewrites; the old text's lines beyond the new text's length are not still
    there in line (a deletion that has not happened); and no near miss of the
    old text (``near_misses``: windows the fuzzy tier found similar but could
    not use) lies elsewhere. A change whose new text only keeps old lines (a deletion)
    is never "applied" on the strength of its new text alone, unless a line number names
    the place; with a line number (``near_line``, carried by the diff's earlier hunks) the new
    text must stand within ``APPLIED_DISTANCE`` lines of it. Asked only after every tier failed to find the old text.
    """
    if not hunk.new.strip() or hunk.new == hunk.old:
        return False
    if hunk.start_line is None and _only_kept_lines(hunk):
        # new text made only of lines the old text has (a deletion): finding it says nothing about
        # whether the deletion happened here, and nothing names the place (issue 21, weak evidence)
        return False
    low, high = region if region is not None else (0, len(index.text))
    probe = Hunk(old=hunk.new, new=hunk.new, whole_lines=hunk.whole_lines)
    found: _Hit | None = None
    for tier in (Tier.EXACT, Tier.LINE_ENDINGS, Tier.INDENTATION):
        hits = _find(index, probe, tier, low, high)
        if tier is Tier.INDENTATION:
            hits = [hit for hit in hits if _holds_moved(index, hunk.new, hit)]
        if len(hits) > 1:
            return False
        if hits:
            found = hits[0]
            break
    if found is None:
        return False
    if near_line is not None and abs(found.first_line + 1 - near_line) > APPLIED_DISTANCE:
        return False  # the new text stands elsewhere than where the line number puts the old text
    if any(not _overlaps(miss, found) for miss in near_misses):
        return False  # the old text is still there, drifted, somewhere else
    lines = index.fuzzy_lines
    first = found.first_line
    if found.start != index.starts[first] and index.text.startswith(("\n", "\r\n"), found.start):
        first += 1  # the new text starts with the previous line's ending: that line is outside it
    last = found.first_line + found.line_count
    if _old_lines_still_in_line(hunk, lines, first, last):
        return False
    removed = _removed_lines(hunk)
    reach = len(_query_lines(hunk))
    around = lines[max(0, first - reach) : first] + lines[last : last + reach]
    return not any(_similarity(line, gone) >= LEFT_BEHIND for line in around for gone in removed)


def _only_kept_lines(hunk: Hunk) -> bool:
    from nbedit.engine.transport import split_change_lines

    old_lines = set(split_change_lines(hunk.old)[0])
    return all(line in old_lines for line in split_change_lines(hunk.new)[0])


# tiers that can place a change at a line whose structure differs from the old text's: a place
# found by one of them is weaker evidence than the change's new text standing exactly in the file
_LENIENT_PLACES = frozenset({Tier.INDENTATION, Tier.BLANK_LINES, Tier.FUZZY})
# the new text standing exactly elsewhere makes a lenient place ambiguous only when it has at least
# this many non-blank lines (one line of new text may stand anywhere by chance)
APPLIED_ELSEWHERE_LINES = 2


def _new_text_standing(index: FileIndex, hunk: Hunk, low: int, high: int) -> _Hit | None:
    """Where the hunk's new text stands exactly (up to line endings), if it stands once in the region."""
    if not hunk.new.strip() or hunk.new == hunk.old or hunk.replace_all:
        return None
    probe = Hunk(old=hunk.new, new=hunk.new, whole_lines=hunk.whole_lines)
    for tier in (Tier.EXACT, Tier.LINE_ENDINGS):
        hits = _find(index, probe, tier, low, high)
        if hits:
            return hits[0] if len(hits) == 1 else None
    return None


def _applied_instead(
    index: FileIndex,
    hunk: Hunk,
    places: Sequence[_Hit],
    tier: Tier,
    low: int,
    high: int,
    near_line: int | None,
    path: str | None,
) -> bool:
    """True when a change found only by a lenient tier is in fact applied already (issue 21, rule 2).

    A change applied before leaves its new text where the old text was; a lenient tier may
    then find the old text again in it, or next to it (a ``with ctx:`` wrap holds the old line
    one level deeper; a dedent leaves a line the indentation tier still takes for the old one;
    a deletion leaves a sibling block at another indentation). Applying again would nest the
    wrap twice or delete the sibling. So when the new text stands exactly in the file:

    - over the lenient place (or, with a line number, about where the number puts the old
      text): the change is applied when nothing of the old text is left there
      (``new_text_present``); otherwise the file holds both readings: ambiguous.
    - elsewhere, and telling enough (``APPLIED_ELSEWHERE_LINES`` non-blank lines): the file
      may hold the change applied there, or the old text drifted here; nbedit will not guess.
    - inside the lenient place (a deletion's new text is lines it keeps): nothing says the
      change was made; the place stands.

    A place found by a stricter tier (exact, line endings, trailing blanks, punctuation) is
    second-guessed only when it starts after a line's indentation (an old text that starts at
    a token says nothing of its depth: as weak as the indentation tier) and lies inside the new
    text standing there: a change whose new text contains its old text one level deeper (a
    wrap) finds its old text again in its own result. An old text found from a line's start
    is the file's own lines: real replies add a line after one the file already has twice.
    """
    if hunk.replace_all or not places:
        return False
    if tier not in _LENIENT_PLACES:
        if len(places) != 1 or hunk.old == hunk.new:
            return False
        if _normalise(hunk.old, tier) not in _normalise(hunk.new, tier):
            return False  # cheap: the old text cannot lie inside the new text
        place = places[0]
        if place.start == index.starts[place.first_line]:
            return False
        standing = _new_text_standing(index, hunk, low, high)
        inside = standing is not None and standing.start <= place.start and place.end <= standing.end
        return inside and new_text_present(index, hunk, (low, high), near_line=near_line)
    standing = _new_text_standing(index, hunk, low, high)
    if standing is None:
        return False
    if any(
        place.start <= standing.start and standing.end <= place.end and place != standing for place in places
    ):
        return False  # the new text is lines the change keeps, still among the old text's: not applied
    near = near_line is not None and abs(standing.first_line + 1 - near_line) <= APPLIED_DISTANCE
    over = any(_overlaps(standing, place) for place in places)
    if not over and not near:
        if near_line is not None or _non_blank_lines(hunk.new) < APPLIED_ELSEWHERE_LINES:
            return False  # the line number places the change; or the new text is too short to tell
    if (over or near) and new_text_present(index, hunk, (low, high), near_line=near_line):
        return True
    place = places[0]
    raise AmbiguousMatch(
        f"{path or 'file'}: the old text is found only at {_span(place)} ({tier.explanation}), "
        f"and the change's new text already stands exactly at {_span(standing)}: the change may have been "
        "applied already; nbedit will not apply it a second time nor guess",
        path=path,
        locations=sorted({(place.first_line + 1, 1), (standing.first_line + 1, 1)}),
        tier=tier.value,
        detail=(
            f"old text (leniently) at line {place.first_line + 1}, new text (exactly) at line "
            f"{standing.first_line + 1}\nre-read the file: if the change is there, nothing is left to do; "
            "otherwise copy the old text exactly from the place meant"
        ),
    )


def _refuse_if_old_text_elsewhere(
    index: FileIndex,
    hunk: Hunk,
    candidates: Sequence[_Scored],
    held: _Hit,
    options: MatchOptions,
    near_line: int | None,
    path: str | None,
) -> None:
    """The fuzzy tier's place already holds the change: "applied" only if the old text is nowhere else.

    A place that holds the change's new text and is also the closest *usable* fit for a
    mis-copied old text is weak evidence when another window is as close to the old text or
    closer: that window is as likely the old text the reply meant (it could not be used only
    because the mis-copied line differs), and the new text merely stands elsewhere (issue 21,
    rule 2). Refuse, naming both. A change really applied leaves its place the closest fit (it
    differs from the old text only by the change); look-alike blocks score lower.
    """
    held_score = _score_of(candidates, held)
    others = [item for item in candidates if not _overlaps(item[0], held) and item[1] >= held_score]
    if near_line is not None and abs(held.first_line + 1 - near_line) <= APPLIED_DISTANCE:
        # the line number points at the held place: a look-alike far from it is not the place meant
        others = [item for item in others if abs(item[0].first_line + 1 - near_line) <= APPLIED_DISTANCE]
    if not others:
        return
    near_miss = others[0]
    raise NoMatch(
        f"{_no_match_message(hunk, path, options)}\nthe old text is not in the file as written: "
        f"{_span(near_miss[0])} are close to it (similarity {near_miss[1]:.2f}), and the change's new "
        f"text already stands at {_span(held)}; nbedit will not call the change applied nor guess where "
        "it goes",
        path=path,
        candidates=[
            _candidate(index, hunk, item[0], item[1], "the change's new text already stands here")
            if _overlaps(item[0], held)
            else _candidate(index, hunk, item[0], item[1], "close to the old text, not equal to it")
            for item in [near_miss, *[c for c in candidates if c[0] == held][:1]]
        ],
    )


def _score_of(candidates: Sequence[_Scored], hit: _Hit) -> float:
    return next((item[1] for item in candidates if item[0] == hit), 1.0)


def _non_blank_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def _old_lines_still_in_line(hunk: Hunk, lines: Sequence[str], first: int, last: int) -> bool:
    """Old has lines new lacks; are they still right after (or before) the new text, in order?"""
    from nbedit.engine.transport import split_change_lines

    old_lines = [_fuzzy_line(line) for line in split_change_lines(hunk.old)[0]]
    extra = len(old_lines) - (last - first)
    if extra <= 0:
        return False
    after = lines[last : last + extra]
    before = lines[max(0, first - extra) : first]
    tail, head = old_lines[len(old_lines) - extra :], old_lines[:extra]
    return (len(after) == extra and all(_loosely_equal(a, b) for a, b in zip(tail, after, strict=True))) or (
        len(before) == extra and all(_loosely_equal(a, b) for a, b in zip(head, before, strict=True))
    )


def _loosely_equal(first: str, second: str) -> bool:
    return first == second or (bool(first) and bool(second) and _similarity(first, second) >= LEFT_BEHIND)


def _holds_moved(index: FileIndex, text: str, hit: _Hit) -> bool:
    """The hit's lines are ``text``'s lines moved by one uniform indentation offset, character for character."""
    from nbedit.engine.transport import Offset, indentation_offset, split_change_lines

    lines, _ = split_change_lines(text)
    bodies = [strip_newline(line) for line in index.line_range(hit.first_line, hit.line_count)]
    if len(bodies) != len(lines) or hit.start != index.starts[hit.first_line]:
        return False
    offset = indentation_offset(lines, bodies)
    return isinstance(offset, Offset) and all(
        offset.apply(line) == body for line, body in zip(lines, bodies, strict=True)
    )


def _removed_lines(hunk: Hunk) -> set[str]:
    """Non-blank old lines the change removes or rewrites, as the fuzzy tier sees lines."""
    import difflib

    from nbedit.engine.transport import split_change_lines

    old_lines, _ = split_change_lines(hunk.old)
    new_lines, _ = split_change_lines(hunk.new)
    removed: set[str] = set()
    for tag, first, last, _, _ in difflib.SequenceMatcher(
        None, old_lines, new_lines, autojunk=False
    ).get_opcodes():
        if tag != "equal":
            removed.update(_fuzzy_line(line) for line in old_lines[first:last] if line.strip())
    return removed


# --------------------------------------------------------------------------- search


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
        position = text.find(old, search_low, search_high)
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
        # line numbers by counting newlines (C speed), not from a table of every line start
        first = text.count("\n", 0, position)
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
    from nbedit.engine.transport import IndentUnit, split_change_lines, uniform_offset

    old_lines, _ = split_change_lines(hunk.old)
    file_lines = [strip_newline(line) for line in index.line_range(first, count)]
    if uniform_offset(old_lines, file_lines, skip_first=not from_line_start) is not None:
        return True
    # tabs for spaces (or the reverse), one width and one shift for every line
    return IndentUnit.between(old_lines, file_lines, skip_first=not from_line_start) is not None


def _ends_file(index: FileIndex, hit: _Hit) -> bool:
    text = index.text
    return hit.end == len(text) or not text[hit.end :].strip("\r\n")


def _insertion(index: FileIndex, hunk: Hunk, low: int, high: int, near_line: int | None) -> Match:
    """A hunk with no old text: append at the end, or insert before a line."""
    text = index.text
    if hunk.at_end or near_line is None:
        position = high
        prefix = ""
        if position > 0 and not text[:position].endswith("\n"):
            prefix = dominant_newline(text)
        replacement = prefix + _adapt_newlines(hunk.new, dominant_newline(text))
        if prefix and hunk.at_end and position == len(text):
            # appended to a file without a final newline: it still has none afterwards
            replacement = strip_newline(replacement)
        line = index.line_of(max(0, position - 1)) + (2 if position else 1)
    else:
        line_number = min(max(near_line, 1), index.line_count + 1)
        position = max(low, min(index.starts[min(line_number - 1, len(index.starts) - 1)], high))
        newline = _neighbour_newline(index, max(line_number - 2, 0))
        replacement = _adapt_newlines(hunk.new, newline)
        if position == len(text) and text and not text.endswith("\n"):
            replacement = newline + replacement.removesuffix(newline)
        line = line_number
    return Match(position, position, replacement, Tier.EXACT, 1.0, line, 0, None)


def _locate_after_anchor(
    index: FileIndex, hunk: Hunk, options: MatchOptions, low: int, high: int, path: str | None
) -> list[Match]:
    """Locate a hunk after its ``@@`` anchor lines (apply_patch), outermost first.

    The anchor scopes the search: the hunk is taken nearest after it. An anchor
    line that occurs more than once is never resolved by position: each
    occurrence scopes the search up to the next one, and the hunk must fit after
    exactly one of them, or fit after one by a stricter tier than after any other
    (an exact fit beats a fuzzy one); fitting after several alike is an ``AmbiguousMatch``.
    """
    anchor, inner = hunk.anchors[0], replace(hunk, anchors=hunk.anchors[1:])
    occurrences = _anchor_hits(index, anchor, low, high)
    if not occurrences:
        raise NoMatch(
            f"{path or 'file'}: the @@ anchor line {anchor!r} was not found"
            + (" after the previous chunk" if low else ""),
            path=path,
        )
    if len(occurrences) == 1:
        only = occurrences[0]
        return locate(
            index, inner, options=options, region=(only.end, high), near_line=only.first_line + 2, path=path
        )
    fits: list[tuple[_Hit, list[Match]]] = []
    failures: list[MatchError] = []
    for number, occurrence in enumerate(occurrences):
        stop = occurrences[number + 1].start if number + 1 < len(occurrences) else high
        try:
            matches = locate(
                index,
                inner,
                options=options,
                region=(occurrence.end, stop),
                near_line=occurrence.first_line + 2,
                path=path,
            )
        except MatchError as error:
            failures.append(error)
            continue
        fits.append((occurrence, matches))
    if len(fits) == 1:
        return fits[0][1]
    if not fits:
        raise failures[0]
    applied = [occurrence for occurrence, matches in fits if not matches]
    placed = [(occurrence, matches) for occurrence, matches in fits if matches]
    if applied and placed:
        # "already applied" after one occurrence (its new text there, perhaps at another
        # indentation) and the old text after another: only the old text exactly as written
        # decides; a lenient fit against a lenient "applied" is a guess either way (issue 21,
        # rule 3: a drifted hunk under a copy that already holds the change was called applied)
        exact = [fit for fit in placed if all(match.tier is Tier.EXACT for match in fit[1])]
        if len(placed) == 1 and exact:
            return exact[0][1]
        raise AmbiguousMatch(
            f"{path or 'file'}: the @@ anchor line {anchor!r} occurs {len(occurrences)} times: after line "
            f"{applied[0].first_line + 1} the change looks already applied, after line "
            f"{placed[0][0].first_line + 1} its old text fits ({placed[0][1][0].tier.explanation}); "
            "nbedit will not guess which one you mean",
            path=path,
            locations=sorted((occurrence.first_line + 1, 1) for occurrence, _ in fits),
            tier="anchor",
        )
    # the change as written (exactly) after one occurrence wins over a lenient fit after another
    ranked = sorted(fits, key=lambda fit: max(_TIER_RANK[match.tier] for match in fit[1]) if fit[1] else 0)
    best = max(_TIER_RANK[match.tier] for match in ranked[0][1]) if ranked[0][1] else 0
    second = max(_TIER_RANK[match.tier] for match in ranked[1][1]) if ranked[1][1] else 0
    if best < second:
        return ranked[0][1]
    raise AmbiguousMatch(
        f"{path or 'file'}: the @@ anchor line {anchor!r} occurs {len(occurrences)} times and the change fits "
        f"after {len(fits)} of them; nbedit will not guess which one you mean",
        path=path,
        locations=[(occurrence.first_line + 1, 1) for occurrence, _ in fits],
        tier="anchor",
    )


def _anchor_hits(index: FileIndex, anchor: str, low: int, high: int) -> list[_Hit]:
    """Every line in [low, high) that is the anchor line, at the strictest tier that finds one.

    Failing that, lines that contain it (Codex compares whole lines; models abbreviate).
    """
    probe = Hunk(old=anchor + "\n", new=anchor + "\n", whole_lines=True)
    for tier in (Tier.EXACT, *_NORMALISED_TIERS):
        hits = _find(index, probe, tier, low, high)
        if hits:
            return hits
    fragment = anchor.strip()
    if not fragment:
        return []
    found: list[_Hit] = []
    position = index.text.find(fragment, low, high)
    while position != -1:
        number = index.line_of(position)
        if not found or found[-1].first_line != number:
            found.append(_Hit(index.starts[number], index.starts[number + 1], number, 1))
        position = index.text.find(fragment, index.starts[number + 1], high)
    return found


def _other_places(
    index: FileIndex, hunk: Hunk, hits: list[_Hit], low: int, high: int, near_line: int | None
) -> list[_Hit]:
    """Places the old text also fits once indentation is ignored, apart from ``hits``.

    A match found only after ignoring trailing blanks or curly punctuation is
    drift either way; if the same lines stand elsewhere at another indentation,
    that is an equally good explanation, so the first tier alone cannot decide.
    """
    wider = _find(index, hunk, Tier.INDENTATION, low, high, near_line)
    if hunk.at_end:
        wider = [hit for hit in wider if _ends_file(index, hit)]
    return [hit for hit in wider if not any(_overlaps(hit, found) for found in hits)]


def _choose_across(
    index: FileIndex,
    hunk: Hunk,
    tier: Tier,
    hits: list[_Hit],
    wider: list[_Hit],
    near_line: int | None,
    path: str | None,
) -> tuple[Tier, list[_Hit]]:
    """A locator picks the nearest of both kinds of place; without one, the choice is ambiguous."""
    if near_line is not None:
        ranked = sorted(
            [(abs(hit.first_line + 1 - near_line), 0, hit) for hit in hits]
            + [(abs(hit.first_line + 1 - near_line), 1, hit) for hit in wider],
            key=lambda item: (item[0], item[1]),
        )
        if len(ranked) == 1 or (ranked[0][0] != ranked[1][0] and ranked[0][0] <= TRUSTED_DISTANCE):
            return (tier if ranked[0][1] == 0 else Tier.INDENTATION), [ranked[0][2]]
    places = sorted([*hits, *wider], key=lambda hit: hit.first_line)
    raise AmbiguousMatch(
        f"{path or 'file'}: the old text matches line {hits[0].first_line + 1} only after {tier.explanation[8:]}, "
        f"and {len(wider)} other place{'s' if len(wider) > 1 else ''} at another indentation; "
        "nbedit will not guess which drift is the real one",
        path=path,
        locations=[(hit.first_line + 1, 1) for hit in places],
        tier=tier.value,
    )


def _choose(
    index: FileIndex, hunk: Hunk, hits: list[_Hit], tier: Tier, near_line: int | None, path: str | None
) -> list[_Hit]:
    if hunk.replace_all:
        for previous, current in zip(hits, hits[1:], strict=False):
            if current.start < previous.end:
                where = [
                    f"line {hit.first_line + 1} column {hit.start - index.starts[hit.first_line] + 1}"
                    for hit in (previous, current)
                ]
                raise OverlappingHunks(
                    f"{path or 'file'}: the old text occurs at overlapping places ({where[0]} and {where[1]}), "
                    "so replacing every occurrence is not well defined; use a longer old text that "
                    "occurs at separate places",
                    path=path,
                    lines=(previous.first_line + 1, current.first_line + 1),
                )
        return hits
    if len(hits) == 1:
        return hits
    if near_line is not None:
        distances = sorted((abs(hit.first_line + 1 - near_line), n) for n, hit in enumerate(hits))
        if distances[0][0] != distances[1][0] and distances[0][0] <= TRUSTED_DISTANCE:
            return [hits[distances[0][1]]]
    locations = []
    for hit in hits:
        column = hit.start - index.starts[hit.first_line] + 1
        locations.append((hit.first_line + 1, column))
    what = "the old text" if not hunk.whole_lines else "the hunk's old lines"
    tier_note = "" if tier is Tier.EXACT else f" ({tier.explanation})"
    raise AmbiguousMatch(
        f"{path or 'file'}: {what} occur{'s' if not hunk.whole_lines else ''} {len(hits)}{'+' if len(hits) > MAX_LOCATIONS else ''} times{tier_note}; "
        "nbedit will not guess which one you mean",
        path=path,
        locations=locations,
        tier=tier.value,
    )


# --------------------------------------------------------------------------- blank lines


def _locate_blank_lines(
    index: FileIndex,
    hunk: Hunk,
    options: MatchOptions,
    low: int,
    high: int,
    near_line: int | None,
    path: str | None,
    tried: list[str],
) -> list[Match] | None:
    """The old text's lines, in order, with other runs of blank lines between them than the file has.

    Real replies lose and gain blank lines (git even collapses runs of them in the commit
    messages that carry replies). Each place where the old text's non-blank lines follow one
    another in the file, blank lines aside (compared as the indentation tier compares),
    rewrites the old text to the file's blank runs where the change removes or replaces
    them (see ``_with_file_blank_runs``). The rewritten hunk is then located by the ordinary
    tiers in that place alone. Two places are ambiguous; none is None (the fuzzy tier is next).
    """
    from nbedit.engine.transport import align, split_change_lines

    old_lines, old_final = split_change_lines(hunk.old)
    wanted = [(number, _fuzzy_line(line)) for number, line in enumerate(old_lines) if line.strip()]
    if len(wanted) < 2:
        return None
    file_lines = index.fuzzy_lines
    first_line, last_line = index.line_of(low), index.line_of(max(low, high - 1))
    starts = index.positions_of(wanted[0][1], MAX_LOCATIONS)
    if not starts:
        return None
    places: list[list[int]] = []
    for start in starts:
        if not first_line <= start <= last_line:
            continue
        matched = [start]
        cursor = start
        for _, line in wanted[1:]:
            cursor += 1
            while cursor <= last_line and not file_lines[cursor]:
                cursor += 1
            if cursor > last_line or file_lines[cursor] != line:
                break
            matched.append(cursor)
        else:
            places.append(matched)
    if not places:
        return None
    rewritten = []
    for matched in places:
        hunk_there = _with_file_blank_runs(hunk, old_lines, old_final, wanted, matched, align)
        if hunk_there is not None:
            rewritten.append((matched, hunk_there))
    if not rewritten:
        return None
    if len(rewritten) > 1:
        raise AmbiguousMatch(
            f"{path or 'file'}: the old text's lines occur {len(rewritten)} times with other blank lines "
            "between them (lines " + ", ".join(str(m[0] + 1) for m, _ in rewritten[:5]) + "); "
            "nbedit will not guess which one you mean",
            path=path,
            locations=[(matched[0] + 1, 1) for matched, _ in rewritten],
            tier=Tier.BLANK_LINES.value,
        )
    matched, spaced = rewritten[0]
    region_start = index.starts[max(0, matched[0] - (len(old_lines)))]
    region_end = index.starts[min(index.line_count, matched[-1] + 1 + len(old_lines))]
    try:
        found = locate(
            index,
            spaced,
            options=MatchOptions(exact=False, threshold=1.01),  # no fuzzy inside: the lines are all there
            region=(max(low, region_start), min(high, region_end)),
            near_line=matched[0] + 1,
            path=path,
        )
    except MatchError:
        return None
    if not found or any(match.tier is Tier.FUZZY for match in found):
        return None
    places = [_Hit(match.start, match.end, match.line - 1, match.line_count) for match in found]
    if _applied_instead(index, hunk, places, Tier.BLANK_LINES, low, high, near_line, path):
        return []
    tried.append(f"{Tier.BLANK_LINES.value}: line {matched[0] + 1}")
    return [
        _explained(index, hunk, replace(match, tier=Tier.BLANK_LINES, offset=None), tried) for match in found
    ]


def _with_file_blank_runs(
    hunk: Hunk,
    old_lines: list[str],
    old_final: bool,
    wanted: list[tuple[int, str]],
    matched: list[int],
    align,  # type: ignore[no-untyped-def]
) -> Hunk | None:
    """``hunk`` whose old text has the file's run of blank lines between its non-blank lines.

    Only a run the change removes or replaces may differ: its lines are the file's, and
    they go with the change. A differing run that old and new both keep, or that sits
    between two kept lines, is refused (None): the result would hold the file's blank
    lines or the reply's, and the reply does not say which (real replies lose blank lines
    to the commit messages that carry them, and gain them from the model).
    """
    from nbedit.engine.transport import split_change_lines

    new_lines, _ = split_change_lines(hunk.new)
    runs: dict[int, tuple[int, int]] = {}  # old line where a run starts -> (its length, the file's)
    for position in range(1, len(wanted)):
        previous = wanted[position - 1][0]
        file_run = matched[position] - matched[position - 1] - 1
        runs[previous + 1] = (wanted[position][0] - previous - 1, file_run)
    kept: set[int] = set()  # old lines new keeps
    for tag, old_first, old_last, _, _ in align(old_lines, new_lines):
        if tag == "equal":
            kept.update(range(old_first, old_last))
    old_out: list[str] = []
    number = 0
    while number < len(old_lines):
        if number in runs:
            old_run, file_run = runs[number]
            old_out.extend([""] * file_run)
            if file_run != old_run:
                run = range(number, number + old_run) if old_run else range(number - 1, number + 1)
                if any(step in kept for step in run):
                    return None
            if old_run:
                number += old_run
                continue
        old_out.append(old_lines[number])
        number += 1
    old_text = "\n".join(old_out) + ("\n" if old_final else "")
    if old_text == hunk.old:
        return None
    return replace(hunk, old=old_text, start_line=None, changed_lines=None, alternatives=())


# --------------------------------------------------------------------------- fuzzy


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


def _overlaps(a: _Hit, b: _Hit) -> bool:
    return a.first_line < b.first_line + b.line_count and b.first_line < a.first_line + a.line_count


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


# --------------------------------------------------------------------------- replacement


def _build(index: FileIndex, hunk: Hunk, hit: _Hit, tier: Tier, score: float, near_line: int | None) -> Match:
    replacement = _replacement(index, hunk, hit, tier)
    if not isinstance(replacement, str):
        raise _refusal_error(index, hunk, hit, tier, replacement)
    offset = None
    if near_line is not None and hunk.start_line is not None:
        offset = hit.first_line + 1 - hunk.start_line
    return Match(
        hit.start, hit.end, replacement, tier, round(score, 4), hit.first_line + 1, hit.line_count, offset
    )


def _replacement(
    index: FileIndex, hunk: Hunk, hit: _Hit, tier: Tier, strict_context: bool = False
) -> str | Refusal:
    """What goes in place of the hit: the exact change, carried by ``transport``.

    ``strict_context``: the lines old and new share must be the file's up to layout (the
    fuzzy tier without a line number: see ``transport``)."""
    text = index.text
    matched = text[hit.start : hit.end]
    newline = _span_newline(index, hit)
    if tier is Tier.EXACT:
        replacement = hunk.new
        if newline == "\r\n" and "\r" not in hunk.new and "\r" not in hunk.old:
            # a patch written with LF lines, matched exactly within one CRLF line
            replacement = _adapt_newlines(replacement, newline)
    else:
        from nbedit.engine.transport import Refusal, split_change_lines, transport

        first_partial = hit.start != index.starts[hit.first_line]
        region = split_lines(matched)
        if len(region) < hit.line_count and (not matched or matched.endswith("\n")):
            region.append("")  # the region ends on an empty last line
        if len(region) != len(split_change_lines(hunk.old)[0]):
            return Refusal("the located lines do not line up with the old text's lines")
        carried = transport(
            hunk.old,
            hunk.new,
            region,
            newline=newline,
            first_partial=first_partial,
            strict_context=strict_context,
            file_text=text,
        )
        if isinstance(carried, Refusal):
            return carried
        replacement = carried
    if hunk.whole_lines and not matched.endswith("\n") and hit.end == len(text) and hunk.old.endswith("\n"):
        # matched a last line without "\n" through the relaxed rule: keep it absent
        if replacement.endswith("\r\n"):
            replacement = replacement[:-2]
        elif replacement.endswith("\n"):
            replacement = replacement[:-1]
    return replacement


def _refusal_error(index: FileIndex, hunk: Hunk, hit: _Hit, tier: Tier, refusal: Refusal) -> UnsafeChange:
    line = hit.first_line + 1 + (refusal.line or 0)
    return UnsafeChange(
        f"found the place for the change at line {hit.first_line + 1} ({tier.explanation}), but cannot "
        f"write the change there exactly: {refusal.reason} (file line {line})",
        reason=refusal.reason,
        line=line,
    )


def _span_newline(index: FileIndex, hit: _Hit) -> str:
    """The line ending the replacement takes: the span's own, if it has one style."""
    text = index.text
    start = text.rfind("\n", 0, hit.start) + 1
    stop = text.find("\n", max(hit.start, hit.end - 1))
    stop = len(text) if stop == -1 else stop + 1
    newlines, crlf = text.count("\n", start, stop), text.count("\r\n", start, stop)
    if newlines and crlf == newlines:
        return "\r\n"
    if newlines and not crlf:
        return "\n"
    first_end = text.find("\n", start, stop)
    if first_end != -1:
        return "\r\n" if text[first_end - 1 : first_end] == "\r" else "\n"
    if start:  # a last line without an ending: take the previous line's
        return "\r\n" if text[start - 2 : start] == "\r\n" else "\n"
    return dominant_newline(text)


def _neighbour_newline(index: FileIndex, line: int) -> str:
    for number in (line, line - 1, line + 1):
        if 0 <= number < index.line_count:
            ending = newline_of(index.line(number))
            if ending:
                return ending
    return dominant_newline(index.text)


def _adapt_newlines(text: str, newline: str) -> str:
    if newline == "\n":
        return text
    return text.replace("\r\n", "\n").replace("\n", newline)
