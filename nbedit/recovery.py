"""Settle what a writer that died mid-apply left behind, when a workspace opens its history.

Every ``Workspace`` that records runs this once, as its history store opens, so it
lives apart from the history operations (list, show, undo, restore: ``history_ops``)
that a plain ``nbedit apply`` never uses and should not load.

``interrupted_undos`` lists the undos a crash cut short; ``nbedit.repair`` (what
``nbedit doctor --repair`` runs) finishes them, as one more ``undo`` would.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from collections.abc import Callable

    from nbedit.storage.confine import PinnedRoot
    from nbedit.storage.history import HistoryStore
    from nbedit.storage.records import Entry

__all__ = ["interrupted_undos", "recover"]


def recover(
    store: HistoryStore, root: PinnedRoot, read: Callable[[str], bytes | None]
) -> list[tuple[Entry, bool]]:
    """Settle entries left pending by a writer that died mid-apply (see ``HistoryStore.reconcile``).

    ``root`` is the workspace's pinned root (leftovers are removed only while it is still that
    folder) and ``read`` reads a file under it (None: missing): the workspace hands in what is
    needed, so this module does not import it (a circle).
    """
    from nbedit.engine.text import fingerprint
    from nbedit.errors import NbeditError
    from nbedit.storage.temp_names import remove_leftovers

    def current(path: str) -> str | None:
        try:
            data = read(path)
        except NbeditError:
            return "unreadable"
        return fingerprint(data) if data is not None else None

    def leftovers(paths: object, pid: int, token: str) -> None:
        remove_leftovers(root, list(paths), pid=pid, token=token)  # type: ignore[call-overload]

    return store.reconcile(current, root=str(root), leftovers=leftovers)


def interrupted_undos(store: HistoryStore) -> list[tuple[Entry, Entry]]:
    """(entry, the undo of it a crash cut short) for every entry no later undo finished, oldest first."""
    finished: set[str] = set()
    cut_short: dict[str, Entry] = {}
    for entry in store.entries():  # newest first
        if entry.status != "applied" or not entry.undoes:
            continue
        if not entry.partial:
            finished.add(entry.undoes)
        elif entry.undoes not in finished:
            cut_short.setdefault(entry.undoes, entry)
    found = []
    for target_id, undoing in sorted(cut_short.items()):
        if target_id in finished:
            continue
        try:
            found.append((store.entry(target_id), undoing))
        except Exception:  # noqa: BLE001 - pruned meanwhile: nothing left to finish
            continue
    return found
