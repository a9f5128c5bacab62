"""Settle what a writer that died mid-apply left behind, when a workspace opens its history.

Every ``Workspace`` that records runs this once, as its history store opens, so it
lives apart from the history operations (list, show, undo, restore: ``history_ops``)
that a plain ``nbedit apply`` never uses and should not load.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from nbedit.storage.history import HistoryStore
    from nbedit.storage.records import Entry

__all__ = ["recover"]


def recover(store: HistoryStore, root: Path, read: Callable[[str], bytes | None]) -> list[tuple[Entry, bool]]:
    """Settle entries left pending by a writer that died mid-apply (see ``HistoryStore.reconcile``).

    ``root`` is the workspace's real root and ``read`` reads a file under it (None: missing):
    the workspace hands in what is needed, so this module does not import it (a circle).
    """
    from nbedit.engine.text import fingerprint
    from nbedit.errors import NbeditError
    from nbedit.storage.atomic import remove_leftovers

    def current(path: str) -> str | None:
        try:
            data = read(path)
        except NbeditError:
            return "unreadable"
        return fingerprint(data) if data is not None else None

    def leftovers(paths: object, pid: int, token: str) -> None:
        remove_leftovers(root, list(paths), pid=pid, token=token)  # type: ignore[call-overload]

    return store.reconcile(current, root=str(root), leftovers=leftovers)
