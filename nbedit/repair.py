"""Repair a history home after crashes: what ``nbedit doctor --repair`` runs.

It opens a ``Workspace`` on every root the history names, so it sits above the workspace
(``recovery`` settles one store for a workspace that is opening and must not import it back).
Entries dead writers left pending are settled as the store opens; then each undo a crash cut
short (``recovery.interrupted_undos``) is finished, as one more ``undo`` would.
"""

from __future__ import annotations

__all__ = ["finish_interrupted"]


def finish_interrupted(home: object) -> list[str]:
    """Settle dead writers' entries in every recorded root, then finish every interrupted undo.

    Returns one line per thing done or left (a file changed since is left, saying how to
    finish it by hand: nothing is forced).
    """
    import os
    from pathlib import Path

    from nbedit.errors import NbeditError
    from nbedit.history_ops import undo
    from nbedit.recovery import interrupted_undos
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
                if entry.root != workspace._source.real_root_text:
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
