"""``%nbedit history``: this kernel's recorded edits as a table, with Diff, Undo and Restore per row.

Undo and restore are reviewed like any other change: the row's button opens
the same ``ReviewWidget`` (diff, Apply/Reject, stale detection) below the
table, so going back in time is never a blind write.

``nbedit.history_ops.plan_undo``/``plan_restore`` build an ordinary ``Plan``
(with the stale checks against the history already done) without writing it;
the review widget shows it and ``Workspace.apply`` writes it on Apply. The plan
carries the fingerprints of the files as they were when proposed, so a file
changed between the proposal and Apply is caught as stale.

The table is one widget model (``HistoryTable``, an anywidget whose state is
the rows) drawn by ``history.js``: sortable by time, filtered by file and
session in the page, a diff on a row's click, Undo/Restore per row. Below it
sits the detail area (the diff, or the review of an undo or restore). Saved
notebooks get a plain HTML table (``_repr_html_``, ``text/html`` in the bundle).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any, Literal

import ipywidgets as widgets
import traitlets

from nbedit._dataclass import dataclass, field
from nbedit.errors import NbeditError, StaleFile
from nbedit.jupyter.review import ErrorView, Proposal, ReviewWidget, error_html
from nbedit.jupyter.shared import NbeditView
from nbedit.render.history import history_rows, history_to_html
from nbedit.render.html import diff_files_html, wrap

__all__ = [
    "EntryDiffView",
    "HistoryRequest",
    "HistoryTable",
    "HistoryWidget",
    "entry_diff",
    "propose",
    "restore_request",
    "rewind_request",
    "undo_request",
    "untick_conflicts",
]


def propose(workspace: Any, operation: Callable[[Any], Any]) -> Proposal:
    """The plan (and apply options) of a history operation, without writing it."""
    planned = operation(workspace)
    return Proposal(planned.plan, planned.apply_options)


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """An undo or restore to review: a title and how to plan it against a workspace."""

    title: str
    operation: Callable[[Any], Any]  # workspace -> history_ops.HistoryPlan
    apply_options: Mapping[str, Any] = field(default_factory=dict)

    def plan(self, workspace: Any) -> Proposal:
        return propose(workspace, self.operation)


def undo_request(entry_id: str | None, *, force: bool = False) -> HistoryRequest:
    """Undo an entry. When later edits changed its files, the undo is the reverse of the entry's
    diff located in the files as they are now (so an older entry can be undone while later ones
    stay); when those later edits touched its lines it is refused as stale (what changed since, and
    ``force`` to overwrite), and nothing is written."""
    from nbedit import history_ops

    def operation(workspace: Any) -> Any:
        try:
            return history_ops.plan_undo(workspace, entry_id, force=force)
        except StaleFile as stale:
            if entry_id is None or force:
                raise
            return _reverse(workspace, entry_id, stale)

    title = f"undo history entry {entry_id}" if entry_id else "undo this kernel's latest edit"
    return HistoryRequest(title, operation)


def _reverse(workspace: Any, entry_id: str, stale: StaleFile) -> Proposal:
    """The undo of an older entry whose files later entries changed: its reverse, located in the
    files as they are now (``history_reverse``); the reverse's own refusal names what is in the way."""
    from nbedit.history_reverse import plan_reverse

    reverse = plan_reverse(workspace, entry_id)
    if not reverse.plan.files:
        raise stale  # nothing left to reverse: the plain refusal says what changed
    return Proposal(reverse.plan, reverse.apply_options)


def restore_request(entry_id: str, *, after: bool = False, force: bool = False) -> HistoryRequest:
    from nbedit import history_ops

    which: Literal["before", "after"] = "after" if after else "before"
    return HistoryRequest(
        f"restore the files as they were {which} history entry {entry_id}",
        lambda workspace: history_ops.plan_restore(workspace, entry_id, which=which, force=force),
    )


def entry_diff(workspace: Any, entry_id: str) -> tuple[str, str]:
    """(title, unified diff) of what a history entry changed."""
    return f"history entry {entry_id}", workspace.show(entry_id)


class EntryDiffView:
    """A history entry's diff: text/plain and a coloured static HTML table."""

    def __init__(self, title: str, diff: str) -> None:
        self.title = title
        self.diff = diff

    def __repr__(self) -> str:
        return f"{self.title}\n{self.diff or '(no text changes)'}"

    def html(self) -> str:
        # drawn as the review draws a plan: a box per file, hunk header rows, numbered lines
        body = diff_files_html(self.diff) if self.diff else '<div class="nb-note">no text changes</div>'
        return wrap(f'<div class="nb-headline">{html.escape(self.title)}</div>{body}')

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": repr(self), "text/html": self.html()}


def _undone(entries: list[Any]) -> set[str]:
    """The ids of entries an applied later entry undid."""
    return {str(entry.undoes) for entry in entries if entry.undoes and entry.status == "applied"}


class HistoryTable(NbeditView):
    """The table alone: one widget model whose state is the rows (``history.js`` draws them)."""

    part = traitlets.Unicode("history").tag(sync=True)
    rows = traitlets.List().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    all_sessions = traitlets.Bool(False).tag(sync=True)


class RowButton:
    """Diff, Undo or Restore of one row, headless: ``click()`` does what clicking it in the page does."""

    def __init__(self, description: str, action: Callable[[], object], *, disabled: bool = False) -> None:
        self.description = description
        self.disabled = disabled
        self._action = action

    def click(self) -> None:
        if not self.disabled:
            self._action()

    def __repr__(self) -> str:
        return f"<RowButton {self.description}{' (disabled)' if self.disabled else ''}>"


class HistoryWidget(widgets.VBox):
    """The history table; ``magics`` (when given) makes undo/restore reviews record the cell number."""

    COLUMNS = ("id", "time", "cell", "files", "+/-", "origin", "status", "")

    def __init__(self, workspace: Any, *, all_sessions: bool = False, magics: Any = None) -> None:
        self.workspace = workspace
        self.entries: list[Any] = []
        self.review: ReviewWidget | ErrorView | None = None
        self._magics = magics
        self._row_buttons: dict[str, dict[str, RowButton]] = {}
        self._table = HistoryTable(all_sessions=all_sessions)
        self._table.add_class("nbedit-history-rows")
        self._table.on_msg(self._on_message)
        self._table.observe(self._guarded(lambda: self.refresh()), names="all_sessions")
        self._detail = widgets.VBox()
        self._detail.add_class("nbedit-history-detail")
        super().__init__([self._table, self._detail])
        self.add_class("nbedit-history")
        self.refresh()

    # ------------------------------------------------------------------ public

    @property
    def all_sessions(self) -> bool:
        return bool(self._table.all_sessions)

    @all_sessions.setter
    def all_sessions(self, value: bool) -> None:
        self._table.all_sessions = value

    @property
    def title_text(self) -> str:
        return self._table.title

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The rows the page draws (the table widget's state)."""
        return list(self._table.rows)

    def buttons(self, entry_id: str) -> dict[str, RowButton]:
        """The row's buttons by name: ``diff``, ``restore`` and, on every applied entry not undone yet, ``undo``."""
        return dict(self._row_buttons[entry_id])

    def refresh(self) -> HistoryWidget:
        self.entries = list(self.workspace.history(all_sessions=self.all_sessions))
        whose = "all sessions" if self.all_sessions else "this kernel"
        count = len(self.entries)
        self._table.title = f"nbedit history ({whose}): {count} {'entry' if count == 1 else 'entries'}"
        self._table.rows = self._rows()
        return self

    def show_diff(self, entry_id: str) -> EntryDiffView:
        view = EntryDiffView(*entry_diff(self.workspace, entry_id))
        self._detail.children = (widgets.HTML(view.html()),)
        return view

    def undo(self, entry_id: str | None = None, *, force: bool = False) -> ReviewWidget | ErrorView:
        return self._review(undo_request(entry_id, force=force))

    def restore(self, entry_id: str, *, after: bool = False, force: bool = False) -> ReviewWidget | ErrorView:
        return self._review(restore_request(entry_id, after=after, force=force))

    def rewind(self, checkpoint: str) -> ReviewWidget | ErrorView:
        """Review taking every file back to before a checkpoint (a row's checkpoint key or entry id)."""
        request, planned = rewind_request(checkpoint)
        return untick_conflicts(self._review(request), planned)

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        return self.plain_text()

    def plain_text(self) -> str:
        lines = ["\t".join(self.COLUMNS[:-1])]
        for row in history_rows(self.entries):
            lines.append(
                "\t".join(
                    (
                        row.id,
                        row.time,
                        row.cell,
                        row.files,
                        f"+{row.added} -{row.removed}",
                        row.origin,
                        row.status,
                    )
                )
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return history_to_html(self.entries)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.plain_text()
        bundle["text/html"] = self._repr_html_()
        return bundle

    # ------------------------------------------------------------------ internals

    def _guarded(self, action: Callable[[], object]) -> Callable[..., None]:
        def handler(*_: object) -> None:
            try:
                action()
            except Exception as error:  # never let a click fail silently (ipywidgets#2949)
                self._detail.children = (widgets.HTML(error_html(error)),)

        return handler

    def _on_message(self, _widget: object, content: Any, _buffers: object = None) -> None:
        if not isinstance(content, dict):
            return
        action, entry_id = content.get("action"), str(content.get("id", ""))
        if action == "refresh":
            self._guarded(lambda: self.refresh())()
        elif entry_id in self._row_buttons and action in self._row_buttons[entry_id]:
            self._row_buttons[entry_id][action].click()

    def _review(self, request: HistoryRequest) -> ReviewWidget | ErrorView:
        if self._magics is not None:
            review = self._magics.history_review(request, root=str(self.workspace.root))
        else:
            try:
                proposal = request.plan(self.workspace)
            except NbeditError as error:
                review = ErrorView(error)
            else:
                review = ReviewWidget(
                    self.workspace,
                    proposal.plan,
                    replan=lambda: request.plan(self.workspace),
                    title=request.title,
                    **proposal.apply_options,
                )
        if isinstance(review, ReviewWidget):
            review.on_decided(self._guarded(lambda: self.refresh()))
            self._detail.children = (review,)
        else:
            self._detail.children = (widgets.HTML(error_html(review.error)),)
        self.review = review
        return review

    def _rows(self) -> list[dict[str, Any]]:
        from nbedit.checkpoints import checkpoint_of

        undone = _undone(self.entries)
        self._row_buttons = {}
        rows = []
        for order, (entry, row) in enumerate(zip(self.entries, history_rows(self.entries), strict=True)):
            entry_id = str(entry.id)
            applied = entry.status == "applied"
            undoable = applied and entry_id not in undone  # any row: an older one is undone by its reverse
            self._row_buttons[entry_id] = self._actions(entry_id, applied, undoable)
            _kind, checkpoint, checkpoint_label = checkpoint_of(entry)
            self._row_buttons[entry_id]["rewind"] = RowButton(
                "Rewind", self._guarded(lambda key=checkpoint: self.rewind(key)), disabled=not applied
            )
            files = [
                str(getattr(file, "new_path", None) or getattr(file, "path", file)) for file in entry.files
            ]
            rows.append(
                {
                    "id": entry_id,
                    "order": order,
                    "time": row.time,
                    "cell": row.cell,
                    "files": files,
                    "files_text": row.files,
                    "added": row.added,
                    "removed": row.removed,
                    "origin": row.origin,
                    "status": row.status,
                    "flags": row.flags,
                    "session": str(getattr(entry, "session", "") or ""),
                    "applied": applied,
                    "undoable": undoable,
                    "checkpoint": checkpoint,  # rows of one cell run or agent turn fold under it
                    "checkpoint_label": checkpoint_label,
                }
            )
        return rows

    def _actions(self, entry_id: str, applied: bool, undoable: bool) -> dict[str, RowButton]:
        buttons = {"diff": RowButton("Diff", self._guarded(lambda: self.show_diff(entry_id)))}
        if undoable:
            buttons["undo"] = RowButton(
                "Undo", self._guarded(lambda: self.undo(entry_id)), disabled=not applied
            )
        buttons["restore"] = RowButton(
            "Restore", self._guarded(lambda: self.restore(entry_id)), disabled=not applied
        )
        return buttons


def rewind_request(checkpoint: str, *, all_sessions: bool = False) -> tuple[Any, list[Any]]:
    """A history request for the table's Rewind button, and the list that receives its plan."""
    planned: list[Any] = []

    def operation(workspace: Any) -> Any:
        rewound = workspace.plan_rewind(checkpoint, all_sessions=all_sessions)
        planned[:] = [rewound]
        return rewound

    return HistoryRequest(f"rewind to before {checkpoint}", operation), planned


def untick_conflicts(review: Any, planned: list[Any]) -> Any:
    """Leave a rewind's conflicted files out of Apply until the person ticks them: now, and
    again whenever the review loads a new plan (Re-plan after a stale preview)."""
    if not isinstance(review, ReviewWidget):
        return review

    def untick(*_: object) -> None:
        if not planned:
            return
        conflicted = {conflict.path for conflict in planned[-1].conflicts}
        for index, file_plan in enumerate(review.plan.files):
            if file_plan.path in conflicted and not file_plan.hunks:
                review.set_included((index, None), False)

    untick()
    review.on_loaded(untick)
    return review
