"""``%nbedit history``: this kernel's recorded edits as a table, with Diff, Undo and Restore per row.

Undo and restore are reviewed like any other change: the row's button opens
the same ``ReviewWidget`` (diff, Apply/Reject, stale detection) below the
table, so going back in time is never a blind write.

``nbedit.history_ops.plan_undo``/``plan_restore`` build an ordinary ``Plan``
(with the stale checks against the history already done) without writing it;
the review widget shows it and ``Workspace.apply`` writes it on Apply. The plan
carries the fingerprints of the files as they were when proposed, so a file
changed between the proposal and Apply is caught as stale.

The table is a widget for live use and a plain HTML table (``_repr_html_``,
``text/html`` in the bundle) for saved notebooks.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import ipywidgets as widgets

from nbedit.errors import NbeditError
from nbedit.jupyter.review import ErrorView, Proposal, ReviewWidget, error_html
from nbedit.render.history import history_rows, history_to_html
from nbedit.render.html import unified_diff_html, wrap

__all__ = [
    "EntryDiffView",
    "HistoryRequest",
    "HistoryWidget",
    "entry_diff",
    "propose",
    "restore_request",
    "undo_request",
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
    from nbedit import history_ops

    title = f"undo history entry {entry_id}" if entry_id else "undo this kernel's latest edit"
    return HistoryRequest(title, lambda workspace: history_ops.plan_undo(workspace, entry_id, force=force))


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
        body = unified_diff_html(self.diff) if self.diff else '<div class="nb-note">no text changes</div>'
        return wrap(f'<div class="nb-headline">{html.escape(self.title)}</div>{body}')

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": repr(self), "text/html": self.html()}


def _undo_target(entries: list[Any], session: str) -> str | None:
    """The entry ``undo`` without an id would revert: the session's newest applied edit not undone yet."""
    undone: set[str] = set()
    for entry in entries:
        if entry.session != session or entry.status != "applied":
            continue
        if entry.undoes:
            undone.add(entry.undoes)
        elif entry.id not in undone:
            return str(entry.id)
    return None


class HistoryWidget(widgets.VBox):
    """The history table; ``magics`` (when given) makes undo/restore reviews record the cell number."""

    COLUMNS = ("id", "time", "cell", "files", "+/-", "origin", "status", "")

    def __init__(self, workspace: Any, *, all_sessions: bool = False, magics: Any = None) -> None:
        self.workspace = workspace
        self.entries: list[Any] = []
        self.review: ReviewWidget | ErrorView | None = None
        self._magics = magics
        self._row_buttons: dict[str, dict[str, widgets.Button]] = {}
        self._all = widgets.ToggleButton(value=all_sessions, description="all sessions", icon="users")
        self._all.add_class("nbedit-history-all")
        self._refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self._title = widgets.HTML()
        self._table = widgets.GridBox(
            layout=widgets.Layout(
                grid_template_columns="auto auto auto 1fr auto auto auto auto", grid_gap="2px 10px"
            )
        )
        self._detail = widgets.VBox()
        self._detail.add_class("nbedit-history-detail")
        self._all.observe(self._guarded(lambda: self.refresh()), names="value")
        self._refresh_button.on_click(self._guarded(lambda: self.refresh()))
        controls = widgets.HBox([self._title, self._all, self._refresh_button])
        super().__init__([controls, self._table, self._detail])
        self.add_class("nbedit-history")
        self.refresh()

    # ------------------------------------------------------------------ public

    @property
    def all_sessions(self) -> bool:
        return bool(self._all.value)

    @all_sessions.setter
    def all_sessions(self, value: bool) -> None:
        self._all.value = value

    def buttons(self, entry_id: str) -> dict[str, widgets.Button]:
        """The row's buttons by name: ``diff``, ``restore`` and, on the entry undo would revert, ``undo``."""
        return dict(self._row_buttons[entry_id])

    def refresh(self) -> HistoryWidget:
        self.entries = list(self.workspace.history(all_sessions=self.all_sessions))
        whose = "all sessions" if self.all_sessions else "this kernel"
        self._title.value = f"<b>nbedit history</b> ({whose}): {len(self.entries)} entries"
        self._table.children = self._cells()
        return self

    def show_diff(self, entry_id: str) -> EntryDiffView:
        view = EntryDiffView(*entry_diff(self.workspace, entry_id))
        self._detail.children = (widgets.HTML(view.html()),)
        return view

    def undo(self, entry_id: str | None = None, *, force: bool = False) -> ReviewWidget | ErrorView:
        return self._review(undo_request(entry_id, force=force))

    def restore(self, entry_id: str, *, after: bool = False, force: bool = False) -> ReviewWidget | ErrorView:
        return self._review(restore_request(entry_id, after=after, force=force))

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

    def _cells(self) -> tuple[widgets.Widget, ...]:
        cells: list[widgets.Widget] = [widgets.HTML(f"<b>{name}</b>") for name in self.COLUMNS]
        target = _undo_target(self.entries, self.workspace.session)
        self._row_buttons = {}
        for entry, row in zip(self.entries, history_rows(self.entries), strict=True):
            values = (row.id, row.time, row.cell, row.files, None, row.origin, row.status)
            for value in values:
                if value is None:
                    cells.append(
                        widgets.HTML(
                            f'<span style="color:rgb(46,160,67)">+{row.added}</span> '
                            f'<span style="color:rgb(218,54,51)">-{row.removed}</span>'
                        )
                    )
                else:
                    cells.append(widgets.HTML(html.escape(value)))
            cells.append(self._actions(entry, entry.id == target))
        return tuple(cells)

    def _actions(self, entry: Any, undoable: bool) -> widgets.HBox:
        entry_id = str(entry.id)
        applied = entry.status == "applied"
        buttons = {"diff": widgets.Button(description="Diff", tooltip=f"show what {entry_id} changed")}
        buttons["diff"].on_click(self._guarded(lambda: self.show_diff(entry_id)))
        if undoable:
            buttons["undo"] = widgets.Button(description="Undo", tooltip=f"review undoing {entry_id}")
            buttons["undo"].on_click(self._guarded(lambda: self.undo(entry_id)))
        buttons["restore"] = widgets.Button(
            description="Restore", tooltip=f"review putting the files back as they were before {entry_id}"
        )
        buttons["restore"].on_click(self._guarded(lambda: self.restore(entry_id)))
        for name, button in buttons.items():
            button.layout = widgets.Layout(width="auto")
            button.add_class(f"nbedit-history-{name}")
            if name != "diff" and not applied:
                button.disabled = True
        self._row_buttons[entry_id] = buttons
        return widgets.HBox(list(buttons.values()))
