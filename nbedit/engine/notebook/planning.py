"""The planner's hook for ``.ipynb`` targets: hunks are matched on the cell view (or the raw JSON).

A diff whose hunks are the notebook's raw JSON (what ``git diff`` prints for an
``.ipynb``) is applied to the JSON text by ``raw``; a hunk that looks like notebook
JSON but is not in the file is matched on the cell view with the exact tier only,
or refused. Everything else works on the cell view:

Every dialect (old/new pairs, unified diffs, apply_patch, SEARCH/REPLACE) is
located by the ordinary matcher against the notebook's cell view, so uniqueness,
the normalised tiers and fuzzy matching behave exactly as for a text file; with a
``CellSelector`` the search is limited to that cell's body. Then:

* a hunk whose match lies inside one cell's body edits that cell and is labelled
  with it (``LocatedHunk.cell``);
* cell edits (old/new and SEARCH/REPLACE, ``CELL_DIALECTS``) change the text of one
  cell: old text holding a marker line, or new text adding a marker or marker-like
  line, is refused before matching (read back through the view it would merge or
  split cells, or lose a backslash, so the file would differ from the preview);
* a diff hunk whose old text contains marker text (``# %% nbedit``) may span cells:
  often the markers are just a diff's context lines, so the label names the cell
  whose text really changes (context trimmed off); when markers themselves are
  added or removed it is a structural edit (insert, delete, retype, reorder) and
  the label says "cell structure";
* a hunk that matches inside one marker line only (``[raw]`` -> ``[markdown]``)
  edits that marker;
* a hunk whose match covers a marker line although its old text has none (a
  lenient tier stretched over a cell boundary) is refused, naming both cells:
  guessing which cell was meant is exactly what we do not do.

A replacement that ends where a cell's body ends keeps the body's closing newline,
so text appended to a cell can never run into the next cell's marker.
The ``FilePlan`` carries the cell views as ``before``/``after`` (and
``display_before``/``display_after``) and the real notebook bytes as
``before_bytes``/``after_bytes``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nbedit._dataclass import replace
from nbedit.engine.digest import fingerprint_meanwhile
from nbedit.engine.models import FileChange, FilePlan, Hunk, LocatedHunk, digested_when_read
from nbedit.engine.notebook.document import NotebookDocument
from nbedit.engine.notebook.raw import RawDecision, looks_like_notebook_json, plan_raw
from nbedit.engine.notebook.split import split_by_cell
from nbedit.engine.notebook.successor import recall, remember
from nbedit.engine.text import common_ends
from nbedit.engine.text_edit import PlanOptions, TextEdit, splice
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch, UnsafeChange, option

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CELL_DIALECTS", "CLEARED_OUTPUTS_NOTE", "cell_view", "plan_notebook", "replan_notebook"]

CLEARED_OUTPUTS_NOTE = "clear_outputs: edited code cells lose their outputs and execution count"
_MARKER_TEXT = "# %% nbedit"
_MARKER_LIKE = re.compile(r"^\\*# %% nbedit")
CELL_DIALECTS = frozenset({"edit", "search_replace"})  # edits of one cell's text, never of the structure
_JSON_MISMATCH = (
    "{path}: the diff looks like a diff of the notebook's JSON (.ipynb text) but does not match "
    "the notebook's JSON: the notebook has changed since the diff was made, or the diff was made "
    "from another version; re-create it with git diff against this version, or write the change "
    "against the cell view (lines, not JSON); nothing was changed"
)


def cell_view(data: bytes, path: str) -> str:
    """The editable cell view of notebook bytes (the last edit's document when these are its bytes)."""
    document = recall(data, path, None) or NotebookDocument.parse(data, path)
    return document.view


def plan_notebook(
    path: str,
    data: bytes,
    change: FileChange,
    *,
    options: PlanOptions,
    edit_text: Callable[..., TextEdit],
    mode: int | None = None,
    dialect: str = "",
) -> FilePlan:
    """Plan an update of a notebook: match on the cell view, write minimal bytes.

    ``dialect`` tells cell edits (old/new, SEARCH/REPLACE: ``CELL_DIALECTS``), which
    change one cell's text, from diffs, which may also change the cell structure.
    ``edit_text`` is the text stage's (``nbedit.engine.locate_hunks.edit_text``), handed in
    by the planner (``engine/plan.py``, which calls this module for ``.ipynb`` targets).
    """
    digest = fingerprint_meanwhile(data)
    try:
        return _plan_document(path, data, change, options, edit_text, mode, dialect, digest)
    except BaseException:
        digest()  # a refused change leaves no thread behind
        raise


def _plan_document(
    path: str,
    data: bytes,
    change: FileChange,
    options: PlanOptions,
    edit_text: Callable[..., TextEdit],
    mode: int | None,
    dialect: str,
    digest: Callable[[], str],
) -> FilePlan:
    document = recall(data, path, options.max_cells) or NotebookDocument.parse(
        data, path, max_cells=options.max_cells
    )
    if dialect in CELL_DIALECTS:
        for number, hunk in enumerate(change.hunks):
            _check_cell_edit(hunk, number, len(change.hunks), path)
    if change.cell is None:
        decision = plan_raw(
            path, data, change, before_view=document.view, mode=mode, exact=options.exact, digest=digest
        )
        if decision.plan is not None:
            return decision.plan
    else:  # limited to one cell: the cell view it is
        decision = RawDecision(None, any(looks_like_notebook_json(hunk) for hunk in change.hunks))
    region = document.cell_span(change.cell) if change.cell is not None else None
    if decision.json_like:
        options = replace(options, exact=True)  # notebook JSON is never matched leniently into cells
        if any(not hunk.old for hunk in change.hunks):
            raise NoMatch(_JSON_MISMATCH.format(path=path), path=path)
    try:
        text_edit = edit_text(
            document.view, change.hunks, options, path=path, region=region, sequential=change.sequential
        )
    except (NoMatch, AmbiguousMatch) as error:
        if decision.json_like and isinstance(error, NoMatch):
            raise NoMatch(_JSON_MISMATCH.format(path=path), path=path) from None
        named = _with_cells(error, document)
        if region is not None and change.cell is not None and isinstance(named, NoMatch):
            label = document.cells[document.cell_index(change.cell)].label
            base = named.message.split("\nclosest candidates:")[0].split("\nnothing in the file is close")[0]
            named = NoMatch(
                f"{path}: the old text is not in {label} (the edit was limited to that cell)\n{base}",
                path=path,
                candidates=named.candidates,
            )
        raise named from None
    # one hunk per cell change: a diff hunk that touches several cells is cut along them (``split``)
    located = tuple(_label(document, item, path) for item in split_by_cell(document.view, text_edit.hunks))
    # blocks that built on each other were applied in order and come without located hunks
    after_view = splice(document.view, located) if located else text_edit.after
    if after_view is not text_edit.after and after_view == text_edit.after:
        after_view = text_edit.after  # one copy of a big notebook's view, not two
    notes = list(text_edit.notes)
    after_view, located, guard_notes = _syntax_guard(path, document, after_view, located, text_edit)
    notes.extend(guard_notes)
    if options.clear_outputs:
        notes.append(CLEARED_OUTPUTS_NOTE)
    edit = document.edit(after_view, clear_outputs=options.clear_outputs)
    # the next edit of these bytes starts from here (``successor``)
    remember(document, edit.data, proved_cell=edit.rewritten_cell)
    structure = _structure_note(document, after_view, edit.changes)
    if structure:
        notes.append(structure)
    notes.extend(change for change in edit.changes if not change.endswith(": source changed"))
    notes.extend(edit.notes)
    return FilePlan(
        path=path,
        operation="update",
        before=document.view,
        after=after_view,
        before_bytes=data,
        after_bytes=edit.data,
        # handed back while the "before" may still be hashed: the field joins it when first read
        fingerprint=digested_when_read(digest),
        hunks=located,
        new_path=change.new_path if change.new_path != path else None,
        mode=change.new_mode if change.new_mode is not None else mode,
        already_applied=text_edit.already_applied,
        notebook=True,
        display_before=document.view,
        display_after=after_view,
        notes=tuple(notes),
    )


def _check_cell_edit(hunk: Hunk, number: int, count: int, path: str) -> None:
    """A cell edit neither crosses a cell marker nor writes one (refused: the view would reshape cells).

    The old text holding a marker line would merge or delete cells; a new marker line
    would split the cell and vanish from its source; an escaped marker-like line
    (``\\# %% nbedit``) that the old text does not hold would lose one backslash when the
    view is read back, so the file would differ from the preview. Lines the old text
    already holds are kept as they are, so copying context from the view is fine.
    """
    which = f"block {number + 1}: " if count > 1 else ""
    old_lines = hunk.old.splitlines()
    for line in old_lines:
        if line.startswith(_MARKER_TEXT):
            raise MatchError(
                f"{path}: {which}the old text runs across a cell marker ('{line.strip()}'); an old/new or "
                "SEARCH/REPLACE edit changes the text of one cell, and a match must lie in one cell. Edit each "
                "cell separately, or, to merge, split, insert or delete cells, send a unified diff of the cell "
                "view (see its marker lines with nbedit view); nothing was changed",
                path=path,
            )
    for line in hunk.new.splitlines():
        if _MARKER_LIKE.match(line) and line not in old_lines:
            escaped = line.startswith("\\")
            raise MatchError(
                f"{path}: {which}the new text has a line '{line.strip()}' that "
                + (
                    "looks like an escaped cell marker of the cell view; the view would read it back with one "
                    "backslash less, so the cell would not hold what the preview shows"
                    if escaped
                    else "is a cell marker of the cell view; it would split the cell instead of landing in its source"
                )
                + ". To insert or split cells, send a unified diff of the cell view; to put such a line in a cell's "
                "source, change the notebook's JSON with a git diff; nothing was changed",
                path=path,
            )


def _python_kernel(document: NotebookDocument) -> bool:
    """The notebook's kernel runs Python (or says nothing, as a bare nbformat notebook does)."""
    metadata = document.top.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field_name), str):
            return section[field_name].lower() in ("python", "python3", "ipython")
    return True


_CURLY = ("\u2018", "\u2019", "\u201c", "\u201d")


def _syntax_guard(
    path: str,
    document: NotebookDocument,
    after_view: str,
    located: tuple[LocatedHunk, ...],
    text_edit: TextEdit,
) -> tuple[str, tuple[LocatedHunk, ...], tuple[str, ...]]:
    """A leniently placed change that leaves a Python code cell unparseable is refused (``engine.syntax``).

    Curly quotes in the added lines that keep a cell from parsing, where it parses with them
    straight, are written straight (a chat interface curled the reply), with a note. An exact
    change without curly quotes is not parsed here: reading the edited view back costs
    milliseconds on a big notebook, and an exact change is written as asked anyway.
    """
    lenient = text_edit.placed_leniently
    curly = any(char in item.hunk.new for item in located for char in _CURLY) or (
        not located and any(char in after_view for char in _CURLY)
    )
    if (not lenient and not curly) or after_view == document.view or not _python_kernel(document):
        return after_view, located, ()
    from nbedit.engine.syntax import straightened

    problem = _cell_problem(document, after_view)
    if problem is None:
        return after_view, located, ()
    if curly:
        if located:
            fixed = tuple(
                LocatedHunk(item.hunk, replace(item.match, replacement=value), item.cell)
                if (value := straightened(item.match.replacement, item.hunk.old)) is not None
                else item
                for item in located
            )
            straight_view = splice(document.view, fixed)
        else:
            fixed = located
            straight_view = straightened(after_view, document.view) or after_view
        if straight_view != after_view and _cell_problem(document, straight_view) is None:
            note = (
                "curly quotes in the added lines were written as straight quotes: with them the result "
                f"would not parse ({problem.describe()[len('the result would not parse: ') :]}), a sign that "
                "a chat interface curled the reply"
            )
            return straight_view, fixed, (note,)
    if not lenient:
        return (
            after_view,
            located,
            (
                f"warning: {problem.describe()} (it parsed before; the change was found exactly, "
                "so it is written as asked)",
            ),
        )
    raise UnsafeChange(
        f"{path}: {problem.describe()} (it parsed before); the change was placed leniently "
        "(see the match tiers), so nbedit will not write it: check the indentation and "
        "punctuation of the change against the cell",
        path=path,
        reason=problem.describe(),
        line=problem.line,
    )


def _cell_problem(document: NotebookDocument, after_view: str):  # type: ignore[no-untyped-def]
    from nbedit.engine.notebook.view import parse_view
    from nbedit.engine.syntax import notebook_problem

    types = {cell.index: cell.cell_type for cell in document.cells}
    before = {cell.index: cell.source for cell in document.cells if cell.cell_type == "code"}
    after = [
        (cell.index, cell.source)
        for cell in parse_view(after_view)
        if (cell.cell_type or types.get(cell.index)) == "code"
    ]
    return notebook_problem(before, after)


def _structure_note(document: NotebookDocument, after_view: str, changes: Sequence[str]) -> str | None:
    """One line saying how a diff of the cell view changes the cells (None: it changes only sources)."""
    inserted = sum(1 for change in changes if change.startswith("new "))
    deleted = [change for change in changes if change.endswith(": deleted")]
    retyped = sum(1 for change in changes if ": type changed to " in change)
    parts: list[str] = []
    if inserted:
        parts.append(f"inserts {inserted} cell{'s' if inserted > 1 else ''}")
    merged = _merged_cells(document, after_view) if deleted else []
    if merged:
        parts.extend(merged)
    if len(deleted) > len(merged):
        count = len(deleted) - len(merged)
        parts.append(f"deletes {count} cell{'s' if count > 1 else ''}")
    if retyped:
        parts.append(f"changes the type of {retyped} cell{'s' if retyped > 1 else ''}")
    if "cells reordered" in changes:
        parts.append("reorders cells")
    if not parts:
        return None
    return "changes the cell structure: " + ", ".join(parts)


def _merged_cells(document: NotebookDocument, after_view: str) -> list[str]:
    """``merges cell 1 into cell 0`` for each deleted cell whose text now sits in a kept neighbour."""
    from nbedit.engine.notebook.view import parse_view

    view_cells = parse_view(after_view)
    kept = {cell.index for cell in view_cells if cell.index is not None}
    merged: list[str] = []
    for cell in document.cells:
        if cell.index in kept or not cell.source.strip():
            continue
        for other in view_cells:
            if other.index is not None and abs(other.index - cell.index) == 1 and cell.source in other.source:
                merged.append(f"merges cell {cell.index} into cell {other.index}")
                break
    return merged


def replan_notebook(file_plan: FilePlan, kept: Sequence[LocatedHunk]) -> FilePlan:
    """The same notebook plan with only ``kept`` hunks (the review widget's toggles)."""
    assert file_plan.before_bytes is not None
    document = NotebookDocument.parse(file_plan.before_bytes, file_plan.path)
    after_view = splice(document.view, kept)
    edit = document.edit(after_view, clear_outputs=CLEARED_OUTPUTS_NOTE in file_plan.notes)
    remember(document, edit.data)  # the toggled plan's bytes are the ones the next edit reads
    return replace(
        file_plan,
        after=after_view,
        after_bytes=edit.data,
        hunks=tuple(kept),
        display_after=after_view,
    )


def _changed_core(view: str, item: LocatedHunk) -> tuple[int, int, str, str]:
    """The part of a match that really changes: context lines of a diff trimmed off.

    Returns the core's start and end in the view, the old text there and its replacement.
    """
    match = item.match
    old = view[match.start : match.end]
    new = match.replacement
    prefix, suffix = common_ends(old, new)
    return (
        match.start + prefix,
        match.end - suffix,
        old[prefix : len(old) - suffix],
        new[prefix : len(new) - suffix],
    )


def _label(document: NotebookDocument, item: LocatedHunk, path: str) -> LocatedHunk:
    match = item.match
    if not document.cells:
        return replace(item, cell="new cell")
    inside = document.body_cell(match.start, match.end)
    if inside is not None:
        body_end = document.spans[inside].end
        if match.end == body_end and match.replacement and not match.replacement.endswith("\n"):
            # keep the body's closing newline so the next marker stays on its own line
            item = replace(item, match=replace(match, replacement=match.replacement + "\n"))
        return replace(item, cell=document.cells[inside].label)
    first = document.cell_at(match.start)
    last = document.cell_at(max(match.start, match.end - 1))
    assert first is not None and last is not None
    if _MARKER_TEXT not in item.hunk.old:
        if (
            first == last
            and match.start >= document.marker_starts[first]
            and match.end <= document.spans[first].start
        ):
            return replace(item, cell=f"{document.cells[first].label}, marker line")
        named = (
            document.cells[first].label
            if first == last
            else (f"{document.cells[first].label} and {document.cells[last].label}")
        )
        raise MatchError(
            f"{path}: the text to replace (line {match.line} of the cell view) runs across a cell marker "
            f"({named}); edit one cell per hunk, or include the marker lines of the cell view in the old text "
            "to change the cell structure; nothing was changed",
            path=path,
        )
    # The old text spans markers (often just a diff's context lines): name what really changes.
    core_start, core_end, core_old, core_new = _changed_core(document.view, item)
    inside = document.body_cell(core_start, core_end)
    if inside is not None and _MARKER_TEXT not in core_old and _MARKER_TEXT not in core_new:
        return replace(item, cell=document.cells[inside].label)
    first = document.cell_at(core_start)
    last = document.cell_at(max(core_start, core_end - 1))
    assert first is not None and last is not None
    if first == last:
        return replace(item, cell=f"{document.cells[first].label}, cell structure")
    return replace(
        item, cell=f"{document.cells[first].label} to {document.cells[last].label}, cell structure"
    )


def _cell_of_line(document: NotebookDocument, line: int) -> str | None:
    """Label of the cell holding 1-based view ``line``."""
    view = document.view
    offset = 0
    for _ in range(line - 1):
        offset = view.find("\n", offset) + 1
        if offset == 0:
            return None
    index = document.cell_at(offset)
    return document.cells[index].label if index is not None else None


def _with_cells(error: NoMatch | AmbiguousMatch, document: NotebookDocument) -> NoMatch | AmbiguousMatch:
    """The same error, with the cells of its candidates or locations named."""
    if isinstance(error, NoMatch):
        if not error.candidates:
            return error
        base = error.message.split("\nclosest candidates:")[0]
        candidates = [
            replace(candidate, cell=_cell_of_line(document, candidate.start_line))
            for candidate in error.candidates
        ]
        return NoMatch(base, path=error.path, candidates=candidates)
    base = error.message.split("\nmatches at")[0].split("; nbedit will not guess")[0]
    places: list[str] = []
    cells: list[str] = []
    first_id: str | None = None
    for line, column in error.locations:
        found = _cell_and_line(document, line)
        if found is None:
            places.append(f"cell view line {line}")
            continue
        index, cell_line = found
        cell = document.cells[index]
        if cell.label not in cells:
            cells.append(cell.label)
        first_id = first_id or cell.id or str(cell.index)
        places.append(f"{cell.label} line {cell_line}" + (f" column {column}" if column > 1 else ""))
    shown = "; ".join(places[:10]) + (f" and {len(places) - 10} more" if len(places) > 10 else "")
    example = first_id or "0"
    detail = (
        f"matches in {shown}\n"
        + (
            f"limit the edit to one cell with {option('cell')} (here, for example, {example}), "
            if len(cells) > 1
            else ""
        )
        + f"add surrounding lines to make the old text unique, or pass {option('replace_all')} to change "
        "every one; nothing was changed"
    )
    return AmbiguousMatch(
        f"{base}; nbedit will not guess which one you mean",
        path=error.path,
        locations=error.locations,
        tier=error.tier,
        cells=cells,
        detail=detail,
    )


def _cell_and_line(document: NotebookDocument, line: int) -> tuple[int, int] | None:
    """The cell holding 1-based view ``line`` and the line's 1-based number in that cell's source."""
    view = document.view
    offset = 0
    for _ in range(line - 1):
        offset = view.find("\n", offset) + 1
        if offset == 0:
            return None
    index = document.cell_at(offset)
    if index is None:
        return None
    marker_line = view.count("\n", 0, document.marker_starts[index]) + 1
    return index, line - marker_line
