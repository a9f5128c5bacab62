"""Evidence rules: when a change counts as applied already, and when a line number may place a hunk.

"Already applied" (an empty list from ``locate``) needs strong evidence: the new text
standing exactly where the old text was, with nothing of the old text left there
(``new_text_present``). A lenient place where the new text already stands is the change's own
result (applied, never applied twice); a lenient place with the new text exactly elsewhere,
or a fuzzy place holding the change while another window is as close to the old text, is
refused naming both (issue 21, rule 2).

A context-free hunk (``git diff -U0``) has only its removed lines and its line number to say
where it goes; ``context_free`` and ``removed_lines_unique`` are what the planner asks before
it lets the number decide (issue 21, rule 5).
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit.engine.match.candidates import _candidate, _no_match_message, _span
from nbedit.engine.match.context import context_free  # noqa: F401 - its own module; still importable here
from nbedit.engine.match.fuzzy import _query_lines, _Scored, _similarity
from nbedit.engine.match.search import _find, _Hit, _overlaps
from nbedit.engine.match.tiers import FileIndex, MatchOptions, _fuzzy_line, _normalise
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.engine.text import strip_newline
from nbedit.errors import AmbiguousMatch, NoMatch

LEFT_BEHIND = 0.8  # a line this similar to one the change removes means the old text is still there

# "already applied" with a line number: the new text must stand about where the old text was (after
# the offset the diff's earlier hunks carried, applied ones included); farther is not evidence
APPLIED_DISTANCE = 3

# tiers that can place a change at a line whose structure differs from the old text's: a place
# found by one of them is weaker evidence than the change's new text standing exactly in the file
_LENIENT_PLACES = frozenset({Tier.INDENTATION, Tier.BLANK_LINES, Tier.FUZZY})

# the new text standing exactly elsewhere makes a lenient place ambiguous only when it has at least
# this many non-blank lines (one line of new text may stand anywhere by chance)
APPLIED_ELSEWHERE_LINES = 2

# a deletion's kept lines found joined are evidence only with this many letters and digits
JOINED_MIN_CHARS = 8

# an appended text of one line shorter than this may end a file by chance: not "already applied"
APPEND_APPLIED_CHARS = 16


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
    if hunk.start_line is None and _only_kept_lines(hunk) and not _joins_across(hunk):
        # new text made only of lines the old text has (a deletion): finding it says nothing about
        # whether the deletion happened here, and nothing names the place (issue 21, weak evidence),
        # unless it joins lines kept on both sides of what is removed (they stood apart before)
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


def appended_already(index: FileIndex, hunk: Hunk, low: int, high: int) -> bool:
    """A pure addition that appends (no old text, no line number: aider's added-only hunk, an
    empty SEARCH, an apply_patch chunk of added lines) stands already where it would go: the
    region ends with exactly its lines (up to line endings and the final newline).

    Strong evidence only: the place is the end, and the text is there; but a short text (one
    line under ``APPEND_APPLIED_CHARS`` characters: a ``}``, ``pass``, a blank line) may end a
    file by chance, and appending it again is what such a change asks.
    """
    added = hunk.new.replace("\r\n", "\n").rstrip("\n")
    if not added.strip() or hunk.old:
        return False
    if sum(1 for line in added.split("\n") if line.strip()) < 2 and len(added.strip()) < APPEND_APPLIED_CHARS:
        return False
    region = index.text[low:high].replace("\r\n", "\n").rstrip("\n")
    return region.endswith(added) and (len(region) == len(added) or region[-len(added) - 1] == "\n")


def _only_kept_lines(hunk: Hunk) -> bool:
    from nbedit.engine.transport import split_change_lines

    old_lines = set(split_change_lines(hunk.old)[0])
    return all(line in old_lines for line in split_change_lines(hunk.new)[0])


def _joins_across(hunk: Hunk) -> bool:
    """A deletion's new text is its first and last old lines (not blank) with removed lines gone
    from between them: finding those lines together is evidence the lines between are gone."""
    from nbedit.engine.transport import split_change_lines

    old_lines, new_lines = split_change_lines(hunk.old)[0], split_change_lines(hunk.new)[0]
    if len(new_lines) >= len(old_lines) or len(new_lines) < 2:
        return False
    head = next((n for n, line in enumerate(new_lines) if line != old_lines[n]), len(new_lines))
    tail = len(new_lines) - head
    return (
        0 < head < len(new_lines)
        and new_lines[head:] == old_lines[len(old_lines) - tail :]
        and bool(new_lines[head - 1].strip())
        and bool(new_lines[head].strip())
        # braces and bare keywords join anywhere by chance: the lines must say something
        and sum(char.isalnum() for char in "".join(new_lines)) >= JOINED_MIN_CHARS
    )


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


def _layout_only(hunk: Hunk) -> bool:
    """Old and new differ only in indentation or blank lines: a change no lenient tier can see.

    Such a change, found only leniently where its new text already stands exactly, reads two
    ways: applied already, or an old text whose indentation drifted by as much as the change
    moves it (a dedent sent four spaces deep is the file's own lines). Neither is evidence.
    """
    old = [line.strip() for line in hunk.old.splitlines() if line.strip()]
    new = [line.strip() for line in hunk.new.splitlines() if line.strip()]
    return old == new


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
    if (
        not over
        and not near
        and (near_line is not None or _non_blank_lines(hunk.new) < APPLIED_ELSEWHERE_LINES)
    ):
        return False  # the line number places the change; or the new text is too short to tell
    place = places[0]
    layout_only = (over or near) and _layout_only(hunk)
    if not layout_only and (over or near) and new_text_present(index, hunk, (low, high), near_line=near_line):
        return True
    if layout_only:
        message = (
            f"the change only moves lines' indentation (or blank lines), the old text is found only at "
            f"{_span(place)} ({tier.explanation}), and the new text already stands exactly at {_span(standing)}: "
            "either the change was applied already or the old text's indentation is off; nbedit will not guess which"
        )
        detail = (
            "re-read the file: if its lines already have the new indentation, nothing is left to do; "
            "otherwise copy the old text with the file's exact indentation"
        )
    else:
        message = (
            f"the old text is found only at {_span(place)} ({tier.explanation}), and the change's new text "
            f"already stands exactly at {_span(standing)}: the change may have been applied already; nbedit "
            "will not apply it a second time nor guess"
        )
        detail = (
            f"old text (leniently) at line {place.first_line + 1}, new text (exactly) at line "
            f"{standing.first_line + 1}\nre-read the file: if the change is there, nothing is left to do; "
            "otherwise copy the old text exactly from the place meant"
        )
    raise AmbiguousMatch(
        f"{path or 'file'}: {message}",
        path=path,
        locations=sorted({(place.first_line + 1, 1), (standing.first_line + 1, 1)}),
        tier=tier.value,
        detail=detail,
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
