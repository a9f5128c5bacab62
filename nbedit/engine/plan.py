"""Planning: a parsed ``Change`` plus the files as they are now -> a ``Plan``.

Nothing is written here. The planner asks a ``FileSource`` (provided by the
workspace, which owns all I/O) for bytes, decodes them, locates every hunk
against the *original* text, refuses overlapping hunks, and splices the
replacements in one pass. The result holds the exact before and after bytes and
the fingerprint the writer re-checks, so what is previewed is exactly what is
written.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit._gc import paused
from nbedit.engine.match.cascade import _exact_at_expected_line, locate
from nbedit.engine.match.evidence import context_free, removed_lines_unique
from nbedit.engine.match.tiers import FileIndex
from nbedit.engine.models import (
    Change,
    FileChange,
    FilePlan,
    Hunk,
    LocatedHunk,
    Match,
    Plan,
    Tier,
    decoded_when_read,
    is_notebook_path,
)
from nbedit.engine.readings import elision_noted, locate_as_meant, once_per_place
from nbedit.engine.source import FileSource  # moved; still importable from here
from nbedit.engine.text import UTF8, Codec, canonical_encoding, decode, encode, fingerprint
from nbedit.engine.text_edit import (  # moved; still importable from here
    DEFAULT_MAX_CELLS,
    DEFAULT_MAX_HUNKS,
    STRUCTURE_KEEPING,
    PlanOptions,
    TextEdit,
    splice,
)
from nbedit.engine.whole_diff import text_diff  # moved; still importable from here
from nbedit.engine.written_paths import resolve_backslashes
from nbedit.errors import (
    AmbiguousMatch,
    FileExists,
    FileMissing,
    FileTooLarge,
    MatchError,
    NbeditError,
    NoMatch,
    NotebookError,
    OverlappingHunks,
    PartlyApplied,
    UnsafeChange,
    option,
)

# typing stays out of a run: it costs milliseconds of every call (tests/test_startup.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    Item = TypeVar("Item")

__all__ = [
    "DEFAULT_MAX_CELLS",
    "DEFAULT_MAX_HUNKS",
    "FileSource",
    "PlanOptions",
    "TextEdit",
    "edit_text",
    "exclude_hunks",
    "plan_change",
    "splice",
    "text_diff",
]


# From this size a file's fingerprint is hashed on another thread while the hunks are located:
# hashing a megabyte takes about as long as locating a few dozen hunks, a thread ~0.05 ms.
HASH_MEANWHILE = 1 << 20


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
    index = FileIndex(text)
    notes: list[str] = []
    skipped: list[int] = []
    search_from = region[0] if region else 0
    region_end = region[1] if region else len(text)
    carried_offset = 0
    cursor: tuple[int, int] | None = (0, 0) if region is None else None  # (offset, line) of a line start
    located: list[LocatedHunk] = []
    if region is None:
        located, cursor = _exact_in_place(text, hunks)
        if len(located) == len(hunks):
            _check_context_free(index, located, [item.hunk.start_line for item in located], base, path)
            kept = list(map(text.__getitem__, _kept(located)))
            return TextEdit(
                "".join(_interleaved(kept, [hunk.new for hunk in hunks])), tuple(located), False, ()
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
    - for a pure insertion (nothing removed, so nothing to check): the diff's nearest hunk
      found by its own lines (the one after it, else the one before it) stands at the same
      offset from its number, so the lines between did not move; or it appends after the
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
            offset = match.line - hunk.start_line
            following = next((other for other in located[position + 1 :] if other.hunk.old), None)
            if following is None:  # the last hunk found by its lines, before this one
                following = next((other for other in reversed(located[:position]) if other.hunk.old), None)
            if (
                following is not None
                and following.hunk.start_line is not None
                and following.match.line - following.hunk.start_line == offset
            ):
                continue
            if offset == 0 and hunk.start_line == index.line_count + 1 and match.start == len(index.text):
                continue  # appended after the last line, which is where the diff's line count puts it
            problem = (
                f"{path}: the hunk{where} inserts lines with no context lines around them (as 'git diff -U0' "
                f"writes them), so only its line number ({hunk.start_line}) says where they go, and nothing "
                f"confirms this file is the one the diff was made from{not_base}"
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


def _exact_in_place(text: str, hunks: Sequence[Hunk]) -> tuple[list[LocatedHunk], tuple[int, int]]:
    """The leading hunks of a diff that are exactly at the lines they claim.

    What ``_exact_at_expected_line`` finds for each hunk while every hunk before it
    was found so (its offset then stays 0), in one tight loop: the first exact
    occurrence after the previous hunk, at the line the header names. Such hunks
    are in file order and cannot overlap, so ``_kept`` and ``_interleaved`` splice
    them without a sort or an overlap check. Returns the located hunks and the (offset, line)
    where the last one ended; the caller goes on from the first hunk that is not
    so, with the full search.
    """
    located: list[LocatedHunk] = []
    find, count = text.find, text.count
    offset = line = 0  # the end of the last hunk found: a line start, and its 0-based line
    exact = Tier.EXACT
    for hunk in hunks:
        old = hunk.old
        if (
            hunk.start_line is None
            or not hunk.whole_lines
            or hunk.replace_all
            or hunk.anchors
            or hunk.at_end
            or hunk.alternatives
            or not old.endswith("\n")
        ):
            break
        position = find(old, offset)
        if position == -1 or (position and text[position - 1] != "\n"):
            break
        first = line + count("\n", offset, position)
        if first + 1 != hunk.start_line:
            break
        size = old.count("\n")
        end = position + len(old)
        # the span is the old text itself, line endings included, so the new text goes in as written
        located.append(LocatedHunk(hunk, Match(position, end, hunk.new, exact, 1.0, first + 1, size, 0)))
        offset, line = end, first + size
    return located, (offset, line)


def _kept(located: Sequence[LocatedHunk]) -> list[slice]:
    """The slices of a text that hunks in file order, not overlapping, leave as they are."""
    starts = [item.match.start for item in located]
    ends = [item.match.end for item in located]
    return list(map(slice, [0, *ends], [*starts, None]))


def _interleaved(kept: Sequence[Item], insertions: Sequence[Item]) -> list[Item]:
    """``kept[0], insertions[0], kept[1], ...``: what one join turns into the new text."""
    pieces = [*kept, *insertions]  # the right length; every item is overwritten
    pieces[0::2] = kept
    pieces[1::2] = insertions
    return pieces


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
            meant = locate_as_meant(index, hunk, options.match, region, path)
            if meant is not None:
                return meant
            raise elision_noted(_divider_noted(error, hunk), hunk) from None
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


def _edit_in_order(
    text: str, hunks: Sequence[Hunk], options: PlanOptions, *, path: str, region: tuple[int, int] | None
) -> TextEdit:
    """Apply hunks one after another, each located in the text the previous ones left.

    When locating every hunk in the original text gives the very same result
    (the usual case: blocks touch separate places), those located hunks are
    kept, so a review can still leave single hunks out. When a block builds on
    text an earlier block wrote, the file is shown as one change.
    """
    current = text
    low, high = region if region is not None else (0, len(text))
    tiers: list[str] = []
    skipped: list[int] = []
    changed = 0
    repeated: set[int] = set()  # blocks done with an earlier identical one (``once_per_place``)
    repeat_notes: list[str] = []
    for number, hunk in enumerate(hunks):
        if number in repeated:
            continue
        try:
            step = edit_text(current, [hunk], options, path=path, region=(low, high))
        except AmbiguousMatch as error:
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
            "the blocks were applied in order and are shown as one change "
            f"(match tiers: {', '.join(tiers)})"
        )
    lenient = any(Tier(tier) not in STRUCTURE_KEEPING for tier in tiers)
    return TextEdit(current, (), False, (*repeat_notes, note), lenient=lenient)


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


def plan_change(change: Change, source: FileSource, options: PlanOptions, *, root: str = ".") -> Plan:
    """Plan every file of a change; a later change to the same path builds on the earlier one."""
    with paused():  # a big notebook or patch becomes many objects: see nbedit._gc
        return _plan_change(change, source, options, root)


def _plan_change(change: Change, source: FileSource, options: PlanOptions, root: str) -> Plan:
    _check_hunk_count(change, options.max_hunks)
    plans: list[FilePlan] = []
    positions: dict[str, int] = {}
    for file_change in change.files:
        path = source.normalise(resolve_backslashes(file_change, source))
        if file_change.new_path is not None:
            file_change = replace(file_change, new_path=source.normalise(file_change.new_path))
        file_change = replace(file_change, path=path)
        if path in positions:
            earlier = plans[positions[path]]
            chained = _ChainedSource(source, path, earlier.after_bytes)
            later = _plan_file(file_change, chained, options, change.dialect)
            plans[positions[path]] = _merge(earlier, later)
            continue
        positions[path] = len(plans)
        plans.append(_plan_file(file_change, source, options, change.dialect))
    _check_targets(plans, source, options)
    _check_whole_change_applied(plans)
    return Plan(tuple(plans), dialect=change.dialect, root=root)


def _check_hunk_count(change: Change, limit: int) -> None:
    count = sum(len(file_change.hunks) for file_change in change.files)
    if count > limit:
        path = change.files[0].path if len(change.files) == 1 else None
        raise FileTooLarge(
            f"the change has {count:,} hunks, over the {limit:,}-hunk limit; nothing was located or written. "
            "Split it into several changes (one per file or per part of a file), or raise max_hunks "
            "(Workspace(max_hunks=...)) if you really mean to apply it at once",
            path=path,
            size=count,
            limit=limit,
            unit="hunks",
        )


def _check_whole_change_applied(plans: Sequence[FilePlan]) -> None:
    """A change is already applied as a whole or not at all: a mix is refused."""
    applied = [file_plan.path for file_plan in plans if file_plan.already_applied]
    pending = [file_plan.path for file_plan in plans if file_plan.changed and not file_plan.already_applied]
    if applied and pending:
        raise PartlyApplied(
            f"the change is already applied to {', '.join(applied)} but not to {', '.join(pending)}: "
            "the files have drifted or part of this change was made already",
            path=applied[0],
        )


def _check_targets(plans: Sequence[FilePlan], source: FileSource, options: PlanOptions) -> None:
    """Moves must not land on an existing file unless overwriting is allowed."""
    for file_plan in plans:
        if file_plan.new_path is None or file_plan.new_path == file_plan.path:
            continue
        existing = source.read(file_plan.new_path)
        if existing is not None and not options.overwrite:
            raise FileExists(
                f"{file_plan.new_path}: the move target already exists; "
                f"remove it first or allow overwrite ({option('overwrite')})",
                path=file_plan.new_path,
            )


class _ChainedSource:
    """A source that sees one path as an earlier part of the same change left it."""

    def __init__(self, inner: FileSource, path: str, data: bytes | None) -> None:
        self.inner, self.path, self.data = inner, path, data

    def normalise(self, path: str) -> str:
        return self.inner.normalise(path)

    def read(self, path: str) -> bytes | None:
        return self.data if path == self.path else self.inner.read(path)

    def mode(self, path: str) -> int | None:
        return self.inner.mode(path)


def _merge(earlier: FilePlan, later: FilePlan) -> FilePlan:
    return replace(
        later,
        before=earlier.before,
        before_bytes=earlier.before_bytes,
        fingerprint=earlier.fingerprint,
        operation="add" if earlier.operation == "add" and later.operation != "delete" else later.operation,
        hunks=(),  # the hunks of the two parts refer to different texts; previews diff the whole file
        display_before=earlier.display_before,
        notes=(*earlier.notes, *later.notes, "changed by more than one part of the patch"),
    )


def _plan_file(change: FileChange, source: FileSource, options: PlanOptions, dialect: str = "") -> FilePlan:
    path = change.path
    data = source.read(path)
    if is_notebook_path(path) and change.operation == "update" and data is not None:
        from nbedit.engine.notebook import plan_notebook

        return plan_notebook(
            path, data, change, options=options, mode=source.mode(path), dialect=dialect, edit_text=edit_text
        )
    if change.cell is not None:
        raise NotebookError(
            f"{path}: a cell ({change.cell}) was given, but cell= / --cell applies only to notebooks "
            "(.ipynb files) that exist; drop the cell to edit this file as text; nothing was changed",
            path=path,
        )
    if change.operation == "add":
        return _plan_add(change, data, source, options)
    if change.operation == "delete":
        return _plan_delete(change, data, source, options)
    if data is None:
        if change.hunks and all(not hunk.old for hunk in change.hunks):
            content = "".join(hunk.new for hunk in change.hunks)
            return _plan_add(
                replace(change, operation="add", content=content, hunks=()), None, source, options
            )
        raise FileMissing(
            f"{path}: cannot update a file that does not exist; check the path "
            "(relative to the workspace root) or create it with an add",
            path=path,
        )
    digest = None
    if len(data) >= HASH_MEANWHILE:
        # the SHA-256 of the bytes the writer re-checks, on another core while this one locates the
        # hunks (imported here: a small file, the usual agent call, needs no thread)
        from nbedit.engine.digest import fingerprint_meanwhile

        digest = fingerprint_meanwhile(data, minimum=HASH_MEANWHILE)
    try:
        text, codec = decode(data, path, options.encoding)
        base = _is_base(change, data)
        in_place = not change.sequential and base is not False  # not the base: every hunk is checked
        spliced = _edit_bytes(text, data, codec, change.hunks) if in_place else None
        edit = None
        if spliced is None:
            edit = edit_text(text, change.hunks, options, path=path, sequential=change.sequential, base=base)
    finally:
        before_fingerprint = digest() if digest is not None else None  # joined on every path
    if edit is not None:
        edit = _syntax_guard(path, text, edit)
        after_bytes = data if edit.after == text else encode(edit.after, codec, change.path)
        return _file_plan(
            change, source, data, text, codec, edit.after, after_bytes, edit, before_fingerprint
        )
    assert spliced is not None
    located, after_bytes = spliced
    # the new text is decoded from the new bytes only if something reads it: writing the file and
    # recording it take the bytes alone
    after = decoded_when_read(after_bytes)
    after_bytes = data if after_bytes == data else after_bytes
    return _file_plan(change, source, data, text, codec, after, after_bytes, located, before_fingerprint)


GUARD_SUFFIXES = (".py", ".pyi", ".pyw", ".json")
GUARD_EXACT_HUNKS = 32  # an exact change of more hunks (a release diff) is not parsed for a note


def _syntax_guard(path: str, before: str, edit: TextEdit) -> TextEdit:
    """Refuse a leniently placed change that breaks parsing (``engine.syntax``); note an exact one.

    A change whose added lines hold curly quotes where the result would not parse, and
    whose result parses with them straight, is written straight (a chat interface curled
    the reply), with a note saying so.
    """
    if edit.after == before or not path.lower().endswith(GUARD_SUFFIXES):
        return edit
    lenient = edit.placed_leniently
    if not lenient and len(edit.hunks) > GUARD_EXACT_HUNKS:
        return edit
    from nbedit.engine.syntax import straightened, text_problem

    if edit.hunks:
        items = sorted(edit.hunks, key=lambda item: (item.match.start, item.match.end))
        spans = [(item.match.start, item.match.end, item.match.replacement) for item in items]
    else:  # blocks applied in order: one span, the whole text
        items = []
        spans = [(0, len(before), edit.after)]
    problem = text_problem(path, before, edit.after, spans)
    if problem is None:
        return edit
    olds = [item.hunk.old for item in items] or [before]
    straight = [straightened(replacement, old) for (_, _, replacement), old in zip(spans, olds, strict=True)]
    if any(value is not None for value in straight):
        spans_straight = [
            (start, end, value if value is not None else replacement)
            for (start, end, replacement), value in zip(spans, straight, strict=True)
        ]
        after = _spliced_spans(before, spans_straight)
        if text_problem(path, before, after, spans_straight) is None:
            note = (
                "curly quotes in the added lines were written as straight quotes: with them the result "
                f"would not parse ({problem.describe()[len('the result would not parse: ') :]}), a sign that "
                "a chat interface curled the reply"
            )
            hunks = tuple(
                LocatedHunk(item.hunk, replace(item.match, replacement=span[2]), item.cell)
                for item, span in zip(items, spans_straight, strict=False)
            )
            return replace(edit, after=after, hunks=hunks, notes=(*edit.notes, note))
    if lenient:
        raise UnsafeChange(
            f"{path}: {problem.describe()} (it parsed before); the change was placed leniently "
            "(see the match tiers), so nbedit will not write it: check the indentation and "
            "punctuation of the change against the file",
            path=path,
            reason=problem.describe(),
            line=problem.line,
        )
    note = (
        f"warning: {problem.describe()} (it parsed before; the change was found exactly, "
        "so it is written as asked)"
    )
    return replace(edit, notes=(*edit.notes, note))


def _spliced_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in spans:
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _is_base(change: FileChange, data: bytes) -> bool | None:
    """Whether ``data`` is the diff's base by git's ``index`` line; None when that is not given or
    not needed (only a context-free hunk's line number depends on it, so only then is it hashed).

    git names a file's content by its blob hash, ``sha1(b"blob <size>\\0" + bytes)`` (sha256 in
    a repository of that object format, whose hashes are longer). A file checked out with
    line-ending conversion hashes differently from its blob: that is "not the base", a refusal
    of a context-free hunk, never a wrong place.
    """
    if change.base_blob is None or not any(context_free(hunk) for hunk in change.hunks):
        return None
    import hashlib

    algorithm = hashlib.sha256 if len(change.base_blob) > 40 else hashlib.sha1
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest().startswith(change.base_blob)


def _edit_bytes(
    text: str, data: bytes, codec: Codec, hunks: Sequence[Hunk]
) -> tuple[tuple[LocatedHunk, ...], bytes] | None:
    """The located hunks and new bytes of a diff whose hunks are all exactly in place, spliced in the file's bytes.

    When a UTF-8 file is all ASCII (as many characters as bytes), an offset in the
    text is the same offset in the bytes: the new bytes are cut from a memoryview
    of the old ones (no copies) around the hunks' encoded new texts, joined once.
    That is one big copy less than joining the text and encoding it, and no copies
    of the text between the hunks; the new text is decoded from the new bytes when
    it is first read (``decoded_when_read``). None when that is not so (the caller
    takes ``edit_text``).
    """
    if codec != UTF8 or len(text) != len(data) or not hunks:
        return None
    located, _ = _exact_in_place(text, hunks)
    if len(located) != len(hunks):
        return None
    try:
        insertions: list[bytes | memoryview] = [hunk.new.encode() for hunk in hunks]
    except UnicodeEncodeError:  # a lone surrogate: ``encode`` says what to do about it
        return None
    view = memoryview(data)
    kept: list[bytes | memoryview] = [view[cut] for cut in _kept(located)]
    return tuple(located), b"".join(_interleaved(kept, insertions))


def _encoding_facts(codec: Codec) -> tuple[str | None, tuple[str, ...]]:
    """The plan's record of a non-UTF-8 codec, and a note saying how the file was read."""
    if codec.encoding == "utf-8":
        return None, ()
    how = "detected" if codec.detected else "declared" if not codec.bom else "by its byte-order mark"
    return codec.encoding, (f"read and written as {codec.encoding} ({how})",)


def _file_plan(
    change: FileChange,
    source: FileSource,
    data: bytes,
    text: str,
    codec: Codec,
    after: str,
    after_bytes: bytes,
    edit: TextEdit | tuple[LocatedHunk, ...],
    before_fingerprint: str | None = None,
) -> FilePlan:
    """The plan of an updated text file: ``edit`` gives its hunks, notes and verdict (spliced in bytes: its hunks)."""
    hunks, already_applied, notes = (
        (edit.hunks, edit.already_applied, edit.notes) if isinstance(edit, TextEdit) else (edit, False, ())
    )
    encoding, encoding_notes = _encoding_facts(codec)
    before_mode = source.mode(change.path)
    mode = change.new_mode if change.new_mode is not None else before_mode
    return FilePlan(
        path=change.path,
        operation="update",
        before=text,
        after=after,
        before_bytes=data,
        after_bytes=after_bytes,
        fingerprint=fingerprint(data) if before_fingerprint is None else before_fingerprint,
        hunks=hunks,
        new_path=change.new_path if change.new_path != change.path else None,
        mode=mode,
        before_mode=before_mode,
        already_applied=already_applied and mode == before_mode,
        notes=(*encoding_notes, *notes),
        encoding=encoding,
    )


def _plan_add(change: FileChange, data: bytes | None, source: FileSource, options: PlanOptions) -> FilePlan:
    path = change.path
    content = change.content or ""
    if data is not None:
        if not options.overwrite:
            raise FileExists(
                f"{path}: already exists, so it cannot be added; allow overwrite "
                f"({option('overwrite')}) to replace it, or send an update instead",
                path=path,
            )
        text, codec = decode(data, path, options.encoding)
        encoding, encoding_notes = _encoding_facts(codec)
        return FilePlan(
            path=path,
            operation="update",
            before=text,
            after=content,
            before_bytes=data,
            after_bytes=encode(content, codec, path),
            fingerprint=fingerprint(data),
            mode=change.new_mode if change.new_mode is not None else source.mode(path),
            notes=(*encoding_notes, "replaces an existing file (overwrite allowed)"),
            encoding=encoding,
        )
    notes: tuple[str, ...] = ()
    if path.lower().endswith(GUARD_SUFFIXES):
        content, notes = _new_file_quotes(path, content)
    return FilePlan(
        path=path,
        operation="add",
        before=None,
        after=content,
        before_bytes=None,
        after_bytes=encode(content, _new_file_codec(options.encoding), path),
        fingerprint=None,
        mode=change.new_mode,
        encoding=_encoding_facts(_new_file_codec(options.encoding))[0],
        notes=notes,
    )


def _new_file_quotes(path: str, content: str) -> tuple[str, tuple[str, ...]]:
    """A new Python or JSON file that parses only with its curly quotes straight is written straight."""
    from nbedit.engine.syntax import straightened, text_problem

    straight = straightened(content, "")
    if straight is None:
        return content, ()
    empty = "" if path.lower().endswith((".py", ".pyi", ".pyw")) else "null"
    problem = text_problem(path, empty, content, [(0, len(empty), content)])
    if problem is None or text_problem(path, empty, straight, [(0, len(empty), straight)]) is not None:
        return content, ()
    note = (
        "curly quotes were written as straight quotes: with them the new file would not parse "
        f"({problem.describe()[len('the result would not parse: ') :]}), a sign that a chat interface "
        "curled the reply"
    )
    return straight, (note,)


def _new_file_codec(encoding: str | None) -> Codec:
    """How a new file is written: UTF-8 unless an encoding was declared (UTF-16 gets its BOM)."""
    if encoding is None:
        return UTF8
    name = canonical_encoding(encoding)
    if name == "utf-16":
        return Codec("utf-16-le", True)
    return Codec(name, False)


def _plan_delete(
    change: FileChange, data: bytes | None, source: FileSource, options: PlanOptions | None = None
) -> FilePlan:
    path = change.path
    if data is None:
        raise FileMissing(f"{path}: cannot delete a file that does not exist; check the path", path=path)
    text, _ = decode(data, path, options.encoding if options is not None else None)
    expected = "".join(hunk.old for hunk in change.hunks)
    if change.hunks and not expected and text:
        raise NoMatch(
            f"{path}: the patch deletes this file as an empty file (no hunk), but the file has content; "
            "git refuses this too (removal patch leaves file contents). Use a diff whose hunk removes "
            "every line, or empty the file first",
            path=path,
        )
    if change.hunks and _loose(expected) != _loose(text):
        raise NoMatch(
            f"{path}: the file differs from what the patch expects to delete; "
            "re-create the patch against the current file",
            path=path,
        )
    return FilePlan(
        path=path,
        operation="delete",
        before=text,
        after=None,
        before_bytes=data,
        after_bytes=None,
        fingerprint=fingerprint(data),
        mode=source.mode(path),
    )


def _loose(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]


def exclude_hunks(plan: Plan, excluded: set[tuple[int, int]]) -> Plan:
    """The same plan with some hunks left out (the review widget's toggles).

    Hunks were located against the original text, so leaving one out is just
    not splicing it: the other replacements stay exactly where they were.
    """
    files: list[FilePlan] = []
    for file_number, file_plan in enumerate(plan.files):
        dropped = {hunk for (number, hunk) in excluded if number == file_number}
        if not dropped or not file_plan.hunks:
            files.append(file_plan)
            continue
        kept = tuple(item for n, item in enumerate(file_plan.hunks) if n not in dropped)
        if file_plan.notebook:
            from nbedit.engine.notebook import replan_notebook

            files.append(replan_notebook(file_plan, kept))
            continue
        assert file_plan.before is not None and file_plan.before_bytes is not None
        text = file_plan.before
        after = splice(text, kept)
        _, codec = decode(file_plan.before_bytes, file_plan.path, file_plan.encoding)
        files.append(
            replace(
                file_plan,
                after=after,
                after_bytes=file_plan.before_bytes if after == text else encode(after, codec, file_plan.path),
                hunks=kept,
            )
        )
    return replace(plan, files=tuple(files), _diff_cache=[])
