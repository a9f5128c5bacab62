"""The review widget: a planned change shown as a diff, with per-hunk toggles and Apply/Reject.

What the magics return. The plan was computed without writing anything; the
widget lets a person leave hunks out (``Plan.without_hunks``: the hunks were
located against the original text, so dropping one never moves another) and
then write exactly what is ticked, through the same ``Workspace.apply`` as
every other front end (locked, stale-checked, recorded, atomic).

Two facts about widgets shape the code:

* Headless runs (nbclient, nbconvert --execute) never click, so ``apply()`` and
  ``reject()`` are methods that do what the buttons do, and ``status`` says
  what happened.
* Saved notebooks are read where no widget renders (GitHub, nbconvert), so
  the output bundle carries a static ``text/html`` diff and a ``text/plain``
  unified diff beside the widget view.

One review is one widget model (an ``anywidget.AnyWidget``, built on
ipywidgets): its synced state is the plan as rows (``review_data``), the set of
hunks left out, the decision's state and message. The browser side
(``review.js``, plain ES module, no build step) draws everything from that: a
collapsible box per file, each hunk's header row inside the diff, unchanged
runs as rows that fetch their lines on click, unified or side by side. Saved
notebooks therefore carry a few kilobytes per review, where the older layout
of one ipywidgets model per checkbox and per hunk saved about 32 KB and 34
models. Buttons talk to the kernel with custom messages; every handler is
wrapped, so a failure is drawn in the widget (ipywidgets#2949 swallows them).

What Apply writes is what the page showed. ipywidgets holds a model's state
updates back while the kernel is busy (one update in flight at a time) but
sends custom messages at once, so a checkbox cleared just before Apply could
reach the kernel after it. The page's Apply therefore carries the selection it
drew (the included toggle keys) and the digest of the plan it drew
(``review_data.plan_digest``); the kernel applies exactly that selection, or
nothing when the digest is not the plan it holds (a re-plan the page had not
drawn yet). Reject and Re-plan carry the digest too. Once decided, the
selection is frozen at what was written: a late toggle update from a page is
answered with the written selection, so every view shows what was written.

The state machine is small: ``pending`` -> ``applied`` | ``rejected`` | ``stale``
| ``error``; ``stale`` and ``error`` offer Re-plan (the same request against
the files as they are now) which returns to ``pending``. ``preview`` is a
dry run: nothing can be applied. A decision is taken once: the state is
checked and changed before any write, so a double click writes once.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import traitlets

from nbedit._dataclass import dataclass, field, replace
from nbedit.engine.models import FilePlan, LocatedHunk, Plan
from nbedit.errors import LiveConflict, StaleFile
from nbedit.jupyter.review_controls import HunkToggle, ReviewButton, ToggleKey
from nbedit.jupyter.review_errors import ErrorView, error_html, error_text, replanned_html
from nbedit.jupyter.shared import NbeditView
from nbedit.render.cells import cell_lines
from nbedit.render.html import plan_to_html, wrap
from nbedit.render.labels import tier_label
from nbedit.render.review_data import gap_lines, review_document

__all__ = [
    "ErrorView",
    "HunkToggle",
    "Proposal",
    "ReviewButton",
    "ReviewWidget",
    "State",
    "error_html",
    "error_text",
    "replanned_html",
]

State = Literal["pending", "applying", "applied", "rejected", "stale", "conflict", "error", "preview"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """A plan together with the options ``Workspace.apply`` must write it with (an undo's ``undoes``)."""

    plan: Plan
    apply_options: Mapping[str, Any] = field(default_factory=dict)


class ReviewWidget(NbeditView):
    """Review one plan; ``apply()``/``reject()`` or the buttons decide it.

    ``replan`` recomputes the same request against the current files (the
    Re-plan button after a stale preview); it may return a ``Proposal`` whose
    options replace the apply options. ``apply_options`` go to
    ``Workspace.apply`` (``origin``, ``execution_count``, ``force``, ``undoes``).
    """

    part = traitlets.Unicode("review").tag(sync=True)
    doc = traitlets.Dict().tag(sync=True)  # the plan's rows (nbedit.render.review_data)
    excluded = traitlets.List().tag(sync=True)  # [file, hunk or None] pairs left out of Apply
    view_mode = traitlets.Unicode("unified").tag(sync=True)  # "unified" or "split"
    review_state = traitlets.Unicode("pending").tag(sync=True)
    status_message = traitlets.Unicode("").tag(sync=True)
    detail_html = traitlets.Unicode("").tag(sync=True)  # an error panel, drawn under the status
    replan_available = traitlets.Bool(False).tag(sync=True)
    replan_label = traitlets.Unicode("").tag(sync=True)  # the Re-plan button's text when it is not plain

    def __init__(
        self,
        workspace: Any,
        plan: Plan,
        *,
        replan: Callable[[], Plan | Proposal] | None = None,
        dry_run: bool = False,
        title: str | None = None,
        **apply_options: Any,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.plan = plan
        self.result: Any = None  # the ApplyResult once applied
        self.error: BaseException | None = None
        self._replan = replan
        self._title = title
        self._apply_options = apply_options
        self._state: State = "preview" if dry_run else "pending"
        self._decided_callbacks: list[Callable[[ReviewWidget], object]] = []
        self._loaded_callbacks: list[Callable[[ReviewWidget], object]] = []
        self._buttons = {
            "apply": ReviewButton(self, "apply", "Apply", self.apply),
            "reject": ReviewButton(self, "reject", "Reject", self.reject),
            "replan": ReviewButton(self, "replan", "Re-plan", self.replan),
        }
        self._toggles: dict[ToggleKey, HunkToggle] = {}
        self.add_class("nbedit-review-widget")
        self.on_msg(self._on_message)
        self._load(plan)

    # ------------------------------------------------------------------ public

    @property
    def status(self) -> State:
        return self._state

    @property
    def status_text(self) -> str:
        """The status line's words (``pending: review the change, then Apply or Reject`` ...)."""
        return self.status_message

    @property
    def entry_id(self) -> str | None:
        return getattr(self.result, "entry_id", None)

    @property
    def toggles(self) -> dict[ToggleKey, HunkToggle]:
        """The include/exclude switches, by (file index, hunk index or None for a whole file)."""
        return dict(self._toggles)

    @property
    def buttons(self) -> dict[str, ReviewButton]:
        return dict(self._buttons)

    @property
    def excluded_keys(self) -> frozenset[ToggleKey]:
        return frozenset((int(file), None if hunk is None else int(hunk)) for file, hunk in self.excluded)

    def set_included(self, key: ToggleKey, include: bool) -> None:
        """Keep (True) or leave out (False) one hunk, or a whole file with ``(file, None)``."""
        if key not in self._toggles:
            raise KeyError(f"no hunk {key!r} in this review; the keys are {sorted(self._toggles, key=str)}")
        if self._state != "pending":
            return
        pairs = [pair for pair in self.excluded if (pair[0], pair[1]) != key]
        if not include:
            pairs.append([key[0], key[1]])
        self.excluded = pairs

    def selection_text(self) -> str:
        """``1 of 2 parts selected`` when a choice exists, else empty."""
        total = len(self._toggles)
        chosen = total - len(self.excluded_keys & self._toggles.keys())
        return f"{chosen} of {total} parts selected" if total > 1 or chosen < total else ""

    def on_loaded(self, callback: Callable[..., object]) -> None:
        """Call ``callback(widget)`` whenever a new plan is loaded (a re-plan); its toggles are reset."""
        self._loaded_callbacks.append(callback)

    def on_decided(self, callback: Callable[..., object]) -> None:
        """Call ``callback(widget)`` after the change is applied or rejected."""
        self._decided_callbacks.append(callback)

    def selected_plan(self) -> Plan:
        """The plan with the unticked hunks and files left out: exactly what Apply writes."""
        excluded = self.excluded_keys & self._toggles.keys()
        hunks = {(file, hunk) for file, hunk in excluded if hunk is not None}
        files = {file for file, hunk in excluded if hunk is None}
        plan = self.plan.without_hunks(hunks) if hunks else self.plan
        if files:
            kept = tuple(file_plan for index, file_plan in enumerate(plan.files) if index not in files)
            plan = replace(plan, files=kept, _diff_cache=[])
        return plan

    @property
    def digest(self) -> str:
        """The fingerprint of the plan on show (``review_data.plan_digest``); Apply from a page names it."""
        return str(self.doc.get("digest", ""))

    def apply(
        self,
        *,
        raise_errors: bool = False,
        included: Iterable[Sequence[Any]] | None = None,
        digest: str | None = None,
    ) -> ReviewWidget:
        """Write the selected hunks (what the Apply button does); a no-op once decided.

        ``included`` (what the page's Apply sends): the toggle keys to write,
        ``[file, hunk]`` pairs (hunk None for a whole file); every other part
        is left out, whatever ``excluded`` says. ``digest``: the plan the
        selection was made on; when it is not this widget's plan nothing is
        written and the status says so.
        """
        if self._state != "pending":
            if self._state == "preview":
                self._show_status("preview", "preview only (--dry-run): nothing can be applied from here")
            return self
        if not self._shows_this_plan(digest, "applied"):
            return self
        if included is not None:
            chosen = self._keys(included)
            if chosen is None:
                return self
            self.excluded = [[file, hunk] for file, hunk in self._toggles if (file, hunk) not in chosen]
        self._state = "applying"
        self._frozen = [list(pair) for pair in self.excluded]  # from here on the selection is what is written
        self._show_status("applying", "applying…")
        try:
            result = self.workspace.apply(self.selected_plan(), **self._apply_options)
        except StaleFile as error:
            self._stale(error)
            if raise_errors:
                raise
        except LiveConflict as error:
            self._conflict(error)
            if raise_errors:
                raise
        except Exception as error:
            self._fail(error)
            if raise_errors:
                raise
        else:
            self._applied(result)
        return self

    def reject(self, *, digest: str | None = None) -> ReviewWidget:
        """Drop the change without writing anything (what the Reject button does).

        ``digest``: the plan the page showed; another plan is not rejected unseen."""
        if self._state not in ("pending", "stale", "conflict", "error"):
            return self
        if not self._shows_this_plan(digest, "rejected"):
            return self
        self._state = "rejected"
        self._frozen = [list(pair) for pair in self.excluded]
        self.replan_available = False
        self.detail_html = ""
        self._show_status("rejected", "rejected: nothing was written")
        self._decided()
        return self

    def replan(self, *, digest: str | None = None) -> ReviewWidget:
        """Plan the same request again against the files as they are now; after a conflict with
        an open tab, against the tab's live document (``Workspace.replan_live``).

        ``digest``: the plan the page showed; a second click from a page that has
        not drawn the first re-plan yet does nothing."""
        live = self._state == "conflict" and isinstance(self.error, LiveConflict)
        if (self._replan is None and not live) or self._state not in ("stale", "conflict", "error"):
            return self
        if digest is not None and digest != self.digest:
            return self
        try:
            if live:
                proposed: Plan | Proposal = self.workspace.replan_live(self.selected_plan(), self.error)
            else:
                assert self._replan is not None
                proposed = self._replan()
        except Exception as error:
            self._fail(error)
            return self
        if isinstance(proposed, Proposal):
            self._apply_options = {**self._apply_options, **proposed.apply_options}
            plan = proposed.plan
        else:
            plan = proposed
        self.error = None
        self.detail_html = ""
        self.replan_available = False
        self.replan_label = ""
        self._state = "pending"
        self._load(plan)
        return self

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        files = ", ".join(self.plan.paths)
        entry = f", entry {self.entry_id}" if self.entry_id else ""
        return f"<nbedit review of {files}: {self._state}{entry}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        # a plain bundle (anywidget returns data and metadata), as before: callers index it
        shown = super()._repr_mimebundle_(**kwargs)
        data = dict(shown[0] if isinstance(shown, tuple) else shown or {})
        data["text/plain"] = self.plain_text()
        data["text/html"] = self.static_html()
        return data

    def plain_text(self) -> str:
        """Status, the header's facts (counts, every hunk not matched exactly), then the diff."""
        from nbedit.render.text import plan_to_plain_diff

        return f"nbedit: {self.status_message}\n{plan_to_plain_diff(self.selected_plan())}"

    def static_html(self) -> str:
        status = wrap(
            f'<div class="nbedit-status nbedit-state-{self._state}"><b>nbedit</b>: '
            f"{html.escape(self.status_message, quote=False)}</div>",
            style=False,
        )
        title = (
            wrap(f'<div class="nb-headline">{html.escape(self._title, quote=False)}</div>', style=False)
            if self._title
            else ""
        )
        return title + plan_to_html(self.selected_plan()) + status + self.detail_html

    # ------------------------------------------------------------------ internals

    def _guarded(self, action: Callable[[], object]) -> Callable[..., None]:
        def handler(*_: object) -> None:
            try:
                action()
            except Exception as error:  # never let a click fail silently (ipywidgets#2949)
                self._fail(error)

        return handler

    def _on_message(self, _widget: object, content: Any, _buffers: object = None) -> None:
        action = content.get("action") if isinstance(content, dict) else None
        digest = content.get("digest") if isinstance(content, dict) else None
        digest = digest if isinstance(digest, str) else None
        if action == "apply":
            included = content.get("included")
            chosen = included if isinstance(included, list) else None
            self._guarded(lambda: self.apply(included=chosen, digest=digest))()
        elif action == "reject":
            self._guarded(lambda: self.reject(digest=digest))()
        elif action == "replan":
            self._guarded(lambda: self.replan(digest=digest))()
        elif action == "expand":
            self._guarded(lambda: self._send_gap(content))()
        elif action == "cell":
            self._guarded(lambda: self._send_cell(content))()

    def _send_gap(self, request: Mapping[str, Any]) -> None:
        """The lines of an unchanged run the page asked to see (they are not in the saved state)."""
        try:
            file_index, old_line, count, section = (
                int(request[name]) for name in ("file", "old_line", "count", "section")
            )
            file_plan = self.plan.files[file_index]
        except (KeyError, TypeError, ValueError, IndexError):
            return  # names nothing in this plan (a page drawn from an older one): nothing to show
        lines = gap_lines(file_plan, old_line, count)
        self.send({"kind": "lines", "file": file_index, "section": section, "lines": lines})

    def _shows_this_plan(self, digest: str | None, decision: str) -> bool:
        """True when the page's decision names this plan (or no page is involved)."""
        if digest is None or digest == self.digest:
            return True
        self._refuse(
            f"not {decision}: the page showed another version of this change (plan {digest}, now "
            f"{self.digest}); nothing was written. Review the change shown now, then decide again"
        )
        return False

    def _keys(self, pairs: Iterable[Sequence[Any]]) -> set[ToggleKey] | None:
        """The toggle keys a page's selection names, or None (refused) when one names no part."""
        keys: set[ToggleKey] = set()
        try:
            for file, hunk in pairs:
                keys.add((int(file), None if hunk is None else int(hunk)))
        except (TypeError, ValueError):
            keys = {(-1, -1)}
        unknown = keys - self._toggles.keys()
        if unknown:
            self._refuse(
                f"not applied: the page's selection names parts this plan does not have ({sorted(unknown, key=str)}); "
                "nothing was written. Review the change shown now, then Apply again"
            )
            return None
        return keys

    def _refuse(self, text: str) -> None:
        # the page re-enables its buttons on this message even if the status text is unchanged
        self._show_status(self._state, text)
        self.send({"kind": "refused", "text": text})

    @traitlets.observe("excluded")
    def _keep_decided_selection(self, change: Mapping[str, Any]) -> None:
        # a toggle update that arrives after the decision (held back while the kernel was busy)
        # is answered with the selection that was written, so every view shows that
        frozen = getattr(self, "_frozen", None)
        if frozen is not None and change["new"] != frozen:
            self.excluded = [list(pair) for pair in frozen]

    def _send_cell(self, request: Mapping[str, Any]) -> None:
        """The lines of an original notebook cell the page asked to see (an unchanged cell, or a
        collapsed run inside an edited one)."""
        try:
            file_index, position = int(request["file"]), int(request["cell"])
            file_plan = self.plan.files[file_index]
        except (KeyError, TypeError, ValueError, IndexError):
            return
        lines = cell_lines(file_plan, position) if file_plan.notebook else []
        self.send({"kind": "cell", "file": file_index, "cell": position, "lines": lines})

    def _load(self, plan: Plan) -> None:
        self.plan = plan
        self._frozen: list[list[Any]] | None = None
        self._toggles = {}
        for file_index, file_plan in enumerate(plan.files):
            if not file_plan.hunks:
                key: ToggleKey = (file_index, None)
                self._toggles[key] = HunkToggle(self, key, f"include {file_plan.target_path}")
            for hunk_index, located in enumerate(file_plan.hunks):
                where = _where(file_plan, located)
                label = ("" if located.match.exact else "⚠ ") + tier_label(located.tier, located.score)
                key = (file_index, hunk_index)
                self._toggles[key] = HunkToggle(self, key, f"hunk {hunk_index + 1} ({where}) · {label}")
        self.excluded = []
        self.doc = review_document(plan, title=self._title)
        for callback in self._loaded_callbacks:
            callback(self)
        if self._state == "preview":
            self._show_status("preview", "preview only (--dry-run): nothing was written")
        else:
            self._show_status("pending", "pending: review the change, then Apply or Reject")

    def _show_status(self, state: str, text: str) -> None:
        with self.hold_sync():
            self.status_message = text
            self.review_state = state

    def _applied(self, result: Any) -> None:
        self.result = result
        self._state = "applied"
        entry = getattr(result, "entry_id", None)
        written = getattr(result, "written", ())
        if getattr(result, "already_applied", False):
            text = "applied: the change was already in the files, nothing was written"
        elif not written:
            text = "applied: nothing was written (no selected part changes a file)"
        else:
            files = ", ".join(written)
            origin = str(self._apply_options.get("origin"))
            # a plain `%nbedit undo` walks back past undo entries: an undo is undone by its id
            again = f"%nbedit undo {entry}" if origin == "undo" else "%nbedit undo"
            recorded = f"history entry {entry}; undo with {again}" if entry else "history is off"
            # an undo or restore is applied like any change, but the person asked to undo or restore
            done = {"undo": "undone:", "restore": "restored:"}.get(origin)
            text = f"{done or 'applied to'} {files}{self._parts_written()} ({recorded})"
        self._show_status("applied", text)
        self._decided()

    def _parts_written(self) -> str:
        """``: 1 of 3 parts (hunk 3)`` when some parts were left out, else empty."""
        left_out = self.excluded_keys & self._toggles.keys()
        if not left_out:
            return ""
        kept = [key for key in self._toggles if key not in left_out]
        several = len(self.plan.files) > 1

        def name(key: ToggleKey) -> str:
            path = self.plan.files[key[0]].target_path
            if key[1] is None:
                return path
            return f"{path} hunk {key[1] + 1}" if several else f"hunk {key[1] + 1}"

        names = ", ".join(name(key) for key in kept) or "none"
        return f": {len(kept)} of {len(self._toggles)} parts ({names})"

    def _decided(self) -> None:
        for callback in self._decided_callbacks:
            try:
                callback(self)
            except Exception as error:  # a listener's failure must not hide the decision, but must show
                self.error = error
                self.detail_html = error_html(error)

    def _stale(self, error: StaleFile) -> None:
        from nbedit.replan import replan_stale

        try:  # the change moved onto the file as it is now, shown and asked about again (never written)
            replanned = replan_stale(self.workspace, self.selected_plan())
        except Exception:  # the plain stale state below is always shown instead
            replanned = None
        if replanned is not None:
            self._state = "pending"
            self._load(replanned.plan)
            self.error = error
            self.detail_html = replanned_html(replanned)
            self._show_status(
                "pending",
                f"re-planned: {', '.join(replanned.paths)} changed on disk since the preview, and the change "
                "still applies to it; nothing was written. Review the new diff (what changed on disk is shown "
                "below), then Apply or Reject",
            )
            return
        self.error = error
        self._state = "stale"
        self.detail_html = error_html(error)
        # the error's own first words say what happened (changed, deleted, created at a move's new
        # name, its permissions changed); the whole message is in the details
        what = str(error).split("\n", 1)[0].split("; nothing was written", 1)[0]
        self._show_status(
            "stale",
            f"stale: {what or 'a file changed on disk since this preview'}; nothing was written. "
            "Re-plan to review the change against the current file",
        )
        self.replan_available = self._replan is not None
        self.replan_label = ""

    def _conflict(self, error: LiveConflict) -> None:
        self.error = error
        self._state = "conflict"
        self.detail_html = error_html(error)
        places = "; ".join(f"{item.path}: {item.where}" for item in error.conflicts)
        self._show_status(
            "conflict",
            f"the open tab differs: {places} has unsaved changes in the text this change rewrites; "
            "nothing was written. Save or undo that typing and Re-plan, or re-plan against the live document",
        )
        self.replan_label = "↻ Re-plan against the live document" if error.documents else ""
        self.replan_available = bool(error.documents) or self._replan is not None

    def _fail(self, error: BaseException) -> None:
        self.error = error
        self._state = "error"
        self.detail_html = error_html(error)
        kind = type(error).__name__
        message = str(error).split("\n", 1)[0]
        self._show_status("error", f"error ({kind}): {message}; nothing was written")
        self.replan_available = self._replan is not None


def _where(file_plan: FilePlan, located: LocatedHunk) -> str:
    """A toggle's place: the line, in a notebook counted within the cell as its box numbers it."""
    if not (file_plan.notebook and located.cell):
        return f"line {located.line}"
    from nbedit.engine.explain import cell_place, hunk_place

    within = cell_place(file_plan, located)
    if isinstance(within, str):
        return hunk_place(located, within)  # across cells: both ends, in words
    return f"{located.cell}, line {within[0] if within is not None else located.line}"
