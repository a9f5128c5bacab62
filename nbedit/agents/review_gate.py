"""``approval="review"``: the human gate a running tool loop waits on.

A tool loop is one running cell, and a running cell normally keeps the kernel
from handling the widget messages a click sends. The gate shows the existing
review widget (plus a box for a reason) and waits for Apply or Reject in one
of three ways, depending on what the kernel can do:

* ``tool.run(...)`` on ipykernel 7: the kernel routes each comm message to the
  subshell its comm names (``_reply_subshell_for``; subshells are JEP 91's
  threads with their own message loop). The gate starts a subshell, points the
  gate's widgets' comms at it, and blocks the cell's thread on an event the
  widget's decision sets; the click is handled on the subshell's thread while
  the cell waits. Afterwards the comms point back and the subshell is stopped.
* ``tool.run(...)`` on a kernel with ``do_one_iteration`` (ipykernel 6): the
  gate polls the kernel's message queue with ``jupyter-ui-poll``.
* ``await tool.arun(...)`` in an async cell: the call runs in a worker thread
  and waits on the event while the cell awaits; ipykernel 7 dispatches comm
  messages while an async cell awaits, so the click is handled on the
  kernel's own thread.

Without a kernel the gate cannot be shown: that is the programmer's mistake,
raised as ``ReviewUnavailable`` to the program (never sent to the model). No
decision within ``timeout`` seconds counts as a rejection (the widget says so).
Unticked hunks are left out by the widget itself (``Plan.without_hunks``); the
decision names exactly which hunks were written and which were not.

Only this module imports IPython, ipywidgets and jupyter-ui-poll.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from nbedit.agents.decision import Decision, ReviewUnavailable, hunk_names

if TYPE_CHECKING:
    from nbedit.engine.models import Plan
    from nbedit.workspace import Workspace

__all__ = ["ReviewGate", "ReviewUnavailable", "kernel_has_subshells", "kernel_polls", "review"]

_POLL_EVENTS = 10
_POLL_INTERVAL = 0.05


def kernel_polls() -> bool:
    """True if the running kernel can handle queued messages from inside a cell (jupyter-ui-poll)."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    return kernel is not None and hasattr(kernel, "do_one_iteration")


def kernel_has_subshells() -> bool:
    """True on a kernel that routes comm messages to subshells (ipykernel 7).

    The route is ipykernel's own (a comm's ``_reply_subshell_for`` names the subshell
    its messages go to; the subshell manager starts one): both are checked, so a kernel
    without them gets the clear ``ReviewUnavailable`` (or the polling gate), never a crash.
    """
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    channel = getattr(kernel, "shell_channel_thread", None)
    manager = getattr(channel, "manager", None)
    if manager is None or not hasattr(manager, "_create_subshell"):
        return False
    try:
        from ipykernel.comm.comm import BaseComm
    except ImportError:
        return False
    return hasattr(BaseComm, "_reply_subshell_for") and hasattr(
        getattr(kernel, "comm_manager", None), "get_comm"
    )


def _on_shell_channel(kernel: Any, call: Any, timeout: float = 30.0) -> Any:
    """Run ``call()`` on the kernel's shell channel thread (where subshells are made) and wait."""
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed back to the waiting thread
            outcome["error"] = error
        finally:
            done.set()

    kernel.shell_channel_thread.io_loop.add_callback(run)
    if not done.wait(timeout):
        raise ReviewUnavailable("the kernel did not start a subshell for the review; nothing was written")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _comms(widget: Any) -> Iterator[Any]:
    """Every comm of a widget tree (the gate's box, the review widget, the reason box)."""
    comm = getattr(widget, "comm", None)
    if comm is not None:
        yield comm
    for child in getattr(widget, "children", ()) or ():
        yield from _comms(child)


@contextlib.contextmanager
def _comms_on_a_subshell(view: Any) -> Iterator[None]:
    """While the cell's thread waits, the view's comm messages are handled on a subshell's thread."""
    from IPython import get_ipython

    kernel = get_ipython().kernel  # type: ignore[union-attr]
    manager = kernel.shell_channel_thread.manager
    subshell = _on_shell_channel(kernel, manager._create_subshell)
    comms = list(_comms(view))
    for comm in comms:  # an instance attribute: the kernel asks the comm where its messages go
        comm._reply_subshell_for = lambda data, default, _to=subshell: _to
    try:
        yield
    finally:
        for comm in comms:
            with contextlib.suppress(AttributeError):
                del comm._reply_subshell_for
        with contextlib.suppress(Exception):  # the kernel may be shutting down
            _on_shell_channel(kernel, lambda: manager._delete_subshell(subshell), timeout=5.0)


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

    def show_and_wait(self, timeout: float) -> None:
        """Show the gate, then block until the person decides (kernel messages keep flowing), or
        reject at ``timeout``. On ipykernel 7 the comms are routed to a subshell *before* the gate
        is shown: a click sent the moment the widget appears must not reach the blocked thread."""
        from IPython.display import display

        if threading.current_thread() is threading.main_thread() and kernel_has_subshells():
            with _comms_on_a_subshell(self.view):
                display(self.view)  # type: ignore[no-untyped-call]
                self._wait_for_event(time.monotonic() + timeout)
            self._settle(timeout)
            return
        display(self.view)  # type: ignore[no-untyped-call]
        self.wait(timeout)

    def wait(self, timeout: float) -> None:
        """Block until the person decides (kernel messages keep flowing), or reject at ``timeout``."""
        deadline = time.monotonic() + timeout
        if threading.current_thread() is not threading.main_thread():
            self._wait_for_event(deadline)  # arun: the kernel's thread handles the click
        else:
            from jupyter_ui_poll import ui_events

            with ui_events() as poll:
                while not self.decided and time.monotonic() < deadline:
                    poll(_POLL_EVENTS)
                    time.sleep(_POLL_INTERVAL)
        self._settle(timeout)

    def _settle(self, timeout: float) -> None:
        if not self.decided:
            self.timed_out = True
            self.widget.reject()
            self.widget._show_status(
                "rejected", f"rejected: no decision within {timeout:g} s; nothing was written"
            )

    def _wait_for_event(self, deadline: float) -> None:
        while not self.decided and time.monotonic() < deadline:
            self._event.wait(min(_POLL_INTERVAL * 10, max(deadline - time.monotonic(), 0.0)))

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
    if not _in_kernel():
        raise ReviewUnavailable(
            "approval='review' needs a Jupyter kernel to show the review widget in; nothing was written. "
            "Outside a notebook use approval='auto', 'dry-run' or a callable"
        )
    on_main = threading.current_thread() is threading.main_thread()
    if on_main and not kernel_has_subshells() and not kernel_polls():
        raise ReviewUnavailable(
            "this kernel cannot handle a click while an ordinary cell runs, so the review would never end; "
            "nothing was written. Call `await tool.arun(...)` in the cell instead of tool.run(...)"
        )

    gate = ReviewGate(workspace, plan, title=title, origin=origin, **apply_options)
    gate.show_and_wait(timeout)
    return gate.decision()
