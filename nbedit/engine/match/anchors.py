"""apply_patch's ``@@`` anchor lines: a hunk is located after its anchor, outermost first.

The anchor scopes the search: the hunk is taken nearest after it. An anchor line that occurs
more than once is never resolved by position; the hunk must fit after exactly one occurrence,
or after one by a stricter tier than after any other. Each fit is tried by the whole cascade
in the region after an occurrence: the cascade is passed in (``locate``), not imported, so
the cascade and this module do not import each other.
"""

from __future__ import annotations

from nbedit._dataclass import replace
from nbedit.engine.match.search import _find, _Hit
from nbedit.engine.match.tiers import _NORMALISED_TIERS, _TIER_RANK, FileIndex, MatchOptions
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Callable

    Locate = Callable[..., list[Match]]


def _locate_after_anchor(
    index: FileIndex,
    hunk: Hunk,
    options: MatchOptions,
    low: int,
    high: int,
    path: str | None,
    locate: Locate,
) -> list[Match]:
    """Locate a hunk after its ``@@`` anchor lines (apply_patch), outermost first.

    The anchor scopes the search: the hunk is taken nearest after it. An anchor
    line that occurs more than once is never resolved by position: each
    occurrence scopes the search up to the next one, and the hunk must fit after
    exactly one of them, or fit after one by a stricter tier than after any other
    (an exact fit beats a fuzzy one); fitting after several alike is an ``AmbiguousMatch``.
    ``locate`` is the cascade, run in the region after each occurrence.
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
        if not inner.old and not inner.anchors and (inner.at_end or inner.start_line is None):
            _refuse_append_outside(index, anchor, only, high, path)
        try:
            return locate(
                index,
                inner,
                options=options,
                region=(only.end, high),
                near_line=only.first_line + 2,
                path=path,
            )
        except NoMatch:
            if not inner.anchors and _applied_in_block(index, inner, options, only, high, path, locate):
                return []  # made within the anchor's block; the near miss was in another one
            raise
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


def _block_end(index: FileIndex, hit: _Hit, high: int) -> tuple[int, str]:
    """Where the anchor line's block ends (the first later non-blank line indented no deeper) and
    that line; ``(high, "")`` when the block runs to ``high``."""
    text = index.text

    def depth(line: str) -> int:
        return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(8))

    anchored = depth(text[hit.start : hit.end])
    position = hit.end
    for later in text[hit.end : high].splitlines(keepends=True):
        if later.strip() and depth(later) <= anchored:
            return position, later
        position += len(later)
    return high, ""


def _applied_in_block(
    index: FileIndex,
    hunk: Hunk,
    options: MatchOptions,
    hit: _Hit,
    high: int,
    path: str | None,
    locate: Locate,
) -> bool:
    """The old text is nowhere after the anchor, and within the anchor's block the change stands
    made: "already applied". (After the block, a near miss of the old text in another function
    would otherwise count as the old text still there: the anchor says it is not the place.)"""
    end, _ = _block_end(index, hit, high)
    if end >= high:
        return False
    try:
        found = locate(
            index, hunk, options=options, region=(hit.end, end), near_line=hit.first_line + 2, path=path
        )
    except MatchError:
        return False
    return not found


def _refuse_append_outside(index: FileIndex, anchor: str, hit: _Hit, high: int, path: str | None) -> None:
    """A chunk of added lines only, under an anchor: Codex appends such lines at the end of the
    file, whatever the anchor says. A careful reader puts them in the anchor's block; the two
    agree only when that block runs to the end (every later non-blank line indented deeper than
    the anchor line). Otherwise where they go is a guess: refused."""
    end, later = _block_end(index, hit, high)
    if end < high:
        raise AmbiguousMatch(
            f"{path or 'file'}: the chunk under the @@ anchor line {anchor!r} (line {hit.first_line + 1}) "
            "only adds lines, with no line of the file to follow; appended at the end of the file "
            f"(as Codex does) they would land outside that block, which ends before {later.strip()[:60]!r}",
            path=path,
            locations=[(hit.first_line + 1, 1)],
            tier="anchor",
            detail=(
                "add the line the new lines follow (or precede) as a context line, so the place can be "
                "checked (nothing was written)"
            ),
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
