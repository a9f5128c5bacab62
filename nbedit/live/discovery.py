"""Which Jupyter server is this process running under? (kernel and CLI side)

A kernel started by a Jupyter server, and a shell in one of its terminals, are the
server's descendants; the server announces itself in ``jpserver-<pid>.json`` in
Jupyter's runtime folder (URL, token, root folder). So: walk this process's
ancestors through ``/proc/<pid>/stat`` and take the first one with such a file.
``NBEDIT_SERVER_URL`` (and ``NBEDIT_SERVER_TOKEN``, ``NBEDIT_SERVER_ROOT``) override
that, for a CLI run from a shell outside the server.

This runs only when a write happens and must stay cheap when there is no server
(a handful of small reads, no imports beyond the standard library's basics): the
runtime folder is found the way ``jupyter_core.paths.jupyter_runtime_dir`` finds it
without importing it.
"""

from __future__ import annotations

import os

from nbedit._dataclass import dataclass
from nbedit.live import runtime_folder as _runtime_folder  # (in the package: could_be_served asks it)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Server", "find_server", "runtime_dir"]

_MAX_ANCESTORS = 32


@dataclass(frozen=True)
class Server:
    """A Jupyter server this process can reach: where, with what token, serving which folder."""

    url: str  # base URL, no trailing slash, e.g. http://127.0.0.1:8888/lab-base
    token: str
    root_dir: str | None  # real path of the folder the server serves (None: unknown, from the override)

    def relative(self, path: str | os.PathLike[str]) -> str | None:
        """``path`` relative to the server's root with ``/`` separators, or None outside it."""
        if self.root_dir is None:
            return None
        from pathlib import Path  # a server was found: a write through it costs far more

        try:
            relative = Path(os.path.realpath(path)).relative_to(self.root_dir)
        except ValueError:
            return None
        return relative.as_posix() if relative.parts else None


def runtime_dir() -> Path:
    """Jupyter's runtime folder, as jupyter_core computes it (without importing it)."""
    from pathlib import Path

    return Path(_runtime_folder())


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            stat = stat_file.read()
    except OSError:
        return None
    # "pid (command name, may hold spaces and parentheses) state ppid ..."
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def _ancestors() -> list[int]:
    found: list[int] = []
    pid: int | None = os.getppid()
    while pid and pid > 1 and len(found) < _MAX_ANCESTORS:
        found.append(pid)
        pid = _parent(pid)
    return found


def _from_file(path: str) -> Server | None:
    try:
        import json  # only once a server file is there

        with open(path, encoding="utf-8") as handle:
            info = json.loads(handle.read())
        url = str(info["url"]).rstrip("/")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    root = info.get("root_dir") or info.get("notebook_dir")
    return Server(
        url=url,
        token=str(info.get("token") or ""),
        root_dir=os.path.realpath(root) if isinstance(root, str) and root else None,
    )


def find_server() -> Server | None:
    """The Jupyter server this process runs under, or None (plain IPython, nbclient, a shell)."""
    url = os.environ.get("NBEDIT_SERVER_URL", "").strip()
    if url:
        root = os.environ.get("NBEDIT_SERVER_ROOT", "").strip()
        return Server(
            url=url.rstrip("/"),
            token=os.environ.get("NBEDIT_SERVER_TOKEN", ""),
            root_dir=os.path.realpath(root) if root else _root_of(url),
        )
    if not os.path.isdir("/proc/self"):
        return None  # no process tree to walk (macOS, Windows): only the override
    folder = _runtime_folder()
    if not os.path.isdir(folder):
        return None  # no Jupyter server ever ran as this user here: no process tree to walk either
    for pid in _ancestors():
        candidate = os.path.join(folder, f"jpserver-{pid}.json")
        if os.path.exists(candidate):
            return _from_file(candidate)
    return None


def _root_of(url: str) -> str | None:
    """The root folder of the server at ``url``, from its runtime file when one matches."""
    try:
        folder = _runtime_folder()
        names = [name for name in os.listdir(folder) if name.startswith("jpserver-")]
    except OSError:
        return None
    for name in names:
        if not name.endswith(".json"):
            continue
        server = _from_file(os.path.join(folder, name))
        if server is not None and server.url == url.rstrip("/"):
            return server.root_dir
    return None
