"""Which notebook file this kernel is running, as far as the kernel can know.

Writing to the notebook that is open in this kernel's own tab races the
front end's autosave, so the workspace wants to recognise it. Nothing reports it
reliably; the hints, in order:

* ``__vsc_ipynb_file__`` in the user namespace (VS Code);
* ``__session__`` in the user namespace: ipykernel copies ``JPY_SESSION_NAME``
  there, which jupyter-server 2 sets to the notebook's path when it starts the
  kernel;
* the ``JPY_SESSION_NAME`` environment variable itself.

Each is only a hint (a notebook renamed after the kernel started keeps its old
name), so a path is returned only when it names an existing ``.ipynb`` file.
IPython is never imported here: without a running shell in this process there is
no namespace to read, only the environment.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["running_notebook_path"]


def _current_shell() -> Any:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    return ipython.get_ipython()


def running_notebook_path(shell: Any = None) -> str | None:
    """The absolute path of the notebook this kernel runs, or None when nothing says."""
    if shell is None:
        shell = _current_shell()
    namespace = getattr(shell, "user_ns", None) or {}
    candidates = (
        namespace.get("__vsc_ipynb_file__"),
        namespace.get("__session__"),
        os.environ.get("JPY_SESSION_NAME"),
    )
    for candidate in candidates:
        if not isinstance(candidate, str) or not candidate.endswith(".ipynb"):
            continue
        path = Path(candidate).expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        if path.is_file():
            return str(path.resolve())
    return None
