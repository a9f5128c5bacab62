"""``approval="review"``: the human gate a running tool loop waits on.

A tool loop is one running cell, and a running cell normally blocks the
kernel from handling the widget messages a click sends. The gate shows the
existing review widget (plus a box for a reason), then polls the kernel's
message queue with ``jupyter-ui-poll`` until the person clicks Apply or
Reject, so the cell blocks while the widget stays alive. No decision within
``timeout`` seconds counts as a rejection (the widget says so). Unticked
hunks are left out by the widget itself (``Plan.without_hunks``); the
decision names exactly which hunks were written and which were not.

Only this module imports IPython, ipywidgets and jupyter-ui-poll.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from nbedit.agents.approval import Decision, hunk_names

if TYPE_CHECKING:
    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

__all__ = ["ReviewGate", "review"]

_POLL_EVENTS = 10
_POLL_INTERVAL = 0.05


class ReviewGate:
    """The review widget for one tool call, a reason box, and the wait for a decision."""

    def __init__(self, workspace: Workspace, plan: Plan, *, title: str | None = None, **apply_options: Any):
        import ipywidgets as widgets

        from nbedit.jupyter.review import ReviewWidget

        self.plan = plan
        self.widget = ReviewWidget(workspace, plan, title=title, **apply_options)
        self.reason = widgets.Text(
            placeholder="reason for rejecting (optional; the model reads it)",
            layout=widgets.Layout(width="60%"),
        )
        self.reason.add_class("nbedit-reject-reason")
        self.view = widgets.VBox([self.widget, self.reason])
        self.timed_out = False

    @property
    def decided(self) -> bool:
        return self.widget.status not in ("pending", "applying")

    def wait(self, timeout: float) -> None:
        """Block until the person decides (kernel messages keep flowing), or reject at ``timeout``."""
        from jupyter_ui_poll import ui_events

        deadline = time.monotonic() + timeout
        with ui_events() as poll:
            while not self.decided:
                if time.monotonic() >= deadline:
                    self.timed_out = True
                    self.widget.reject()
                    self.widget._show_status(
                        "rejected", f"rejected: no decision within {timeout:g} s; nothing was written"
                    )
                    break
                poll(_POLL_EVENTS)
                time.sleep(_POLL_INTERVAL)

    def decision(self) -> Decision:
        widget = self.widget
        if widget.status == "applied":
            left_out = {
                (file, hunk)
                for (file, hunk), box in widget.toggles.items()
                if hunk is not None and not box.value
            }
            files_out = {
                file for (file, hunk), box in widget.toggles.items() if hunk is None and not box.value
            }
            all_keys = {(file, hunk) for (file, hunk) in widget.toggles if hunk is not None}
            left = hunk_names(self.plan, left_out) + tuple(
                self.plan.files[index].target_path for index in sorted(files_out)
            )
            applied = hunk_names(self.plan, all_keys - left_out) if left else ()
            return Decision("applied", self.plan, widget.result, applied_hunks=applied, left_out=left)
        if widget.status == "rejected":
            if self.timed_out:
                reason = "no decision was made in time (the review timed out)"
            else:
                reason = self.reason.value.strip()
            return Decision("rejected", self.plan, reason=reason)
        # stale or error: the widget shows it; the model gets the error itself
        raise widget.error if widget.error is not None else RuntimeError(f"review ended as {widget.status}")


def review(
    workspace: Workspace, plan: Plan, *, origin: str, title: str | None, timeout: float, **apply_options: Any
) -> Decision:
    """Show the review widget in the running cell and return the person's decision."""
    from IPython.display import display

    gate = ReviewGate(workspace, plan, title=title, origin=origin, **apply_options)
    display(gate.view)
    gate.wait(timeout)
    return gate.decision()
