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

A restore that goes back past later entries discards what they did to the same
files; the plan says so (each file's notes, and ``HistoryPlan.drops``), so the
person reviewing it knows before saying yes.

Undo walks back: repeated calls undo the session's entries newest first, skipping
entries already undone and the undo entries themselves. Undoing an undo entry
explicitly (``undo(entry_id)``) re-applies what it undid.

An undo cut short by a crash is recorded as a partial entry (``HistoryStore.reconcile``):
some files hold the entry's "before" again, the others still its "after". Such an
entry does not count as undone: the next ``undo`` (or ``undo(entry_id)``, or ``nbedit
doctor --repair``) targets it again and, for this entry only, accepts a file holding
either side, so it finishes what the interrupted undo started instead of calling the
entry stale.

Files are handled by location: a moved file's undo writes its old path and
deletes its new one. A file's permission bits are part of its version: undo and
restore bring back the recorded mode exactly (0600, 0755, 04750), and a change that
only changed the mode is undone like one that changed the content.

An entry belongs to the workspace root it was recorded in (its paths are relative
to that root): undoing or restoring it from another root is refused, and undo only
walks back this root's entries. The writes go through ``Workspace.apply``, so the
recorded paths are confined to the root again at the moment of the write.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Literal

from nbedit._dataclass import dataclass, field, replace
from nbedit.engine.models import FilePlan, Plan, is_notebook_path
from nbedit.engine.text import decode, fingerprint
from nbedit.engine.whole_diff import text_diff
from nbedit.errors import HistoryError, NbeditError, NothingToUndo, StaleFile, option
from nbedit.recovery import recover
from nbedit.storage.history import HistoryStore
from nbedit.storage.records import Entry, FileVersion

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Protocol

    ApplyResult = Any  # nbedit.workspace.ApplyResult: not imported, see Workspace below

    class _Source(Protocol):
        real_root: Path

        def normalise(self, path: str) -> str: ...
        def read(self, path: str) -> bytes | None: ...
        def mode(self, path: str) -> int | None: ...

    class Workspace(Protocol):
        """What these operations (and ``nbedit.rewind``'s) use of ``nbedit.workspace.Workspace``,
        which calls them: importing it here, even for type checkers, would make the modules a
        circle (test_architecture)."""

        root: Path
        session: str
        history_enabled: bool
        _source: _Source

        def _store(self) -> HistoryStore: ...
        def apply(
            self,
            plan: Plan,
            *,
            origin: str | None = ...,
            undoes: str | None = ...,
            force: bool = ...,
            verified: dict[str, tuple[bytes, str]] | None = ...,
        ) -> ApplyResult: ...


__all__ = [
    "HistoryPlan",
    "history",
    "interrupted_undo",
    "plan_restore",
    "plan_undo",
    "recover",
    "restore",
    "show",
    "undo",
]

Which = Literal["before", "after"]

_recovered: weakref.WeakKeyDictionary[HistoryStore, set[str]] = weakref.WeakKeyDictionary()


def _store(workspace: Workspace) -> HistoryStore:
    if not workspace.history_enabled:
        raise HistoryError(
            f"the history is turned off for this workspace ({option('no_history')}), so nothing was "
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
        recover(store, workspace._source.pinned, workspace._source.read)
    return store


def _open(workspace: Workspace) -> HistoryStore:
    store: HistoryStore = workspace._store()  # type: ignore[no-untyped-call]
    return store


def _root(workspace: Workspace) -> str:
    return workspace._source.real_root_text


def _read(workspace: Workspace, path: str) -> bytes | None:
    return workspace._source.read(path)


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
    return {path: state[0] for path, state in _versioned_states(versions, which).items()}


def _versioned_states(
    versions: list[FileVersion], which: Which
) -> dict[str, tuple[bytes | None, int | None]]:
    """Location -> (bytes, mode) of every file of an entry, before or after it (mode None: not recorded)."""
    states: dict[str, tuple[bytes | None, int | None]] = {}
    for version in versions:
        moved = version.new_path is not None and version.new_path != version.path
        if which == "before":
            if moved:
                states[version.new_path] = (None, None)  # type: ignore[index]
            states[version.path] = (version.before, version.before_mode)
        else:
            if moved:
                states[version.path] = (None, None)
            states[version.target_path] = (version.after, version.after_mode)
    return states


def _check_root(workspace: Workspace, entry: Entry) -> None:
    """An entry's paths are relative to the root it was recorded in; refuse using it elsewhere."""
    if entry.root is not None and entry.root != _root(workspace):
        raise HistoryError(
            f"entry {entry.id} was recorded in the workspace root {entry.root}, not in {_root(workspace)}; "
            f"its paths belong to that root. Run it there (--root {entry.root} / Workspace({entry.root!r})); "
            "nothing was written"
        )


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
    message += f"; pass {option('force')} to overwrite it anyway (the current bytes are kept in the history)"
    return StaleFile(
        message,
        path=path,
        expected=fingerprint(expected) if expected is not None else None,
        actual=fingerprint(current) if current is not None else None,
        diff=diff,
        advice="nothing was written",
    )


def _file_plan(
    workspace: Workspace,
    path: str,
    current: bytes | None,
    goal: bytes | None,
    goal_mode: int | None = None,
    current_fingerprint: str | None = None,
    notes: tuple[str, ...] = (),
) -> FilePlan:
    """The plan taking ``path`` from ``current`` to ``goal``; ``current_fingerprint``: the
    SHA-256 of ``current`` when the history already vouches for it (else it is hashed, on
    another core for a big file, while the rest is planned and written)."""
    operation = "add" if current is None else "delete" if goal is None else "update"
    if current is not None and current_fingerprint is None:
        from nbedit.engine.digest import fingerprint_meanwhile
        from nbedit.engine.models import digested_when_read

        current_fingerprint = digested_when_read(fingerprint_meanwhile(current))
    notebook = is_notebook_path(path)
    current_mode = workspace._source.mode(path) if current is not None else None
    return FilePlan(
        path=path,
        operation=operation,  # type: ignore[arg-type]
        before=_text_when_read(current, path) if not notebook else _plain(current),
        after=_text_when_read(goal, path) if not notebook else _plain(goal),
        before_bytes=current,
        after_bytes=goal,
        fingerprint=current_fingerprint if current is not None else None,
        mode=(goal_mode if goal_mode is not None else current_mode) if goal is not None else None,
        before_mode=current_mode,
        notebook=notebook,
        display_before=_display(current, path) if notebook else None,
        display_after=_display(goal, path) if notebook else None,
        notes=notes,
    )


def _text_when_read(data: bytes | None, path: str) -> str | None:
    """``_display(data, path)``, decoded only when first read if ``data`` is ASCII without NUL
    (then it is exactly ``data.decode()``): applying a restore reads the bytes alone, so a 10 MB
    file is not decoded twice for nothing (``models.decoded_when_read``)."""
    if data is not None and data.isascii() and b"\x00" not in data:
        from nbedit.engine.models import decoded_when_read

        return decoded_when_read(data)
    return _display(data, path)


def _plain(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


@dataclass(frozen=True, slots=True)
class HistoryPlan:
    """An undo or restore, planned but not written: review ``plan``, then ``apply`` it."""

    plan: Plan
    origin: str
    undoes: str | None
    force: bool
    drops: tuple[str, ...] = ()  # later entries whose changes to these files a restore discards
    # path -> (bytes, SHA-256) of the goals the history checked: the entry records them unhashed
    verified: dict[str, tuple[bytes, str]] = field(default_factory=dict, compare=False, repr=False)

    def describe_drops(self) -> str:
        """One sentence naming the later entries a restore discards ("" when it discards none)."""
        if not self.drops:
            return ""
        names = ", ".join(self.drops)
        return f"this also discards the changes of later history entries to these files: {names}"

    @property
    def apply_options(self) -> dict[str, object]:
        return {"origin": self.origin, "undoes": self.undoes, "force": self.force}

    def apply(self, workspace: Workspace) -> ApplyResult:
        return workspace.apply(
            self.plan, origin=self.origin, undoes=self.undoes, force=self.force, verified=self.verified
        )


def _plan_states(
    workspace: Workspace,
    goals: dict[str, tuple[bytes | None, int | None]],
    expected: dict[str, bytes | None],
    why: str,
    *,
    force: bool,
    origin: str,
    undoes: str | None,
    also_accepted: dict[str, bytes | None] | None = None,
    verified: dict[str, tuple[bytes, str]] | None = None,
    vouched: dict[str, str] | None = None,
    notes: dict[str, tuple[str, ...]] | None = None,
) -> HistoryPlan:
    """``verified``: the goals' bytes and fingerprints as the history checked them; ``vouched``:
    the fingerprints of ``expected`` (the history checked those bytes too), trusted for a
    file found holding exactly them."""
    currents = {path: _read(workspace, path) for path in dict.fromkeys([*expected, *goals])}
    known: dict[str, str] = {}
    if not force:
        accepted = also_accepted or {}
        for path, wanted in expected.items():
            if currents[path] != wanted and not (path in accepted and currents[path] == accepted[path]):
                raise _stale(path, wanted, currents[path], why)
            if vouched and path in vouched and currents[path] is not None and currents[path] == wanted:
                known[path] = vouched[path]
    plans = tuple(
        _file_plan(
            workspace, path, currents[path], goal, goal_mode, known.get(path), (notes or {}).get(path, ())
        )
        for path, (goal, goal_mode) in goals.items()
        if currents[path] != goal or _mode_differs(workspace, path, goal, goal_mode)
    )
    plan = Plan(files=plans, dialect=origin, root=str(workspace.root))
    return HistoryPlan(plan, origin, undoes, force, verified=dict(verified or {}))


def _verified(versions: list[FileVersion], which: Which) -> dict[str, tuple[bytes, str]]:
    """Location -> (bytes, fingerprint) of the files an entry had before or after it, as the
    history handed them out: checked against their SHA-256 there, so never hashed again."""
    verified: dict[str, tuple[bytes, str]] = {}
    for version in versions:
        if which == "before" and version.before is not None and version.before_fingerprint:
            verified[version.path] = (version.before, version.before_fingerprint)
        elif which == "after" and version.after is not None and version.after_fingerprint:
            verified[version.target_path] = (version.after, version.after_fingerprint)
    return verified


def _mode_differs(workspace: Workspace, path: str, goal: bytes | None, goal_mode: int | None) -> bool:
    if goal is None or goal_mode is None:
        return False
    current_mode = workspace._source.mode(path)
    return current_mode is not None and current_mode != goal_mode


def _undo_target(store: HistoryStore, session: str, root: str) -> Entry:
    undone: set[str] = set()
    applied = 0
    for entry in store.entries(session=session):
        if entry.status != "applied" or (entry.root is not None and entry.root != root):
            continue
        applied += 1
        if entry.undoes:
            if not entry.partial:  # an undo cut short by a crash leaves its entry to finish
                undone.add(entry.undoes)
            continue
        if entry.id not in undone:
            return entry
    if not applied:
        raise NothingToUndo(
            f"nothing to undo in session {session!r}: this session has no recorded edits yet "
            f"(edits of other sessions are listed by {option('all_sessions')}; restore one of them by id instead)"
        )
    raise NothingToUndo(
        f"nothing to undo in session {session!r}: every recorded edit of this session is already undone "
        "(list the history of all sessions and restore an entry by id instead)"
    )


def plan_undo(workspace: Workspace, entry_id: str | None = None, *, force: bool = False) -> HistoryPlan:
    """Plan reverting the session's latest edit not yet undone (or the entry ``entry_id``)."""
    store = _store(workspace)
    entry = (
        store.entry(entry_id)
        if entry_id is not None
        else _undo_target(store, workspace.session, _root(workspace))
    )
    _check_root(workspace, entry)
    if entry.status != "applied":
        raise HistoryError(
            f"entry {entry.id} was never applied (it is {entry.status}); there is nothing to undo"
        )
    versions = store.file_versions(entry.id)
    return _plan_states(
        workspace,
        _versioned_states(versions, "before"),
        _states(versions, "after"),
        f"entry {entry.id} wrote it",
        force=force,
        origin="undo",
        undoes=entry.id,
        also_accepted=_states(versions, "before") if interrupted_undo(store, entry.id) else None,
        verified=_verified(versions, "before"),
        vouched={path: digest for path, (_, digest) in _verified(versions, "after").items()},
    )


def interrupted_undo(store: HistoryStore, entry_id: str) -> Entry | None:
    """The undo of ``entry_id`` a crash cut short, if no later undo finished it (else None)."""
    partial = None
    for undoing in store.undone_by(entry_id):  # newest first
        if not undoing.partial:
            return None
        partial = partial or undoing
    return partial


def undo(workspace: Workspace, entry_id: str | None = None, *, force: bool = False) -> ApplyResult:
    """Revert the session's latest edit not yet undone (or the entry ``entry_id``)."""
    return plan_undo(workspace, entry_id, force=force).apply(workspace)


def _last_recorded(store: HistoryStore, path: str, root: str) -> tuple[str, bytes | None, str | None] | None:
    """The newest applied entry of this root touching ``path``, what it left there and its fingerprint."""
    for limit in (8, None):  # nearly always among the newest few: a long history is not listed whole
        listed = store.entries(path=path, limit=limit)
        for entry in listed:
            if entry.status == "applied" and (entry.root is None or entry.root == root):
                versions = store.file_versions(entry.id, sides=("after",))
                left = _verified(versions, "after").get(path)
                return entry.id, _states(versions, "after").get(path), left[1] if left else None
        if limit is not None and len(listed) < limit:
            break
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
    _check_root(workspace, entry)
    versions = store.file_versions(entry.id, sides=(which,))
    goals = _versioned_states(versions, which)
    expected: dict[str, bytes | None] = {}
    vouched: dict[str, str] = {}
    reasons = []
    for path in goals if not force else ():  # forced: what is there now does not matter
        last = _last_recorded(store, path, _root(workspace))
        if last is not None:
            expected[path] = last[1]
            if last[2] is not None:
                vouched[path] = last[2]
            reasons.append(last[0])
    why = f"nbedit last recorded it (entry {', '.join(dict.fromkeys(reasons))})"
    # Going back past later entries discards what they did to these files: say so in each file's
    # notes (given when the plan is made: ``replace`` would decode its texts, not yet read)
    later = {path: _later_entries(store, entry.id, path) for path in goals}
    notes = {
        path: (f"restoring also discards what later history entries changed in this file: {', '.join(ids)}",)
        for path, ids in later.items()
        if ids
    }
    planned = _plan_states(
        workspace, goals, expected, why, force=force, origin="restore", undoes=None,
        verified=_verified(versions, which), vouched=vouched, notes=notes,
    )  # fmt: skip
    dropped = dict.fromkeys(ids for file_plan in planned.plan.files for ids in later[file_plan.path])
    return replace(planned, drops=tuple(dropped))


def _later_entries(store: HistoryStore, entry_id: str, path: str) -> tuple[str, ...]:
    """Applied entries newer than ``entry_id`` that touched ``path``, oldest first."""
    return tuple(store.applied_since(entry_id, path))


def restore(
    workspace: Workspace,
    entry_id: str,
    *,
    which: Which = "before",
    force: bool = False,
) -> ApplyResult:
    """Put the files of an entry back as they were before it (or after it)."""
    return plan_restore(workspace, entry_id, which=which, force=force).apply(workspace)
