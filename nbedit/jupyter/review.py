"""The review widget: a planned change shown as a diff, with per-hunk toggles and Apply/Reject.

What the magics return. The plan was computed without writing anything; the
widget lets a person leave hunks out (``Plan.without_hunks``: the hunks were
located against the original text, so dropping one never moves another) and
then write exactly what is ticked, through the same ``Workspace.apply`` as
every other front end (locked, stale-checked, recorded, atomic).

Three facts about widgets shape the code:

* Button callbacks swallow exceptions (ipywidgets#2949), so every callback is
  wrapped and any failure becomes the widget's ``error`` state, with the
  message drawn in the widget itself.
* Headless runs (nbclient, nbconvert --execute) never click, so ``apply()`` and
  ``reject()`` are methods that do what the buttons do, and ``status`` says
  what happened.
* Saved notebooks are read where no widget renders (GitHub, nbconvert), so
  the output bundle carries a static ``text/html`` diff and a ``text/plain``
  unified diff beside the widget view.

A change can have a thousand hunks, so the widget stays light: the style
sheet is sent once (its own ``HTML`` child; every other piece is unstyled
markup under the scoped class), each hunk is one checkbox and one ``HTML``
directly in the body (no box around the pair), and all checkboxes share one
``Layout`` and one style model, as do all hunk ``HTML`` children. Each widget
otherwise brings two models of its own; sharing them took building the
widget for 1,000 hunks from about 1.2 s of widget construction to 0.3 s.

The state machine is small: ``pending`` -> ``applied`` | ``rejected`` | ``stale``
| ``error``; ``stale`` and ``error`` offer Re-plan (the same request against
the files as they are now) which returns to ``pending``. ``preview`` is a
dry run: nothing can be applied. A decision is taken once: the state is
checked and changed before any write, so a double click writes once.
"""

from __future__ import annotations

import html
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import ipywidgets as widgets

from nbedit.engine.models import FilePlan, Plan
from nbedit.errors import NbeditError, StaleFile
from nbedit.render.errors import error_to_html
from nbedit.render.html import (
    STYLE_TAG,
    file_head_html,
    file_to_html,
    hunks_to_html,
    plan_header_html,
    plan_to_html,
    wrap,
)
from nbedit.render.rows import tier_label

__all__ = ["ErrorView", "Proposal", "ReviewWidget", "State"]

State = Literal["pending", "applying", "applied", "rejected", "stale", "error", "preview"]

# (file index, hunk index); hunk index None is the whole-file toggle of a file without located hunks.
ToggleKey = tuple[int, "int | None"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """A plan together with the options ``Workspace.apply`` must write it with (an undo's ``undoes``)."""

    plan: Plan
    apply_options: Mapping[str, Any] = field(default_factory=dict)


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def error_html(error: BaseException) -> str:
    """An nbedit error as the render package's panel; anything else with its traceback."""
    if isinstance(error, NbeditError):
        return error_to_html(error)
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return wrap(
        '<div class="nb-error"><div class="nb-error-title">✖ unexpected error (a bug in nbedit; '
        "please report it)</div>"
        f'<div class="nb-error-message">{_escape(f"{type(error).__name__}: {error}")}</div>'
        f"<details><summary>traceback</summary><pre>{_escape(trace)}</pre></details></div>"
    )


def error_text(error: BaseException) -> str:
    if isinstance(error, NbeditError):
        return f"{type(error).__name__}: {error.spelled('magic')}"
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


class ErrorView:
    """What a magic shows when the change could not even be planned: the error, readable, no traceback."""

    status = "error"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __repr__(self) -> str:
        return error_text(self.error)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": error_text(self.error), "text/html": error_html(self.error)}


class ReviewWidget(widgets.VBox):
    """Review one plan; ``apply()``/``reject()`` or the buttons decide it.

    ``replan`` recomputes the same request against the current files (the
    Re-plan button after a stale preview); it may return a ``Proposal`` whose
    options replace the apply options. ``apply_options`` go to
    ``Workspace.apply`` (``origin``, ``execution_count``, ``force``, ``undoes``).
    """

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
        self.workspace = workspace
        self.plan = plan
        self.result: Any = None  # the ApplyResult once applied
        self.error: BaseException | None = None
        self._replan = replan
        self._title = title
        self._apply_options = apply_options
        self._state: State = "preview" if dry_run else "pending"
        self._toggles: dict[ToggleKey, widgets.Checkbox] = {}
        self._decided_callbacks: list[Callable[[ReviewWidget], object]] = []
        # Layout and style models shared by every toggle / every hunk HTML (see the module docstring).
        self._shared: dict[str, dict[str, Any]] = {}

        self._style = widgets.HTML(STYLE_TAG)
        self._header = widgets.HTML()
        self._body = widgets.VBox()
        self._status = widgets.HTML()
        self._status.add_class("nbedit-status")
        self._detail = widgets.HTML()
        self._apply_button = widgets.Button(description="Apply", button_style="success", icon="check")
        self._apply_button.add_class("nbedit-apply")
        self._reject_button = widgets.Button(description="Reject", icon="times")
        self._reject_button.add_class("nbedit-reject")
        self._replan_button = widgets.Button(
            description="Re-plan", icon="refresh", layout=widgets.Layout(display="none")
        )
        self._replan_button.add_class("nbedit-replan")
        self._apply_button.on_click(self._guarded(self.apply))
        self._reject_button.on_click(self._guarded(self.reject))
        self._replan_button.on_click(self._guarded(self.replan))
        buttons = widgets.HBox([self._apply_button, self._reject_button, self._replan_button])
        super().__init__([self._style, self._header, self._body, buttons, self._status, self._detail])
        self.add_class("nbedit-review")
        self._load(plan)

    # ------------------------------------------------------------------ public

    @property
    def status(self) -> State:
        return self._state

    @property
    def entry_id(self) -> str | None:
        return getattr(self.result, "entry_id", None)

    @property
    def toggles(self) -> dict[ToggleKey, widgets.Checkbox]:
        """The include/exclude checkboxes, by (file index, hunk index or None for a whole file)."""
        return dict(self._toggles)

    @property
    def buttons(self) -> dict[str, widgets.Button]:
        return {"apply": self._apply_button, "reject": self._reject_button, "replan": self._replan_button}

    def on_decided(self, callback: Callable[..., object]) -> None:
        """Call ``callback(widget)`` after the change is applied or rejected."""
        self._decided_callbacks.append(callback)

    def selected_plan(self) -> Plan:
        """The plan with the unticked hunks and files left out: exactly what Apply writes."""
        hunks = {
            (file, hunk) for (file, hunk), box in self._toggles.items() if hunk is not None and not box.value
        }
        files = {key[0] for key, box in self._toggles.items() if key[1] is None and not box.value}
        plan = self.plan.without_hunks(hunks) if hunks else self.plan
        if files:
            kept = tuple(file_plan for index, file_plan in enumerate(plan.files) if index not in files)
            plan = replace(plan, files=kept, _diff_cache=[])
        return plan

    def apply(self, *, raise_errors: bool = False) -> ReviewWidget:
        """Write the selected hunks (what the Apply button does); a no-op once decided."""
        if self._state != "pending":
            if self._state == "preview":
                self._show_status("preview", "preview only (--dry-run): nothing can be applied from here")
            return self
        self._state = "applying"
        self._freeze()
        self._show_status("applying", "applying…")
        try:
            result = self.workspace.apply(self.selected_plan(), **self._apply_options)
        except StaleFile as error:
            self._stale(error)
            if raise_errors:
                raise
        except Exception as error:
            self._fail(error)
            if raise_errors:
                raise
        else:
            self._applied(result)
        return self

    def reject(self) -> ReviewWidget:
        """Drop the change without writing anything (what the Reject button does)."""
        if self._state not in ("pending", "stale", "error"):
            return self
        self._state = "rejected"
        self._freeze()
        self._replan_button.layout.display = "none"
        self._detail.value = ""
        self._show_status("rejected", "rejected: nothing was written")
        self._decided()
        return self

    def replan(self) -> ReviewWidget:
        """Plan the same request again against the files as they are now."""
        if self._replan is None or self._state not in ("stale", "error"):
            return self
        try:
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
        self._detail.value = ""
        self._replan_button.layout.display = "none"
        self._state = "pending"
        self._load(plan)
        return self

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        files = ", ".join(self.plan.paths)
        entry = f", entry {self.entry_id}" if self.entry_id else ""
        return f"<nbedit review of {files}: {self._state}{entry}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.plain_text()
        bundle["text/html"] = self.static_html()
        return bundle

    def plain_text(self) -> str:
        """Status, the header's facts (counts, every hunk not matched exactly), then the diff."""
        from nbedit.render.text import plan_to_plain_diff

        return f"nbedit: {self._status_text}\n{plan_to_plain_diff(self.selected_plan())}"

    def static_html(self) -> str:
        status = wrap(f'<div class="nb-note"><b>nbedit</b>: {_escape(self._status_text)}</div>', style=False)
        return plan_to_html(self.selected_plan()) + status + self._detail.value

    # ------------------------------------------------------------------ internals

    def _guarded(self, action: Callable[[], object]) -> Callable[..., None]:
        def handler(*_: object) -> None:
            try:
                action()
            except Exception as error:  # never let a click fail silently (ipywidgets#2949)
                self._fail(error)

        return handler

    def _load(self, plan: Plan) -> None:
        self.plan = plan
        self._toggles = {}
        sections: list[widgets.Widget] = []
        for file_index, file_plan in enumerate(plan.files):
            sections.extend(self._file_section(file_index, file_plan))
        self._body.children = tuple(sections)
        self._refresh_header()
        if self._state == "preview":
            self._freeze()
            self._show_status("preview", "preview only (--dry-run): nothing was written")
        else:
            self._apply_button.disabled = False
            self._reject_button.disabled = False
            self._show_status("pending", "pending: review the change, then Apply or Reject")

    def _toggle(self, key: ToggleKey, description: str) -> widgets.Checkbox:
        shared = self._shared.get("toggle") or {"layout": widgets.Layout(width="auto", min_width="12em")}
        box = widgets.Checkbox(value=True, description=description, indent=False, **shared)
        self._shared.setdefault("toggle", {"layout": box.layout, "style": box.style})
        box.add_class("nbedit-hunk-toggle")
        box.observe(self._guarded(self._refresh_header), names="value")
        self._toggles[key] = box
        return box

    def _piece(self, value: str) -> widgets.HTML:
        shared = self._shared.get("piece", {})
        piece = widgets.HTML(value, **shared)
        self._shared.setdefault("piece", {"layout": piece.layout, "style": piece.style})
        return piece

    def _file_section(self, file_index: int, file_plan: FilePlan) -> list[widgets.Widget]:
        if not file_plan.hunks:
            box = self._toggle((file_index, None), f"include {file_plan.target_path}")
            return [box, self._piece(file_to_html(file_plan, file_index=file_index, style=False))]
        parts: list[widgets.Widget] = [self._piece(file_head_html(file_plan, style=False))]
        for hunk_index, (located, hunk_html) in enumerate(
            zip(file_plan.hunks, hunks_to_html(file_plan), strict=True)
        ):
            label = ("" if located.match.exact else "⚠ ") + tier_label(located.tier, located.score)
            where = f"{located.cell}, line {located.line}" if located.cell else f"line {located.line}"
            description = f"hunk {hunk_index + 1} ({where}) · {label}"
            parts.append(self._toggle((file_index, hunk_index), description))
            parts.append(self._piece(hunk_html))
        return parts

    def _refresh_header(self, *_: object) -> None:
        plan = self.selected_plan()
        total = len(self._toggles)
        chosen = sum(box.value for box in self._toggles.values())
        title = f'<div class="nb-headline">{_escape(self._title)}</div>' if self._title else ""
        selection = ""
        if total > 1 or chosen < total:
            selection = f'<div class="nb-note">{chosen} of {total} parts selected</div>'
        self._header.value = (
            (wrap(title, style=False) if title else "")
            + plan_header_html(plan, style=False)
            + (wrap(selection, style=False) if selection else "")
        )

    def _freeze(self) -> None:
        self._apply_button.disabled = True
        self._reject_button.disabled = True
        for box in self._toggles.values():
            box.disabled = True

    def _show_status(self, state: str, text: str) -> None:
        self._status_text = text
        colour = {
            "applied": "rgb(46,160,67)",
            "rejected": "inherit",
            "stale": "rgb(210,153,34)",
            "error": "rgb(218,54,51)",
        }.get(state, "inherit")
        self._status.value = (
            f'<span class="nbedit-state-{state}" style="color:{colour}"><b>nbedit</b>: {_escape(text)}</span>'
        )

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
            recorded = f"history entry {entry}; undo with %nbedit undo" if entry else "history is off"
            # an undo or restore is applied like any change, but the person asked to undo or restore
            done = {"undo": "undone:", "restore": "restored:"}.get(str(self._apply_options.get("origin")))
            text = f"{done or 'applied to'} {files} ({recorded})"
        self._show_status("applied", text)
        self._decided()

    def _decided(self) -> None:
        for callback in self._decided_callbacks:
            try:
                callback(self)
            except Exception as error:  # a listener's failure must not hide the decision, but must show
                self.error = error
                self._detail.value = error_html(error)

    def _stale(self, error: StaleFile) -> None:
        self.error = error
        self._state = "stale"
        self._freeze()
        self._detail.value = error_html(error)
        self._show_status(
            "stale",
            f"stale: {error.path or 'a file'} changed on disk since this preview; nothing was written. "
            "Re-plan to review the change against the current file",
        )
        if self._replan is not None:
            self._replan_button.layout.display = None

    def _fail(self, error: BaseException) -> None:
        self.error = error
        self._state = "error"
        self._freeze()
        self._detail.value = error_html(error)
        kind = type(error).__name__
        message = str(error).split("\n", 1)[0]
        self._show_status("error", f"error ({kind}): {message}; nothing was written")
        if self._replan is not None:
            self._replan_button.layout.display = None
