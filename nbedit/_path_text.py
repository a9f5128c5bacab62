"""What ``pathlib`` does to a path's text, without importing ``pathlib``.

A one-shot ``nbedit apply`` spends more time importing ``pathlib`` (and the ``re``, ``fnmatch``,
``urllib.parse`` and ``ipaddress`` it loads) than writing the file, so the storage layer keeps
paths as strings on the way to a write and builds ``Path`` objects only at its public edges
(``Workspace.root``, ``HistoryStore.home``), when someone reads them. The confinement checks
must see exactly the text ``pathlib`` gave them before: these functions are the same steps,
checked against ``pathlib`` itself by ``tests/test_path_text.py``.
"""

from __future__ import annotations

import os

__all__ = ["expanduser", "normal", "relative_to"]


def normal(path: str | os.PathLike[str]) -> str:
    """``str(Path(path))``: no empty or ``.`` components and no trailing slash; a leading ``//``
    is kept (POSIX leaves its meaning to the system, and ``pathlib`` keeps it); ``..`` stays."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text:
        return "."
    start = "//" if text.startswith("//") and not text.startswith("///") else "/" if text[0] == "/" else ""
    parts = [part for part in text.split("/") if part and part != "."]
    return start + "/".join(parts) if parts or start else "."


def expanduser(path: str) -> str:
    """``str(Path(path).expanduser())`` for a ``normal`` path: a first component ``~`` or ``~user``
    becomes that home folder; a home that cannot be found raises ``RuntimeError`` (as ``pathlib``
    does), so it never silently names a folder called ``~``."""
    if not path.startswith("~"):
        return path
    first, _, rest = path.partition("/")
    home = os.path.expanduser(first)
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return normal(os.path.join(home, rest)) if rest else normal(home)


def relative_to(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (``Path.relative_to`` of two normal absolute paths): "" for
    the root itself, None when ``path`` is not inside it (compared component by component)."""
    if path == root:
        return ""
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None
