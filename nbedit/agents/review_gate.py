"""``approval="review"``: the human gate a running tool loop waits on.

A tool loop is one running cell, and a running cell normally keeps the kernel
from handling the widget messages a click sends. The gate shows the existing
review widget (plus a box for a reason) and waits for Apply or Reject in one
of two ways, depending on what the kernel can do:

* ``tool.run(...)`` in an ordinary cell: the gate polls the kernel's message
  queue with ``jupyter-ui-poll`` (kernels with ``do_one_iteration``, i.e.
  ipykernel 6 and early 7).
* ``await tool.arun(...)`` in an async cell: the call runs in a worker thread
  and the gate waits on an event the widget's decision sets, while the cell
  awaits; ipykernel 7 dispatches widget messages while an async cell awaits,
  so the click is handled on the kernel's own thread. (On a kernel that polls,
  ``arun`` simply runs the polling gate.)

A kernel that can do neither gets a clear error before anything is shown. No
decision within ``timeout`` seconds counts as a rejection (the widget says so).
Unticked hunks are left out by the widget itself (``Plan.without_hunks``); the
decision names exactly which hunks were written and which were not.

Only this module imports IPython, ipywidgets and jupyter-ui-poll.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from nbedit.agents.approval import Decision, hunk_names
from nbedit.errors import NbeditError

if TYPE_CHECKING:
    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

__all__ = ["ReviewGate", "ReviewUnavailable", "kernel_polls", "review"]

_POLL_EVENTS = 10
_POLL_INTERVAL = 0.05


class ReviewUnavailable(NbeditError):
    """``approval="review"`` cannot wait for a click here (no kernel, or one that cannot poll)."""


def kernel_polls() -> bool:
    """True if the running kernel can handle queued messages from inside a cell (jupyter-ui-poll)."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    return kernel is not None and hasattr(kernel, "do_one_iteration")


def _in_kernel() -> bool:
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


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
        self._event = threading.Event()
        self.widget.on_decided(lambda _: self._event.set())

    @property
    def decided(self) -> bool:
        return self.widget.status not in ("pending", "applying")

    def wait(self, timeout: float) -> None:
        """Block until the person decides (kernel messages keep flowing), or reject at ``timeout``."""
        deadline = time.monotonic() + timeout
        if threading.current_thread() is not threading.main_thread():
            # arun: the kernel's thread handles the click and sets the event
            while not self.decided and time.monotonic() < deadline:
                self._event.wait(min(_POLL_INTERVAL * 10, max(deadline - time.monotonic(), 0.0)))
        else:
            from jupyter_ui_poll import ui_events

            with ui_events() as poll:
                while not self.decided and time.monotonic() < deadline:
                    poll(_POLL_EVENTS)
                    time.sleep(_POLL_INTERVAL)
        if not self.decided:
            self.timed_out = True
            self.widget.reject()
            self.widget._show_status(
                "rejected", f"rejected: no decision within {timeout:g} s; nothing was written"
            )

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

    if not _in_kernel():
        raise ReviewUnavailable(
            "approval='review' needs a Jupyter kernel to show the review widget in; nothing was written. "
            "Outside a notebook use approval='auto', 'dry-run' or a callable"
        )
    if threading.current_thread() is threading.main_thread() and not kernel_polls():
        raise ReviewUnavailable(
            "this kernel cannot handle a click while an ordinary cell runs, so the review would never end; "
            "nothing was written. Call `await tool.arun(...)` in the cell instead of tool.run(...)"
        )

    gate = ReviewGate(workspace, plan, title=title, origin=origin, **apply_options)
    display(gate.view)  # type: ignore[no-untyped-call]
    gate.wait(timeout)
    return gate.decision()
