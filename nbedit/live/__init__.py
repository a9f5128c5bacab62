"""Live documents: an applied change shows up at once in the open JupyterLab tabs.

``protocol`` says what a change looks like on the wire (pure; no I/O). The other modules
are front ends of it:

    discovery.py   kernel/CLI side: which Jupyter server is this process under? (cheap, no imports)
    client.py      kernel/CLI side: ask the server before a write, tell it after (``LiveWrite``)
    rebase.py      re-plan a change on a tab's live text after a ``LiveConflict`` (pure)
    server.py      the Jupyter server extension: HTTP endpoints and the front-ends' websocket
    collab.py      with jupyter-collaboration: edit the server's shared documents (optional)
    frontend/      the JupyterLab extension's TypeScript sources (updates a tab in place)
    labextension/  its prebuilt form, shipped in the wheel

``Workspace.apply`` is the only caller: it imports this package lazily, on a write, and asks
``could_be_served`` first: with no override and no runtime folder, no server can be found, and
``discovery`` is not even imported (every write of every ``nbedit`` command asks: start-up).
"""

from __future__ import annotations

import os
import sys

__all__ = ["could_be_served", "runtime_folder"]


def runtime_folder() -> str:
    """``runtime_dir()`` as a string: every write asks, and pathlib costs a command milliseconds."""
    configured = os.environ.get("JUPYTER_RUNTIME_DIR")
    if configured:
        return configured
    data = os.environ.get("JUPYTER_DATA_DIR")
    if data:
        return os.path.join(data, "runtime")
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Jupyter", "runtime")
    if os.name == "nt":
        appdata = os.environ.get("APPDATA")
        return os.path.join(appdata or home, "jupyter", "runtime")
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    return os.path.join(xdg, "jupyter", "runtime")


def could_be_served() -> bool:
    """False when ``discovery.find_server`` would find no server without walking anything: no
    ``NBEDIT_SERVER_URL`` override and, on a system with ``/proc``, no Jupyter runtime folder
    (no server ever ran as this user here). True: ask ``find_server``."""
    if os.environ.get("NBEDIT_SERVER_URL", "").strip():
        return True
    return not os.path.isdir("/proc/self") or os.path.isdir(runtime_folder())
