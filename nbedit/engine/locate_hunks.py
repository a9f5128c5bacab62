"""Locating every hunk of a change in one text, and splicing what is written there.

``edit_text`` is the stage between the matcher and the file planner: it asks the matcher
(``engine/match/``) for each hunk's place and replacement, checks what only the whole set of
hunks can tell, and splices the replacements in one pass into a ``TextEdit``. It never reads
a file; ``engine/plan.py`` (files, encodings, adds and deletes) and the notebook planner
(a cell view's text) call it.

Hunks of a diff or an apply_patch block are located against the original text (never against
each other's output); what the set of hunks decides is here: "already applied" is a verdict
on the whole change (a mix is ``PartlyApplied``), a context-free hunk's line number needs
confirmation (issue 21, rule 5), hunks may not overlap, and a SEARCH/REPLACE block with two
dividers is read the one way that fits the file.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.exact_run import exact_in_place, interleaved, kept_slices
from nbedit.engine.match.cascade import _exact_at_expected_line, locate
from nbedit.engine.match.evidence import context_free, removed_lines_unique
from nbedit.engine.match.tiers import FileIndex
from nbedit.engine.models import Hunk, LocatedHunk, Match, Tier
from nbedit.engine.text_edit import STRUCTURE_KEEPING, PlanOptions, TextEdit, splice
from nbedit.errors import (
    AmbiguousMatch,
    FileTooLarge,
    MatchError,
    NbeditError,
    NoMatch,
    OverlappingHunks,
    PartlyApplied,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from nbedit.engine.match.line_table import LinesInOrder

__all__ = ["edit_text"]

# hunks without line numbers from which their places are read from an index of the text's lines
# (``match.line_table``: one pass over the text) rather than searched for one by one (a pass each)
INDEXED_HUNKS = 16
# after a block the index could not place, the text is indexed again at once if the index had placed
# blocks, else after this many blocks in a row found exactly once on the string (a file whose blocks
# all need a lenient tier, CRLF lines for LF blocks, is searched as a string, as before: no index)
REINDEX_AFTER = 4


def edit_text(
    text: str,
    hunks: Sequence[Hunk],
    options: PlanOptions,
    *,
    path: str,
    region: tuple[int, int] | None = None,
    sequential: bool = False,
    base: bool | None = None,
) -> TextEdit:
    """Locate every hunk against ``text`` and splice the replacements in.

    Hunks of a diff or an apply_patch block are located against the original
    text (never against each other's output): apply_patch chunks search after
    the previous chunk, and unified-diff hunks carry the offset of the previous
    hunk forward as GNU patch does. ``sequential`` hunks (SEARCH/REPLACE
    blocks) apply in order, each to the text the previous ones left.

    "Already applied" is a verdict on the whole change: every hunk's new text
    is there and no old text is left. A mix of applied and unapplied hunks is
    refused (``PartlyApplied``), never half-applied.

    ``base``: whether ``text`` is the diff's base by git's ``index`` line (None: not
    known); it decides whether a context-free hunk's line number is evidence
    (``_check_context_free``).
    """
    if sequential and len(hunks) > 1:
        return _edit_in_order(text, hunks, options, path=path, region=region)
    _check_appends_last(hunks, path)
    index = FileIndex(text)
    if (
        sum(hunk.start_line is None and hunk.whole_lines and hunk.old.endswith("\n") for hunk in hunks)
        >= INDEXED_HUNKS
    ):
        from nbedit.engine.match.line_table import LineTable

        index.line_table = LineTable.for_hunks(text, [hunk for hunk in hunks if hunk.start_line is None])
    notes: list[str] = []
    skipped: list[int] = []
    search_from = region[0] if region else 0
    region_end = region[1] if region else len(text)
    carried_offset = 0
    cursor: tuple[int, int] | None = (0, 0) if region is None else None  # (offset, line) of a line start
    located: list[LocatedHunk] = []
    if region is None:
        located, cursor = exact_in_place(text, hunks)
        if len(located) == len(hunks):
            _check_context_free(index, located, [item.hunk.start_line for item in located], base, path)
            kept = list(map(text.__getitem__, kept_slices(located)))
            return TextEdit(
                "".join(interleaved(kept, [hunk.new for hunk in hunks])), tuple(located), False, ()
            )
        search_from = cursor[0]
    nears: list[int | None] = [item.hunk.start_line for item in located]  # the line each hunk was sought at
    for number, hunk in enumerate(hunks[len(located) :], start=len(located)):
        near = hunk.start_line + carried_offset if hunk.start_line is not None else None
        low = search_from if hunk.search_from_previous else (region[0] if region else 0)
        if cursor is not None and near is not None and not hunk.alternatives:
            # a diff's hunk exactly where it says (what ``locate`` tries first), without its frames
            quick = _exact_at_expected_line(index, hunk, cursor, near, low, region_end)
            if quick is not None:
                located.append(LocatedHunk(hunk, quick))
                nears.append(near)
                search_from = max(search_from, quick.end)
                cursor = (quick.end, quick.line - 1 + quick.line_count)  # it ends a line, after the cursor
                if quick.offset is not None:
                    carried_offset = quick.offset
                continue
        hunk, matches = _locate_reading(
            index, hunk, options, region=(low, region_end), near_line=near, path=path, cursor=cursor
        )
        if not matches:
            skipped.append(number + 1)
            notes.append(f"hunk {number + 1} is already applied (its new text is there, its old text is not)")
            if hunk.start_line is not None:
                # the hunks after it stand shifted by what it added or removed
                carried_offset += hunk.new.count("\n") - hunk.old.count("\n")
            continue
        for match in matches:
            located.append(LocatedHunk(hunk, match))
            nears.append(near)
        last = matches[-1]
        search_from = max(search_from, last.end)
        ends_line = last.end == len(text) or text[last.end - 1 : last.end] == "\n"
        if cursor is not None and ends_line and last.end >= cursor[0] and last.line_count:
            cursor = (last.end, last.line - 1 + last.line_count)  # hunks of a diff come in file order
        elif cursor is not None and last.end < cursor[0]:
            cursor = (0, 0)
        if last.offset is not None:
            carried_offset = last.offset
    if skipped and located:
        _refuse_partly_applied(path, skipped, len(hunks))
    _check_context_free(index, located, nears, base, path)
    _check_overlaps(located, path)
    return TextEdit(splice(text, located), tuple(located), bool(skipped), tuple(notes))


def _check_context_free(
    index: FileIndex,
    located: Sequence[LocatedHunk],
    nears: Sequence[int | None],
    base: bool | None,
    path: str,
) -> None:
    """A context-free hunk (``git diff -U0``) must be placed by evidence, not by its line number alone.

    Issue 21, rule 5: GNU patch puts such a hunk at its line number (plus the offset earlier
    hunks carried) in any file, so a file with lines added above gets the change lines early.
    Here the number is evidence only when something confirms it:

    - the file is the diff's base by git's ``index <pre>..<post>`` line (``base``);
    - the hunk's removed lines stand once in the file (they place it themselves); or they
      stand at the very line named (distance 0) and no ``index`` line says the file is
      another (rule 1: a number pointing at one of identical places);
    - for a pure insertion (nothing removed, so nothing to check): every other hunk of the diff
      found by its own lines stands at the same offset from its number, 0 or with such hunks on
      both sides (``_neighbours_agree``), so the lines around it did not move; or it appends after the
      last line, and the file has exactly as many lines as the diff's number says (lines
      added above would make it longer). An empty file has one place.

    Anything else is refused, saying how to get a diff that can be checked.
    """
    if base is True or not any(context_free(item.hunk) for item in located):
        return
    for position, item in enumerate(located):
        hunk, match = item.hunk, item.match
        if not context_free(hunk) or hunk.start_line is None:
            continue
        where = f" (the hunk at line {hunk.source_line} of the change)" if hunk.source_line else ""
        not_base = ""
        if base is False:
            not_base = " and git's index line says this file is not the one the diff was made from"
        if hunk.old:
            if base is None and nears[position] == match.line:
                continue  # checked first: it costs nothing, a search of the whole file does
            if removed_lines_unique(index, hunk, match):
                continue
            problem = (
                f"{path}: the hunk{where} has no context lines (as 'git diff -U0' writes them) and the lines "
                f"it removes stand more than once in the file; its line number {hunk.start_line} is all that "
                f"picks line {match.line}{not_base}"
            )
        else:
            if not index.text.strip():
                continue
            if _neighbours_agree(located, position):
                continue
            offset = match.line - hunk.start_line
            if offset == 0 and hunk.start_line == index.line_count + 1 and match.start == len(index.text):
                continue  # appended after the last line, which is where the diff's line count puts it
            moved = any(
                other.hunk.old
                and other.hunk.start_line is not None
                and other.match.line - other.hunk.start_line != offset
                for other in located
            )
            problem = (
                f"{path}: the hunk{where} inserts lines with no context lines around them (as 'git diff -U0' "
                f"writes them), so only its line number ({hunk.start_line}) says where they go, and "
                + (
                    "the diff's other hunks stand at other lines than their numbers say"
                    if moved
                    else "nothing confirms this file is the one the diff was made from"
                )
                + not_base
            )
        raise AmbiguousMatch(
            problem,
            path=path,
            locations=[(match.line, 1)],
            tier="line-number",
            detail=(
                "regenerate the diff with context lines (e.g. git diff -U3), or make it against this "
                "file as it is now, so the place can be checked (nothing was written)"
            ),
        )


def _check_appends_last(hunks: Sequence[Hunk], path: str) -> None:
    """An added-only hunk with no line number appends to the file (aider's unified diffs without
    line numbers, a Codex chunk of added lines): what a careful reader expects when it is the
    last change to the file. Followed by hunks that edit lines, the diff's order says it goes
    before them (an import added at the top, a helper above its caller) and nothing says where:
    refused, never appended at the end."""
    for number, hunk in enumerate(hunks):
        if hunk.old or hunk.start_line is not None or hunk.anchors or not hunk.new.strip():
            continue
        later = next((n for n, other in enumerate(hunks[number + 1 :], start=number + 2) if other.old), None)
        if later is None:
            return
        raise AmbiguousMatch(
            f"{path}: hunk {number + 1} only adds lines, with no line of the file around them and no line "
            f"number, and hunk {later} after it edits the file: appended at the end (aider's convention for "
            "such a hunk) they would land after that edit, against the diff's order",
            path=path,
            locations=[],
            tier="line-number",
            detail=(
                "add the line the new lines follow (or precede) as a context line, so the place can be checked "
                "(nothing was written)"
            ),
        )


def _neighbours_agree(located: Sequence[LocatedHunk], position: int) -> bool:
    """A pure insertion's place confirmed by the rest of its diff: every hunk found by its own
    lines (context, or lines it removes) stands at the insertion's offset from its number, and
    that offset is 0 (the file is the diff's base as far as its lines can tell) or such hunks
    stand on both sides of it (the lines around it moved together)."""

    def offset(item: LocatedHunk) -> int | None:
        number = item.hunk.start_line
        return None if number is None else item.match.line - number

    own = offset(located[position])
    before = [offset(other) for other in located[:position] if other.hunk.old]
    after = [offset(other) for other in located[position + 1 :] if other.hunk.old]
    if not before and not after or any(other != own for other in (*before, *after)):
        return False
    return own == 0 or bool(before and after)


def _refuse_partly_applied(path: str, applied: Sequence[int], total: int) -> None:
    listed = ", ".join(str(number) for number in applied)
    raise PartlyApplied(
        f"{path}: hunk{'s' if len(applied) > 1 else ''} {listed} of {total} look{'' if len(applied) > 1 else 's'} "
        "already applied (new text there, old text gone) but the others are not: the file has drifted or "
        "part of this change was made already",
        path=path,
        applied=applied,
    )


def _locate_reading(
    index: FileIndex,
    hunk: Hunk,
    options: PlanOptions,
    *,
    region: tuple[int, int],
    near_line: int | None,
    path: str,
    cursor: tuple[int, int] | None = None,
) -> tuple[Hunk, list[Match]]:
    """Locate a hunk; with several readings (a block with two dividers), the one that fits.

    Exactly one reading may fit the file; several fitting is an ``AmbiguousMatch``.
    """
    if not hunk.alternatives:
        try:
            return hunk, locate(
                index,
                hunk,
                options=options.match,
                region=region,
                near_line=near_line,
                path=path,
                cursor=cursor,
            )
        except NoMatch as error:
            # the readings of a reply that did not match as written: only a miss needs them (a start-up
            # without their patterns compiled, tests/test_startup.py)
            from nbedit.engine.readings import blank_runs_noted, elision_noted, locate_as_meant

            meant = locate_as_meant(index, hunk, options.match, region, path)
            if meant is not None:
                return meant
            noted = elision_noted(_divider_noted(error, hunk), hunk)
            raise blank_runs_noted(noted, hunk, index.text, region) from None
    readings = [replace(hunk, alternatives=())]
    readings += [
        replace(hunk, old=old, new=new, alternatives=(), at_end=not old, changed_lines=None)
        for old, new in hunk.alternatives
    ]
    fits: list[tuple[Hunk, list[Match]]] = []
    failures: list[NbeditError] = []
    for reading in readings:
        try:
            matches = locate(
                index, reading, options=options.match, region=region, near_line=near_line, path=path
            )
        except MatchError as error:
            failures.append(error)
            continue
        fits.append((reading, matches))
    if len(fits) == 1:
        return fits[0]
    if not fits:
        first = failures[0]
        raise _divider_noted(first, hunk) if isinstance(first, NoMatch) else first
    starts = {tuple(match.start for match in matches) for _, matches in fits}
    if len(starts) == 1:
        # all at the same place: the reading with the longest old text is the one whose
        # extra divider lines are really in the file there, so it is what the block says
        return max(fits, key=lambda fit: len(fit[0].old))
    where = f" (the block at line {hunk.source_line} of the change text)" if hunk.source_line else ""
    raise AmbiguousMatch(
        f"{path}: a block{where} has {len(readings)} '=======' lines, and {len(fits)} ways of reading it "
        "fit the file; nbedit will not guess which line divides the old text from the new",
        path=path,
        locations=[(matches[0].line if matches else 0, 1) for _, matches in fits],
        tier="divider",
    )


def _divider_noted(error: NoMatch, hunk: Hunk) -> NoMatch:
    """``error``, saying so when the old text that was not found holds a SEARCH/REPLACE divider line.

    Such a block had a second ``=======`` the parser would not write into the file
    (``formats.search_replace._readings``); the reading left needs the divider in the
    file, and "nothing is close" would hide that it is most likely a stray line.
    """
    if not any(
        line.strip() and set(line.strip()) == {"="} and 5 <= len(line.strip()) <= 9
        for line in hunk.old.split("\n")
    ):
        return error
    first = str(error).split("\n", 1)[0]
    noted = NoMatch(
        f"{first}\nits old text has a '=======' line: if the block has a stray second divider, remove it "
        "(a divider line is written into a file only where the old text has it, or under a title in .rst)",
        path=error.path,
        candidates=error.candidates,
    )
    return noted


def _check_sequential_work(blocks: int, size: int, limit: int, path: str, *, searched: bool = False) -> None:
    """Refuse blocks whose in-order application searches the whole text more than ``limit`` characters.

    Each SEARCH/REPLACE block that is located on the text as a string is searched for in the
    whole text the blocks before it left, and spliced into it: blocks x characters. Up to
    ``INDEXED_HUNKS`` blocks are all located so, and refused before any is located when over
    the limit; more blocks are placed from an index of the text's lines (``LinesInOrder``)
    at a cost linear in the text, and only those it cannot place exactly once (found by a
    lenient tier, ambiguous, absent) are searched on the text: their work is counted as they
    come (``searched``) and refused when it passes the limit. A unified diff of the same change
    carries line numbers, and its hunks are located near them in one pass over the text.
    """
    if blocks * size <= limit:
        return
    what = (
        f"{blocks:,} SEARCH/REPLACE blocks that could not be placed from an index of the text's lines "
        f"(not found exactly once), each searched for in the whole {size:,}-character text the blocks "
        "before it left,"
        if searched
        else f"{blocks:,} SEARCH/REPLACE blocks, each applied to the whole {size:,}-character text the "
        "blocks before it left,"
    )
    raise FileTooLarge(
        f"{path}: {what} are over the {limit:,} block-character limit; "
        f"nothing was {'' if searched else 'located or '}written. Send the change as a unified diff (for a "
        "notebook, of its cell view: nbedit view), split the blocks into several smaller edits, or raise "
        "the limit (Workspace(max_sequential_work=...)) if you really mean to apply them at once",
        path=path,
        size=blocks * size,
        limit=limit,
        unit="block-characters",
    )


def _edit_in_order(
    text: str, hunks: Sequence[Hunk], options: PlanOptions, *, path: str, region: tuple[int, int] | None
) -> TextEdit:
    """Apply hunks one after another, each located in the text the previous ones left.

    When locating every hunk in the original text gives the very same result
    (the usual case: blocks touch separate places), those located hunks are
    kept, so a review can still leave single hunks out. When a block builds on
    text an earlier block wrote, the file is shown as one change.

    With many blocks (``INDEXED_HUNKS``) and no region, a block whose old text stands exactly
    once in the current text, or nowhere exactly but once up to line endings, is placed from an
    index of its lines (``LinesInOrder``: the same place and the same text written as the exact
    or line-endings tier's, without a search of the whole text); any other block is located on
    the text as a string, as it always was, so what it decides (another lenient tier, an
    ambiguity, a refusal and its words) is unchanged. After such a block the text is indexed
    again at once if the index was placing blocks, else after a run of blocks it could have
    placed (``REINDEX_AFTER``).
    """
    indexing = region is None and len(hunks) > INDEXED_HUNKS
    if not indexing:
        _check_sequential_work(len(hunks), len(text), options.max_sequential_work, path)
    current = text
    low, high = region if region is not None else (0, len(text))
    lines: LinesInOrder | None = None
    if indexing:
        from nbedit.engine.match.line_table import LinesInOrder, plain_block, wanted_lines

        wanted = wanted_lines(hunks)  # once: indexing again after a block it missed costs the text only
        lines = LinesInOrder(text, wanted)
    tiers: list[str] = []
    skipped: list[int] = []
    changed = searched = exact_run = 0
    productive = False
    repeated: set[int] = set()  # blocks done with an earlier identical one (``once_per_place``)
    repeat_notes: list[str] = []
    for number, hunk in enumerate(hunks):
        if number in repeated:
            continue
        if lines is not None:
            tier = lines.apply(hunk, None if options.exact else _carried_over_line_endings)
            if tier is not None:
                changed += 1
                tiers.append(tier)
                continue
            productive = lines.placed > 0  # an index that placed nothing waits for proof before the next
            current = lines.text()
            low, high, lines = 0, len(current), None
        if indexing:
            searched += 1
            _check_sequential_work(searched, len(current), options.max_sequential_work, path, searched=True)
        try:
            step = edit_text(current, [hunk], options, path=path, region=(low, high))
        except AmbiguousMatch as error:
            from nbedit.engine.readings import once_per_place

            step, also = once_per_place(edit_text, current, hunks, number, options, path, (low, high), error)
            repeated.update(also)
            repeat_notes.append(
                f"blocks {', '.join(str(n + 1) for n in (number, *also))} are one block given once for "
                f"each of the {len(also) + 1} places its old text occurs: each place was changed once"
            )
        if step.already_applied:
            skipped.append(number + 1)
            continue
        changed += 1
        tiers.extend(item.tier.value for item in step.hunks)
        high += len(step.after) - len(current)
        current = step.after
        if indexing:
            # a block the index could have placed (exact, once) is what makes indexing again worth it
            placeable = plain_block(hunk) and [item.tier for item in step.hunks] in (
                [Tier.EXACT],
                [Tier.LINE_ENDINGS],
            )
            exact_run = exact_run + 1 if placeable else 0
            if (productive or exact_run >= REINDEX_AFTER) and len(hunks) - number > REINDEX_AFTER:
                lines, productive = LinesInOrder(current, wanted), False
    if lines is not None:
        current, lines = lines.text(), None  # its lines go before the original is indexed again
    if skipped and changed:
        _refuse_partly_applied(path, skipped, len(hunks))
    if not changed:
        notes = tuple(
            f"hunk {number} is already applied (its new text is there, its old text is not)"
            for number in skipped
        )
        return TextEdit(text, (), True, notes)
    try:
        together = edit_text(text, hunks, options, path=path, region=region)
    except NbeditError:
        together = None
    if together is not None and together.after == current:
        return together
    note = (
        "its blocks build on each other, so they were applied in order and are shown as one change "
        f"(match tiers: {', '.join(tiers)})"
    )
    if repeat_notes:
        note = (
            f"the blocks were applied in order and are shown as one change (match tiers: {', '.join(tiers)})"
        )
    lenient = any(Tier(tier) not in STRUCTURE_KEEPING for tier in tiers)
    return TextEdit(current, (), False, (*repeat_notes, note), lenient=lenient)


def _carried_over_line_endings(hunk: Hunk, found: str) -> str | None:
    """What the line-endings tier writes over ``found`` (whole lines that equal the hunk's old text
    up to line endings), or None where it would refuse: ``match.replacement._replacement`` itself,
    on just those lines (all it reads of the text there is the lines and their endings)."""
    from nbedit.engine.match.replacement import _replacement
    from nbedit.engine.match.search import _Hit

    written = _replacement(
        FileIndex(found), hunk, _Hit(0, len(found), 0, found.count("\n")), Tier.LINE_ENDINGS
    )
    return written if isinstance(written, str) else None


def _check_overlaps(located: Sequence[LocatedHunk], path: str) -> None:
    ordered = sorted(located, key=lambda item: (item.match.start, item.match.end))
    for previous, current in zip(ordered, ordered[1:], strict=False):
        if current.match.start < previous.match.end:
            raise OverlappingHunks(
                f"{path}: two hunks both change lines {current.match.line}-"
                f"{previous.match.line + previous.match.line_count - 1}",
                path=path,
                lines=(current.match.line, previous.match.line + previous.match.line_count - 1),
            )
