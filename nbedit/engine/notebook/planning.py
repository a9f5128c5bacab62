"""The planner's hook for ``.ipynb`` targets: hunks are matched on the cell view.

Every dialect (old/new pairs, unified diffs, apply_patch, SEARCH/REPLACE) is
located by the ordinary matcher against the notebook's cell view, so uniqueness,
the normalised tiers and fuzzy matching behave exactly as for a text file; with a
``CellSelector`` the search is limited to that cell's body. Then:

* a hunk whose match lies inside one cell's body edits that cell and is labelled
  with it (``LocatedHunk.cell``);
* a hunk whose old text contains marker text (``# %% nbedit``) may span cells:
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

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from nbedit.engine.models import FileChange, FilePlan, LocatedHunk
from nbedit.engine.notebook.document import NotebookDocument
from nbedit.engine.notebook.raw import plan_raw
from nbedit.engine.plan import splice
from nbedit.engine.text import fingerprint
from nbedit.errors import AmbiguousMatch, MatchError, NoMatch

if TYPE_CHECKING:
    from nbedit.engine.plan import PlanOptions

__all__ = ["CLEARED_OUTPUTS_NOTE", "cell_view", "plan_notebook", "replan_notebook"]

CLEARED_OUTPUTS_NOTE = "clear_outputs: edited code cells lose their outputs and execution count"
_MARKER_TEXT = "# %% nbedit"


def cell_view(data: bytes, path: str) -> str:
    """The editable cell view of notebook bytes."""
    return NotebookDocument.parse(data, path).view


def plan_notebook(
    path: str, data: bytes, change: FileChange, *, options: PlanOptions, mode: int | None = None
) -> FilePlan:
    """Plan an update of a notebook: match on the cell view, write minimal bytes."""
    from nbedit.engine.plan import edit_text

    document = NotebookDocument.parse(data, path)
    decision = plan_raw(path, data, change, before_view=document.view, mode=mode)
    if decision.plan is not None and change.cell is None:
        return decision.plan
    region = document.cell_span(change.cell) if change.cell is not None else None
    if decision.json_like:
        options = replace(options, exact=True)  # notebook JSON is never matched leniently into cells
    try:
        text_edit = edit_text(document.view, change.hunks, options, path=path, region=region)
    except (NoMatch, AmbiguousMatch) as error:
        if decision.json_like and isinstance(error, NoMatch):
            raise NoMatch(
                f"{path}: the diff looks like a diff of the notebook's JSON (.ipynb text) but does not "
                "match the notebook's JSON: the notebook has changed since the diff was made, or the "
                "diff was made from another version; re-create it with git diff against this version, "
                "or write the change against the cell view (lines, not JSON); nothing was changed",
                path=path,
            ) from None
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
    located = tuple(_label(document, item, path) for item in text_edit.hunks)
    after_view = splice(document.view, located)
    notes = list(text_edit.notes)
    if options.clear_outputs:
        notes.append(CLEARED_OUTPUTS_NOTE)
    edit = document.edit(after_view, clear_outputs=options.clear_outputs)
    notes.extend(change for change in edit.changes if not change.endswith(": source changed"))
    notes.extend(edit.notes)
    return FilePlan(
        path=path,
        operation="update",
        before=document.view,
        after=after_view,
        before_bytes=data,
        after_bytes=edit.data,
        fingerprint=fingerprint(data),
        hunks=located,
        new_path=change.new_path if change.new_path != path else None,
        mode=change.new_mode if change.new_mode is not None else mode,
        already_applied=text_edit.already_applied,
        notebook=True,
        display_before=document.view,
        display_after=after_view,
        notes=tuple(notes),
    )


def replan_notebook(file_plan: FilePlan, kept: Sequence[LocatedHunk]) -> FilePlan:
    """The same notebook plan with only ``kept`` hunks (the review widget's toggles)."""
    assert file_plan.before_bytes is not None
    document = NotebookDocument.parse(file_plan.before_bytes, file_plan.path)
    after_view = splice(document.view, kept)
    edit = document.edit(after_view, clear_outputs=CLEARED_OUTPUTS_NOTE in file_plan.notes)
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
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
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
    base = error.message.split("\nmatches at")[0]
    cells = []
    for line, _ in error.locations:
        label = _cell_of_line(document, line)
        if label is not None and label not in cells:
            cells.append(label)
    if cells:
        shown = "; ".join(cells[:10]) + (f" and {len(cells) - 10} more" if len(cells) > 10 else "")
        base += f" (in {shown})"
    return AmbiguousMatch(base, path=error.path, locations=error.locations, tier=error.tier)
