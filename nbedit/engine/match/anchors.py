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
