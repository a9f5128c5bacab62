"""History operations on a workspace: list, show, undo, restore, recover.

Undo and restore are not special write paths. Each builds an ordinary ``Plan``
whose file plans go from the bytes on disk now to the bytes the history holds, and
hands it to ``Workspace.apply``: so it is locked, stale-checked against the plan's
fingerprints, recorded as an entry of its own (origin "undo" / "restore", which
can itself be undone) and written all-or-nothing like any other change.

Before planning, the files are compared with what the history says they should
be. Undo requires every file to still hold the entry's "after" bytes; restore
requires every file to still hold what nbedit last recorded for it. Otherwise the
user changed the file since, and writing would silently discard that work: the
operation is refused with ``StaleFile`` and a diff of what changed, unless
``force=True`` (even then, the replaced bytes are kept in the new entry).

Undo walks back: repeated calls undo the session's entries newest first, skipping
entries already undone and the undo entries themselves. Undoing an undo entry
explicitly (``undo(entry_id)``) re-applies what it undid.

Files are handled by location: a moved file's undo writes its old path and
deletes its new one (permission bits of a re-created file are not recorded and
come from the umask).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from nbedit.engine.models import FilePlan, Plan, is_notebook_path
from nbedit.engine.plan import text_diff
from nbedit.engine.text import decode, fingerprint
from nbedit.errors import HistoryError, NbeditError, NothingToUndo, StaleFile
from nbedit.storage.history import HistoryStore
from nbedit.storage.records import Entry, FileVersion

if TYPE_CHECKING:
    from nbedit.workspace import ApplyResult, Workspace

__all__ = ["HistoryPlan", "history", "plan_restore", "plan_undo", "recover", "restore", "show", "undo"]

Which = Literal["before", "after"]

_recovered: weakref.WeakKeyDictionary[HistoryStore, set[str]] = weakref.WeakKeyDictionary()


def _store(workspace: Workspace) -> HistoryStore:
    if not workspace.history_enabled:
        raise HistoryError(
            "the history is turned off for this workspace (history=False / --no-history), so nothing was "
            "recorded to list, undo or restore"
        )
    store = _open(workspace)
    notice = store.notice
    if notice:
        store.notice = None
        import warnings

        from nbedit.warnings import NbeditWarning

        warnings.warn(notice, NbeditWarning, stacklevel=3)
    root = _root(workspace)
    done = _recovered.setdefault(store, set())
    if root not in done:
        done.add(root)
        recover(workspace)
    return store


def _open(workspace: Workspace) -> HistoryStore:
    store: HistoryStore = workspace._store()  # type: ignore[no-untyped-call]
    return store


def _root(workspace: Workspace) -> str:
    return str(workspace._source.real_root)


def _read(workspace: Workspace, path: str) -> bytes | None:
    return workspace._source.read(path)


def recover(workspace: Workspace) -> list[tuple[Entry, bool]]:
    """Settle entries left pending by a writer that died mid-apply (see ``HistoryStore.reconcile``)."""

    def current(path: str) -> str | None:
        try:
            data = _read(workspace, path)
        except NbeditError:
            return "unreadable"
        return fingerprint(data) if data is not None else None

    return _open(workspace).reconcile(current, root=_root(workspace))


# -- listing and showing ------------------------------------------------------------------


def history(
    workspace: Workspace, *, all_sessions: bool = False, path: str | None = None, limit: int | None = None
) -> list[Entry]:
    """Entries newest first: this session's, or every session's; optionally only those touching ``path``."""
    store = _store(workspace)
    normalised = workspace._source.normalise(path) if path is not None else None
    return store.entries(session=None if all_sessions else workspace.session, path=normalised, limit=limit)


def _display(data: bytes | None, path: str) -> str | None:
    """Text to diff: the cell view for notebooks, the decoded text otherwise."""
    if data is None:
        return None
    if is_notebook_path(path):
        try:
            from nbedit.engine.notebook import cell_view

            return cell_view(data, path)
        except NbeditError:
            pass
    try:
        return decode(data, path)[0]
    except NbeditError:
        return data.decode("utf-8", "replace")


def _file_diff(version: FileVersion) -> str:
    before = _display(version.before, version.path)
    after = _display(version.after, version.target_path)
    if before == after:
        if version.new_path and version.new_path != version.path:
            return f"--- a/{version.path}\n+++ b/{version.new_path}\n"
        return ""
    return text_diff(before, after, version.path, version.new_path)


def show(workspace: Workspace, entry_id: str) -> str:
    """The unified diff of what an entry changed."""
    store = _store(workspace)
    return "".join(_file_diff(version) for version in store.file_versions(entry_id))


# -- undo and restore ---------------------------------------------------------------------


def _states(versions: list[FileVersion], which: Which) -> dict[str, bytes | None]:
    """Location -> bytes (None: no file) of every file of an entry, before or after it."""
    states: dict[str, bytes | None] = {}
    for version in versions:
        moved = version.new_path is not None and version.new_path != version.path
        if which == "before":
            if moved:
                states[version.new_path] = None  # type: ignore[index]
            states[version.path] = version.before
        else:
            if moved:
                states[version.path] = None
            states[version.target_path] = version.after
    return states


def _stale(path: str, expected: bytes | None, current: bytes | None, why: str) -> StaleFile:
    if expected is None:
        message = f"{path}: exists now but {why} it did not; it was created since"
    elif current is None:
        message = f"{path}: was deleted since {why}"
    else:
        message = f"{path}: changed since {why}"
    diff = ""
    if expected is not None and current is not None:
        diff = text_diff(_display(expected, path), _display(current, path), path)
    message += (
        "; pass force=True (--force) to overwrite it anyway (the current bytes are kept in the history)"
    )
    return StaleFile(
        message,
        path=path,
        expected=fingerprint(expected) if expected is not None else None,
        actual=fingerprint(current) if current is not None else None,
        diff=diff,
        advice="nothing was written",
    )


def _file_plan(workspace: Workspace, path: str, current: bytes | None, goal: bytes | None) -> FilePlan:
    operation = "add" if current is None else "delete" if goal is None else "update"
    notebook = is_notebook_path(path)
    return FilePlan(
        path=path,
        operation=operation,  # type: ignore[arg-type]
        before=_display(current, path) if not notebook else _plain(current),
        after=_display(goal, path) if not notebook else _plain(goal),
        before_bytes=current,
        after_bytes=goal,
        fingerprint=fingerprint(current) if current is not None else None,
        before_mode=workspace._source.mode(path) if current is not None else None,
        notebook=notebook,
        display_before=_display(current, path) if notebook else None,
        display_after=_display(goal, path) if notebook else None,
    )


def _plain(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


@dataclass(frozen=True, slots=True)
class HistoryPlan:
    """An undo or restore, planned but not written: review ``plan``, then ``apply`` it."""

    plan: Plan
    origin: str
    undoes: str | None
    force: bool

    @property
    def apply_options(self) -> dict[str, object]:
        return {"origin": self.origin, "undoes": self.undoes, "force": self.force}

    def apply(self, workspace: Workspace) -> ApplyResult:
        return workspace.apply(self.plan, origin=self.origin, undoes=self.undoes, force=self.force)


def _plan_states(
    workspace: Workspace,
    goals: dict[str, bytes | None],
    expected: dict[str, bytes | None],
    why: str,
    *,
    force: bool,
    origin: str,
    undoes: str | None,
) -> HistoryPlan:
    currents = {path: _read(workspace, path) for path in dict.fromkeys([*expected, *goals])}
    if not force:
        for path, wanted in expected.items():
            if currents[path] != wanted:
                raise _stale(path, wanted, currents[path], why)
    plans = tuple(
        _file_plan(workspace, path, currents[path], goal)
        for path, goal in goals.items()
        if currents[path] != goal
    )
    plan = Plan(files=plans, dialect=origin, root=str(workspace.root))
    return HistoryPlan(plan, origin, undoes, force)


def _undo_target(store: HistoryStore, session: str) -> Entry:
    undone: set[str] = set()
    for entry in store.entries(session=session):
        if entry.status != "applied":
            continue
        if entry.undoes:
            undone.add(entry.undoes)
            continue
        if entry.id not in undone:
            return entry
    raise NothingToUndo(
        f"nothing to undo in session {session!r}: every recorded edit of this session is already undone "
        "(list the history of all sessions and restore an entry by id instead)"
    )


def plan_undo(workspace: Workspace, entry_id: str | None = None, *, force: bool = False) -> HistoryPlan:
    """Plan reverting the session's latest edit not yet undone (or the entry ``entry_id``)."""
    store = _store(workspace)
    entry = store.entry(entry_id) if entry_id is not None else _undo_target(store, workspace.session)
    if entry.status != "applied":
        raise HistoryError(
            f"entry {entry.id} was never applied (it is {entry.status}); there is nothing to undo"
        )
    versions = store.file_versions(entry.id)
    return _plan_states(
        workspace,
        _states(versions, "before"),
        _states(versions, "after"),
        f"entry {entry.id} wrote it",
        force=force,
        origin="undo",
        undoes=entry.id,
    )


def undo(workspace: Workspace, entry_id: str | None = None, *, force: bool = False) -> ApplyResult:
    """Revert the session's latest edit not yet undone (or the entry ``entry_id``)."""
    return plan_undo(workspace, entry_id, force=force).apply(workspace)


def _last_recorded(store: HistoryStore, path: str) -> tuple[str, bytes | None] | None:
    """The newest applied entry touching ``path`` and what it left there."""
    for entry in store.entries(path=path):
        if entry.status == "applied":
            return entry.id, _states(store.file_versions(entry.id, sides=("after",)), "after").get(path)
    return None


def plan_restore(
    workspace: Workspace,
    entry_id: str,
    *,
    which: Which = "before",
    force: bool = False,
) -> HistoryPlan:
    """Plan putting the files of an entry back as they were before it (or after it)."""
    if which not in ("before", "after"):
        raise HistoryError(f"which must be 'before' or 'after', not {which!r}")
    store = _store(workspace)
    entry = store.entry(entry_id)
    goals = _states(store.file_versions(entry.id, sides=(which,)), which)
    expected: dict[str, bytes | None] = {}
    reasons = []
    for path in goals if not force else ():  # forced: what is there now does not matter
        last = _last_recorded(store, path)
        if last is not None:
            expected[path] = last[1]
            reasons.append(last[0])
    why = f"nbedit last recorded it (entry {', '.join(dict.fromkeys(reasons))})"
    return _plan_states(workspace, goals, expected, why, force=force, origin="restore", undoes=None)


def restore(
    workspace: Workspace,
    entry_id: str,
    *,
    which: Which = "before",
    force: bool = False,
) -> ApplyResult:
    """Put the files of an entry back as they were before it (or after it)."""
    return plan_restore(workspace, entry_id, which=which, force=force).apply(workspace)
