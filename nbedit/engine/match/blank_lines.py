"""The blank-lines tier: the old text's lines, in order, with other runs of blank lines between them.

Real replies lose and gain blank lines (git even collapses runs of them in the commit
messages that carry replies). Where the old text's non-blank lines follow one another in the
file, blank lines aside, the old text is rewritten to the file's blank runs (only runs the
change removes or replaces may differ) and located again by the ordinary tiers in that place
alone. The cascade is passed in (``locate``), not imported, so the two do not import each other.
"""

from __future__ import annotations

from nbedit._dataclass import replace
from nbedit.engine.match.candidates import _explained
from nbedit.engine.match.evidence import _applied_instead
from nbedit.engine.match.search import MAX_LOCATIONS, _Hit
from nbedit.engine.match.tiers import FileIndex, MatchOptions, _fuzzy_line
from nbedit.engine.models import Hunk, Match, Tier
from nbedit.errors import AmbiguousMatch, MatchError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Callable

    Locate = Callable[..., list[Match]]


def _locate_blank_lines(
    index: FileIndex,
    hunk: Hunk,
    options: MatchOptions,
    low: int,
    high: int,
    near_line: int | None,
    path: str | None,
    tried: list[str],
    locate: Locate,
) -> list[Match] | None:
    """The old text's lines, in order, with other runs of blank lines between them than the file has.

    Real replies lose and gain blank lines (git even collapses runs of them in the commit
    messages that carry replies). Each place where the old text's non-blank lines follow one
    another in the file, blank lines aside (compared as the indentation tier compares),
    rewrites the old text to the file's blank runs where the change removes or replaces
    them (see ``_with_file_blank_runs``). The rewritten hunk is then located by the ordinary
    tiers in that place alone (``locate``, the cascade). Two places are ambiguous; none is None
    (the fuzzy tier is next).
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

    A run the change removes or replaces may differ: its lines are the file's, and they go
    with the change. A differing run the change keeps whole, between two lines it keeps,
    with nothing added or removed next to it, is the file's in both texts: the result holds
    the file's blank lines there, as before the change (the reply did not touch that run).
    Any other differing run is refused (None): something is added or removed next to it, and
    the result would hold the file's blank lines or the reply's, on one side of the change or
    the other, and the reply does not say which (real replies lose blank lines to the commit
    messages that carry them, and gain them from the model).
    """
    from nbedit.engine.transport import split_change_lines

    new_lines, new_final = split_change_lines(hunk.new)
    runs: dict[int, tuple[int, int]] = {}  # old line where a run starts -> (its length, the file's)
    for position in range(1, len(wanted)):
        previous = wanted[position - 1][0]
        file_run = matched[position] - matched[position - 1] - 1
        runs[previous + 1] = (wanted[position][0] - previous - 1, file_run)
    kept: dict[int, int] = {}  # old line new keeps -> its line in new
    for tag, old_first, old_last, new_first, _ in align(old_lines, new_lines):
        if tag == "equal":
            kept.update(
                zip(
                    range(old_first, old_last),
                    range(new_first, new_first + old_last - old_first),
                    strict=False,
                )
            )
    old_out: list[str] = []
    new_runs: list[tuple[int, int, int]] = []  # (new line where a kept run starts, its length, the file's)
    number = 0
    while number < len(old_lines):
        if number in runs:
            old_run, file_run = runs[number]
            old_out.extend([""] * file_run)
            if file_run != old_run:
                run = range(number, number + old_run) if old_run else range(number - 1, number + 1)
                if any(step in kept for step in run):
                    around = range(number - 1, number + old_run + 1)  # the run and a kept line each side
                    if not all(
                        step in kept and kept[step] - kept[around[0]] == step - around[0] for step in around
                    ):
                        return None
                    new_runs.append((kept[number - 1] + 1, old_run, file_run))
            if old_run:
                number += old_run
                continue
        old_out.append(old_lines[number])
        number += 1
    old_text = "\n".join(old_out) + ("\n" if old_final else "")
    if old_text == hunk.old:
        return None
    if not new_runs:
        return replace(hunk, old=old_text, start_line=None, changed_lines=None, alternatives=())
    for start, length, file_run in reversed(new_runs):
        new_lines[start : start + length] = [""] * file_run
    new_text = "\n".join(new_lines) + ("\n" if new_final else "")
    return replace(hunk, old=old_text, new=new_text, start_line=None, changed_lines=None, alternatives=())
