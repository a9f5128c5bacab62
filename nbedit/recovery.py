"""Settle what a writer that died mid-apply left behind, when a workspace opens its history.

Every ``Workspace`` that records runs this once, as its history store opens, so it
lives apart from the history operations (list, show, undo, restore: ``history_ops``)
that a plain ``nbedit apply`` never uses and should not load.

``finish_interrupted`` is what ``nbedit doctor --repair`` runs: it settles the entries
dead writers left pending in every root the history names, then finishes each undo a
crash cut short (``history_ops.interrupted_undo``), as one more ``undo`` would.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

if TYPE_CHECKING:
    from nbedit.storage.history import HistoryStore
    from nbedit.storage.records import Entry
    from nbedit.workspace import Workspace

__all__ = ["finish_interrupted", "interrupted_undos", "recover"]


def recover(workspace: Workspace) -> list[tuple[Entry, bool]]:
    """Settle entries left pending by a writer that died mid-apply (see ``HistoryStore.reconcile``)."""
    from nbedit.engine.text import fingerprint
    from nbedit.errors import NbeditError
    from nbedit.storage.atomic import remove_leftovers

    source = workspace._source
    root = source.pinned

    def current(path: str) -> str | None:
        try:
            data = source.read(path)
        except NbeditError:
            return "unreadable"
        return fingerprint(data) if data is not None else None

    def leftovers(paths: object, pid: int, token: str) -> None:
        remove_leftovers(root, list(paths), pid=pid, token=token)  # type: ignore[call-overload]

    store: HistoryStore = workspace._store()  # type: ignore[no-untyped-call]
    return store.reconcile(current, root=str(source.real_root), leftovers=leftovers)


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


def finish_interrupted(home: object) -> list[str]:
    """Settle dead writers' entries in every recorded root, then finish every interrupted undo.

    Returns one line per thing done or left (a file changed since is left, saying how to
    finish it by hand: nothing is forced).
    """
    import os
    from pathlib import Path

    from nbedit.errors import NbeditError
    from nbedit.history_ops import undo
    from nbedit.storage.history import HistoryStore
    from nbedit.workspace import Workspace

    done: list[str] = []
    with HistoryStore(Path(home)) as store:  # type: ignore[arg-type]
        roots = {entry.root for entry in store.pending()} | {
            entry.root for entry, _ in interrupted_undos(store)
        }
    for root in sorted(root for root in roots if root):
        if not os.path.isdir(root):
            done.append(f"{root}: the workspace root is gone; its unfinished entries are left as they are")
            continue
        workspace = Workspace(root, home=home, live=None)  # type: ignore[arg-type]
        try:
            store = workspace._store()  # type: ignore[no-untyped-call]  # settles dead writers' entries
            for entry, undoing in interrupted_undos(store):
                if entry.root != str(workspace._source.real_root):
                    continue
                workspace.session = undoing.session
                try:
                    result = undo(workspace, entry.id)
                except NbeditError as error:
                    done.append(
                        f"the undo {undoing.id} of entry {entry.id} was cut short and cannot be finished: "
                        f"{error.message}"
                    )
                    continue
                done.append(
                    f"finished the undo of entry {entry.id} that a crash cut short ({undoing.id}): "
                    f"wrote {', '.join(result.written) or 'nothing'} (entry {result.entry_id})"
                )
        finally:
            workspace.close()
    return done
