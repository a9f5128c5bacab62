"""Facts about the kernel the magics run in: who is editing, from which cell, in which notebook.

History entries are grouped by *session*; for a Jupyter kernel that is the
kernel id (the one the server and ``jupyter kernel list`` show), so "this
kernel's edits" survives an extension reload but not a kernel restart. Outside
a kernel (a terminal IPython, a test shell) nothing identifies the session
better than the process id, which is what the workspace falls back to.

The execution count (``In[n]``) is read from the running cell's
``ExecutionResult`` (``shell.displayhook.exec_result``), not from
``shell.execution_count``: IPython 9.x bumps that counter before the cell runs
and IPython 8 after, so it is off by one on one of them. The result's count is
right on both, but only for a cell stored in history; a ``pre_run_cell`` hook
remembers which kind of run is in progress, so entries never carry an
``In[n]`` that no cell showed.

The running notebook's path (``nbedit.jupyter.session``) lets the workspace
refuse to overwrite the file open in this kernel's tab.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

__all__ = ["CellTracker", "kernel_id", "running_notebook_path", "session_id"]

_CONNECTION_FILE = re.compile(r"kernel-(?P<id>[^/\\]+)\.json$")


def _kernel_app() -> Any:
    try:
        from ipykernel.kernelapp import IPKernelApp
    except ImportError:
        return None
    return IPKernelApp.instance() if IPKernelApp.initialized() else None


def kernel_id() -> str | None:
    """The id a Jupyter server gave this kernel (from ``kernel-<id>.json``), or None."""
    app = _kernel_app()
    if app is None:
        return None
    connection_file = str(getattr(app, "connection_file", "") or "")
    found = _CONNECTION_FILE.search(os.path.basename(connection_file))
    return found.group("id") if found else None


def session_id() -> str | None:
    """The history session for edits made from this kernel (None: let the workspace decide).

    ``$NBEDIT_SESSION`` wins; then the server's kernel id; a kernel started
    without a server (nbclient, a console) names its connection file freely, so
    it is identified by its process id.
    """
    configured = os.environ.get("NBEDIT_SESSION")
    if configured:
        return configured
    identifier = kernel_id()
    if identifier:
        return f"kernel-{identifier}"
    if _kernel_app() is not None:
        return f"kernel-process-{os.getpid()}"
    return None


def running_notebook_path(shell: Any) -> str | None:
    """The absolute path of the notebook this kernel runs, when the front end tells us (see ``session``)."""
    from nbedit.jupyter.session import running_notebook_path as find

    return find(shell)


class CellTracker:
    """Remembers whether the running cell has an ``In[n]`` (see the module docstring)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.stored = False

    def register(self) -> None:
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)

    def unregister(self) -> None:
        for event, callback in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
            with contextlib.suppress(ValueError):  # already gone: unload must be idempotent
                self.shell.events.unregister(event, callback)

    def pre_run_cell(self, info: Any) -> None:
        self.stored = bool(getattr(info, "store_history", False))

    def post_run_cell(self, result: Any) -> None:
        self.stored = False

    def execution_count(self) -> int | None:
        """The running cell's ``In[n]``, or None when it has none."""
        if not self.stored:
            return None
        running = getattr(getattr(self.shell, "displayhook", None), "exec_result", None)
        count = getattr(running, "execution_count", None)
        return count if isinstance(count, int) else None
