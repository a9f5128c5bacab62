"""The cascade: ``locate`` runs the tiers strict to lenient and the first that finds the hunk decides.

Uniqueness is checked at every tier. With no locator, two hits are an ``AmbiguousMatch``;
with a locator (a unified diff's line number, carried by the offset the diff's earlier hunks
were found at) the nearest hit wins only when it is at or next to the line named
(``TRUSTED_DISTANCE``); a far-off line number, or a tie, is ambiguous (GNU patch takes the
nearest: model-written line numbers are often garbage). A place found only after ignoring
trailing blanks or curly punctuation is weighed against places at another indentation.

This module is the order of the tiers and the choice among places; each tier's search, the
fuzzy rules, the evidence for "already applied" and the words of an explanation are in
their own modules, which never call back into this one (anchors and blank lines re-enter the
cascade through the ``locate`` they are given).
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit.engine.match.anchors import _locate_after_anchor
from nbedit.engine.match.blank_lines import _locate_blank_lines
from nbedit.engine.match.candidates import (
    _candidate,
    _explained,
    _no_match_message,
    _places,
    _rejection_reason,
    _runner_up,
    _span,
)
from nbedit.engine.match.evidence import (
    APPLIED_DISTANCE,
    _applied_instead,
    _refuse_if_old_text_elsewhere,
    appended_already,
    new_text_present,
)
from nbedit.engine.match.fuzzy import _context_floor, _enough_for_fuzzy, _fuzzy_candidates, _fuzzy_winner
from nbedit.engine.match.replacement import _adapt_newlines, _build, _insertion
from nbedit.engine.match.search import MAX_LOCATIONS, TRUSTED_DISTANCE, _ends_file, _find, _Hit, _overlaps
from nbedit.engine.match.tiers import _NORMALISED_TIERS, FileIndex, MatchOptions, _normalise
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.engine.text import dominant_newline
from nbedit.errors import AmbiguousMatch, NoMatch, OverlappingHunks


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
        return _locate_after_anchor(index, hunk, options, low, high, path, locate)

    if not hunk.old:
        if (hunk.at_end or near_line is None) and appended_already(index, hunk, low, high):
            return []  # appended already: the region ends with exactly the added lines
        return [_insertion(index, hunk, low, high, near_line)]
    if (
        not options.exact
        and near_line is None
        and not hunk.old.strip()
        and not text[low:high].strip()
        and not hunk.replace_all
    ):
        # blank old text, blank (or empty) file or cell: a reply's empty SEARCH with the blank
        # line a chat keeps in it; there is one place, and the blank text there is replaced.
        # A hunk with a line number (a diff's blank lines removed at line N) is located as usual.
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
        spaced = _locate_blank_lines(index, hunk, options, low, high, near_line, path, tried, locate)
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
